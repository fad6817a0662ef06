#!/usr/bin/env bash
# The rest of step 15's record after it took the dependent launch without a signal (notes/step15.md,
# "The launch without a signal in the step, measured"): the sweep of step 15 at its 22 shapes of
# the swapped plans (2048³ and 4096³ run step 12's plan, whose figures stand), its four profiles and
# the references pairs not timed yet (FP16 at ten shapes, BF16 at 22), in
# commands of at most 560 s on one Hopper GPU; each prints "left: ..." for the next:
#   bash notes/experiments/next-run.sh                   the sweep, the profiles, then pairs
#   PAIRS="<what the last one left>" bash notes/experiments/next-run.sh   the pairs left
#   RETUNE=1 [PAIRS=...] bash notes/experiments/next-run.sh   tune15 at the four shapes furthest
#     from cuBLAS, one at a time and back to back, after the pairs if any (LIMIT lowered to leave
#     it time) until BUDGET s (575) have passed (notes/step15.md, "Next: the rule's choices back
#     to back, under the dependent launch"); each table into OUT/w/tune/; TUNE_SHAPES narrows the
#     shapes (e.g. TUNE_SHAPES="256x11008x4096 1024", where a command before ran out of time)
# With two GPUs on the machine, the BF16 pairs run on the second at the same time
# (SGEMM_DEVICE=1; their own summary in OUT/gpu1/). Built beside the source tree (release binaries):
#   cargo xtask bundle --out .gpu/b3
#   tar czf .gpu/adopt.tgz -C .gpu/b3 ./run.sh ./bin ./examples/tune15 ./tests/step15-skinny-gpu
#   git rev-parse --short HEAD > .gpu/bundle-commit
# and run from the repository root with .gpu/adopt.tgz and .gpu/bundle-commit carried. Join what
# comes back with `cargo xtask sweep --take`, `cargo xtask references --take` (scripts/record.sh's
# header) and copy the profiles into results/profiles/.
set -u
OUT=${OUT:?the folder whose files come back}
export CUDA_HOME=/usr/local/cuda LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64 PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s); R=$PWD; A=$(mktemp -d /tmp/fresh.XXXXXX); mkdir -p "$A/b"
tar xzf "$R/.gpu/adopt.tgz" -C "$A/b" || { echo "no bundle at .gpu/adopt.tgz (see the header)"; exit 1; }
export SGEMM_CUBIN_CACHE=$A/cubins; mkdir -p "$SGEMM_CUBIN_CACHE"
echo "bundle of $(cat "$R/.gpu/bundle-commit") in $A"
cd "$A" || exit 1
shapes=1x4096x4096,8x4096x4096,16x4096x4096,32x4096x4096,64x4096x4096,128x4096x4096,256x4096x4096
shapes=$shapes,1x4096x11008,8x4096x11008,16x4096x11008,32x4096x11008,64x4096x11008,128x4096x11008,256x4096x11008
shapes=$shapes,1x11008x4096,8x11008x4096,16x11008x4096,32x11008x4096,64x11008x4096,128x11008x4096,256x11008x4096
shapes=$shapes,1024
fp16="2048x2048x2048:fp16 256x4096x4096:fp16 1x4096x11008:fp16 8x4096x11008:fp16 16x4096x11008:fp16 64x4096x11008:fp16"
fp16="$fp16 128x4096x11008:fp16 256x4096x11008:fp16 8x11008x4096:fp16 32x11008x4096:fp16"
bf16=""
for s in ${shapes//,/ }; do bf16="$bf16 $( [[ $s == *x* ]] && echo "$s" || echo "${s}x${s}x${s}"):bf16"; done
record() { RESULTS=$R/results STEP=step15-skinny LIMIT=${LIMIT:-560} bash "$R/scripts/record.sh" "$A/b" "$@"; }
mkdir -p "$OUT/w"
if [ -n "${PAIRS:-}" ]; then
  PAIRS=$PAIRS record "$OUT/w"
elif [ -n "${RETUNE:-}" ]; then
  : # the tuner alone
elif [ "$(nvidia-smi -L | wc -l)" -ge 2 ]; then
  SWEEP_STEPS=15 SWEEP_SHAPES=$shapes PROFILE_STEPS=step15 PAIRS=$fp16 record "$OUT/w" &
  SGEMM_DEVICE=1 PAIRS=$bf16 record "$OUT/w/gpu1"
  wait
else
  SWEEP_STEPS=15 SWEEP_SHAPES=$shapes PROFILE_STEPS=step15 PAIRS="$fp16 $bf16" record "$OUT/w"
fi
if [ -n "${RETUNE:-}" ]; then
  # Each run's table whole in OUT/w/tune/, and in the summary the rule's plan and the three fastest
  # candidates by % of the fastest cuBLAS.
  mkdir -p "$OUT/w/tune"; end=$(( t0 + ${BUDGET:-575} ))
  for s in ${TUNE_SHAPES:-64x4096x4096 128x11008x4096 256x11008x4096 1024}; do for p in fp16-c16 bf16; do
    for how in one b2b; do
      left=$(( end - $(date +%s) )); [ "$left" -lt 45 ] && { echo "retune: out of time at $s $p $how" >> "$OUT/w/summary.md"; break 3; }
      f=$OUT/w/tune/tune15-$s-$p-$how.md; flag=; [ "$how" = b2b ] && flag=--back-to-back
      timeout "$left" "$A/b/examples/tune15" "$s" "$p" --rounds 2 $flag > "$f" 2>&1
      { echo "tune15 $s $p $how rc=$?"; grep -m1 "the rule's plan |" "$f"
        grep -E '^\| (fp16|bf16)' "$f" | sort -t'|' -k8 -g -r | head -3; } >> "$OUT/w/summary.md"
    done
  done; done
fi
cat "$OUT"/w/summary.md "$OUT"/w/gpu1/summary.md 2>/dev/null
(cd "$OUT" && tar czf raw.tgz w && rm -rf w)
