#!/usr/bin/env bash
# The GPU run that the records wait for: references pairs (about 50 s each, 12 pairs, two commands
# of up to 560 s on one Hopper GPU), merged into one copy of results/references/nvidia-h200.json:
#   - step 15's three pairs that the record of B's promotion did not reach (notes/step15.md, "The
#     record with B's promotion at 128 bytes"): 256 x 11008 x 4096 in FP16 and BF16,
#     256 x 4096 x 11008 in BF16;
#   - 128 x 11008 x 4096 in FP16 again, whose rung lost 11-15% from one at a time to back to back
#     where cuBLAS lost 0-6%: `xtask references` now prints the clock each verdict contender's own
#     samples met;
#   - the cubes of #74's targets, 1024³ and 2048³ in FP16 and BF16, which the references have not
#     timed with step 15 (the sweep's one-at-a-time figures are all there is);
#   - four pairs at N = 11008 again (1, 16 and 64 x 11008 x 4096 in FP16, 16 x 11008 x 4096 in
#     BF16), where the fastest cuBLAS ran 2-10% slower in the promotion's record than in the one
#     before: how far it moves from run to run (the record's figures are in git and the notes).
# Before the pairs, in the first command (NCU=1, about 60 s): Nsight Compute names the kernels cuBLAS
# runs at the cubes (torch.matmul, FP16 and BF16; experiments/step15-skinny/cublas-kernels.py) and
# times them and the rung's, one launch each from flushed caches, into $OUT/cubes/ (read with
# cublas-kernels-table.py): the plan cuBLAS takes where the rung is furthest behind it.
# scripts/record.sh times them in this order and ends its summary with the pairs it left; the
# second command passes those as PAIRS.
# Built beside the source tree (release binaries):
#   cargo xtask bundle --out .gpu/b2
#   tar czf .gpu/bundle.tgz -C .gpu/b2 ./run.sh ./bin
#   git rev-parse --short HEAD > .gpu/bundle-commit
# and run from the repository root with .gpu/bundle.tgz and .gpu/bundle-commit carried:
#   LIMIT=560 bash notes/experiments/next-run.sh
#   LIMIT=560 NCU=0 PAIRS="<the left pairs>" bash notes/experiments/next-run.sh
# Each command writes scripts/record.sh's $OUT/summary.md, $OUT/refs.json and $OUT/logs/; join each
# with `xtask references --take $OUT/refs.json --out results/references/nvidia-h200.json`.
set -u
OUT=${OUT:?the folder whose files come back}
R=$PWD; A=$(mktemp -d /tmp/fresh.XXXXXX); mkdir -p "$A/b"
tar xzf "$R/.gpu/bundle.tgz" -C "$A/b" || { echo "no bundle at .gpu/bundle.tgz (see the header)"; exit 1; }
export SGEMM_CUBIN_CACHE=$A/cubins; mkdir -p "$SGEMM_CUBIN_CACHE"
echo "bundle of $(cat "$R/.gpu/bundle-commit") in $A"
cd "$A" || exit 1
if [ "${NCU:-1}" = 1 ]; then
  export PATH=$PATH:/usr/local/cuda/bin; mkdir -p "$OUT/cubes"; t0=$(date +%s)
  M=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
  timeout 90 ncu --clock-control none --metrics $M --csv python3 "$R/notes/experiments/step15-skinny/cublas-kernels.py" \
    "$OUT/cubes/torch-order.txt" 1024x1024x1024 2048x2048x2048 > "$OUT/cubes/torch-ncu.csv" 2> "$OUT/cubes/torch.err"
  echo "torch under ncu rc=$? [$(( $(date +%s) - t0 )) s]"
  : > "$OUT/cubes/rung-ncu.csv"
  for p in fp16-c16 bf16-c16; do for sh in 1024x1024x1024 2048x2048x2048; do
    echo "# $p $sh" >> "$OUT/cubes/rung-ncu.csv"
    timeout 30 ncu --clock-control none --metrics $M --csv -k regex:sgemm --launch-count 1 b/bin/step15-skinny \
      --precision $p --shape $sh --verify-only >> "$OUT/cubes/rung-ncu.csv" 2>/dev/null
  done; done
  python3 "$R/notes/experiments/step15-skinny/cublas-kernels-table.py" "$OUT/cubes" | tee "$OUT/cubes/table.md"
  echo "cubes under ncu [$(( $(date +%s) - t0 )) s]"
  LIMIT=$(( ${LIMIT:-560} - $(date +%s) + t0 )); export LIMIT
fi
PAIRS=${PAIRS:-"256x11008x4096:fp16 256x11008x4096:bf16 256x4096x11008:bf16 128x11008x4096:fp16 \
1024x1024x1024:fp16 1024x1024x1024:bf16 2048x2048x2048:fp16 2048x2048x2048:bf16 \
1x11008x4096:fp16 16x11008x4096:fp16 64x11008x4096:fp16 16x11008x4096:bf16"} \
  bash "$R/scripts/record.sh" b "$OUT"
