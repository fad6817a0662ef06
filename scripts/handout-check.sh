#!/usr/bin/env bash
# A student's handout, checked the way a student meets it on a machine with NVRTC and no GPU:
# it holds nothing of the staff's, `grade` refuses in it, its README is the lab's, and for every
# step a compile error planted in the step's kernel fails `cargo test -p <step>`.
#   scripts/handout-check.sh [STEP]     (default 05)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
step=${1:-05}
work=$(mktemp -d /tmp/handout-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$root"
cargo xtask handout "$step" --out "$work/lab"
cd "$work/lab"
for leak in labs notes scripts .ci steps/tests/fixtures CONTRIBUTING.md; do
  [ ! -e "$leak" ] || { echo "FAIL: the handout holds $leak"; exit 1; }
done
echo "ok: no labs/, notes/, scripts/, .ci, fixtures or CONTRIBUTING.md"
head -1 README.md | grep -q "^# Lab: " || { echo "FAIL: the README is not the lab's"; exit 1; }
# The handout builds in a target folder of its own: its crates have the tree's names and paths
# of another tree, and sharing a folder would mix their build outputs.
export CARGO_TARGET_DIR=${HANDOUT_TARGET_DIR:-$work/target}
if cargo run -q -p grader -- grade "$step" "$(ls -d step"$step"-*)/src/kernel.cu" > grade.log 2>&1; then
  echo "FAIL: grade ran in a handout"; cat grade.log; exit 1
fi
grep -q "student handout" grade.log || { echo "FAIL: grade did not say why it refused"; cat grade.log; exit 1; }
echo "ok: grade refuses: $(tail -1 grade.log)"
for kernel in step*/src/kernel.cu; do
  crate=${kernel%%/*}
  cp "$kernel" "$work/kernel.bak"
  printf '\nint planted = undefined_identifier;\n' >> "$kernel"
  if cargo test -q -p "$crate" > test.log 2>&1; then
    echo "FAIL: $crate passes with a compile error planted"; tail -5 test.log; exit 1
  fi
  grep -q "undefined_identifier" test.log || { echo "FAIL: $crate failed without naming the error"; tail -20 test.log; exit 1; }
  cp "$work/kernel.bak" "$kernel"
  echo "ok: $crate fails on a planted compile error ($(grep -E '^test result' test.log | tail -1))"
done
