#!/usr/bin/env bash
# One verification and timing pass on a GPU machine, from a bundle built by `cargo xtask bundle`.
#   scripts/gpu-pass.sh BUNDLE OUT [part ...]
# Parts: info smoke tests time bench ncu sanitize experiments tune (default: all but smoke). Steps with
# several precisions (step 7) are timed, profiled and sanitized in each. BENCHES (a glob),
# NCU_STEPS, SANITIZE_STEPS and TIME_STEPS (regexes) narrow those parts to some steps;
# TIME_SHAPES lists the shapes of the time part (default 4096), SANITIZE_SHAPES those of the sanitize
# part (MxNxK; default 67x45x33 and 68x44x36; step 15 swaps A and B at 17x45x33); EXPERIMENTS lists the
# experiment kernels to time (default: all of notes/experiments); TESTS (a glob) the test binaries. Every program's
# output goes to OUT/logs/; a short summary is printed last and kept in OUT/summary.md.
set -u
bundle=$(cd "$1" && pwd); out=$2; shift 2
parts=${*:-info tests time bench ncu sanitize experiments tune}
mkdir -p "$out/logs"; out=$(cd "$out" && pwd); logs=$out/logs
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$CUDA_HOME/lib64
export CRITERION_HOME=$out/criterion
summary=$out/summary.md
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
has() { [[ " $parts " == *" $1 "* ]]; }
bin=$bundle/bin
steps=$(ls "$bin" | sort)
# The sanitizer's shapes: the edge path everywhere, and the float4 path with edge tiles.
sanitize_shapes=${SANITIZE_SHAPES:-67x45x33 68x44x36}
# The --precision values a step binary takes, from its --help ("-" for the FP32 steps).
precisions() {
  local p; p=$("$bin/$1" --help | sed -n 's/.*\[possible values: \(.*\)\]/\1/p' | tr -d ',')
  echo "${p:--}"
}
# Every program gets a time limit: a kernel that hangs must not take the pass with it.
limit=${LIMIT:-300}
pflag() { [ "$1" = - ] || echo "--precision $1"; }

if has info; then
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee "$logs/nvidia-smi.txt"
  first=$(ls "$bin" | tail -1)
  SGEMM_VERBOSE=1 "$bin/$first" --m 64 --n 64 --k 64 --verify-only 2>&1 | tee "$logs/verbose-$first.log" | head -20
fi

if has smoke; then
  say "## smoke: every step in every precision, verified once at small shapes (30 s limit each)"
  for s in $(echo "$steps" | grep -E "${TIME_STEPS:-.}"); do
    for p in $(precisions "$s"); do
      for shape in 256 67x45x33; do
        log="$logs/smoke-$s-$p-$shape.log"
        timeout 30 "$bin/$s" --shape "$shape" $(pflag "$p") --verify-only > "$log" 2>&1; rc=$?
        say "- $s $p $shape: exit $rc $(grep -E 'vs (CPU|cuBLAS)' "$log" | grep -c ': ok') of 2 checks ok $(grep -m1 -E '^error' "$log")"
      done
    done
  done
fi

if has tests; then
  say "## tests"
  for t in "$bundle"/tests/${TESTS:-*}; do
    name=$(basename "$t")
    start=$(date +%s%N)
    timeout "$limit" "$t" > "$logs/test-$name.log" 2>&1; rc=$?
    secs=$(( ($(date +%s%N) - start) / 1000000 ))e-3
    say "- $name: exit $rc, $(grep -E '^test result' "$logs/test-$name.log" | tail -1) (${secs}s)"
  done
fi

if has time; then
  say "## one verified and timed run per step and shape (the step binary, alpha 1, beta 0)"
  for shape in ${TIME_SHAPES:-4096}; do
    for s in $(echo "$steps" | grep -E "${TIME_STEPS:-.}"); do
      for p in $(precisions "$s"); do
        start=$(date +%s%N)
        timeout "$limit" "$bin/$s" --shape "$shape" $(pflag "$p") > "$logs/time-$s-$p-$shape.log" 2>&1; rc=$?
        secs=$(( ($(date +%s%N) - start) / 1000000 ))e-3
        say "$(grep -E '^\| step' "$logs/time-$s-$p-$shape.log" || echo "| $s $p | $shape | exit $rc |") (${secs}s wall)"
        grep -E '^cuBLAS configurations' "$logs/time-$s-$p-$shape.log" | sed 's/^/  /' >> "$summary"
      done
    done
  done
fi

if has bench; then
  say "## criterion benches"
  for b in "$bundle"/benches/${BENCHES:-*}; do
    name=$(basename "$b")
    case $name in
      step05*|step06*) shapes=${BENCH_SHAPES_FAST:-1024,2048,4096,8192,4096x4096x1024,8192x1024x4096} ;;
      *) shapes=${BENCH_SHAPES:-1024,2048,4096} ;;
    esac
    SGEMM_BENCH_SHAPES=$shapes timeout "$limit" "$b" --bench > "$logs/bench-$name.log" 2>&1
    say "$(sed -n '/^| shape/,$p' "$logs/bench-$name.log")"
  done
fi

if has ncu; then
  say "## Nsight Compute at 4096^3 (first sgemm launch)"
  metrics=${NCU_METRICS:-l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active}
  run_ncu() { # label, binary args...
    local label=$1; shift
    timeout "$limit" ncu --clock-control none --kernel-name sgemm --launch-count 1 --metrics "$metrics" --csv "$@" --m 4096 --n 4096 --k 4096 --verify-only > "$logs/ncu-$label.csv" 2>&1
    say "- $label: $(grep -E '"(l1tex|dram|lts|gpu__|sm__)' "$logs/ncu-$label.csv" | awk -F'","' '{gsub(/"/,"",$NF); printf "%s=%s ", $(NF-2), $NF}')"
  }
  for s in $(echo "$steps" | grep -E "${NCU_STEPS:-.}"); do
    for p in $(precisions "$s" | tr ' ' '\n' | grep -E "${NCU_PRECISIONS:-.}"); do
      run_ncu "$s-$p" "$bin/$s" $(pflag "$p")
      # NCU_DEFINE=NAME=VALUE: the same kernel with one define changed (a tile size, say).
      [ -n "${NCU_DEFINE:-}" ] && run_ncu "$s-$p-$NCU_DEFINE" "$bin/$s" $(pflag "$p") --define "$NCU_DEFINE"
    done
  done
fi

if has experiments; then
  say "## experiments at 4096^3"
  for cu in ${EXPERIMENTS:-notes/experiments/*/*.patch}; do
    s=$(basename "$(dirname "$cu")")
    {
      label="$s--$(basename "$cu" .patch)-$RANDOM"
      "$bin/$s" --m 4096 --n 4096 --k 4096 --kernel "$cu" > "$logs/exp-$label.log" 2>&1
      say "- $label: $(grep -E '^\| step' "$logs/exp-$label.log" || tail -1 "$logs/exp-$label.log")"
      # Counters of the layouts: step 3's, and step 8 without its swizzle.
      if has ncu && [[ $s == step03* || $cu == */no-swizzle.patch ]]; then run_ncu "exp-$label" "$bin/$s" --kernel "$cu"; fi
    }
  done
fi

if has sanitize; then
  say "## compute-sanitizer"
  for s in $(echo "$steps" | grep -E "${SANITIZE_STEPS:-.}"); do
    for p in $(precisions "$s"); do
      for tool in memcheck racecheck synccheck; do
        for shape in $sanitize_shapes; do
          log="$logs/san-$s-$p-$tool-$shape.log"
          timeout "$limit" compute-sanitizer --tool $tool --error-exitcode 99 "$bin/$s" --shape "$shape" $(pflag "$p") --verify-only > "$log" 2>&1; rc=$?
          say "- $s $p $tool ($shape): exit $rc, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tr '\n' ' ')"
        done
      done
    done
  done
fi

if has tune; then
  for t in ${TUNERS:-tune07 tune08 tune09}; do
    say "## tile candidates ($t) at ${TUNE_SHAPE:-4096}"
    timeout "$limit" "$bundle/examples/$t" "${TUNE_SHAPE:-4096}" ${TUNE_PRECISION:-} > "$logs/$t.log" 2>&1
    say "$(grep -E '^\|' "$logs/$t.log")"
  done
fi

tar -C "$out" -czf "$out/logs.tar.gz" logs criterion 2>/dev/null
rm -rf "$logs" "$out/criterion"
echo; echo "==== summary"; cat "$summary"
