#!/usr/bin/env bash
# The GPU run that the experiments prepared and not yet run wait for, in one command of about 560 s on
# one Hopper GPU:
#   - step 15, what L2 keeps between two GEMMs (notes/step15.md, "Next: what L2 keeps between two
#     GEMMs"): Nsight Compute on one launch in the middle of the step binary's timing, caches not
#     flushed, at 128 x 11008 x 4096 (FP16, 16-bit C) with the rule's STREAM and with --define
#     STREAM=0, then the same two from flushed caches;
#   - then the references of the BF16 pairs that STREAM's record left to time (ten shapes, as many as fit), merged
#     into a copy of results/references/<gpu>.json that comes back as $OUT/refs.json (join it with
#     `cargo xtask references --take`).
# Built beside the source tree (release binaries):
#   cargo xtask bundle --out .gpu/b2
#   tar czf .gpu/bundle.tgz -C .gpu/b2 ./run.sh ./bin ./tests ./examples/tune15
#   git rev-parse --short HEAD > .gpu/bundle-commit
# and run from the repository root with .gpu/bundle.tgz and .gpu/bundle-commit carried:
#   LIMIT=560 bash notes/experiments/next-run.sh
# It writes $OUT/summary.md (a line a result), $OUT/refs.json and $OUT/logs.tgz.
set -u
export CUDA_HOME=/usr/local/cuda LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64 PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:?the folder whose files come back}
S=$OUT/summary.md; : > "$S"; t0=$(date +%s); W=$(mktemp -d /tmp/w.XXXXXX); L=$W/logs; mkdir -p "$L"
say() { echo "$*" | tee -a "$S"; }
el() { echo "$(( $(date +%s) - t0 ))"; }
left() { echo "$(( ${LIMIT:-560} - $(el) ))"; }
R=$PWD; A=$(mktemp -d /tmp/fresh.XXXXXX); mkdir -p "$A/b"
tar xzf "$R/.gpu/bundle.tgz" -C "$A/b" || { say "no bundle at .gpu/bundle.tgz (see the header)"; exit 1; }
export SGEMM_CUBIN_CACHE=$A/cubins; mkdir -p "$SGEMM_CUBIN_CACHE"
say "bundle of $(cat "$R/.gpu/bundle-commit") in $A; $(nvidia-smi --query-gpu=index,name,driver_version,power.limit,temperature.gpu --format=csv,noheader | tr '\n' ';')"
cd "$A" || exit 1
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_write.sum
ncu1() {  # label, cache control, step binary arguments...
  local label=$1 cache=$2; shift 2; local f=$L/ncu-$label.log
  [ "$(left)" -lt 30 ] && { say "skip ncu $label: out of time"; return; }
  if [ "$cache" = none ]; then skip="--launch-skip 20"; else skip=""; fi
  timeout 90 ncu --clock-control none --cache-control "$cache" --metrics $M -k regex:^sgemm$ $skip --launch-count 1 \
    b/bin/step15-skinny --precision fp16-c16 --shape 128x11008x4096 "$@" > "$f" 2>&1
  say "ncu $label rc=$? $(grep -E 'gpu__time|dram__|lts__' "$f" | awk '{print $1"="$NF" "$(NF-1)}' | tr '\n' ' ') [$(el) s]"
}
ncu1 warm-stream none; ncu1 warm-plain none --define STREAM=0
ncu1 cold-stream all --verify-only; ncu1 cold-plain all --verify-only --define STREAM=0
cp "$R/results/references/nvidia-h200.json" "$A/refs.json"
for spec in 1x11008x4096:bf16 8x11008x4096:bf16 16x11008x4096:bf16 32x11008x4096:bf16 256x11008x4096:bf16 \
            1x4096x11008:bf16 8x4096x11008:bf16 16x4096x11008:bf16 32x4096x11008:bf16 256x4096x11008:bf16; do
  [ "$(left)" -lt 60 ] && { say "skip references $spec: out of time"; continue; }
  sh=${spec%%:*}; p=${spec##*:}
  timeout "$(left)" b/bin/xtask references --shapes "$sh" --precisions "$p" --merge --out "$A/refs.json" > "$L/references-$sh-$p.log" 2>&1
  say "references $sh $p rc=$? [$(el) s]"; cp "$A/refs.json" "$OUT/refs.json"
  grep -E "^\| $sh \| $p" "$L/references-$sh-$p.log" | grep -E "one at a time|back to back" | tail -4 | cut -c1-200 | tee -a "$S"
done
(cd "$W" && tar czf "$OUT/logs.tgz" logs)
say "done [$(el) s]"
