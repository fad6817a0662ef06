#!/usr/bin/env bash
# The GPU run that the records wait for, in one command of about 400 s on one Hopper GPU:
#   - step 15's three references pairs that the record of B's promotion did not reach
#     (notes/step15.md, "The record with B's promotion at 128 bytes"): 256 x 11008 x 4096 in FP16
#     and BF16, 256 x 4096 x 11008 in BF16;
#   - then four pairs at N = 11008 that the record timed, again, in the same process as each
#     other, to see how far the fastest cuBLAS moves from run to run there (it ran 2-10% slower in
#     that record than in the one before): 1, 16 and 64 x 11008 x 4096 in FP16, 16 x 11008 x 4096
#     in BF16. They go into a second copy of the file, not the record, until they are read.
# Built beside the source tree (release binaries):
#   cargo xtask bundle --out .gpu/b2
#   tar czf .gpu/bundle.tgz -C .gpu/b2 ./run.sh ./bin
#   git rev-parse --short HEAD > .gpu/bundle-commit
# and run from the repository root with .gpu/bundle.tgz and .gpu/bundle-commit carried:
#   LIMIT=560 bash notes/experiments/next-run.sh
# It writes $OUT/summary.md (a line a result), $OUT/refs.json (the record's copy with the three
# pairs), $OUT/again.json (the copy with the four pairs again) and $OUT/logs.tgz; join the first
# with `xtask references --take $OUT/refs.json --out results/references/nvidia-h200.json`.
set -u
export CUDA_HOME=/usr/local/cuda LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64 PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:?the folder whose files come back}
S=$OUT/summary.md; : > "$S"; t0=$(date +%s); W=$(mktemp -d /tmp/w.XXXXXX); L=$W/logs; mkdir -p "$L"
say() { echo "$*" | tee -a "$S"; }
el() { echo "$(( $(date +%s) - t0 ))"; }
left() { echo "$(( ${LIMIT:-560} - $(el) ))"; }
R=$PWD; A=$(mktemp -d /tmp/fresh.XXXXXX); mkdir -p "$A/b"
tar xzf "$R/.gpu/bundle.tgz" -C "$A/b" || { say "no bundle at .gpu/bundle.tgz (see the header)"; exit 1; }
export SGEMM_CUBIN_CACHE=$A/cubins; mkdir -p "$SGEMM_CUBIN_CACHE"
say "bundle of $(cat "$R/.gpu/bundle-commit") in $A; $(nvidia-smi --query-gpu=name,driver_version,power.limit,temperature.gpu --format=csv,noheader)"
cd "$A" || exit 1
cp "$R/results/references/nvidia-h200.json" refs.json; cp refs.json again.json
pairs() {  # file, then shape:precision...
  local file=$1; shift
  for spec in "$@"; do
    [ "$(left)" -lt 58 ] && { say "stopped before $spec [$(el) s]"; return; }
    local sh=${spec%%:*} p=${spec##*:} f=$L/references-$file-${spec/:/-}.log
    timeout "$(left)" b/bin/xtask references --shapes "$sh" --precisions "$p" --merge --out "$file.json" > "$f" 2>&1
    say "references $sh $p rc=$? [$(el) s]"; cp "$file.json" "$OUT/"
    grep -E "^\| $sh \| $p" "$f" | grep -E "one at a time|back to back" | tail -4 | cut -c1-200 | tee -a "$S"
  done
}
pairs refs 256x11008x4096:fp16 256x11008x4096:bf16 256x4096x11008:bf16
pairs again 1x11008x4096:fp16 16x11008x4096:fp16 64x11008x4096:fp16 16x11008x4096:bf16
(cd "$W" && tar czf "$OUT/logs.tgz" logs)
say "done [$(el) s]"
