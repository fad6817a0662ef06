#!/usr/bin/env bash
# The GPU run that the experiments prepared and not yet run wait for, in one command of about 150 s on
# one Hopper GPU:
#   - step 15, box-reads.cu with one block an SM (notes/step15.md, "Next: the loads benchmark one block
#     an SM"): built here with the GPU machine's nvcc, run twice; then loads-only.patch beside the rung
#     (tune15 --beside --unchecked, two rounds) at the benchmark's four shapes, FP16 with a 16-bit C, for
#     the rung's own time in the same command.
# Built beside the source tree (release binaries):
#   cargo xtask bundle --out .gpu/b2
#   tar czf .gpu/next.tgz -C .gpu/b2 ./bin/step15-skinny ./examples/tune15
#   git rev-parse --short HEAD > .gpu/bundle-commit
# and run from the repository root with .gpu/next.tgz and .gpu/bundle-commit carried:
#   LIMIT=200 bash notes/experiments/next-run.sh
# It writes $OUT/summary.md (a line a result, the tables last) and $OUT/logs.tgz.
set -u
export CUDA_HOME=/usr/local/cuda LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64 PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:?the folder whose files come back}
S=$OUT/summary.md; : > "$S"; t0=$(date +%s); W=$(mktemp -d /tmp/w.XXXXXX); L=$W/logs; mkdir -p "$L"
say() { echo "$*" | tee -a "$S"; }
el() { echo "$(( $(date +%s) - t0 ))"; }
left() { echo "$(( ${LIMIT:-200} - $(el) ))"; }
R=$PWD; A=$(mktemp -d /tmp/fresh.XXXXXX); mkdir -p "$A/b"
tar xzf "$R/.gpu/next.tgz" -C "$A/b" || { say "no bundle at .gpu/next.tgz (see the header)"; exit 1; }
cp -r "$R/notes/experiments/step15-skinny" "$A/exp15"; export SGEMM_CUBIN_CACHE=$A/cubins; mkdir -p "$SGEMM_CUBIN_CACHE"
say "bundle of $(cat "$R/.gpu/bundle-commit") in $A; $(nvidia-smi --query-gpu=index,name,driver_version,power.limit,temperature.gpu --format=csv,noheader | tr '\n' ';')"
cd "$A" || exit 1
nvcc -O3 -arch=sm_90a -o box-reads exp15/box-reads.cu > "$L/nvcc.log" 2>&1; say "nvcc box-reads.cu rc=$? [$(el) s]"
for r in 1 2; do timeout 60 ./box-reads > "$L/box-reads-$r.log" 2>&1; say "box-reads run $r rc=$? [$(el) s]"; done
for c in "128x11008x4096 skew 6" "64x11008x4096 skew 6" "64x4096x4096 skew 6" "1x4096x11008 skew 4"; do
  set -- $c; f=$L/lo-$1.log
  [ "$(left)" -lt 25 ] && { say "skip loads-only $1: out of time"; continue; }
  timeout 60 b/examples/tune15 "$1" fp16-c16 --only "$2 $3" --kernel exp15/loads-only.patch --beside --unchecked --rounds 2 > "$f" 2>&1
  say "loads-only beside the rung $1 rc=$?: $(grep -E '^\| (fp|bf)' "$f" | awk -F'|' '{gsub(/ +/, " "); printf "%s:%s;", $3, $6}') [$(el) s]"
done
(cd "$W" && tar czf "$OUT/logs.tgz" logs)
say ""; cat "$L/box-reads-1.log" | tee -a "$S"; say ""; grep -E "^\| [0-9]" "$L/box-reads-2.log" | tee -a "$S"
say "done [$(el) s]"
