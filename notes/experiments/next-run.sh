#!/usr/bin/env bash
# Step 15's record after its swapped plans took the hand-back first after the wait (notes/step15.md,
# "The record with the hand-back first"): every swapped plan's machine code changed, so the 22
# swapped shapes' references pairs (44, FP16 and BF16), their sweep and the four profiles are timed
# again (2048³ and 4096³ run step 12's plan, whose machine code and figures stand). Ran on
# 2026-12-02 (runs/h200-2026-12-02-1066746-ahead-record): FIRST=1, then the pairs twice; then
# (runs/h200-2026-12-02-b7cef6f-bf16-plan64-reads) TUNE=1 PLAN64=1 READS=1 with the 19 BF16 pairs
# left, and the pairs once more: every pair is timed on this kernel; then PAIRS_WAIT=1
# (runs/h200-2026-12-02-ae32eb2-pairs-wait); then WAITS=1 (runs/h200-2026-12-02-bef0e23-waits), DRAIN=1
# (runs/h200-2026-12-02-83d2de4-drain-read), WARM=1 (runs/h200-2026-12-02-78cd6f4-warm), MASKS=1
# (runs/h200-2026-12-02-e6a9ece-masks), RINGS=1 (runs/h200-2026-12-02-5ecf5f0-rings),
# FORWARD=1 (runs/h200-2026-12-02-42bc878-forward). RATE=1
# (runs/h200-2026-12-02-1fcb61f-rate), THREED=1 (runs/h200-2026-12-02-349f343-3d),
# AFTER=1 (runs/h200-2026-12-02-c782652-after), RETUNE=1 (runs/h200-2026-12-02-f750310-retune), PLACE=1
# (runs/h200-2026-12-02-1919453-place), PLACE2=1 (runs/h200-2026-12-02-0e447b5-place-more), PLACE3=1
# (runs/h200-2026-12-02-f23fe3c-place-control), ORDERS=1 (as GROUPS=1: runs/h200-2026-12-02-140f12f-groups),
# GROUP16=1 (runs/h200-2026-12-02-bf9724a-group16-record), ORDERS2=1 ROUND=1
# (runs/h200-2026-12-02-5f43ff5-orders2-one-round), ROUND2=1 (runs/h200-2026-12-02-334d1d2-rounds-suite),
# STARTS=1 (runs/h200-2026-12-02-5896716-starts), UNIT=1 (runs/h200-2026-12-02-e5582e0-early-unit),
# REGS=1 (runs/h200-2026-12-02-baf5477-keep-regs), ARRIVE=1 (runs/h200-2026-12-02-ced2de3-local-arrive).
# In commands of at most LIMIT s (default 560) on one Hopper GPU; each prints "left: ..." for the next:
#   FIRST=1 bash notes/experiments/next-run.sh     the step's GPU suite, checks at eight odd shapes,
#                                                  memcheck, synccheck, racecheck, step 15's
#                                                  reference graded (timed); then SWEEP=1's part
#   SWEEP=1 ...                                    the sweep of the 22 shapes, the four profiles,
#                                                  then pairs
#   PAIRS="<what the last one left>" ...           the pairs left (with FIRST or SWEEP: after them)
#   TUNE=1 ...                                     first, "The record with the hand-back first"'s
#                                                  prediction: at 256 x 4096 x 11008, FP16, both C
#                                                  types, both timings, `tune15 --beside` with
#                                                  late-hand-back.patch (the loop of before), the
#                                                  rule's ring and six buffers (about 150 s)
#   PLAN64=1 ...                                   first, "Next: cuBLAS's plan at 64 x 4096 x 4096
#                                                  with its ring"'s prediction: `tune15 --beside`
#                                                  on 64 x 32 tiles with 16 buffers, in clusters of
#                                                  two sharing B^T (cluster-columns.patch, and
#                                                  cluster-pieces.patch with B_BOX_ROWS=32), FP16
#                                                  with a 16-bit C and BF16 with an FP32 C, one at
#                                                  a time (about 160 s)
#   PAIRS_WAIT=1 ...                               first, "Next: what a pair of blocks waits on at
#                                                  64 x 4096 x 4096"'s prediction: `tune15 --beside`
#                                                  on cuBLAS's 64 x 32 tile with loads-only.patch,
#                                                  pairs-loads-only.patch and pairs-own-loads.patch
#                                                  (about 90 s)
#   WAITS=1 ...                                    first, "Next: which wait grows in a pair"'s
#                                                  prediction: `tune15 --beside` with
#                                                  pairs-apart.patch on cuBLAS's tile at 64 x 4096
#                                                  x 4096, then Nsight Compute's source pages of the
#                                                  tile alone and with pairs-apart, pairs-own-loads
#                                                  and cluster-columns, read by pair-waits.py
#                                                  (about 180 s)
#   DRAIN=1 ...                                    first, "Next: the block's exit after its stores'
#                                                  reads"'s prediction: `tune15 --beside` with
#                                                  drain-read.patch on the rule's plan at five
#                                                  shapes, FP16 with a 16-bit C and BF16, both
#                                                  timings; then pairs-apart back to back (about
#                                                  220 s)
#   WARM=1 ...                                     first, "Next: what a warm L2 gives the clusters"'s
#                                                  prediction: Nsight Compute's details of the
#                                                  eleventh launch of cuBLAS's tile alone, apart, in
#                                                  pairs without the multicast and in pairs, caches
#                                                  kept, and of cuBLAS's kernel (about 90 s)
#   MASKS=1 ...                                    first, "Next: the multicast's instruction, or its
#                                                  delivery"'s prediction: `tune15 --beside` with
#                                                  pairs-masks.patch (PAIR_MASK=1, 2) on cuBLAS's
#                                                  tile at 64 x 4096 x 4096 (about 60 s)
#   RINGS=1 ...                                    first, "Next: the FP32 C's ring after the hand-back
#                                                  first"'s prediction: `tune15 --only` 5, 6 and 8
#                                                  buffers at 64 x 4096 x 4096 (FP16, BF16), 64 x
#                                                  11008 x 4096 and 32 x 4096 x 4096 (BF16), FP32 C,
#                                                  both timings (about 200 s)
#   FORWARD=1 ...                                  first, "Next: B^T shared through distributed shared
#                                                  memory"'s prediction: `tune15 --beside` with
#                                                  pairs-forward.patch on cuBLAS's tiles at 64 x
#                                                  4096 x 4096 and 1024³ (about 60 s)
#   RATE=1 ...                                     first, "Next: the multicast's rate"'s prediction:
#                                                  `tune15 --beside` with cluster-columns.patch
#                                                  (8 and 4 buffers; B's L2 promotion 0 and 128)
#                                                  and cluster-pieces.patch (16- and 8-row pieces)
#                                                  at 64 x 4096 x 4096 (about 60 s)
#   THREED=1 ...                                   first, "Next: B^T through a three-dimensional
#                                                  map"'s prediction: `tune15 --beside` with
#                                                  pairs-3d.patch (B_MAP_3D=1) alone and in pairs at
#                                                  64 x 4096 x 4096 and at 1024³ (about 50 s)
#   AFTER=1 ...                                    first, "Next: the producer's arrival after its
#                                                  loads"'s prediction: `tune15 --beside` with
#                                                  expect-after.patch in pairs at 64 x 4096 x 4096
#                                                  and 1024³ (about 40 s)
#   RETUNE=1 ...                                   first, "Next: the other plans at the widest gaps,
#                                                  on today's kernel"'s prediction: `tune15 --rounds
#                                                  2` with the tuner's plans at 1024³ and 64 x 4096
#                                                  x 4096, two precisions, both timings (about 500
#                                                  s; LIMIT=590)
#   PLACE=1 ...                                    first, "Next: which SMs read a tile together"'s
#                                                  prediction: `tune15 --beside` with place.patch's
#                                                  four placements at 1024³ and 64 x 4096 x 4096,
#                                                  then L2's sectors under Nsight Compute (about
#                                                  400 s)
#   PLACE2=1 ...                                   first, "Next: the placements at more shapes, with
#                                                  controls"'s prediction: place.patch's controls
#                                                  (0, 5) at 1024³, placements 1 and 2 at six more
#                                                  shapes and in BF16, then L2's coalescer under
#                                                  Nsight Compute (about 400 s)
#   PLACE3=1 ...                                   first, "Next: the control again, and the step's
#                                                  placement today"'s prediction: timeline15 at
#                                                  1024³ one at a time, place.patch's control (5)
#                                                  and placement 1 again (about 150 s)
#   ORDERS=1 ...                                   first, "Next: the tiles' order by groups of
#                                                  rows"'s prediction: GROUP 4 and 16 beside the
#                                                  step's 8 at 1024³ and 256 x 4096 x 4096, each in
#                                                  two processes (about 150 s)
#   GROUP16=1 ...                                  first, "Next: the record with groups of 16 at
#                                                  1024³"'s prediction: the suite, memcheck, the
#                                                  old order beside the rule at 1024³, the sweep
#                                                  and the references there (about 350 s)
#   ORDERS2=1 ...                                  first, "Next: groups of 16 at the other shapes
#                                                  they reach"'s prediction: the old order beside
#                                                  the rule at 512 x 1024 x 1024 and 200 x 1024 x
#                                                  4096, then step 15's reference graded (about
#                                                  150 s)
#   ROUND=1 ...                                    first, "Next: a block's last tile through its
#                                                  ring"'s prediction: one-round.patch beside the
#                                                  step at 2048³ in the four precisions, both
#                                                  timings; the patch's checks and sanitizers
#                                                  (about 300 s)
#   ROUND2=1 ...                                   first, "Next: the last tile's rounds without
#                                                  their waits"'s prediction: the step's GPU suite,
#                                                  one-round.patch with ONE_ROUND=2 and 3 beside
#                                                  the step at 2048³, checks and memcheck (about
#                                                  250 s)
#   STARTS=1 ...                                   first, "Next: where a launch's fixed part lies,
#                                                  block by block"'s prediction: timeline15 with
#                                                  the probe at 2048³, 1024³ and 128 x 4096 x 4096,
#                                                  one at a time and back to back (about 100 s)
#   UNIT=1 ...                                     first, "Next: the producer's first unit before
#                                                  the meeting"'s prediction: the probe with
#                                                  TL_ISSUE=2 at 1024³ and 128 x 4096 x 4096,
#                                                  early-unit.patch beside the step there and at
#                                                  64 x 4096 x 4096, checks and sanitizers (about
#                                                  150 s)
#   REGS=1 ...                                     first, "Next: one consumer's block without
#                                                  setmaxnreg"'s prediction: keep-regs.patch
#                                                  beside the step at four one-consumer shapes,
#                                                  both timings, checks and memcheck (about 120 s;
#                                                  REGS_KIND=2 for KEEP_REGS=2)
#   ARRIVE=1 ...                                   first, "Next: the hand-back on the block's own
#                                                  barrier"'s prediction: local-arrive.patch
#                                                  beside the step at four shapes, both timings,
#                                                  checks and memcheck (about 120 s)
#   READS=1 ...                                    first, "Next: the loads of cuBLAS's plan alone"'s
#                                                  prediction: cluster-reads.cu built with nvcc,
#                                                  timed twice, then its L2 sectors under Nsight
#                                                  Compute (cluster-reads-table.py; about 100 s)
# Built beside the source tree (release binaries):
#   cargo xtask bundle --out .gpu/b
#   tar czf .gpu/adopt.tgz -C .gpu/b ./run.sh ./bin ./tests/step15-skinny-gpu ./examples/tune15 ./examples/timeline15
#   git rev-parse --short HEAD > .gpu/bundle-commit
# and run from the repository root with .gpu/adopt.tgz and .gpu/bundle-commit carried. Join what
# comes back with `cargo xtask sweep --take`, `cargo xtask references --take` (scripts/record.sh's
# header) and copy the profiles into results/profiles/. What comes back is OUT/raw.tgz; the summary
# is printed last.
set -u
OUT=${OUT:?the folder whose files come back}
export CUDA_HOME=/usr/local/cuda LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64 PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s); el() { echo "$(( $(date +%s) - t0 ))"; }
R=$PWD; A=$(mktemp -d /tmp/fresh.XXXXXX); mkdir -p "$A/b"
tar xzf "$R/.gpu/adopt.tgz" -C "$A/b" || { echo "no bundle at .gpu/adopt.tgz (see the header)"; exit 1; }
export SGEMM_CUBIN_CACHE=$A/cubins; mkdir -p "$SGEMM_CUBIN_CACHE"
W=$OUT/w; mkdir -p "$W"; S=$W/head.md
say() { echo "$*" | tee -a "$S"; }
say "bundle of $(cat "$R/.gpu/bundle-commit") in $A; $(nvidia-smi --query-gpu=name,driver_version,power.limit,temperature.gpu --format=csv,noheader)"
cd "$A" || exit 1
shapes=1x4096x4096,8x4096x4096,16x4096x4096,32x4096x4096,64x4096x4096,128x4096x4096,256x4096x4096
shapes=$shapes,1x4096x11008,8x4096x11008,16x4096x11008,32x4096x11008,64x4096x11008,128x4096x11008,256x4096x11008
shapes=$shapes,1x11008x4096,8x11008x4096,16x11008x4096,32x11008x4096,64x11008x4096,128x11008x4096,256x11008x4096
shapes=$shapes,1024
all=""
for p in fp16 bf16; do for s in ${shapes//,/ }; do all="$all $( [[ $s == *x* ]] && echo "$s" || echo "${s}x${s}x${s}"):$p"; done; done
X=$R/notes/experiments/step15-skinny
# tune NAME SHAPE PRECISION ONLY LIMIT ARGS...: tune15 with ARGS' experiment beside the step (or,
# without --kernel in ARGS, the step's own candidates), two rounds in turns; the table in
# OUT/w/tune/NAME.md, the precision's rows in the summary.
tune() {
  local name=$1 sh=$2 p=$3 only=$4 limit=$5 beside=""; shift 5; mkdir -p "$W/tune"
  [[ " $* " == *" --kernel "* ]] && beside=--beside
  timeout "$limit" b/examples/tune15 "$sh" "$p" --only "$only" $beside --rounds 2 "$@" > "$W/tune/$name.md" 2>&1
  say "tune15 $name rc=$? [$(el) s]"; grep -E "^\| $p \|" "$W/tune/$name.md" | tee -a "$S"
}
# both NAME SHAPE PRECISION ONLY ARGS...: tune() one at a time (NAME-one) and back to back
# (NAME-b2b), 45 s each.
both() {
  local n=$1 sh=$2 p=$3 o=$4; shift 4
  tune "$n-one" "$sh" "$p" "$o" 45 "$@"
  tune "$n-b2b" "$sh" "$p" "$o" 45 "$@" --back-to-back
}
# suite LIMIT: the step's GPU suite (fresh seeds) in OUT/w/suite.log, its result in the summary.
suite() {
  timeout "$1" b/tests/step15-skinny-gpu > "$W/suite.log" 2>&1
  say "| step15-skinny-gpu | rc=$? | $(grep -E '^test result' "$W/suite.log" | tail -1) | $(el) s |"
}
# grade15: step 15's reference graded as a student's kernel, timed, with the example hidden cases.
grade15() {
  timeout 150 b/bin/grader grade --hidden "$R/labs/hidden-example.txt" --json "$W/grade.json" --staff "$W/grade.staff.txt" \
    -- 15 "$R/step15-skinny/src/kernel.cu" > "$W/grade.log" 2>&1
  say "grader: step 15's reference rc=$? $(grep -iE 'total' "$W/grade.log" | tail -1) [$(el) s]"
}
# beside6 PATCH DEFINE SHAPE...: both() with PATCH and DEFINE beside the rule's plan with six buffers
# at each SHAPE, FP16 with a 16-bit C; then the step binary with them in record.sh, at the caller's
# CHECKS and SANITIZE.
beside6() {
  local p=$1 d=$2 n; n=$(basename "$1" .patch); shift 2
  for sh in "$@"; do both "$sh-$n" "$sh" fp16-c16 "the rule's plan, 6 buffers" --kernel "$p" --define "$d"; done
  STEP_ARGS="--kernel $p --define $d"
  export CHECKS SANITIZE STEP_ARGS
}
# probe NAME SHAPE PRECISION ARGS...: timeline15 with timeline.patch (no early signal) and ARGS, 20
# launches, into OUT/w/starts/NAME.csv (and its table, NAME.md).
probe() {
  local n=$1 sh=$2 p=$3; shift 3; mkdir -p "$W/starts"
  timeout 60 b/examples/timeline15 "$sh" "$p" --kernel "$X/timeline.patch" --define PDL_TRIGGER=0 "$@" \
    --out "$W/starts/$n.csv" > "$W/starts/$n.md" 2>&1
  say "timeline $n rc=$? [$(el) s]"
}
# counted OUT KERNEL METRICS COMMAND...: the eleventh launch of the kernels named KERNEL that COMMAND
# makes (after the tuner's check and the first of its untimed runs), under Nsight Compute with the
# caches the launches before it left, METRICS as CSV in OUT.csv and its errors in OUT.err.
counted() {
  local out=$1 k=$2 m=$3; shift 3
  timeout 90 ncu --clock-control none --cache-control none -k "regex:$k" --launch-skip 10 --launch-count 1 \
    --metrics "$m" --csv "$@" > "$out.csv" 2> "$out.err"
}
# torch_mm M K N: a Python program that multiplies an M x K by a K x N FP16 matrix with torch.matmul
# twenty times (cuBLAS's kernel for C^T = B^T A^T, as the references' cublasGemmEx calls it).
torch_mm() {
  printf '%s\n' "import torch" \
    "a = torch.randn($1, $2, device='cuda', dtype=torch.half); b = torch.randn($2, $3, device='cuda', dtype=torch.half)" \
    "for _ in range(20): c = torch.matmul(a, b)" "torch.cuda.synchronize()"
}
if [ -n "${TUNE:-}" ]; then
  # The step (the hand-back first) and the loop of before in turns, in one process.
  for p in fp16 fp16-c16; do
    tune "256x4096x11008-$p-one" 256x4096x11008 "$p" "the rule's plan, 8 buffers|the rule's plan, 6 buffers" 60 \
      --kernel "$X/late-hand-back.patch"
    tune "256x4096x11008-$p-b2b" 256x4096x11008 "$p" "the rule's plan, 8 buffers|the rule's plan, 6 buffers" 60 \
      --kernel "$X/late-hand-back.patch" --back-to-back
  done
fi
if [ -n "${PLAN64:-}" ]; then
  # The step without a cluster and each patch in clusters of two. cluster-pieces cuts B^T's box
  # into two pieces of 32 rows of K, one a block (the host's boxes follow B_BOX_ROWS);
  # cluster-columns has the first block load the whole box.
  for k in cluster-columns: cluster-pieces:B_BOX_ROWS=32; do d=${k#*:}; for p in fp16-c16 bf16; do
    tune "64x4096x4096-${k%%:*}-$p" 64x4096x4096 "$p" "bm: 64, bn: 32, stages: 16|the rule's plan, 6 buffers" 90 \
      --kernel "$X/${k%%:*}.patch" --define CLUSTER=2 ${d:+--define "$d"}
  done; done
fi
if [ -n "${PAIRS_WAIT:-}" ]; then
  # cuBLAS's tile at 64 x 4096 x 4096: the loads alone, the loads alone in pairs, and pairs whose
  # blocks each load their own B^T (the hand-back still shared), each beside the step.
  for k in loads-only: pairs-loads-only:CLUSTER=2 pairs-own-loads:CLUSTER=2; do d=${k#*:}; for p in fp16-c16 bf16; do
    u=""; [[ $k == *loads-only* ]] && u=--unchecked
    tune "64x4096x4096-${k%%:*}-$p" 64x4096x4096 "$p" "bm: 64, bn: 32, stages: 16" 60 \
      --kernel "$X/${k%%:*}.patch" ${d:+--define "$d"} $u
  done; done
fi
if [ -n "${WAITS:-}" ]; then
  # cuBLAS's tile in clusters of two that share nothing (pairs-apart), beside the step; then Nsight
  # Compute's source pages of the tile alone, apart, in pairs without the multicast, and in pairs
  # (the first launch of the kernel: the tuner's check of its one candidate), and where their warps
  # wait (pair-waits.py).
  for p in fp16-c16 bf16; do
    tune "64x4096x4096-pairs-apart-$p" 64x4096x4096 "$p" "bm: 64, bn: 32, stages: 16" 60 \
      --kernel "$X/pairs-apart.patch" --define CLUSTER=2
  done
  mkdir -p "$W/src"
  for v in alone: pairs-apart:CLUSTER=2 pairs-own-loads:CLUSTER=2 cluster-columns:CLUSTER=2; do
    n=${v%%:*}; d=${v#*:}; kern=""; [ "$n" != alone ] && kern="--kernel $X/$n.patch --define $d"
    timeout 150 ncu --clock-control none --section SourceCounters --section WarpStateStats --section SpeedOfLight \
      --section LaunchStats --section MemoryWorkloadAnalysis -k regex:sgemm --launch-count 1 -o "$A/$n" b/examples/tune15 64x4096x4096 fp16-c16 \
      --only "bm: 64, bn: 32, stages: 16" --rounds 1 $kern > "$W/src/ncu-$n.log" 2>&1
    say "source page $n rc=$? [$(el) s]"
    ncu -i "$A/$n.ncu-rep" --page source --print-source sass --csv > "$W/src/$n.csv" 2> "$W/src/$n.err"
    ncu -i "$A/$n.ncu-rep" --page details --csv > "$W/src/$n-details.csv" 2>&1
  done
  python3 "$X/pair-waits.py" alone="$W/src/alone.csv" apart="$W/src/pairs-apart.csv" own-loads="$W/src/pairs-own-loads.csv" \
    pair="$W/src/cluster-columns.csv" --top 6 2>&1 | tee -a "$S"
fi
if [ -n "${DRAIN:-}" ]; then
  # The block's exit once its last stores have read their staging buffers, beside the step, on the
  # rule's plan (named by its ring, the one candidate of that label), both timings; then cuBLAS's
  # tile in clusters sharing nothing, back to back.
  for v in 1024x1024x1024:6 64x4096x4096:6 2048x2048x2048:4 128x11008x4096:6 256x11008x4096:4; do
    sh=${v%%:*}; for p in fp16-c16 bf16; do
      tune "$sh-drain-$p-one" "$sh" "$p" "the rule's plan, ${v#*:} buffers" 45 --kernel "$X/drain-read.patch"
      tune "$sh-drain-$p-b2b" "$sh" "$p" "the rule's plan, ${v#*:} buffers" 45 --kernel "$X/drain-read.patch" --back-to-back
    done
  done
  for p in fp16-c16 bf16; do
    tune "64x4096x4096-pairs-apart-$p-b2b" 64x4096x4096 "$p" "bm: 64, bn: 32, stages: 16" 60 \
      --kernel "$X/pairs-apart.patch" --define CLUSTER=2 --back-to-back
  done
fi
if [ -n "${WARM:-}" ]; then
  # cuBLAS's tile at 64 x 4096 x 4096, alone, in clusters sharing nothing, in pairs without the
  # multicast and in pairs, and the rule's plan: one launch each under Nsight Compute from the
  # caches the launches before it left (the eleventh: after the tuner's check and the first of its
  # untimed runs), for L2's hit rate and the duration where the tuner times them.
  mkdir -p "$W/warm"
  # warm NAME KERNEL COMMAND...: the eleventh launch of the kernels named KERNEL that COMMAND makes,
  # caches kept, and its details page as OUT/w/warm/NAME-details.csv.
  warm() {
    local n=$1 k=$2; shift 2
    timeout 120 ncu --clock-control none --cache-control none --section SpeedOfLight --section LaunchStats \
      --section MemoryWorkloadAnalysis -k "regex:$k" --launch-skip 10 --launch-count 1 -o "$A/warm-$n" "$@" \
      > "$W/warm/ncu-$n.log" 2>&1
    say "warm launch $n rc=$? [$(el) s]"
    ncu -i "$A/warm-$n.ncu-rep" --page details --csv > "$W/warm/$n-details.csv" 2>&1
  }
  for v in alone: pairs-apart:CLUSTER=2 pairs-own-loads:CLUSTER=2 cluster-columns:CLUSTER=2 rule:; do
    n=${v%%:*}; d=${v#*:}; kern=""; [ -n "$d" ] && kern="--kernel $X/$n.patch --define $d"
    only="bm: 64, bn: 32, stages: 16"; [ "$n" = rule ] && only="the rule's plan, 6 buffers"
    warm "$n" sgemm b/examples/tune15 64x4096x4096 fp16-c16 --only "$only" --rounds 1 $kern
  done
  # cuBLAS's kernel the same way, called by torch.matmul.
  warm cublas nvjet python3 -c "$(torch_mm 64 4096 4096)"
  python3 "$X/pair-waits.py" --details-only cublas="$W/warm/cublas-details.csv" alone="$W/warm/alone-details.csv" apart="$W/warm/pairs-apart-details.csv" \
    own-loads="$W/warm/pairs-own-loads-details.csv" pair="$W/warm/cluster-columns-details.csv" \
    "the rule's plan"="$W/warm/rule-details.csv" 2>&1 | tee -a "$S"
fi
if [ -n "${MASKS:-}" ]; then
  # cuBLAS's tile at 64 x 4096 x 4096 in pairs with the hand-back shared, each block's B^T loaded by
  # the multicast's instruction with one block in its mask: its own, then its peer's; beside the step.
  for m in 1 2; do for p in fp16-c16 bf16; do
    tune "64x4096x4096-pairs-masks$m-$p" 64x4096x4096 "$p" "bm: 64, bn: 32, stages: 16" 60 \
      --kernel "$X/pairs-masks.patch" --define CLUSTER=2 --define PAIR_MASK=$m
  done; done
fi
if [ -n "${RINGS:-}" ]; then
  # The rule's plan with 5, 6 and 8 buffers where the narrow tile is 32 or 64 wide and C is FP32,
  # one at a time and back to back (no experiment: the step's own candidates).
  for v in 64x4096x4096:fp16 64x4096x4096:bf16 64x11008x4096:bf16 32x4096x4096:bf16; do
    sh=${v%%:*}; p=${v#*:}
    for how in one b2b; do b=""; [ $how = b2b ] && b=--back-to-back
      tune "$sh-rings-$p-$how" "$sh" "$p" "the rule's plan, 5 buffers|the rule's plan, 6 buffers|the rule's plan, 8 buffers" 60 $b
    done
  done
fi
if [ -n "${FORWARD:-}" ]; then
  # B^T's pieces shared in pairs through distributed shared memory (pairs-forward.patch), beside the
  # step, on cuBLAS's tiles at 64 x 4096 x 4096 and at 1024³.
  for v in 64x4096x4096:"bm: 64, bn: 32, stages: 16" 1024x1024x1024:"bm: 128, bn: 64"; do
    sh=${v%%:*}; for p in fp16-c16 bf16; do
      tune "$sh-pairs-forward-$p" "$sh" "$p" "${v#*:}" 60 --kernel "$X/pairs-forward.patch" --define CLUSTER=2 \
        --define B_BOX_ROWS=32
    done
  done
fi
if [ -n "${RATE:-}" ]; then
  # The pair on cuBLAS's tile at 64 x 4096 x 4096, FP16 with a 16-bit C, beside the step: the
  # multicast of one box with 8 and 4 buffers, with B's L2 promotion at 0 and 128 bytes, and in
  # pieces of 16 and 8 rows dealt out in turn.
  o="bm: 64, bn: 32, stages: 16"
  for d in STAGES=8 STAGES=4 B_PROMOTION=0 B_PROMOTION=128; do
    tune "64x4096x4096-rate-columns-$d" 64x4096x4096 fp16-c16 "$o" 40 --kernel "$X/cluster-columns.patch" \
      --define CLUSTER=2 --define "$d"
  done
  for r in 16 8; do
    tune "64x4096x4096-rate-pieces-$r" 64x4096x4096 fp16-c16 "$o" 40 --kernel "$X/cluster-pieces.patch" \
      --define CLUSTER=2 --define B_BOX_ROWS=$r
  done
fi
if [ -n "${THREED:-}" ]; then
  # B^T through a three-dimensional tensor map (pairs-3d.patch, B_MAP_3D=1), beside the step: the
  # tile alone, the pair with one box, the pair in 32-row pieces at 64 x 4096 x 4096, and cuBLAS's
  # plan at 1024³ in 32-row pieces. (The bundle must be of a commit whose host knows B_MAP_3D.)
  o="bm: 64, bn: 32, stages: 16"
  for d in CLUSTER=1 CLUSTER=2 CLUSTER=2,B_BOX_ROWS=32; do
    defs=(); for x in ${d//,/ }; do defs+=(--define "$x"); done
    tune "64x4096x4096-3d-${d//,/-}" 64x4096x4096 fp16-c16 "$o" 40 --kernel "$X/pairs-3d.patch" --define B_MAP_3D=1 "${defs[@]}"
  done
  tune "1024x1024x1024-3d-pieces" 1024x1024x1024 fp16-c16 "bm: 128, bn: 64" 40 --kernel "$X/pairs-3d.patch" \
    --define B_MAP_3D=1 --define CLUSTER=2 --define B_BOX_ROWS=32
fi
if [ -n "${AFTER:-}" ]; then
  # The producer's arrival with its bytes after its loads (expect-after.patch), in pairs, beside the
  # step: one box, 32-row pieces at 64 x 4096 x 4096, and 32-row pieces on cuBLAS's plan at 1024³.
  o="bm: 64, bn: 32, stages: 16"
  tune "64x4096x4096-after-box" 64x4096x4096 fp16-c16 "$o" 40 --kernel "$X/expect-after.patch" --define CLUSTER=2
  tune "64x4096x4096-after-pieces" 64x4096x4096 fp16-c16 "$o" 40 --kernel "$X/expect-after.patch" --define CLUSTER=2 \
    --define B_BOX_ROWS=32
  tune "1024x1024x1024-after-pieces" 1024x1024x1024 fp16-c16 "bm: 128, bn: 64" 40 --kernel "$X/expect-after.patch" \
    --define CLUSTER=2 --define B_BOX_ROWS=32
fi
if [ -n "${RETUNE:-}" ]; then
  # The tuner's other plans (every narrow tile and row count, no split-K, 128 rows in twice the
  # slices) beside the rule's at the two widest gaps left, on the kernel with the hand-back first:
  # 1024³ and 64 x 4096 x 4096, FP16 with a 16-bit C and BF16 with an FP32 C, both timings.
  for sh in 1024x1024x1024 64x4096x4096; do for p in fp16-c16 bf16; do for how in one b2b; do
    b=""; [ $how = b2b ] && b=--back-to-back
    tune "$sh-retune-$p-$how" "$sh" "$p" "Swapped|no split-K|128 rows|the rule's plan, 6 buffers" 120 $b
  done; done; done
fi
if [ -n "${PLACE:-}" ]; then
  # Each block's units by the SM it runs on (place.patch), beside the step, on the rule's plan:
  # the four placements one at a time, three back to back; then one launch each of the step and
  # of placements 1 and 3 at 1024³ under Nsight Compute with the caches the launches before left,
  # for L2's sectors against the bytes into the SMs; and whether this Nsight Compute counts L2's
  # request coalescer apart.
  for sh in 1024x1024x1024 64x4096x4096; do
    for k in 1 2 3 4; do
      tune "$sh-place$k-one" "$sh" fp16-c16 "the rule's plan, 6 buffers" 45 --kernel "$X/place.patch" --define PLACE=$k
    done
    for k in 1 3 4; do
      tune "$sh-place$k-b2b" "$sh" fp16-c16 "the rule's plan, 6 buffers" 45 --kernel "$X/place.patch" --define PLACE=$k \
        --back-to-back
    done
  done
  mkdir -p "$W/place"
  m=gpu__time_duration.sum,lts__t_sectors_srcunit_tex.sum,l1tex__m_xbar2l1tex_read_bytes.sum,lts__t_sectors_srcunit_tex_op_read.sum
  for k in 0 1 3; do
    counted "$W/place/ncu-place$k" sgemm "$m" b/examples/tune15 1024x1024x1024 fp16-c16 --only "the rule's plan, 6 buffers" \
      --rounds 1 --kernel "$X/place.patch" --define PLACE=$k
    say "ncu place$k rc=$? [$(el) s]"; grep -E "gpu__time|lts__t_sectors|xbar2l1tex" "$W/place/ncu-place$k.csv" | tee -a "$S"
  done
  ncu --query-metrics --chip gh100 2> /dev/null | grep -i -E "^lrc|coalesc" | head -20 | tee -a "$S"
fi
if [ -n "${PLACE2:-}" ]; then
  # place.patch's controls at 1024³ (the patch with the step's mapping; the step's placement read
  # through %smid), then placements 1 (both timings) and 2 (one at a time) at six more shapes
  # (FP16, 16-bit C) and 1 at the first run's two shapes in BF16 with an FP32 C; all on the rule's
  # plan (six buffers at every one of these shapes), beside the step.
  o="the rule's plan, 6 buffers"; P=$X/place.patch
  tune "1024x1024x1024-place0-one" 1024x1024x1024 fp16-c16 "$o" 45 --kernel "$P" --define PLACE=0
  both 1024x1024x1024-place5 1024x1024x1024 fp16-c16 "$o" --kernel "$P" --define PLACE=5
  for sh in 16x4096x4096 32x4096x4096 128x4096x4096 256x4096x4096 64x11008x4096 128x11008x4096; do
    both "$sh-place1" "$sh" fp16-c16 "$o" --kernel "$P" --define PLACE=1
    tune "$sh-place2-one" "$sh" fp16-c16 "$o" 45 --kernel "$P" --define PLACE=2
  done
  for sh in 1024x1024x1024 64x4096x4096; do both "$sh-place1-bf16" "$sh" bf16 "$o" --kernel "$P" --define PLACE=1; done
  # L2's coalescer, one launch each with the caches the launches before left: the step's mapping
  # and placements 1 and 3 at 1024³, 0 and 1 at 64 x 4096 x 4096, and cuBLAS's kernel at 1024³.
  mkdir -p "$W/place"
  m=gpu__time_duration.sum,lts__t_sectors_srcunit_tex.sum,l1tex__m_xbar2l1tex_read_bytes.sum
  m=$m,lrc__average_xbar2gpc_sectors_op_read,lrc__lrc2xbar_sectors_op_read.sum,lrc__lrc2xbar_sectors_op_read_coalescing_achieved.sum
  for v in 1024x1024x1024:0 1024x1024x1024:1 1024x1024x1024:3 64x4096x4096:0 64x4096x4096:1; do
    sh=${v%%:*}; k=${v#*:}
    counted "$W/place/lrc-$sh-place$k" sgemm "$m" b/examples/tune15 "$sh" fp16-c16 --only "$o" --rounds 1 --kernel "$P" \
      --define PLACE=$k
    say "ncu $sh place$k rc=$? [$(el) s]"; grep -E "gpu__time|lts__t_sectors|lrc__" "$W/place/lrc-$sh-place$k.csv" | cut -d, -f13- | tee -a "$S"
  done
  counted "$W/place/lrc-cublas-1024" nvjet "$m" python3 -c "$(torch_mm 1024 1024 1024)"
  say "ncu cublas 1024 rc=$? [$(el) s]"; grep -E "gpu__time|lts__t_sectors|lrc__" "$W/place/lrc-cublas-1024.csv" | cut -d, -f5,13- | tee -a "$S"
fi
if [ -n "${PLACE3:-}" ]; then
  # Where the GPU places the step's blocks one launch at a time today (timeline.patch: every block's
  # SM, 20 launches), then place.patch's control (each SM the unit of the block placed there on
  # 2026-12-01) and placement 1 again, beside the step.
  o="the rule's plan, 6 buffers"; P=$X/place.patch; mkdir -p "$W/place"
  timeout 60 b/examples/timeline15 1024x1024x1024 fp16-c16 --kernel "$X/timeline.patch" --define PDL=1 \
    --out "$W/place/timeline-1024-one-at-a-time.csv" > "$W/place/timeline-1024-one-at-a-time.md" 2>&1
  say "timeline 1024 rc=$? [$(el) s]"
  python3 - "$W/place/timeline-1024-one-at-a-time.csv" "$P" <<'PY' 2>&1 | tee -a "$S"
import csv, re, sys
# PLACE=5's table, as place.patch's constant array holds it.
body = open(sys.argv[2]).read().split("place_usual[132] = {", 1)[1].split("}", 1)[0]
usual = [int(x) for x in re.findall(r"\d+", body)]
launches = {}
for r in csv.DictReader(open(sys.argv[1])):
    launches.setdefault(r["launch"], {})[int(r["sm"])] = int(r["block"])
maps = {tuple(m.get(s, -1) for s in range(132)) for m in launches.values()}
same = sum(1 for m in maps if list(m) == usual)
print(f"timeline: {len(launches)} launches, {len(maps)} placements, {same} of them PLACE=5's table")
PY
  both 1024x1024x1024-place5c 1024x1024x1024 fp16-c16 "$o" --kernel "$P" --define PLACE=5
  tune "1024x1024x1024-place1-again" 1024x1024x1024 fp16-c16 "$o" 45 --kernel "$P" --define PLACE=1
  tune "64x4096x4096-place1-again" 64x4096x4096 fp16-c16 "$o" 45 --kernel "$P" --define PLACE=1
fi
if [ -n "${ORDERS:-}" ]; then
  # The order of the tiles in groups of 4 and 16 rows of N beside the step's 8 (place.patch with the
  # step's own mapping, PLACE=0), FP16 with a 16-bit C, each comparison in two processes.
  o="the rule's plan, 6 buffers"; P=$X/place.patch
  for g in 4 16; do for i in 1 2; do
    tune "1024x1024x1024-group$g-one-$i" 1024x1024x1024 fp16-c16 "$o" 45 --kernel "$P" --define PLACE=0 --define GROUP=$g
    tune "1024x1024x1024-group$g-b2b-$i" 1024x1024x1024 fp16-c16 "$o" 45 --kernel "$P" --define PLACE=0 --define GROUP=$g \
      --back-to-back
    tune "256x4096x4096-group$g-one-$i" 256x4096x4096 fp16-c16 "$o" 45 --kernel "$P" --define PLACE=0 --define GROUP=$g
  done; done
fi
if [ -n "${GROUP16:-}" ]; then
  # The rule with groups of 16 at 1024³ (a bundle of a commit with lib.rs's `group`): the step's
  # suite, memcheck at an odd shape it changes, the old order (place.patch, GROUP=8) beside it in two
  # precisions and both timings; then record.sh's sweep of 1024³ and its references (below).
  suite 150
  o="the rule's plan, 6 buffers"; P=$X/place.patch
  for p in fp16-c16 bf16; do
    both "1024x1024x1024-old-order-$p" 1024x1024x1024 "$p" "$o" --kernel "$P" --define PLACE=0 --define GROUP=8
  done
  SANITIZE="memcheck:fp16-c16:999x1023x1001"
  export SANITIZE SWEEP_STEPS=15 SWEEP_SHAPES=1024
  PAIRS=${PAIRS:-1024x1024x1024:fp16 1024x1024x1024:bf16}
fi
if [ -n "${ORDERS2:-}" ]; then
  # The old order (groups of 8: place.patch, PLACE=0, GROUP=8) beside the rule's groups of 16 at two
  # more shapes with 16 rows of tiles, FP16 with a 16-bit C and BF16 with an FP32 C, both timings
  # (the rule's plan is six buffers at both); then the reference graded with the example hidden cases.
  o="the rule's plan, 6 buffers"; P=$X/place.patch
  for sh in 512x1024x1024 200x1024x4096; do for p in fp16-c16 bf16; do
    both "$sh-old-order-$p" "$sh" "$p" "$o" --kernel "$P" --define PLACE=0 --define GROUP=8
  done; done
  grade15
fi
if [ -n "${ROUND:-}" ]; then
  # Step 12's plan with a block's last tile of C stored in one round through the ring
  # (one-round.patch, ONE_ROUND=1) beside the step at 2048³, one tile a block, both timings; then
  # the step binary with the patch at odd shapes of step 12's plan (one tile a block; several, the
  # last wave shared along K; beta 0.5) and two sanitizers, in record.sh.
  P=$X/one-round.patch
  for p in fp16 fp16-c16 bf16 bf16-c16; do
    both "2048-one-round-$p" 2048x2048x2048 "$p" "the rule's plan, 4 buffers" --kernel "$P" --define ONE_ROUND=1
  done
  CHECKS="fp16:3000x1000x999 fp16-c16:2047x2049x2000 bf16:4096x4096x4096 bf16-c16:3000x1000x999 fp16:1100x4000x3001"
  SANITIZE="memcheck:fp16:3000x1000x999 synccheck:fp16-c16:2047x2049x2000"
  STEP_ARGS="--kernel $P --define ONE_ROUND=1"
  export CHECKS SANITIZE STEP_ARGS
fi
if [ -n "${ROUND2:-}" ]; then
  # The step's GPU suite (fresh seeds; the rule's groups changed at sliced shapes); then the last
  # tile through the ring in rounds of two chunks and of one, no round waiting for the stores
  # before it (one-round.patch, ONE_ROUND=2 and 3), beside the step at 2048³ in FP16 with an FP32 C
  # and BF16 with a 16-bit C, both timings; the patch's checks with ONE_ROUND=3, in record.sh.
  suite 240
  P=$X/one-round.patch
  for r in 2 3; do for p in fp16 bf16-c16; do
    both "2048-round$r-$p" 2048x2048x2048 "$p" "the rule's plan, 4 buffers" --kernel "$P" --define ONE_ROUND=$r
  done; done
  CHECKS="fp16:3000x1000x999 bf16-c16:2047x2049x2000 bf16:4096x4096x4096 fp16-c16:1100x4000x3001"
  SANITIZE="memcheck:fp16:3000x1000x999"
  STEP_ARGS="--kernel $P --define ONE_ROUND=3"
  export CHECKS SANITIZE STEP_ARGS
fi
if [ -n "${STARTS:-}" ]; then
  # Every block's entry, readiness, first K-tile's data and end (timeline.patch, no early signal:
  # PDL_TRIGGER=0, the step's launches), 20 launches one at a time and 20 back to back, at 2048³
  # (step 12's plan, FP16 with an FP32 C and a 16-bit C), 1024³ and 128 x 4096 x 4096 (swapped,
  # dependent launches: PDL=1, FP16 with a 16-bit C); then timeline-starts.py's table.
  for v in 2048x2048x2048:fp16: 2048x2048x2048:fp16-c16: 1024x1024x1024:fp16-c16:PDL=1 128x4096x4096:fp16-c16:PDL=1; do
    IFS=: read -r sh p d <<< "$v"
    probe "$sh-$p-one" "$sh" "$p" --define TL_ISSUE=1 ${d:+--define "$d"}
    probe "$sh-$p-b2b" "$sh" "$p" --define TL_ISSUE=1 ${d:+--define "$d"} --back-to-back
  done
  python3 "$X/timeline-starts.py" "$W"/starts/*.csv 2>&1 | tee -a "$S"
fi
if [ -n "${UNIT:-}" ]; then
  # Where the producer's 0.7 µs between ready and its first loads go (timeline.patch, TL_ISSUE=2:
  # its registers given up, its first unit worked out), one at a time; then the first unit worked
  # out before the meeting (early-unit.patch, EARLY_UNIT=1) beside the step, both timings, FP16
  # with a 16-bit C; the patch's checks at odd shapes of both orientations, in record.sh.
  for sh in 1024x1024x1024 128x4096x4096; do probe "$sh-fp16-c16-unit" "$sh" fp16-c16 --define TL_ISSUE=2; done
  python3 "$X/timeline-starts.py" "$W"/starts/*.csv 2>&1 | tee -a "$S"
  CHECKS="fp16-c16:999x1023x1001 bf16:17x2048x1024 fp16:3000x1000x999 bf16-c16:129x11008x4096"
  SANITIZE="memcheck:fp16-c16:17x2048x1024 synccheck:bf16:3000x1000x999"
  beside6 "$X/early-unit.patch" EARLY_UNIT=1 1024x1024x1024 128x4096x4096 64x4096x4096
fi
if [ -n "${REGS:-}" ]; then
  # A block of one consumer without setmaxnreg (keep-regs.patch, KEEP_REGS=1) beside the step at
  # four shapes whose rule's plan has one consumer (tiles of 64 rows of N), FP16 with a 16-bit C,
  # both timings; the patch's checks at odd shapes, in record.sh.
  CHECKS="fp16-c16:999x1023x1001 bf16:17x2048x1024 fp16:63x4001x999 bf16-c16:129x11008x4096"
  SANITIZE="memcheck:fp16-c16:17x2048x1024"
  beside6 "$X/keep-regs.patch" "KEEP_REGS=${REGS_KIND:-1}" 1024x1024x1024 64x4096x4096 128x4096x4096 256x4096x4096
fi
if [ -n "${ARRIVE:-}" ]; then
  # Each buffer handed back with an arrival on the block's own barrier (local-arrive.patch,
  # LOCAL_ARRIVE=1) beside the step: one consumer at 1024³ and 64 x 4096 x 4096, two at 128 x 11008 x
  # 4096, the slices of 16 x 4096 x 4096; the patch's checks, in record.sh.
  CHECKS="fp16-c16:999x1023x1001 bf16:17x2048x1024 fp16:63x4001x999 bf16-c16:129x11008x4096 fp16-c16:255x11005x3001"
  SANITIZE="memcheck:fp16-c16:17x2048x1024 synccheck:bf16:129x11008x4096"
  beside6 "$X/local-arrive.patch" LOCAL_ARRIVE=1 1024x1024x1024 64x4096x4096 128x11008x4096 16x4096x4096
fi
if [ -n "${READS:-}" ]; then
  nvcc -O3 -std=c++17 -arch=sm_90a -I"$X" -o "$A/cluster-reads" "$X/cluster-reads.cu" > "$W/reads-build.log" 2>&1
  say "cluster-reads built rc=$? [$(el) s]"
  for i in 1 2; do timeout 60 "$A/cluster-reads" > "$W/reads-$i.md" 2>&1; say "cluster-reads run $i rc=$? [$(el) s]"; done
  cat "$W/reads-1.md" "$W/reads-2.md" | tee -a "$S" > /dev/null
  m=gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read.sum,lrc__xbar2gpc_sectors_op_read.sum,l1tex__m_xbar2l1tex_read_bytes.sum
  timeout 240 ncu --clock-control none --csv --page raw --metrics "$m" --log-file "$W/reads-ncu.csv" \
    "$A/cluster-reads" --once > "$W/reads-order.txt" 2> "$W/reads-ncu.err"
  say "cluster-reads under Nsight Compute rc=$? [$(el) s]"
  python3 "$X/cluster-reads-table.py" "$W/reads-ncu.csv" "$W/reads-order.txt" 2>&1 | tee -a "$S"
fi
if [ -n "${FIRST:-}" ]; then
  suite 240
  grade15
  CHECKS="fp16:1024x1024x1024 bf16:129x11008x4096 bf16-c16:999x1023x1001 fp16:63x4001x999 fp16-c16:17x2048x1024"
  CHECKS="$CHECKS bf16-c16:1x4096x11008 fp16-c16:2047x2049x2000 bf16:3x11008x4096"
  SANITIZE="memcheck:fp16-c16:17x2048x1024 synccheck:fp16-c16:17x2048x1024 racecheck:bf16:3x1000x512"
  export CHECKS SANITIZE
fi
if [ -n "${FIRST:-}${SWEEP:-}" ]; then
  export SWEEP_STEPS=15 SWEEP_SHAPES=$shapes PROFILE_STEPS=step15
  PAIRS=${PAIRS:-$all}
fi
RESULTS=$R/results STEP=step15-skinny PAIRS=${PAIRS:-} LIMIT=$(( ${LIMIT:-560} - $(el) )) bash "$R/scripts/record.sh" b "$W" > /dev/null
cat "$S" "$W/summary.md"
(cd "$OUT" && tar czf raw.tgz w && rm -rf w)
