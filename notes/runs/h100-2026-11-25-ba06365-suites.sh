#!/usr/bin/env bash
# The bundle of ba06365 (kernels as at 44603f7) in a fresh directory with no source tree: every test binary.
set -u
export CUDA_HOME=/usr/local/cuda LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
S=$OUT/summary.md; : > $S; t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $S
fresh=$(mktemp -d /tmp/fresh.XXXXXX); cp -r .gpu/b $fresh/bundle; cd $fresh
for t in bundle/tests/*; do
  n=$(basename $t); timeout 400 $t > $OUT/$n.log 2>&1; rc=$?
  echo "| $n | rc=$rc | $(grep -E '^test result' $OUT/$n.log | tail -1 | cut -c1-90) | $(( $(date +%s) - t0 )) s |" | tee -a $S
done
gzip $OUT/*.log
