#!/usr/bin/env bash
# The GPU run that the records wait for, in one command of about 450 s on one Hopper GPU:
#   - step 15's three references pairs that the record of B's promotion did not reach
#     (notes/step15.md, "The record with B's promotion at 128 bytes"): 256 x 11008 x 4096 in FP16
#     and BF16, 256 x 4096 x 11008 in BF16;
#   - then five pairs at N = 11008 that the record timed, again, in the same process as each
#     other, to see how far the fastest cuBLAS moves from run to run there (it ran 2-10% slower in
#     that record than in the one before): 1, 16 and 64 x 11008 x 4096 in FP16, 16 x 11008 x 4096
#     in BF16, and 128 x 11008 x 4096 in FP16, whose rung loses 11-15% from one at a time to back
#     to back where cuBLAS loses 0-6%: `xtask references` now prints the clock each verdict
#     contender's own samples met. They go into a second copy of the file, not the record, until
#     they are read.
# Each part is scripts/record.sh, which says in its summary what it left.
# Built beside the source tree (release binaries):
#   cargo xtask bundle --out .gpu/b2
#   tar czf .gpu/bundle.tgz -C .gpu/b2 ./run.sh ./bin
#   git rev-parse --short HEAD > .gpu/bundle-commit
# and run from the repository root with .gpu/bundle.tgz and .gpu/bundle-commit carried:
#   LIMIT=560 bash notes/experiments/next-run.sh
# It writes $OUT/record/ and $OUT/again/, each scripts/record.sh's (summary.md, refs.json, logs/);
# join the first with `xtask references --take $OUT/record/refs.json --out
# results/references/nvidia-h200.json`.
set -u
OUT=${OUT:?the folder whose files come back}
R=$PWD; A=$(mktemp -d /tmp/fresh.XXXXXX); mkdir -p "$A/b"; t0=$(date +%s)
tar xzf "$R/.gpu/bundle.tgz" -C "$A/b" || { echo "no bundle at .gpu/bundle.tgz (see the header)"; exit 1; }
export SGEMM_CUBIN_CACHE=$A/cubins; mkdir -p "$SGEMM_CUBIN_CACHE"
echo "bundle of $(cat "$R/.gpu/bundle-commit") in $A"
cd "$A" || exit 1
LIMIT=$(( ${LIMIT:-560} - 280 )) PAIRS="256x11008x4096:fp16 256x11008x4096:bf16 256x4096x11008:bf16" \
  bash "$R/scripts/record.sh" b "$OUT/record"
LIMIT=$(( ${LIMIT:-560} - $(date +%s) + t0 )) PAIRS="128x11008x4096:fp16 1x11008x4096:fp16 16x11008x4096:fp16 64x11008x4096:fp16 16x11008x4096:bf16" \
  bash "$R/scripts/record.sh" b "$OUT/again"
