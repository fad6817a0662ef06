#!/usr/bin/env bash
# Ran on 2026-12-02 (runs/h200-2026-12-02-be57761-release-ahead, with a fourth part, PART=rings):
# The run that notes/step15.md's "Next: the hand-back first after the wait" and notes/step14.md's
# "Next: the hand-back known before the wait" wait for: each step's release-ahead.patch beside the
# step, on one Hopper GPU, in three commands of at most 560 s (the script that ran before it, for
# the last BF16 pairs and the rule's choices back to back, is in
# runs/h200-2026-12-02-652b9e5-retune-bf16-pairs.tar.gz):
#   PART=ahead: the step binary with the patch at six odd shapes (alpha 1.5, beta 0.5) and
#     memcheck; then `tune15 64x4096x4096 P --beside --rounds 2` (the step and the patch in turns)
#     on the rule's plan with rings of 6, 7 and 8 buffers, the four precisions, one at a time and
#     back to back.
#   PART=around: `tune15 --only "the rule's plan, 6 buffers" --beside --rounds 2` at 128 x 4096 x 4096,
#     128 x 11008 x 4096, 16 x 11008 x 4096 and 1024³ (FP16 with a 16-bit C, BF16 with an FP32 C),
#     back to back; then `xtask references` with the patch as the top rung at 64 x 4096 x 4096
#     (FP16 and BF16, both C types, both timing methods).
#   PART=fp8: notes/step14.md's "Next: the hand-back known before the wait": the step binary with
#     experiments/step14-fp8/release-ahead.patch at odd shapes, K to 16384, memcheck in both
#     scalings; `tune14 4096 P --only "cluster 2, group 8" --beside --rounds 2` for the four FP8
#     precisions, one at a time and back to back.
# Built beside the source tree (release binaries):
#   cargo xtask bundle --out .gpu/b3
#   tar czf .gpu/adopt.tgz -C .gpu/b3 ./run.sh ./bin ./examples/tune15 ./examples/tune14
#   git rev-parse --short HEAD > .gpu/bundle-commit
# and run from the repository root with .gpu/adopt.tgz and .gpu/bundle-commit carried (the patch
# is read from the working tree): PART=ahead bash notes/experiments/next-run.sh. What comes back is
# OUT/raw.tgz; the summary is printed last.
set -u
OUT=${OUT:?the folder whose files come back}
export CUDA_HOME=/usr/local/cuda LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64 PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s); el() { echo "$(( $(date +%s) - t0 ))"; }
R=$PWD; A=$(mktemp -d /tmp/fresh.XXXXXX); mkdir -p "$A/b"
tar xzf "$R/.gpu/adopt.tgz" -C "$A/b" || { echo "no bundle at .gpu/adopt.tgz (see the header)"; exit 1; }
export SGEMM_CUBIN_CACHE=$A/cubins; mkdir -p "$SGEMM_CUBIN_CACHE"
W=$OUT/w; mkdir -p "$W/tune"; S=$W/summary.md
say() { echo "$*" | tee -a "$S"; }
say "bundle of $(cat "$R/.gpu/bundle-commit") in $A; $(nvidia-smi --query-gpu=name,driver_version,power.limit,temperature.gpu --format=csv,noheader)"
cd "$A" || exit 1
P=$R/notes/experiments/step15-skinny/release-ahead.patch
tune() { # tuner shape precision only how(one|b2b) limit: the experiment $P beside the step
  local f=$W/tune/$1-$2-$3-$5.md flag=; [ "$5" = b2b ] && flag=--back-to-back
  timeout "$6" "b/examples/$1" "$2" "$3" --only "$4" --kernel "$P" --beside --rounds 2 $flag > "$f" 2>&1
  say "$1 $2 $3 --only \"$4\" $5 rc=$? [$(el) s]"; grep -E "^\| $3 \|" "$f" | tee -a "$S"
}
case "${PART:-}" in
ahead)
  STEP=step15-skinny STEP_ARGS="--kernel $P" CHECKS="fp16-c16:1024x1024x1024 bf16:129x11008x4096 \
bf16-c16:999x1023x1001 fp16:63x4001x999 fp16-c16:17x2048x1024 bf16:3x11008x4096" \
    SANITIZE="memcheck:fp16-c16:17x2048x1024" bash "$R/scripts/record.sh" b "$W" | tee -a "$S"
  rings="the rule's plan, 6 buffers|the rule's plan, 7 buffers|the rule's plan, 8 buffers"
  for p in fp16 bf16 fp16-c16 bf16-c16; do for how in one b2b; do tune tune15 64x4096x4096 $p "$rings" $how 60; done; done ;;
around)
  for s in 128x4096x4096 128x11008x4096 16x11008x4096 1024; do for p in fp16-c16 bf16; do
    tune tune15 $s $p "the rule's plan, 6 buffers" b2b 45
  done; done
  timeout 150 b/bin/xtask references --shapes 64x4096x4096 --precisions fp16,bf16 --kernel "$P" \
    --out "$W/ahead-refs.json" > "$W/ahead-refs.log" 2>&1
  say "references with the patch rc=$? [$(el) s]"; grep -E "^\| 64x4096x4096 \| (fp16|bf16) \| (fp16|bf16|fp32) \|" "$W/ahead-refs.log" | tee -a "$S" ;;
fp8)
  P=$R/notes/experiments/step14-fp8/release-ahead.patch
  STEP=step14-fp8 STEP_ARGS="--kernel $P" CHECKS="fp8:1x1x1 fp8:1000x1001x2048 fp8-c32:333x577x4096 \
fp8:4096x4096x16384 fp8-block:200x300x2600 fp8-block:77x4096x4096 fp8-block-c32:640x1000x1024 fp8-block:4096x4096x16384" \
    SANITIZE="memcheck:fp8:129x257x2600 memcheck:fp8-block:200x300x2600" bash "$R/scripts/record.sh" b "$W" | tee -a "$S"
  for p in fp8 fp8-c32 fp8-block fp8-block-c32; do for how in one b2b; do tune tune14 4096 $p "cluster 2, group 8" $how 60; done; done ;;
*) echo "PART=ahead, PART=around or PART=fp8 (see the header)"; exit 2 ;;
esac
say "done [$(el) s]"
(cd "$OUT" && tar czf raw.tgz w && rm -rf w)
