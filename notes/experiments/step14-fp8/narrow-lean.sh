#!/usr/bin/env bash
# narrow-lean.patch (notes/step14.md, "Next: the balanced narrow column with a lean producer,
# predicted before the run"): the step binary with the patch at five odd shapes in both block-scaled
# precisions (beta 0.5, against float64 and cuBLAS), memcheck and synccheck, `tune14 --beside
# --rounds 2` at the four target shapes, and the patch's source page at 4096³ beside the step's.
# Run from the repository root on the GPU machine with .gpu/b14.tgz and .gpu/bundle-commit as for
# narrow-pages.sh; writes $OUT/lean.tgz and $OUT/summary.md.
set -u
export CUDA_HOME=/usr/local/cuda LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64 PATH=$PATH:/usr/local/cuda/bin
S=$OUT/summary.md; : > "$S"; t0=$(date +%s); W=$(mktemp -d /tmp/w.XXXXXX); mkdir -p "$W/src" "$W/logs" "$W/tune"
say() { echo "$*" | tee -a "$S"; }
el() { echo "$(( $(date +%s) - t0 ))"; }
R=$PWD; A=$(mktemp -d /tmp/fresh.XXXXXX); mkdir -p "$A/b"; tar xzf "$R/.gpu/b14.tgz" -C "$A/b"
export SGEMM_CUBIN_CACHE=$A/cubins; mkdir -p "$SGEMM_CUBIN_CACHE"
cp -r "$R/notes/experiments/step14-fp8" "$A/exp14"
say "bundle of $(cat "$R/.gpu/bundle-commit") in $A; $(nvidia-smi --query-gpu=name,driver_version,power.limit,temperature.gpu --format=csv,noheader)"
cd "$A" || exit 1
P=exp14/narrow-lean.patch
for p in fp8-block fp8-block-c32; do
  for sh in 4096 1544x7184x2700 3000x5000x1000 4096x4160x6000 250x51600x3300; do
    f=$W/logs/check-$p-$sh.log
    timeout 60 b/bin/step14-fp8 --precision $p --shape $sh --beta 0.5 --verify-only --kernel $P > "$f" 2>&1
    say "check $p $sh rc=$? $(grep -E 'vs CPU|vs cuBLAS' "$f" | cut -c1-60 | tr '\n' ' ') [$(el) s]"
  done
done
for t in memcheck synccheck; do
  f=$W/logs/$t.log
  timeout 120 compute-sanitizer --tool $t b/bin/step14-fp8 --precision fp8-block --shape 3000x5000x1000 --beta 0.5 \
    --verify-only --kernel $P > "$f" 2>&1
  say "$t fp8-block 3000x5000x1000 rc=$? $(grep 'ERROR SUMMARY' "$f") [$(el) s]"
done
for v in 4096:fp8-block 4096:fp8-block-c32 8192:fp8-block 4096x11008x4096:fp8-block 4096x7168x16384:fp8-block; do
  sh=${v%%:*}; p=${v#*:}; f=$W/tune/$sh-$p.md
  [ "$(el)" -gt "${LIMIT:-480}" ] && { say "skipped tune14 $sh $p"; continue; }
  timeout 120 b/examples/tune14 "$sh" "$p" --only "cluster 2, group 8" --kernel $P --beside --rounds 2 > "$f" 2>&1
  say "tune14 $sh $p rc=$? [$(el) s]"; grep -E "^\| $p \|" "$f" | tee -a "$S"
done
if [ "$(el)" -lt "${LIMIT:-480}" ]; then
  n=narrow-lean-4096
  timeout 90 ncu --clock-control none --section SourceCounters --section WarpStateStats --section SpeedOfLight \
    --section LaunchStats -k regex:^sgemm$ -c 1 -o "$W/$n" b/bin/step14-fp8 --precision fp8-block --shape 4096 \
    --verify-only --kernel $P > "$W/logs/ncu-$n.log" 2>&1
  say "source page $n rc=$? [$(el) s]"
  timeout 60 ncu -i "$W/$n.ncu-rep" --page source --print-source sass --csv > "$W/src/$n.csv" 2> /dev/null
  timeout 60 ncu -i "$W/$n.ncu-rep" --page details --csv > "$W/src/$n-details.csv" 2> /dev/null
  grep -E '"Duration"|"Elapsed Cycles"' "$W/src/$n-details.csv" | awk -F'","' '{print $(NF-2), $(NF-1), $NF}' | tr '\n' ';' | tee -a "$S"; echo | tee -a "$S"
fi
(cd "$W" && tar czf "$OUT/lean.tgz" src logs tune)
say "done [$(el) s]"
