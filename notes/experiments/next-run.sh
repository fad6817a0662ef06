#!/usr/bin/env bash
# The GPU run that notes/step15.md's "Next: the cubes' time over K" waits for, one command of up to
# 560 s on one Hopper GPU:
#   - Nsight Compute (one launch each, flushed caches) names and times cuBLAS's kernels
#     (torch.matmul, experiments/step15-skinny/cublas-kernels.py) and the rung's (the step binary,
#     FP16 with a 16-bit C) at 1024 x 1024 x K and 2048 x 2048 x K for five K each, into
#     $OUT/cubes/ (read with cubes-over-k.py: a line through the times over K for each);
#   - tune15 at 1024³ (FP16, 16-bit C): the rule's plan beside cuBLAS's two consumers of 64 x 64;
#   - the four references pairs at N = 11008 the last command left (1, 16 and 64 x 11008 x 4096 in
#     FP16, 16 x 11008 x 4096 in BF16), by scripts/record.sh, into $OUT/refs.json.
# Built beside the source tree (release binaries):
#   cargo xtask bundle --out .gpu/b2
#   tar czf .gpu/bundle.tgz -C .gpu/b2 ./run.sh ./bin ./examples/tune15
#   git rev-parse --short HEAD > .gpu/bundle-commit
# and run from the repository root with .gpu/bundle.tgz and .gpu/bundle-commit carried:
#   LIMIT=560 bash notes/experiments/next-run.sh
# Join $OUT/refs.json with `xtask references --take $OUT/refs.json --out results/references/nvidia-h200.json`.
set -u
OUT=${OUT:?the folder whose files come back}
R=$PWD; A=$(mktemp -d /tmp/fresh.XXXXXX); mkdir -p "$A/b"
tar xzf "$R/.gpu/bundle.tgz" -C "$A/b" || { echo "no bundle at .gpu/bundle.tgz (see the header)"; exit 1; }
export SGEMM_CUBIN_CACHE=$A/cubins; mkdir -p "$SGEMM_CUBIN_CACHE"
echo "bundle of $(cat "$R/.gpu/bundle-commit") in $A"
cd "$A" || exit 1
export PATH=$PATH:/usr/local/cuda/bin; E=$R/notes/experiments/step15-skinny; mkdir -p "$OUT/cubes"; t0=$(date +%s)
SHAPES="1024x1024x256 1024x1024x512 1024x1024x1024 1024x1024x2048 1024x1024x4096 \
2048x2048x512 2048x2048x1024 2048x2048x2048 2048x2048x4096 2048x2048x8192"
M=gpu__time_duration.sum,sm__cycles_active.max,sm__cycles_elapsed.avg.per_second,launch__grid_size,launch__block_size,launch__registers_per_thread,dram__bytes_read.sum,lts__t_bytes.sum
timeout 120 ncu --clock-control none --metrics $M --csv python3 "$E/cublas-kernels.py" "$OUT/cubes/torch-order.txt" $SHAPES \
  > "$OUT/cubes/torch-ncu.csv" 2> "$OUT/cubes/torch.err"
echo "torch under ncu rc=$? [$(( $(date +%s) - t0 )) s]"
: > "$OUT/cubes/rung-k.csv"
for sh in $SHAPES; do
  echo "# fp16-c16 $sh" >> "$OUT/cubes/rung-k.csv"
  timeout 40 ncu --clock-control none --metrics $M --csv -k regex:sgemm --launch-count 1 b/bin/step15-skinny \
    --precision fp16-c16 --shape $sh --verify-only >> "$OUT/cubes/rung-k.csv" 2>/dev/null
done
python3 "$E/cubes-over-k.py" "$OUT/cubes" | tee "$OUT/cubes/table.md"
echo "cubes under ncu [$(( $(date +%s) - t0 )) s]"
timeout 120 b/examples/tune15 1024 fp16-c16 --only "the rule's plan, 6 buffers|bm: 128, bn: 64" --rounds 2 \
  > "$OUT/tune15-1024.md" 2>&1
echo "tune15 rc=$?"; grep -E "^\| fp16|fastest" "$OUT/tune15-1024.md"
LIMIT=$(( ${LIMIT:-560} - $(date +%s) + t0 )); export LIMIT
PAIRS=${PAIRS:-"1x11008x4096:fp16 16x11008x4096:fp16 64x11008x4096:fp16 16x11008x4096:bf16"} \
  bash "$R/scripts/record.sh" b "$OUT"
