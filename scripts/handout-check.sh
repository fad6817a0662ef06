#!/usr/bin/env bash
# A student's handout, checked the way a student meets it on a machine without a GPU: it holds
# nothing of the staff's and `grade` refuses in it; with NVRTC from pip in a virtual environment
# that is active (nothing on LD_LIBRARY_PATH), a compile error planted in any step's kernel fails
# `cargo test -p <step>` naming it, `--compile-only` shows NVRTC's log, and `cargo test --workspace`
# passes; with no NVRTC found (the environment not active), `cargo test -p` fails with the one
# line that says how to install it. Then the grader built there (its handout marker set aside, a
# staff's tree) stops on a machine without NVRTC before scoring anyone, and finds NVRTC in an
# active environment as the tests do.
#   scripts/handout-check.sh [STEP]     (default 05)
# NVRTC_VENV: a virtual environment with NVRTC's pip packages (default .venv-ci, which .ci/run makes).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
step=${1:-05}
venv=$(cd "${NVRTC_VENV:-$root/.venv-ci}" 2>/dev/null && pwd -P) ||
  { echo "error: no virtual environment with NVRTC at ${NVRTC_VENV:-$root/.venv-ci}: run .ci/run once, or set NVRTC_VENV"; exit 1; }
ls "$venv"/lib/python3*/site-packages/nvidia/cu13/lib/libnvrtc.so.13 > /dev/null 2>&1 ||
  { echo "error: $venv has no nvidia/cu13/lib/libnvrtc.so.13: pip install NVRTC's packages there (see README)"; exit 1; }
work=$(mktemp -d /tmp/handout-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$root"
cargo xtask handout "$step" --out "$work/lab"
cd "$work/lab"
for leak in labs notes scripts .ci steps/tests/fixtures steps/tests/rehash.rs grader/tests CONTRIBUTING.md; do
  [ ! -e "$leak" ] || { echo "FAIL: the handout holds $leak"; exit 1; }
done
if grep -q -e "hidden cases around" -e "labs/cheats" book/src/labs.md; then
  echo "FAIL: the handout's book keeps the staff's advice on hidden cases"; exit 1
fi
echo "ok: no labs/, notes/, scripts/, .ci, fixtures, grader tests, staff tests or CONTRIBUTING.md; the book's labs page is the student's"
head -1 README.md | grep -q "^# Lab: " || { echo "FAIL: the README is not the lab's"; exit 1; }
# The handout builds in a target folder of its own: its crates have the tree's names and paths
# of another tree, and sharing a folder would mix their build outputs.
export CARGO_TARGET_DIR=${HANDOUT_TARGET_DIR:-$work/target}
# A student's machine: no CUDA, no NVRTC on the loader path, nothing the CI requires, a home of
# its own (cargo and rustup stay where they are).
export CARGO_HOME=${CARGO_HOME:-$HOME/.cargo} RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}
unset LD_LIBRARY_PATH CUDA_HOME CUDA_PATH SGEMM_CUDA_INCLUDE VIRTUAL_ENV CONDA_PREFIX SGEMM_REQUIRE_NVRTC
export HOME=$work/home
mkdir -p "$HOME"
active() { VIRTUAL_ENV=$venv PATH=$venv/bin:$PATH "$@"; }
if cargo run -q -p grader -- grade "$step" "$(ls -d step"$step"-*)/src/kernel.cu" > grade.log 2>&1; then
  echo "FAIL: grade ran in a handout"; cat grade.log; exit 1
fi
grep -q "student handout" grade.log || { echo "FAIL: grade did not say why it refused"; cat grade.log; exit 1; }
echo "ok: grade refuses: $(tail -1 grade.log)"
for kernel in step*/src/kernel.cu; do
  crate=${kernel%%/*}
  cp "$kernel" "$work/kernel.bak"
  printf '\nint planted = undefined_identifier;\n' >> "$kernel"
  if active cargo test -q -p "$crate" > test.log 2>&1; then
    echo "FAIL: $crate passes with a compile error planted"; tail -5 test.log; exit 1
  fi
  grep -q "undefined_identifier" test.log || { echo "FAIL: $crate failed without naming the error"; tail -20 test.log; exit 1; }
  cp "$work/kernel.bak" "$kernel"
  echo "ok: $crate fails on a planted compile error ($(grep -E '^test result' test.log | tail -1))"
done
crate=$(ls -d step"$step"-*)
printf '#include "sgemm.cuh"\nextern "C" __global__ void sgemm() {\n    undeclared = 1;\n}\n' > "$work/broken.cu"
if active cargo run -q -p "$crate" -- --kernel "$work/broken.cu" --compile-only > run.log 2>&1; then
  echo "FAIL: --compile-only passed a kernel that does not compile"; cat run.log; exit 1
fi
grep -q "broken.cu(3): error" run.log || { echo "FAIL: --compile-only did not show NVRTC's log"; cat run.log; exit 1; }
active cargo run -q -p "$crate" -- --compile-only > run.log 2>&1 || { echo "FAIL: --compile-only"; cat run.log; exit 1; }
echo "ok: --compile-only shows NVRTC's log without a GPU ($(head -1 run.log))"
# No NVRTC found: a student's check fails, with one line that says how to install it.
cp "$crate/src/kernel.cu" "$work/kernel.bak"
for plant in no yes; do
  [ "$plant" = yes ] && printf '\nint planted = undefined_identifier;\n' >> "$crate/src/kernel.cu"
  if cargo test -q -p "$crate" > test.log 2>&1; then
    echo "FAIL: without NVRTC, cargo test -p $crate passes (planted error: $plant)"; tail -5 test.log; exit 1
  fi
  grep -q "^error: .*no NVRTC.*pip install.*active" test.log ||
    { echo "FAIL: without NVRTC, no line says how to install it"; tail -20 test.log; exit 1; }
done
cp "$work/kernel.bak" "$crate/src/kernel.cu"
echo "ok: without NVRTC, cargo test -p $crate fails: $(grep -m1 '^error: ' test.log | cut -c1-120)..."
active cargo test -q --workspace > workspace.log 2>&1 || { echo "FAIL: cargo test --workspace in the handout"; grep -E "FAILED|panicked|^error" workspace.log | head -20; exit 1; }
echo "ok: cargo test --workspace passes in the handout ($(grep -c '^test result: ok' workspace.log) test binaries)"
# The grader on a machine without NVRTC, and with NVRTC in an active environment only: the
# handout's grader with its marker set aside is a staff's tree whose references are skeletons,
# enough for --no-gpu.
mv .handout "$work/marker"
kernel=$crate/src/kernel.cu
mkdir -p "$work/class/Doe, Jane_1001"; cp "$kernel" "$work/class/Doe, Jane_1001/kernel.cu"
if cargo run -q -p grader -- grade --no-gpu --json "$work/card.json" -- "$step" "$kernel" > grade.log 2>&1; then
  echo "FAIL: grade scored a student on a machine without NVRTC"; cat grade.log; exit 1
fi
grep -q "^error: no NVRTC" grade.log && [ ! -e "$work/card.json" ] ||
  { echo "FAIL: grade without NVRTC: no one-line error, or a card"; cat grade.log; exit 1; }
if cargo run -q -p grader -- grade-class "$step" --no-gpu --submissions "$work/class" --out "$work/out" > grade.log 2>&1; then
  echo "FAIL: grade-class graded on a machine without NVRTC"; cat grade.log; exit 1
fi
grep -q "^error: no NVRTC" grade.log && [ ! -e "$work/out/class.csv" ] ||
  { echo "FAIL: grade-class without NVRTC: no one-line error, or a report"; cat grade.log; exit 1; }
echo "ok: without NVRTC grade and grade-class stop before scoring: $(tail -1 grade.log | cut -c1-100)..."
active cargo run -q -p grader -- grade --no-gpu --json "$work/card.json" --staff "$work/staff.txt" -- "$step" "$kernel" > grade.log 2>&1 ||
  { echo "FAIL: grade with NVRTC in an active virtual environment"; cat grade.log; exit 1; }
grep -q "pass compile: compiles for" grade.log && grep -q "compiled by NVRTC .* from $venv/" "$work/staff.txt" ||
  { echo "FAIL: the grader's compile did not find the environment's NVRTC"; cat grade.log "$work/staff.txt"; exit 1; }
mv "$work/marker" .handout
echo "ok: the grader's children compile with the NVRTC of the active environment ($(grep -m1 'compiled by' "$work/staff.txt"))"
