#!/usr/bin/env bash
# Score cards on a GPU machine: every step's reference solution, every generated skeleton, the
# deliberately broken kernels (`.cu`, or `.patch` against the step's kernel) and the worked answers
# of labs/solutions (applied with `patch`), graded by the bundle's grader (`cargo xtask grade`) at its
# default settings (30 s a case, a 120 s budget, speed at 4096^3). The cheats of labs/cheats/ have
# their own test (the bundle's tests/grader-cheats), which prints a CHEAT line per kernel.
#   scripts/grade-pass.sh BUNDLE SKELETONS OUT [refs] [skeletons] [broken] [solutions]
# SKELETONS holds stepNN.cu files made by `cargo xtask handout NN`. ONLY (a regular expression)
# narrows every part to the grades whose label matches (e.g. ONLY='step1[0-4]'). Each grade's card,
# Gradescope JSON and staff's record go to OUT; a table of the totals is printed last.
set -u
bundle=$(cd "$1" && pwd); skel=$2; out=$3; shift 3
parts=${*:-refs skeletons broken solutions}
mkdir -p "$out"; out=$(cd "$out" && pwd)
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$CUDA_HOME/lib64
grader=$bundle/bin/grader
hidden=labs/hidden-example.txt
has() { [[ " $parts " == *" $1 "* ]]; }
table=$out/cards.md
echo "| step | kernel | correctness | speed | total | grading time (s) | first failure |" > "$table"
echo "|---|---|---:|---:|---:|---:|---|" >> "$table"
grade() { # label, step, file
  local label=$1 step=$2 file=$3
  [[ $label =~ ${ONLY:-.} ]] || return 0
  local start; start=$(date +%s%N)
  "$grader" grade --hidden "$hidden" --perf-shape "${PERF_SHAPE:-4096}" \
    --json "$out/$label.json" --staff "$out/$label.staff.txt" -- "$step" "$file" > "$out/$label.log" 2>&1
  local secs=$(( ($(date +%s%N) - start) / 100000000 )); secs="$((secs / 10)).$((secs % 10))"
  local card
  card=$(sed -n '/^score card/,$p' "$out/$label.log")
  local corr speed total fail
  corr=$(echo "$card" | grep -oE 'correctness [0-9]+/[0-9]+ scored cases: [0-9.]+' | sed 's/correctness //; s/ scored cases: / → /')
  speed=$(echo "$card" | grep -oE 'reference solution: [0-9.]+' | grep -oE '[0-9.]+$')
  total=$(echo "$card" | grep -oE 'total: [0-9.]+' | grep -oE '[0-9.]+$')
  fail=$(grep -m1 -E '^FAIL' "$out/$label.log" | cut -c1-150 | tr '|' '/')
  [ -n "$card" ] || fail="no score card: $(tail -1 "$out/$label.log" | cut -c1-150)"
  echo "| $step | $label | ${corr:--} | ${speed:--} | ${total:--} | $secs | ${fail:-none} |" | tee -a "$table"
}
if has refs; then
  for s in ${REF_STEPS:-01 02 03 04 05 06}; do grade "reference-step$s" "$s" "$(ls -d step$s-*)/src/kernel.cu"; done
  for p in fp16 tf32 fp64; do grade "reference-step07-$p" "step07-wmma-$p" step07-wmma/src/kernel.cu; done
  for p in fp16 bf16 tf32 fp64 3xtf32; do
    grade "reference-step08-$p" "step08-mma-ldmatrix-$p" step08-mma-ldmatrix/src/kernel.cu
  done
  for s in step09-wgmma-tma step10-warp-specialized step11-cluster-persistent; do
    for p in fp16 bf16; do grade "reference-${s%%-*}-$p" "$s-$p" "$s/src/kernel.cu"; done
  done
  for p in fp16 bf16 fp16-c16 bf16-c16; do grade "reference-step12-$p" "step12-epilogue-$p" step12-epilogue/src/kernel.cu; done
  for p in tf32 3xtf32; do grade "reference-step13-$p" "step13-3xtf32-$p" step13-3xtf32/src/kernel.cu; done
  for p in fp8 fp8-c32 fp8-block fp8-block-c32; do grade "reference-step14-$p" "step14-fp8-$p" step14-fp8/src/kernel.cu; done
fi
if has skeletons; then
  for f in "$skel"/step*.cu; do
    s=$(basename "$f" .cu); grade "skeleton-$s" "${s#step}" "$f"
  done
fi
if has broken; then
  for f in labs/broken/*/*.cu; do
    s=$(basename "$(dirname "$f")"); grade "broken-${s%%-*}-$(basename "$f" .cu)" "${s%%-*}" "$f"
  done
  for f in labs/broken/*/*.patch; do
    s=$(basename "$(dirname "$f")"); b=$(basename "$f" .patch); cu=$out/broken-$s-$b.cu
    patch -s -o "$cu" "$s/src/kernel.cu" "$f" && grade "broken-${s%%-*}-$b" "${s%%-*}" "$cu"
  done
fi
if has solutions; then
  for f in labs/solutions/*/*.patch; do
    s=$(basename "$(dirname "$f")"); cu=$out/solution-$s-$(basename "$f" .patch).cu
    patch -s -o "$cu" "$s/src/kernel.cu" "$f" && grade "solution-${s%%-*}-$(basename "$f" .patch)" "${s%%-*}" "$cu"
  done
fi
echo; cat "$table"
