#!/usr/bin/env bash
# The GPU run that the experiments prepared and not yet run wait for, in one command of about 400 s on
# one Hopper GPU:
#   - step 15, l2-ahead.patch (notes/step15.md, "Next: B from L2, further ahead"): checks at odd shapes
#     with AHEAD=8 and HINTS=1 (a check past 45 s marks the patch hung and skips the rest), memcheck and
#     synccheck, then tune15 --beside (two rounds, FP16 with a 16-bit C) at the decode shapes: AHEAD=8 and
#     HINTS=1 at eight shapes, AHEAD=4, AHEAD=16 and both together at four.
# Built beside the source tree (release binaries):
#   cargo xtask bundle --out .gpu/b2
#   tar czf .gpu/next.tgz -C .gpu/b2 ./bin/step15-skinny ./examples/tune15
#   git rev-parse --short HEAD > .gpu/bundle-commit
# and run from the repository root with .gpu/next.tgz and .gpu/bundle-commit carried:
#   LIMIT=560 bash notes/experiments/next-run.sh
# It writes $OUT/summary.md (a line a result, the table last) and $OUT/logs.tgz.
set -u
export CUDA_HOME=/usr/local/cuda LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64 PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:?the folder whose files come back}
S=$OUT/summary.md; : > "$S"; t0=$(date +%s); W=$(mktemp -d /tmp/w.XXXXXX); L=$W/logs; mkdir -p "$L"
say() { echo "$*" | tee -a "$S"; }
el() { echo "$(( $(date +%s) - t0 ))"; }
left() { echo "$(( ${LIMIT:-560} - $(el) ))"; }
R=$PWD; A=$(mktemp -d /tmp/fresh.XXXXXX); mkdir -p "$A/b"
tar xzf "$R/.gpu/next.tgz" -C "$A/b" || { say "no bundle at .gpu/next.tgz (see the header)"; exit 1; }
cp -r "$R/notes/experiments/step15-skinny" "$A/exp15"; export SGEMM_CUBIN_CACHE=$A/cubins; mkdir -p "$SGEMM_CUBIN_CACHE"
say "bundle of $(cat "$R/.gpu/bundle-commit") in $A; $(nvidia-smi --query-gpu=index,name,driver_version,power.limit,temperature.gpu --format=csv,noheader | tr '\n' ';')"
cd "$A" || exit 1
P=exp15/l2-ahead.patch; D="--define AHEAD=8 --define HINTS=1"; hung=0
for c in "fp16 63x4001x999 0.5" "bf16-c16 63x4001x999 0" "fp16 1x4096x11008 0.5" "fp16-c16 17x2048x1024 0.5" "fp16 129x11008x4096 0.5" \
         "fp16 255x11005x3001 0.5" "bf16 8x11008x4096 0.5" "fp16 3x4096x4097 0.5" "bf16-c16 64x4096x4096 0.5"; do
  set -- $c; f=$L/v-$1-$2-$3.log
  [ $hung = 1 ] && { say "skip check $c"; continue; }
  timeout 45 b/bin/step15-skinny --precision "$1" --shape "$2" --beta "$3" --kernel $P $D --verify-only > "$f" 2>&1; rc=$?
  [ $rc = 124 ] && hung=1
  say "check $1 $2 beta $3 rc=$rc $(grep -E 'vs (CPU|cuBLAS)' "$f" | sed 's/(limit.*//' | tr -s ' ' | tr '\n' ' ') [$(el) s]"
done
for t in memcheck synccheck; do
  [ $hung = 1 ] && continue; f=$L/san-$t.log
  timeout 90 compute-sanitizer --tool $t --error-exitcode 9 b/bin/step15-skinny --precision fp16 --shape 255x11005x3001 --beta 0.5 --kernel $P $D --verify-only > "$f" 2>&1
  say "$t 255x11005x3001 rc=$? $(grep -E 'ERROR SUMMARY' "$f" | tail -1) [$(el) s]"
done
beside() {  # shape, skew, label, defines...
  local x=$1 only="skew $2" label=$3; shift 3; local f=$L/b-$label-$x.log
  [ $hung = 1 ] && return; [ "$(left)" -lt 20 ] && { say "skip $label $x: out of time"; return; }
  timeout 60 b/examples/tune15 "$x" fp16-c16 --only "$only" --kernel $P "$@" --beside --rounds 2 > "$f" 2>&1
  say "$label $x rc=$?: $(grep -E '^\| (fp|bf)' "$f" | awk -F'|' '{gsub(/ +/, " "); printf "%s:%s %s;", $3, $6, $8}') [$(el) s]"
}
for c in "64x4096x4096 6" "64x11008x4096 6" "1x4096x11008 4" "16x11008x4096 4" "128x11008x4096 6" "1x11008x4096 4" "256x11008x4096 6" "16x4096x11008 4"; do
  set -- $c; beside "$1" "$2" ahead8 --define AHEAD=8
done
for c in "64x4096x4096 6" "64x11008x4096 6" "1x4096x11008 4" "16x11008x4096 4" "128x11008x4096 6" "1x11008x4096 4" "256x11008x4096 6" "16x4096x11008 4"; do
  set -- $c; beside "$1" "$2" hints --define HINTS=1
done
for c in "64x4096x4096 6" "64x11008x4096 6" "1x4096x11008 4" "16x11008x4096 4"; do
  set -- $c; beside "$1" "$2" ahead4 --define AHEAD=4; beside "$1" "$2" ahead16 --define AHEAD=16
  beside "$1" "$2" ahead8-hints --define AHEAD=8 --define HINTS=1
done
(cd "$W" && tar czf "$OUT/logs.tgz" logs)
say ""; say "| variant | shape | the step's GFLOP/s | the patch's | patch / step |"; say "|---|---|---|---|---|"
for f in "$L"/b-*.log; do x=$(basename "$f" .log); x=${x#b-}; v=${x%-*}; s=${x##*-}
  grep -E '^\| (fp|bf)' "$f" | awk -F'|' -v v="$v" -v x="$s" '{g=$6+0; if ($3 ~ /l2-ahead/) p=p" "g; else s=s" "g} END {n=split(s,a," "); split(p,b," "); r=""; for(i=1;i<=n;i++) r=r sprintf(" %+.1f%%", (b[i]/a[i]-1)*100); print "| " v " | " x " |" s " |" p " |" r " |"}' | tee -a "$S"
done
say "done [$(el) s]"
