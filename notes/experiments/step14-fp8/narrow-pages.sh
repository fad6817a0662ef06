#!/usr/bin/env bash
# Nsight Compute's source pages of the block-scaled rung (BF16 C) beside narrow-inplace.patch and
# narrow-balanced.patch, one launch each through the step binary (--verify-only): at 4096³ all three,
# at 8192³ the step and narrow-balanced (notes/step14.md, "Next: where the balanced narrow column
# loses, predicted before the run"). Run from the repository root on the GPU machine with the
# bundle's step14-fp8 and tune14 packed in .gpu/b14.tgz (bin/, examples/) and its commit in
# .gpu/bundle-commit; writes $OUT/pages.tgz (the pages as CSV, the details pages, the logs) and
# $OUT/summary.md.
set -u
export CUDA_HOME=/usr/local/cuda LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64 PATH=$PATH:/usr/local/cuda/bin
S=$OUT/summary.md; : > "$S"; t0=$(date +%s); W=$(mktemp -d /tmp/w.XXXXXX); mkdir -p "$W/src" "$W/logs"
say() { echo "$*" | tee -a "$S"; }
el() { echo "$(( $(date +%s) - t0 ))"; }
R=$PWD; A=$(mktemp -d /tmp/fresh.XXXXXX); mkdir -p "$A/b"; tar xzf "$R/.gpu/b14.tgz" -C "$A/b"
export SGEMM_CUBIN_CACHE=$A/cubins; mkdir -p "$SGEMM_CUBIN_CACHE"
cp -r "$R/notes/experiments/step14-fp8" "$A/exp14"
say "bundle of $(cat "$R/.gpu/bundle-commit") in $A; $(nvidia-smi --query-gpu=name,driver_version,power.limit,temperature.gpu --format=csv,noheader)"
cd "$A" || exit 1
for v in 4096:step 4096:narrow-inplace 4096:narrow-balanced 8192:step 8192:narrow-balanced; do
  sh=${v%%:*}; k=${v#*:}; n=$k-$sh; kern=""; [ "$k" != step ] && kern="--kernel exp14/$k.patch"
  timeout 150 ncu --clock-control none --section SourceCounters --section WarpStateStats --section SpeedOfLight \
    --section LaunchStats -k regex:^sgemm$ -c 1 -o "$W/$n" b/bin/step14-fp8 --precision fp8-block --shape "$sh" \
    --verify-only $kern > "$W/logs/ncu-$n.log" 2>&1
  say "source page $n rc=$? [$(el) s]"
  grep -E "vs CPU|vs cuBLAS" "$W/logs/ncu-$n.log" | head -2 | cut -c1-90 | tee -a "$S"
  timeout 60 ncu -i "$W/$n.ncu-rep" --page source --print-source sass --csv > "$W/src/$n.csv" 2> /dev/null
  timeout 60 ncu -i "$W/$n.ncu-rep" --page details --csv > "$W/src/$n-details.csv" 2> /dev/null
  grep -E '"Duration"|"Elapsed Cycles"|"SM Frequency"|"Executed Instructions"' "$W/src/$n-details.csv" | awk -F'","' '{print $(NF-2), $(NF-1), $NF}' | tr '\n' ';' | tee -a "$S"; echo | tee -a "$S"
done
(cd "$W" && tar czf "$OUT/pages.tgz" src logs)
say "done [$(el) s]"
