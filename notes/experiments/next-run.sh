#!/usr/bin/env bash
# The GPU run that the experiments prepared and not yet run wait for, in one command of about 300 s on
# one Hopper GPU:
#   - step 15, cuBLAS's plan at K = 11008 (notes/step15.md, "Next: cuBLAS's plan at K = 11008"):
#     `tune15 --rounds 2` with the rule's plan beside 128-row tiles 8 or 16 wide in three slices at
#     1, 8 and 16 x 4096 x 11008; then Nsight Compute on the first launches of `tune15` at
#     1 x 4096 x 11008 (FP16 and BF16, 16-bit C): the checks of cublasGemmEx and cuBLASLt's
#     first four algorithms, named with their grids and times.
# Built beside the source tree (release binaries):
#   cargo xtask bundle --out .gpu/b2
#   tar czf .gpu/bundle.tgz -C .gpu/b2 ./run.sh ./bin ./tests ./examples/tune15
#   git rev-parse --short HEAD > .gpu/bundle-commit
# and run from the repository root with .gpu/bundle.tgz and .gpu/bundle-commit carried:
#   LIMIT=300 bash notes/experiments/next-run.sh
# It writes $OUT/summary.md (a line a result) and $OUT/logs.tgz.
set -u
export CUDA_HOME=/usr/local/cuda LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64 PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:?the folder whose files come back}
S=$OUT/summary.md; : > "$S"; t0=$(date +%s); W=$(mktemp -d /tmp/w.XXXXXX); L=$W/logs; mkdir -p "$L"
say() { echo "$*" | tee -a "$S"; }
el() { echo "$(( $(date +%s) - t0 ))"; }
left() { echo "$(( ${LIMIT:-300} - $(el) ))"; }
R=$PWD; A=$(mktemp -d /tmp/fresh.XXXXXX); mkdir -p "$A/b"
tar xzf "$R/.gpu/bundle.tgz" -C "$A/b" || { say "no bundle at .gpu/bundle.tgz (see the header)"; exit 1; }
export SGEMM_CUBIN_CACHE=$A/cubins; mkdir -p "$SGEMM_CUBIN_CACHE"
say "bundle of $(cat "$R/.gpu/bundle-commit") in $A; $(nvidia-smi --query-gpu=index,name,driver_version,power.limit,temperature.gpu --format=csv,noheader | tr '\n' ';')"
cd "$A" || exit 1
plan96() {  # shape, precision, the candidate's label
  local x=$1 p=$2 f=$L/tune-$1-$2.log
  [ "$(left)" -lt 30 ] && { say "skip $x $p: out of time"; return; }
  timeout 90 b/examples/tune15 "$x" "$p" --only "plan, skew 4|$3" --rounds 2 > "$f" 2>&1
  say "$x $p rc=$? [$(el) s] $(grep -E '^(fp|bf)[0-9c-]*: fastest' "$f")"
  grep -E '^\| (fp|bf)' "$f" | awk -F'|' '{gsub(/^ +| +$/, "", $3); gsub(/ /, "", $8); printf "  %s: %s (%s)\n", $3, $8, $9}' | tee -a "$S"
}
plan96 1x4096x11008 fp16-c16 "bm: 128, bn: 8,"; plan96 1x4096x11008 bf16-c16 "bm: 128, bn: 8,"
plan96 8x4096x11008 fp16-c16 "bm: 128, bn: 8,"; plan96 16x4096x11008 bf16-c16 "bm: 128, bn: 16,"
for p in fp16-c16 bf16-c16; do
  [ "$(left)" -lt 60 ] && { say "skip ncu $p: out of time"; continue; }
  f=$L/ncu-cublas-$p.log
  timeout 120 ncu --clock-control none --cache-control all --metrics gpu__time_duration.sum,dram__bytes_read.sum --launch-count 16 \
    b/examples/tune15 1x4096x11008 "$p" --only "plan, skew 4" > "$f" 2>&1
  say "ncu cuBLAS $p rc=$? [$(el) s] $(grep -E '^(fp|bf)[0-9c-]*: fastest' "$f")"
  awk '/^  [^ ].*\)x\(/ {g=""; if (match($0, /\([0-9, ]+\)x\([0-9, ]+\)/)) g=substr($0, RSTART, RLENGTH); n=substr($0, 3, 90)}
       /gpu__time_duration.sum/ {print "  " n " " g " : " $NF " " $(NF-1)}' "$f" | tee -a "$S"
done
(cd "$W" && tar czf "$OUT/logs.tgz" logs)
say "done [$(el) s]"
