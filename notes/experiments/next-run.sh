#!/usr/bin/env bash
# The GPU run that notes/step15.md's "Next: the next launch under this one's tail" and
# notes/step14.md's "Next: the promotion every two or four K-tiles, on the kernel of now" wait for,
# on one Hopper GPU, in two commands (PART=pdl, about 300 s; PART=promote, about 350 s):
#   pdl: the step binary with experiments/step15-skinny/pdl.patch and --define PDL=1 at odd shapes
#     (alpha 1.5, beta 0.5), memcheck and synccheck; then `xtask references` with the patch as the
#     top rung (PDL=1) at 1024³, 128 x 11008 x 4096 and 64 x 4096 x 4096, and with PDL=0 (the
#     step's machine code) at 1024³, FP16 with both C types, both timing methods, into $OUT.
#   promote: the step binary with experiments/step14-fp8/promote-every-two.patch (PROMOTE=2 and 4)
#     at odd shapes and K = 16384 (fp8, fp8-c32); `xtask references` at 4096³ with
#     experiments/step14-fp8/pdl.patch (PDL=1) as the top rung, both scalings and C types; then
#     `tune14 --beside --rounds 2` at 4096³ (fp8, fp8-c32) and 4096 x 11008 x 4096 (fp8-c32) with
#     PROMOTE=2 and 4.
#   prefetch: the step binary with experiments/step15-skinny/prefetch-maps.patch at odd shapes,
#     memcheck; `tune15 --beside --rounds 2` on the rule's plan at six shapes; `xtask references`
#     with the patch as the top rung at 1024³ and 64 x 4096 x 4096 (FP16, both C types).
#   map: `xtask references` with experiments/step14-fp8/pdl.patch at 4096³ (fp8, both C types),
#     PDL=1 and PDL=0; with experiments/step15-skinny/pdl.patch (PDL=1) at 2048³, 8 x 4096 x 4096,
#     256 x 11008 x 4096 and 16 x 11008 x 4096 (FP16, both C types).
#   trigger: `xtask references` with experiments/step15-skinny/pdl.patch, PDL=1 and PDL_TRIGGER=0,
#     at 16 x 11008 x 4096 and 1024³ (FP16, both C types).
# Built beside the source tree (release binaries):
#   cargo xtask bundle --out .gpu/b2
#   tar czf .gpu/bundle.tgz -C .gpu/b2 ./run.sh ./bin ./examples/tune15 ./examples/tune14
#   git rev-parse --short HEAD > .gpu/bundle-commit
# and run from the repository root with .gpu/bundle.tgz and .gpu/bundle-commit carried:
#   PART=pdl bash notes/experiments/next-run.sh; PART=promote bash notes/experiments/next-run.sh
set -u
OUT=${OUT:?the folder whose files come back}
R=$PWD; A=$(mktemp -d /tmp/fresh.XXXXXX); mkdir -p "$A/b"
tar xzf "$R/.gpu/bundle.tgz" -C "$A/b" || { echo "no bundle at .gpu/bundle.tgz (see the header)"; exit 1; }
export SGEMM_CUBIN_CACHE=$A/cubins PATH=$PATH:/usr/local/cuda/bin; mkdir -p "$SGEMM_CUBIN_CACHE"
echo "bundle of $(cat "$R/.gpu/bundle-commit") in $A"
cd "$A" || exit 1
t0=$(date +%s); el() { echo "$(( $(date +%s) - t0 ))"; }
E=$R/notes/experiments
if [ "${PART:-}" = pdl ]; then
  X="--kernel $E/step15-skinny/pdl.patch --define PDL=1"
  STEP=step15-skinny STEP_ARGS="$X" CHECKS="fp16-c16:1024x1024x1024 bf16:129x11008x4096 bf16-c16:999x1023x1001 \
fp16:63x4001x999 fp16-c16:17x2048x1024 bf16-c16:1x4096x11008" SANITIZE="memcheck:fp16-c16:17x2048x1024 synccheck:fp16-c16:17x2048x1024" \
    bash "$R/scripts/record.sh" b "$OUT"
  for c in "1024,128x11008x4096,64x4096x4096|1" "1024|0"; do
    sh=${c%%|*}; v=${c#*|}
    timeout 280 b/bin/xtask references --shapes "$sh" --precisions fp16 --kernel "$E/step15-skinny/pdl.patch" --define PDL=$v \
      --out "$OUT/pdl$v.json" > "$OUT/pdl$v.log" 2>&1
    echo "references PDL=$v $sh rc=$? [$(el) s]"; grep -E "^\| [0-9]" "$OUT/pdl$v.log" | grep -v "^| .*cublas" | head -20
  done
elif [ "${PART:-}" = promote ]; then
  P=$E/step14-fp8/promote-every-two.patch
  for n in 2 4; do
    STEP=step14-fp8 STEP_ARGS="--kernel $P --define PROMOTE=$n" CHECKS="fp8:1x128x128 fp8:129x257x2600 fp8-c32:1000x1000x1000 \
fp8-c32:255x257x16384 fp8:4096x4096x16384" SANITIZE="memcheck:fp8:129x257x2600" bash "$R/scripts/record.sh" b "$OUT/promote$n"
  done
  for pr in fp8 fp8-block; do
    timeout 150 b/bin/xtask references --shapes 4096 --precisions $pr --kernel "$E/step14-fp8/pdl.patch" --define PDL=1 \
      --out "$OUT/pdl-$pr.json" > "$OUT/pdl-$pr.log" 2>&1
    echo "references PDL=1 4096 $pr rc=$? [$(el) s]"; grep -E "^\| 4096x4096x4096 \| $pr \| (bf16|fp32) \|" "$OUT/pdl-$pr.log"
  done
  for c in 4096:fp8 4096:fp8-c32 4096x11008x4096:fp8-c32; do
    IFS=: read -r sh p <<< "$c"
    for n in 2 4; do
      f=$OUT/tune14-$sh-$p-$n.md
      timeout 100 b/examples/tune14 $sh $p --only "cluster 2, group 8" --kernel $P --define PROMOTE=$n --beside --rounds 2 > "$f" 2>&1
      echo "tune14 $sh $p PROMOTE=$n rc=$? [$(el) s]"; grep -E "^\| fp8|fastest|error" "$f"
    done
  done
elif [ "${PART:-}" = prefetch ]; then
  P=$E/step15-skinny/prefetch-maps.patch
  STEP=step15-skinny STEP_ARGS="--kernel $P" CHECKS="fp16-c16:1024x1024x1024 bf16:129x11008x4096 bf16-c16:999x1023x1001 \
fp16:2047x2049x2000" SANITIZE="memcheck:fp16-c16:17x2048x1024" bash "$R/scripts/record.sh" b "$OUT"
  for c in 1024:fp16-c16 2048:fp16-c16 64x4096x4096:fp16-c16 1x4096x4096:bf16 128x11008x4096:fp16-c16 16x11008x4096:bf16-c16; do
    IFS=: read -r sh p <<< "$c"; f=$OUT/tune15-$sh-$p.md
    timeout 100 b/examples/tune15 $sh $p --only "the rule's plan, 6 buffers" --kernel $P --beside --rounds 2 > "$f" 2>&1
    echo "tune15 $sh $p rc=$? [$(el) s]"; grep -E "^\| (fp16|bf16)|fastest|error" "$f"
  done
  timeout 150 b/bin/xtask references --shapes 1024,64x4096x4096 --precisions fp16 --kernel "$P" --out "$OUT/prefetch.json" > "$OUT/prefetch.log" 2>&1
  echo "references prefetch rc=$? [$(el) s]"; grep -E "^\| [0-9]+x[0-9]+x[0-9]+ \| fp16 \| (fp16|fp32) \|" "$OUT/prefetch.log"
elif [ "${PART:-}" = map ]; then
  # The programmatic dependent launch at more shapes (step 15, PDL=1), and step 14's beside its
  # control (PDL=0 compiles to the step's machine code), each pair in one process.
  for v in 1 0; do
    timeout 120 b/bin/xtask references --shapes 4096 --precisions fp8 --kernel "$E/step14-fp8/pdl.patch" --define PDL=$v \
      --out "$OUT/fp8-pdl$v.json" > "$OUT/fp8-pdl$v.log" 2>&1
    echo "references step 14 PDL=$v rc=$? [$(el) s]"; grep -E "^\| 4096x4096x4096 \| fp8 \| (bf16|fp32) \|" "$OUT/fp8-pdl$v.log"
  done
  timeout 280 b/bin/xtask references --shapes 2048,8x4096x4096,256x11008x4096,16x11008x4096 --precisions fp16 \
    --kernel "$E/step15-skinny/pdl.patch" --define PDL=1 --out "$OUT/map.json" > "$OUT/map.log" 2>&1
  echo "references step 15 PDL=1 rc=$? [$(el) s]"; grep -E "^\| [0-9]+x[0-9]+x[0-9]+ \| fp16 \| (fp16|fp32) \|" "$OUT/map.log"
elif [ "${PART:-}" = trigger ]; then
  # Step 15's programmatic dependent launch without the early signal (PDL_TRIGGER=0): the next
  # launch starts as this one's blocks exit.
  timeout 200 b/bin/xtask references --shapes 16x11008x4096,1024 --precisions fp16 --kernel "$E/step15-skinny/pdl.patch" \
    --define PDL=1 --define PDL_TRIGGER=0 --out "$OUT/trigger0.json" > "$OUT/trigger0.log" 2>&1
  echo "references step 15 PDL=1 PDL_TRIGGER=0 rc=$? [$(el) s]"; grep -E "^\| [0-9]+x[0-9]+x[0-9]+ \| fp16 \| (fp16|fp32) \|" "$OUT/trigger0.log"
else
  echo "PART=pdl, promote, prefetch, map or trigger"; exit 2
fi
# At most eight files come back: everything in one archive.
cd "$OUT" && tar czf "../raw-$PART.tgz" . && find . -mindepth 1 -delete && mv "../raw-$PART.tgz" . 
echo "done [$(el) s]"
