#!/usr/bin/env bash
# The GPU run that notes/step15.md's "Next: the dependent launch at N = 11008, in one process"
# waits for, one command of about 400 s on one Hopper GPU:
#   - `tune15 --back-to-back --beside --rounds 2` with experiments/step15-skinny/pdl.patch and
#     --define PDL=1 against the step, on the rule's plan, FP16 with a 16-bit C, at 16, 64 and 128 x
#     11008 x 4096, 32 x 4096 x 11008 and 1024³;
#   - the same without the early signal (PDL_TRIGGER=0) at 16 x 11008 x 4096 and 1024³;
#   - the same at 16 x 11008 x 4096 with --define STREAM=0 beside PDL=1, then PDL=0 with STREAM=0
#     (the loss with and without the L2 priorities of B's stream);
#   - `timeline15` with experiments/step15-skinny/timeline.patch at 16 x 11008 x 4096 and 1024³,
#     PDL=1 and PDL=0, back to back and one at a time: every block's SM and times, 20 launches each.
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
run() {  # NAME SHAPE DEFINES... (the rule's ring: 8 buffers where K = 11008, else 6)
  local name=$1 sh=$2; shift 2; local f=$OUT/$name.md ring=6
  case $sh in *x11008) ring=8;; esac
  timeout 100 b/examples/tune15 "$sh" fp16-c16 --only "the rule's plan, $ring buffers" --kernel "$P" "$@" \
    --beside --back-to-back --rounds 2 > "$f" 2>&1
  echo "$name rc=$? [$(el) s]"; grep -E "^\| fp16|fastest|error" "$f"
}
for sh in 16x11008x4096 64x11008x4096 128x11008x4096 32x4096x11008 1024; do run "pdl-$sh" "$sh" --define PDL=1; done
for sh in 16x11008x4096 1024; do run "notrigger-$sh" "$sh" --define PDL=1 --define PDL_TRIGGER=0; done
run stream0-pdl1 16x11008x4096 --define PDL=1 --define STREAM=0
run stream0-pdl0 16x11008x4096 --define PDL=0 --define STREAM=0
T=$R/notes/experiments/step15-skinny/timeline.patch
for sh in 16x11008x4096 1024; do
  for v in 1 0; do
    for how in back-to-back one-at-a-time; do
      f=$OUT/timeline-$sh-pdl$v-$how; flag=$([ $how = back-to-back ] && echo --back-to-back)
      timeout 60 b/examples/timeline15 "$sh" fp16-c16 --kernel "$T" --define PDL=$v $flag --out "$f.csv" > "$f.md" 2>&1
      echo "timeline $sh PDL=$v $how rc=$? [$(el) s]"; grep -E "^\| (launch|1|2|19) \||error" "$f.md"
    done
  done
done
# At most eight files come back: everything in one archive.
cd "$OUT" && tar czf ../raw.tgz . && find . -mindepth 1 -delete && mv ../raw.tgz .
echo "done [$(el) s]"
