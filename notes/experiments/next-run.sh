#!/usr/bin/env bash
# The GPU run that notes/step15.md's "The early signal is the loss" waits for, one command of about
# 250 s on one Hopper GPU: `tune15 --back-to-back --beside --rounds 2` with
# experiments/step15-skinny/pdl.patch and --define PDL=1 against the step, on the rule's plan
# (6 buffers; 8 where K = 11008), with the signal late (PDL_TRIGGER=2: each block's producer
# signals after asking for its last tile) and with no signal (PDL_TRIGGER=0: the blocks' exit), FP16
# with a 16-bit C at ten shapes and with an FP32 C at two; then `timeline15` back to back at
# 16 x 11008 x 4096 for both.
# Built beside the source tree (release binaries):
#   cargo xtask bundle --out .gpu/b2
#   tar czf .gpu/bundle.tgz -C .gpu/b2 ./run.sh ./bin ./examples/tune15 ./examples/timeline15
#   git rev-parse --short HEAD > .gpu/bundle-commit
# and run from the repository root with .gpu/bundle.tgz and .gpu/bundle-commit carried:
#   bash notes/experiments/next-run.sh
set -u
OUT=${OUT:?the folder whose files come back}
R=$PWD; A=$(mktemp -d /tmp/fresh.XXXXXX); mkdir -p "$A/b"
tar xzf "$R/.gpu/bundle.tgz" -C "$A/b" || { echo "no bundle at .gpu/bundle.tgz (see the header)"; exit 1; }
export SGEMM_CUBIN_CACHE=$A/cubins PATH=$PATH:/usr/local/cuda/bin; mkdir -p "$SGEMM_CUBIN_CACHE"
echo "bundle of $(cat "$R/.gpu/bundle-commit") in $A"
cd "$A" || exit 1
t0=$(date +%s); el() { echo "$(( $(date +%s) - t0 ))"; }
P=$R/notes/experiments/step15-skinny/pdl.patch
run() {  # NAME SHAPE PRECISION DEFINES... (the rule's ring: 8 buffers where K = 11008, else 6)
  local name=$1 sh=$2 p=$3; shift 3; local f=$OUT/$name.md ring=6
  case $sh in *x11008) ring=8;; esac
  timeout 100 b/examples/tune15 "$sh" "$p" --only "the rule's plan, $ring buffers" --kernel "$P" "$@" \
    --beside --back-to-back --rounds 2 > "$f" 2>&1
  echo "$name rc=$? [$(el) s]"; grep -E "^\| fp16|fastest|error" "$f"
}
for sh in 16x11008x4096 1x11008x4096 64x11008x4096 128x11008x4096 256x11008x4096 8x4096x4096 64x4096x4096 32x4096x11008 1024 2048; do
  for t in 2 0; do run "trigger$t-$sh" "$sh" fp16-c16 --define PDL=1 --define PDL_TRIGGER=$t; done
done
for sh in 16x11008x4096 1x11008x4096; do
  for t in 2 0; do run "trigger$t-c32-$sh" "$sh" fp16 --define PDL=1 --define PDL_TRIGGER=$t; done
done
T=$R/notes/experiments/step15-skinny/timeline.patch
for t in 2 0; do
  f=$OUT/timeline-16x11008x4096-trigger$t-back-to-back
  timeout 60 b/examples/timeline15 16x11008x4096 fp16-c16 --kernel "$T" --define PDL=1 --define PDL_TRIGGER=$t --back-to-back --out "$f.csv" > "$f.md" 2>&1
  echo "timeline PDL_TRIGGER=$t rc=$? [$(el) s]"; grep -E "^\| (launch|1|2|19) \||error" "$f.md"
done
# At most eight files come back: everything in one archive.
cd "$OUT" && tar czf ../raw.tgz . && find . -mindepth 1 -delete && mv ../raw.tgz .
echo "done [$(el) s]"
