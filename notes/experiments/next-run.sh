#!/usr/bin/env bash
# The GPU run that the experiments prepared and not yet run wait for, in one command of about 250 s on
# one Hopper GPU:
#   - step 15, l2-ahead.patch's priorities (notes/step15.md, "Next: which priority pays"): tune15 --beside
#     (two rounds) with HINTS=1, 2 and 3 at three shapes, HINTS=1 at ten more; then Nsight Compute's DRAM
#     bytes and L2 hits of the step, HINTS=1, AHEAD=8 and both at 128 x 11008 x 4096.
# Built beside the source tree (release binaries):
#   cargo xtask bundle --out .gpu/b2
#   tar czf .gpu/next.tgz -C .gpu/b2 ./bin/step15-skinny ./examples/tune15
#   git rev-parse --short HEAD > .gpu/bundle-commit
# and run from the repository root with .gpu/next.tgz and .gpu/bundle-commit carried:
#   LIMIT=400 bash notes/experiments/next-run.sh
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
P=exp15/l2-ahead.patch; hung=0
beside() {  # shape, skew, label, defines...
  local x=$1 only="skew $2" label=$3; shift 3; local f=$L/b-$label-$x.log
  [ $hung = 1 ] && return; [ "$(left)" -lt 20 ] && { say "skip $label $x: out of time"; return; }
  timeout 60 b/examples/tune15 "$x" "${PREC:-fp16-c16}" --only "$only" --kernel $P "$@" --beside --rounds 2 > "$f" 2>&1
  say "$label $x rc=$?: $(grep -E '^\| (fp|bf)' "$f" | awk -F'|' '{gsub(/ +/, " "); printf "%s:%s %s;", $3, $6, $8}') [$(el) s]"
}
for c in "128x11008x4096 6" "64x11008x4096 6" "64x4096x4096 6"; do
  set -- $c; for h in 1 2 3; do beside "$1" "$2" hints$h --define HINTS=$h; done
done
for c in "256x11008x4096 6" "32x11008x4096 4" "8x4096x11008 4" "32x4096x11008 4" "64x4096x11008 6" "128x4096x11008 6" "256x4096x11008 6"; do
  set -- $c; beside "$1" "$2" hints1 --define HINTS=1
done
PREC=fp16 beside 128x11008x4096 6 hints1.fp32c --define HINTS=1; PREC=bf16-c16 beside 128x11008x4096 6 hints1.bf16 --define HINTS=1
PREC=fp16 beside 64x11008x4096 6 hints1.fp32c --define HINTS=1
M=gpu__time_duration.sum,dram__bytes_read.sum,lts__t_bytes.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
ncu1() {  # label, step binary arguments...
  local label=$1; shift; local f=$L/ncu-$label.log
  [ "$(left)" -lt 20 ] && { say "skip ncu $label: out of time"; return; }
  timeout 60 ncu --clock-control none --metrics $M -k regex:^sgemm$ --launch-count 1 b/bin/step15-skinny --precision fp16-c16 --shape 128x11008x4096 --verify-only "$@" > "$f" 2>&1
  say "ncu $label rc=$? $(grep -E 'gpu__time|dram__|lts__' "$f" | awk '{print $1"="$NF" "$(NF-1)}' | tr '\n' ' ') [$(el) s]"
}
ncu1 step; ncu1 hints1 --kernel $P --define HINTS=1; ncu1 ahead8 --kernel $P --define AHEAD=8; ncu1 ahead8-hints1 --kernel $P --define AHEAD=8 --define HINTS=1
(cd "$W" && tar czf "$OUT/logs.tgz" logs)
say ""; say "| variant | shape | the step's GFLOP/s | the patch's | patch / step |"; say "|---|---|---|---|---|"
for f in "$L"/b-*.log; do x=$(basename "$f" .log); x=${x#b-}; v=${x%-*}; s=${x##*-}
  grep -E '^\| (fp|bf)' "$f" | awk -F'|' -v v="$v" -v x="$s" '{g=$6+0; if ($3 ~ /l2-ahead/) p=p" "g; else s=s" "g} END {n=split(s,a," "); split(p,b," "); r=""; for(i=1;i<=n;i++) r=r sprintf(" %+.1f%%", (b[i]/a[i]-1)*100); print "| " v " | " x " |" s " |" p " |" r " |"}' | tee -a "$S"
done
say "done [$(el) s]"
