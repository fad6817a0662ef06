#!/usr/bin/env bash
# The GPU run that the experiments prepared and not yet run wait for, in one command of about 330 s on
# one Hopper GPU:
#   - step 15, B's L2 promotion at the other shapes (notes/step15.md, "Next: what a miss of B
#     brings into L2", its last paragraph): `tune15 --beside --rounds 2`, the step's own kernel as
#     the experiment with --define B_PROMOTION=128, at the decode shapes where B streams that the
#     first run left out, BF16 with an FP32 C at four, and two shapes where B fits in L2;
#   - then Nsight Compute at 1 x 4096 x 11008 (FP16, 16-bit C) with and without it, a launch in the
#     middle of the step binary's timing and one from flushed caches: DRAM bytes, L2 hits, time;
#   - then step 14 the same way (`tune14 --beside`, its own kernel with B_PROMOTION=128 and 0) at
#     4096^3 in both scalings and at 4096 x 11008 x 4096 per tensor with an FP32 C;
#   - then the cubes of #74's targets with 128 bytes: step 15 at 1024^3 and step 12 at 2048^3.
# Built beside the source tree (release binaries):
#   cargo xtask bundle --out .gpu/b2
#   tar czf .gpu/bundle.tgz -C .gpu/b2 ./run.sh ./bin ./tests ./examples/tune15 ./examples/tune14 ./examples/tune12
#   git rev-parse --short HEAD > .gpu/bundle-commit
# and run from the repository root with .gpu/bundle.tgz and .gpu/bundle-commit carried:
#   LIMIT=370 bash notes/experiments/next-run.sh
# It writes $OUT/summary.md (a line a result) and $OUT/logs.tgz.
set -u
export CUDA_HOME=/usr/local/cuda LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64 PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:?the folder whose files come back}
S=$OUT/summary.md; : > "$S"; t0=$(date +%s); W=$(mktemp -d /tmp/w.XXXXXX); L=$W/logs; mkdir -p "$L"
say() { echo "$*" | tee -a "$S"; }
el() { echo "$(( $(date +%s) - t0 ))"; }
left() { echo "$(( ${LIMIT:-370} - $(el) ))"; }
R=$PWD; A=$(mktemp -d /tmp/fresh.XXXXXX); mkdir -p "$A/b"
tar xzf "$R/.gpu/bundle.tgz" -C "$A/b" || { say "no bundle at .gpu/bundle.tgz (see the header)"; exit 1; }
cp "$R/step15-skinny/src/kernel.cu" "$A/kernel.cu"; cp "$R/step14-fp8/src/kernel.cu" "$A/kernel14.cu"; cp "$R/step12-epilogue/src/kernel.cu" "$A/kernel12.cu"; export SGEMM_CUBIN_CACHE=$A/cubins; mkdir -p "$SGEMM_CUBIN_CACHE"
say "bundle of $(cat "$R/.gpu/bundle-commit") in $A; $(nvidia-smi --query-gpu=index,name,driver_version,power.limit,temperature.gpu --format=csv,noheader | tr '\n' ';')"
cd "$A" || exit 1
promoted() {  # shape, precision, the rule's skew
  local x=$1 p=$2 f=$L/tune-$1-$2.log
  [ "$(left)" -lt 40 ] && { say "skip $x $p: out of time"; return; }
  timeout 60 b/examples/tune15 "$x" "$p" --only "plan, skew $3" --kernel kernel.cu --beside --define B_PROMOTION=128 --rounds 2 > "$f" 2>&1
  say "$x $p rc=$?: $(grep -E '^\| (fp|bf)' "$f" | awk -F'|' '{gsub(/ +/, " "); printf "%s:%s %s;", $3, $6, $8}') [$(el) s]"
}
for c in "1x11008x4096 4" "8x11008x4096 4" "32x11008x4096 4" "64x11008x4096 6" "256x11008x4096 6" \
         "8x4096x11008 4" "32x4096x11008 4" "64x4096x11008 6" "128x4096x11008 6" "256x4096x11008 6" \
         "1x4096x4096 4" "16x4096x4096 4"; do set -- $c; promoted "$1" fp16-c16 "$2"; done
promoted 1x11008x4096 bf16 4; promoted 64x11008x4096 bf16 6; promoted 16x4096x11008 bf16 4; promoted 128x4096x11008 bf16 6
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
ncu1() {  # label, cache control, step binary arguments...
  local label=$1 cache=$2; shift 2; local f=$L/ncu-$label.log
  [ "$(left)" -lt 15 ] && { say "skip ncu $label: out of time"; return; }
  if [ "$cache" = none ]; then skip="--launch-skip 20"; else skip=""; fi
  timeout 60 ncu --clock-control none --cache-control "$cache" --metrics $M -k regex:^sgemm$ $skip --launch-count 1 \
    b/bin/step15-skinny --precision fp16-c16 --shape 1x4096x11008 "$@" > "$f" 2>&1
  say "ncu $label rc=$? $(grep -E 'gpu__time|dram__|lts__' "$f" | awk '{print $1"="$NF" "$(NF-1)}' | tr '\n' ' ') [$(el) s]"
}
ncu1 warm-256 none; ncu1 warm-128 none --define B_PROMOTION=128; ncu1 cold-256 all --verify-only; ncu1 cold-128 all --verify-only --define B_PROMOTION=128
fp8() {  # shape, precision, promotion
  local f=$L/t14-$1-$2-$3.log
  [ "$(left)" -lt 30 ] && { say "skip step 14 $1 $2 $3: out of time"; return; }
  timeout 60 b/examples/tune14 "$1" "$2" --only "cluster 2, group 8" --kernel kernel14.cu --beside --define "B_PROMOTION=$3" --rounds 2 > "$f" 2>&1
  say "step 14 $1 $2 B_PROMOTION=$3 rc=$?: $(grep -E '^\| (fp|bf)' "$f" | awk -F'|' '{gsub(/ +/, " "); printf "%s:%s %s;", $3, $6, $8}') [$(el) s]"
}
for n in 128 0; do fp8 4096 fp8 $n; fp8 4096 fp8-block $n; fp8 4096x11008x4096 fp8-c32 $n; done
promoted 1024 fp16 6
for p in fp16-c16 fp16; do
  f=$L/t12-2048-$p.log; [ "$(left)" -lt 30 ] && { say "skip step 12 2048 $p: out of time"; continue; }
  timeout 60 b/examples/tune12 2048 "$p" --only "128x256, 4 stages, cluster 2, group 8" --kernel kernel12.cu --beside --define B_PROMOTION=128 --rounds 2 > "$f" 2>&1
  say "step 12 2048 $p B_PROMOTION=128 rc=$?: $(grep -E '^\| (fp|bf)' "$f" | awk -F'|' '{gsub(/ +/, " "); printf "%s:%s %s;", $3, $6, $8}') [$(el) s]"
done
(cd "$W" && tar czf "$OUT/logs.tgz" logs)
say ""; say "| shape | precision | the step's GFLOP/s | B_PROMOTION=128's | 128 / step |"; say "|---|---|---|---|---|"
for f in "$L"/tune-*.log; do x=$(basename "$f" .log); x=${x#tune-}; sh=${x%%-*}; p=${x#*-}
  grep -E '^\| (fp|bf)' "$f" | awk -F'|' -v sh="$sh" -v p="$p" '{g=$6+0; if ($3 ~ /B_PROMOTION/) q=q" "g; else s=s" "g} END {k=split(s,a," "); split(q,b," "); r=""; for(i=1;i<=k;i++) r=r sprintf(" %+.1f%%", (b[i]/a[i]-1)*100); print "| " sh " | " p " |" s " |" q " |" r " |"}' | tee -a "$S"
done
say "done [$(el) s]"
