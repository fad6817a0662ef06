#!/usr/bin/env bash
# A rung's record on a GPU machine, from a bundle built by `cargo xtask bundle`: what a change of a
# kernel or of a rule needs before it lands, in one command that a time limit can stop and the next
# command take up where it stopped.
#   scripts/record.sh BUNDLE OUT
# Each part runs when its variable is set, in this order:
#   STEP=step15-skinny CHECKS="fp16:63x11008x4096 ..."  the step binary against float64 and cuBLAS,
#                                  alpha 1.5 and beta 0.5 (PRECISION:SHAPE each)
#   STEP=... SANITIZE="memcheck:fp16-c16:255x11005x3001 ..."  compute-sanitizer (TOOL:PRECISION:SHAPE)
#   STEP_ARGS="--kernel X.patch --define CLUSTER=2"  more arguments of the step binary in both (an
#                                  experiment's kernel and defines)
#   PROFILE_STEPS=step15           scripts/profile.sh into OUT/profiles/<gpu>/
#   SWEEP_STEPS=15 SWEEP_SHAPES=1x11008x4096,...  `xtask sweep --merge` into OUT/sweep.json, a copy
#                                  of RESULTS/<gpu>.json
#   PAIRS="1x4096x11008:fp16 ..."  `xtask references --merge`, one pair at a time (about 50 s each
#                                  at the decode shapes) while LIMIT allows, into OUT/refs.json, a
#                                  copy of RESULTS/references/<gpu>.json
# RESULTS is the repository's results/ (default: the one beside this script); LIMIT the seconds the
# command may take (default 560). OUT/summary.md gets a line a result and, last, the pairs not
# reached ("left: ..."), to pass as PAIRS to the next command. Join the copies with
#   cargo xtask sweep --take OUT/sweep.json --out results/<gpu>.json
#   cargo xtask references --take OUT/refs.json --out results/references/<gpu>.json
set -u
bundle=$(cd "$1" && pwd); mkdir -p "$2"; out=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd); results=${RESULTS:-$here/../results}
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$CUDA_HOME/lib64 PATH=$PATH:$CUDA_HOME/bin
logs=$out/logs; mkdir -p "$logs"; summary=$out/summary.md; : > "$summary"; t0=$(date +%s)
say() { echo "$*" | tee -a "$summary"; }
el() { echo "$(( $(date +%s) - t0 ))"; }
left() { echo "$(( ${LIMIT:-560} - $(el) ))"; }
. "$here/gpu-slug.sh"
[ -n "$gpu" ] || { say "error: nvidia-smi names no GPU"; exit 1; }
say "record on $(nvidia-smi --query-gpu=name,driver_version,power.limit,temperature.gpu --format=csv,noheader -i "${SGEMM_DEVICE:-0}"), bundle $bundle"
step=$bundle/bin/${STEP:-none}
[ -n "${CHECKS:-}${SANITIZE:-}" ] && [ ! -x "$step" ] && { say "error: STEP names no step binary in $bundle/bin"; exit 1; }

for c in ${CHECKS:-}; do
  p=${c%%:*}; sh=${c##*:}; f=$logs/check-$p-$sh.log
  timeout 120 "$step" ${STEP_ARGS:-} --precision "$p" --shape "$sh" --alpha 1.5 --beta 0.5 --verify-only > "$f" 2>&1
  say "check $p $sh rc=$? $(grep -E 'vs (CPU|cuBLAS)' "$f" | sed 's/(limit.*//' | tr -s ' ' | tr '\n' ' ')[$(el) s]"
done
for c in ${SANITIZE:-}; do
  IFS=: read -r tool p sh <<< "$c"; f=$logs/$tool-$p-$sh.log
  timeout 180 compute-sanitizer --tool "$tool" "$step" ${STEP_ARGS:-} --precision "$p" --shape "$sh" --beta 0.5 --verify-only > "$f" 2>&1
  say "$tool $p $sh rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$f" | tail -1) [$(el) s]"
done
if [ -n "${PROFILE_STEPS:-}" ]; then
  PROFILE_STEPS=$PROFILE_STEPS LIMIT=180 bash "$here/profile.sh" "$bundle" "$out/profiles" > "$logs/profile.log" 2>&1
  say "profiles rc=$? $(ls "$out/profiles/$slug" 2>/dev/null | grep -c csv) files [$(el) s]"
fi
if [ -n "${SWEEP_STEPS:-}" ]; then
  cp "$results/$slug.json" "$out/sweep.json"
  timeout "$(left)" "$bundle/bin/xtask" sweep --steps "$SWEEP_STEPS" --shapes "${SWEEP_SHAPES:?SWEEP_SHAPES: the shapes to sweep}" \
    --merge --out "$out/sweep.json" > "$logs/sweep.log" 2>&1
  say "sweep rc=$? $(grep -E '^[0-9]+ runs' "$logs/sweep.log") [$(el) s]"
fi
[ -n "${PAIRS:-}" ] && cp "$results/references/$slug.json" "$out/refs.json"
set -- ${PAIRS:-}
while [ $# -gt 0 ]; do
  [ "$(left)" -lt 60 ] && break
  sh=${1%%:*}; p=${1##*:}; f=$logs/references-$sh-$p.log
  timeout "$(left)" "$bundle/bin/xtask" references --shapes "$sh" --precisions "$p" --merge --out "$out/refs.json" > "$f" 2>&1
  rc=$?; say "references $sh $p rc=$rc [$(el) s]"
  # A pair stopped by the limit (or failed) is left for the next command.
  [ $rc -eq 0 ] || break
  grep -E "^\| $sh \| $p \|" "$f" | grep -E "one at a time|back to back" | tail -4 | tee -a "$summary"
  shift
done
say "left: $*"
say "done [$(el) s]"
