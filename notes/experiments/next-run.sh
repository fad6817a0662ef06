#!/usr/bin/env bash
# The GPU run that the experiments prepared and not yet run wait for, in one command of about 420 s on
# one Hopper GPU:
#   - step 15, taller tiles where K is long (notes/step15.md, "Next: taller tiles where K is long"):
#     `tune15 --rounds 2` with the rule's plan beside "the rule's plan on 128 rows, twice the
#     slices" (6 and 8 buffers, the rule's skew and half of it) at ten shape and precision pairs.
# Built beside the source tree (release binaries):
#   cargo xtask bundle --out .gpu/b2
#   tar czf .gpu/bundle.tgz -C .gpu/b2 ./run.sh ./bin ./tests ./examples/tune15
#   git rev-parse --short HEAD > .gpu/bundle-commit
# and run from the repository root with .gpu/bundle.tgz and .gpu/bundle-commit carried:
#   LIMIT=420 bash notes/experiments/next-run.sh
# It writes $OUT/summary.md (a line a result) and $OUT/logs.tgz.
set -u
export CUDA_HOME=/usr/local/cuda LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64 PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:?the folder whose files come back}
S=$OUT/summary.md; : > "$S"; t0=$(date +%s); W=$(mktemp -d /tmp/w.XXXXXX); L=$W/logs; mkdir -p "$L"
say() { echo "$*" | tee -a "$S"; }
el() { echo "$(( $(date +%s) - t0 ))"; }
left() { echo "$(( ${LIMIT:-420} - $(el) ))"; }
R=$PWD; A=$(mktemp -d /tmp/fresh.XXXXXX); mkdir -p "$A/b"
tar xzf "$R/.gpu/bundle.tgz" -C "$A/b" || { say "no bundle at .gpu/bundle.tgz (see the header)"; exit 1; }
export SGEMM_CUBIN_CACHE=$A/cubins; mkdir -p "$SGEMM_CUBIN_CACHE"
say "bundle of $(cat "$R/.gpu/bundle-commit") in $A; $(nvidia-smi --query-gpu=index,name,driver_version,power.limit,temperature.gpu --format=csv,noheader | tr '\n' ';')"
cd "$A" || exit 1
taller() {  # shape, precision, the rule's skew
  local x=$1 p=$2 f=$L/tune-$1-$2.log
  [ "$(left)" -lt 30 ] && { say "skip $x $p: out of time"; return; }
  timeout 90 b/examples/tune15 "$x" "$p" --only "plan, skew $3|128 rows" --rounds 2 > "$f" 2>&1
  say "$x $p rc=$? [$(el) s]"
  grep -E '^\| (fp|bf)' "$f" | awk -F'|' '{gsub(/^ +| +$/, "", $3); gsub(/ /, "", $8); printf "  %s: %s (%s)\n", $3, $8, $9}' | tee -a "$S"
}
taller 1x4096x11008 fp16-c16 4; taller 1x4096x11008 bf16-c16 4; taller 8x4096x11008 fp16-c16 4
taller 16x4096x11008 bf16-c16 4; taller 64x4096x11008 bf16-c16 6; taller 64x4096x11008 bf16 6
taller 1x4096x4096 fp16-c16 4; taller 256x4096x11008 fp16-c16 6; taller 128x4096x4096 bf16-c16 6
taller 256x4096x4096 bf16-c16 6
(cd "$W" && tar czf "$OUT/logs.tgz" logs)
say "done [$(el) s]"
