#!/usr/bin/env bash
# Runs this bundle on a GPU machine (NVIDIA driver + CUDA 13 toolkit, no Rust needed).
#   ./run.sh tests    GPU and CPU tests of every crate
#   ./run.sh bench    the criterion bench of every step (SGEMM_BENCH_SHAPES picks shapes)
#   ./run.sh all      both (default)
# Set LOG_DIR to keep each program's output in a file there as well, SKIP to a regular
# expression of program names to leave out (e.g. SKIP=grader-cheats).
set -u
here=$(cd "$(dirname "$0")" && pwd)
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$CUDA_HOME/lib64
export CRITERION_HOME=${CRITERION_HOME:-$here/criterion}
mode=${1:-all}
log_dir=${LOG_DIR:-}
[ -n "$log_dir" ] && mkdir -p "$log_dir"
failed=()

run() { # name, command...
  local name=$1; shift
  echo "=== $name"
  if [ -n "$log_dir" ]; then "$@" 2>&1 | tee "$log_dir/$name.log"; rc=${PIPESTATUS[0]}; else "$@"; rc=$?; fi
  [ "$rc" -eq 0 ] || failed+=("$name (exit $rc)")
}

if [ "$mode" = tests ] || [ "$mode" = all ]; then
  for t in "$here"/tests/*; do
    [ -n "${SKIP:-}" ] && [[ $(basename "$t") =~ $SKIP ]] && continue
    run "test-$(basename "$t")" "$t"
  done
fi
if [ "$mode" = bench ] || [ "$mode" = all ]; then
  for b in "$here"/benches/*; do run "bench-$(basename "$b")" "$b" --bench; done
fi
if [ ${#failed[@]} -gt 0 ]; then
  printf 'FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "all passed"
