#!/usr/bin/env bash
# The GPU run that the experiments prepared and not yet run wait for, in one command of about 250 s on
# one Hopper GPU:
#   - step 15, what a miss of B brings into L2 (notes/step15.md, "Next: what a miss of B brings
#     into L2"): `tune15 --beside --rounds 2` with the step's own kernel as the experiment and
#     --define B_PROMOTION=128 or 0 (the host's map of B; the machine code is the step's), at six
#     shape and precision pairs.
# Built beside the source tree (release binaries):
#   cargo xtask bundle --out .gpu/b2
#   tar czf .gpu/bundle.tgz -C .gpu/b2 ./run.sh ./bin ./tests ./examples/tune15
#   git rev-parse --short HEAD > .gpu/bundle-commit
# and run from the repository root with .gpu/bundle.tgz and .gpu/bundle-commit carried:
#   LIMIT=250 bash notes/experiments/next-run.sh
# It writes $OUT/summary.md (a line a result) and $OUT/logs.tgz.
set -u
export CUDA_HOME=/usr/local/cuda LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64 PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:?the folder whose files come back}
S=$OUT/summary.md; : > "$S"; t0=$(date +%s); W=$(mktemp -d /tmp/w.XXXXXX); L=$W/logs; mkdir -p "$L"
say() { echo "$*" | tee -a "$S"; }
el() { echo "$(( $(date +%s) - t0 ))"; }
left() { echo "$(( ${LIMIT:-250} - $(el) ))"; }
R=$PWD; A=$(mktemp -d /tmp/fresh.XXXXXX); mkdir -p "$A/b"
tar xzf "$R/.gpu/bundle.tgz" -C "$A/b" || { say "no bundle at .gpu/bundle.tgz (see the header)"; exit 1; }
cp "$R/step15-skinny/src/kernel.cu" "$A/kernel.cu"; export SGEMM_CUBIN_CACHE=$A/cubins; mkdir -p "$SGEMM_CUBIN_CACHE"
say "bundle of $(cat "$R/.gpu/bundle-commit") in $A; $(nvidia-smi --query-gpu=index,name,driver_version,power.limit,temperature.gpu --format=csv,noheader | tr '\n' ';')"
cd "$A" || exit 1
promoted() {  # shape, precision, the rule's skew, promotion
  local x=$1 p=$2 f=$L/tune-$1-$2-$4.log
  [ "$(left)" -lt 20 ] && { say "skip $x $p $4: out of time"; return; }
  timeout 60 b/examples/tune15 "$x" "$p" --only "plan, skew $3" --kernel kernel.cu --beside --define "B_PROMOTION=$4" --rounds 2 > "$f" 2>&1
  say "$x $p B_PROMOTION=$4 rc=$?: $(grep -E '^\| (fp|bf)' "$f" | awk -F'|' '{gsub(/ +/, " "); printf "%s:%s %s;", $3, $6, $8}') [$(el) s]"
}
for n in 128 0; do
  promoted 1x4096x11008 fp16-c16 4 $n; promoted 1x4096x11008 bf16-c16 4 $n; promoted 16x4096x11008 fp16-c16 4 $n
  promoted 16x11008x4096 fp16-c16 4 $n; promoted 128x11008x4096 fp16-c16 6 $n; promoted 64x4096x4096 fp16-c16 6 $n
done
(cd "$W" && tar czf "$OUT/logs.tgz" logs)
say ""; say "| shape | precision | promotion | the step's GFLOP/s | B_PROMOTION's | B_PROMOTION / step |"; say "|---|---|---|---|---|---|"
for f in "$L"/tune-*.log; do x=$(basename "$f" .log); x=${x#tune-}; n=${x##*-}; x=${x%-*}; sh=${x%%-*}; p=${x#*-}
  grep -E '^\| (fp|bf)' "$f" | awk -F'|' -v sh="$sh" -v p="$p" -v n="$n" '{g=$6+0; if ($3 ~ /B_PROMOTION/) q=q" "g; else s=s" "g} END {k=split(s,a," "); split(q,b," "); r=""; for(i=1;i<=k;i++) r=r sprintf(" %+.1f%%", (b[i]/a[i]-1)*100); print "| " sh " | " p " | " n " |" s " |" q " |" r " |"}' | tee -a "$S"
done
say "done [$(el) s]"
