#!/usr/bin/env bash
# The GPU run that the experiments prepared and not yet run wait for, in one command of about 540 s
# on one Hopper GPU, from a bundle unpacked into a fresh directory with no source tree beside it:
#   - step 14, narrow-balanced.patch (notes/step14.md, "Next: the narrow column balanced"): checks at
#     shapes whose last column of 192-wide tiles is narrow, shared or not; tune14 --beside at the four
#     target shapes in both block-scaled precisions; COST64 = 2 and 4 at 4096³;
#   - step 14, c32-one-round.patch (notes/step14.md, "Next: per tensor with an FP32 C in one round"):
#     checks, tune14 --beside at the four target shapes with an FP32 C;
#   - step 15, swap-split.patch (notes/step15.md, "Next: A's tile shared out among a cluster's
#     blocks"): checks, tune15 --beside at 64 and 128 x 4096 x 4096 and x 11008 x 4096, clusters of
#     four at 128 x 11008 x 4096;
#   - step 15, swap-multicast.patch at N = 11008 (notes/step15.md, "Next: the narrow tile of A shared
#     at N = 11008"): checks, tune15 --beside at M = 64, 128 and 256, CLUSTER = 4 at M = 128;
#   - first, the three cases of step 14's suite that the record at 8419964 did not reach in its time
#     limit (the block scales with an FP32 C: again/60x17600x2800 and the two same-bits launches);
#   - memcheck and synccheck on each patch last, as the time left allows.
# Timings come first after a quick check of each patch, so that a run cut short still says whether a
# patch pays; a patch that pays is checked in full before it lands.
#
# Built beside the source tree (release binaries; the bundle's own tests are not needed here):
#   cargo xtask bundle --out .gpu/b2
#   tar czf .gpu/next.tgz -C .gpu/b2 ./bin/step14-fp8 ./bin/step15-skinny ./examples/tune14 ./examples/tune15 \
#     ./tests/step14-fp8-gpu
#   git rev-parse --short HEAD > .gpu/bundle-commit
# and run from the repository root with .gpu/next.tgz and .gpu/bundle-commit carried:
#   LIMIT=540 bash notes/experiments/next-run.sh
# It writes $OUT/summary.md (a line a result, the table last) and $OUT/logs.tgz. A check that runs
# past CHECK_LIMIT seconds (45) marks its patch as hung, and that patch's timed runs are skipped.
set -u
export CUDA_HOME=/usr/local/cuda LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64 PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:?the folder whose files come back}
S=$OUT/summary.md; : > "$S"; t0=$(date +%s); W=$(mktemp -d /tmp/w.XXXXXX); L=$W/logs; mkdir -p "$L"
say() { echo "$*" | tee -a "$S"; }
el() { echo "$(( $(date +%s) - t0 ))"; }
left() { echo "$(( ${LIMIT:-540} - $(el) ))"; }
keep() { (cd "$W" && tar czf "$OUT/logs.tgz" logs); }
R=$PWD; A=$(mktemp -d /tmp/fresh.XXXXXX); mkdir -p "$A/b"
tar xzf "$R/.gpu/next.tgz" -C "$A/b" || { say "no bundle at .gpu/next.tgz (see the header)"; exit 1; }
cp -r "$R/notes/experiments/step14-fp8" "$A/exp14"; cp -r "$R/notes/experiments/step15-skinny" "$A/exp15"
export SGEMM_CUBIN_CACHE=$A/cubins; mkdir -p "$SGEMM_CUBIN_CACHE"
say "bundle of $(cat "$R/.gpu/bundle-commit") in $A; $(nvidia-smi --query-gpu=index,name,driver_version,power.limit,temperature.gpu --format=csv,noheader | tr '\n' ';')"
cd "$A" || exit 1

# One check through a step binary: tag binary patch precision shape beta [define ...].
check() {
  local tag=$1 bin=$2 patch=$3 p=$4 x=$5 beta=$6; shift 6
  local defs=() d; for d in "$@"; do defs+=(--define "$d"); done
  local f=$L/v-$tag-$p-$x-$beta.log
  # A check takes seconds; one that hangs (a cluster that deadlocks) marks its patch, whose timed
  # runs are then skipped.
  timeout "${CHECK_LIMIT:-45}" "b/bin/$bin" --precision "$p" --shape "$x" --beta "$beta" --kernel "$patch" "${defs[@]}" --verify-only > "$f" 2>&1
  local rc=$?
  [ $rc -eq 124 ] && touch "$W/hung-$tag"
  say "check $tag $p $x beta $beta rc=$rc $(grep -E 'vs (CPU|cuBLAS)' "$f" | sed 's/(limit.*//' | tr -s ' ' | tr '\n' ' ') [$(el) s]"
}
# Whether the patch of a run's tag (balanced-cost64-2: balanced) hung in a check.
hung() { local t; for t in balanced one-round multicast split; do [[ $1 == "$t"* ]] && [ -e "$W/hung-$t" ] && return 0; done; return 1; }
# One tune --beside: tag tuner shape precision only patch [define ...]; the rows as candidate: GFLOP/s, %s.
beside() {
  local tag=$1 tuner=$2 x=$3 p=$4 only=$5 patch=$6; shift 6
  [ "$(left)" -lt 30 ] && { say "skip $tag $x $p: out of time"; return; }
  hung "$tag" && { say "skip $tag $x $p: its patch hung in a check"; return; }
  local defs=() d; for d in "$@"; do defs+=(--define "$d"); done
  local f=$L/b-$tag-$p-$x.log
  timeout 150 "b/examples/$tuner" "$x" "$p" --only "$only" --kernel "$patch" "${defs[@]}" --beside --rounds 2 > "$f" 2>&1
  say "beside $tag $x $p rc=$?: $(grep -E '^\| (fp|bf)' "$f" | awk -F'|' '{gsub(/ +/, " "); printf "%s:%s %s %s;", $3, $6, $7, $8}') [$(el) s]"
}
# One sanitizer: tag tool binary patch precision shape [define ...].
sanitize() {
  local tag=$1 tool=$2 bin=$3 patch=$4 p=$5 x=$6; shift 6
  [ "$(left)" -lt 40 ] && { say "skip $tool $tag: out of time"; return; }
  hung "$tag" && { say "skip $tool $tag: its patch hung in a check"; return; }
  local defs=() d; for d in "$@"; do defs+=(--define "$d"); done
  local f=$L/san-$tool-$tag.log
  timeout "$(( $(left) < 120 ? $(left) : 120 ))" compute-sanitizer --tool "$tool" --error-exitcode 9 "b/bin/$bin" --precision "$p" \
    --shape "$x" --beta 0.5 --kernel "$patch" "${defs[@]}" --verify-only > "$f" 2>&1
  say "$tool $tag $p $x rc=$? $(grep -E 'ERROR SUMMARY' "$f" | tail -1) [$(el) s]"
}

# The landed kernel's cases that the last record left unrun (the suite's filter is a name's part).
for part in fp8-block-c32/again/ fp8-block-c32/same-bits/; do
  f=$L/suite-${part//\//-}.log; timeout 100 b/tests/step14-fp8-gpu "$part" > "$f" 2>&1
  say "suite $part rc=$? $(grep -E '^test result' "$f" | tail -1 | cut -c1-80) [$(el) s]"
done
NB=exp14/narrow-balanced.patch; C1=exp14/c32-one-round.patch; SM=exp15/swap-multicast.patch; SS=exp15/swap-split.patch
WIDE="cluster 2, group 8"
# Quick checks first: a narrow column of 64 (4096³, 3000 x 5000 x 1000) and of 128 shared along K
# (4096 x 4160 x 6000); per tensor with an FP32 C at odd shapes; swapped clusters at N = 11008.
for x in 4096x4096x4096 4096x4160x6000 3000x5000x1000; do for p in fp8-block fp8-block-c32; do
  check balanced step14-fp8 $NB $p $x 0.5; done; done
for x in 4096x4096x4096 1544x7184x2700; do check one-round step14-fp8 $C1 fp8-c32 $x 0.5; done
for x in 129x11008x4096 255x11005x3001; do check multicast step15-skinny $SM fp16 $x 0.5 CLUSTER=2; done
# A's rows shared out: BN / 2 a block (the rule's BN: 32 at M = 17, 64 at M = 63, 128 at M = 129).
check split step15-skinny $SS fp16 63x4001x999 0.5 CLUSTER=2 A_BOX_ROWS=32
check split step15-skinny $SS fp16 17x2048x1024 0.5 CLUSTER=2 A_BOX_ROWS=16
check split step15-skinny $SS fp16 129x11008x4096 0.5 CLUSTER=2 A_BOX_ROWS=64
keep
for sh in 4096 4096x11008x4096 8192 4096x7168x16384; do
  for p in fp8-block fp8-block-c32; do beside balanced tune14 $sh $p "$WIDE" $NB; done
  beside one-round tune14 $sh fp8-c32 "$WIDE" $C1
done
keep
for c in 2 4; do beside "balanced-cost64-$c" tune14 4096 fp8-block "$WIDE" $NB COST64=$c; done
for x in 64x4096x4096:32 128x4096x4096:64 64x11008x4096:32 128x11008x4096:64; do
  beside split tune15 "${x%:*}" fp16 "skew 6" $SS CLUSTER=2 "A_BOX_ROWS=${x#*:}"
done
beside split-4 tune15 128x11008x4096 fp16 "skew 6" $SS CLUSTER=4 A_BOX_ROWS=32
keep
for m in 64 128 256; do beside multicast tune15 ${m}x11008x4096 fp16 "skew 6" $SM CLUSTER=2; done
beside multicast-4 tune15 128x11008x4096 fp16 "skew 6" $SM CLUSTER=4
keep
# The rest of the checks, then the sanitizers, as the time allows.
for x in 1544x7184x2700 250x51600x3300; do for p in fp8-block fp8-block-c32; do
  [ "$(left)" -lt 40 ] || check balanced step14-fp8 $NB $p $x 0; done; done
for x in 3000x5000x1000 1000x1001x999; do [ "$(left)" -lt 40 ] || check one-round step14-fp8 $C1 fp8-c32 $x 0; done
for x in 63x11001x999 129x11008x4096; do [ "$(left)" -lt 40 ] || check multicast step15-skinny $SM bf16-c16 $x 0.5 CLUSTER=2; done
[ "$(left)" -lt 40 ] || check split step15-skinny $SS bf16-c16 63x4001x999 0 CLUSTER=2 A_BOX_ROWS=32
for tool in memcheck synccheck; do
  sanitize balanced $tool step14-fp8 $NB fp8-block 4096x4160x6000
  sanitize one-round $tool step14-fp8 $C1 fp8-c32 1544x7184x2700
  sanitize multicast $tool step15-skinny $SM fp16 63x11001x999 CLUSTER=2
  sanitize split $tool step15-skinny $SS fp16 63x4001x999 CLUSTER=2 A_BOX_ROWS=32
done
keep
# The table last: each tune --beside, the step's and the experiment's % of cuBLAS round by round.
say ""
say "| run | the step, % of cuBLAS | the experiment |"
say "|---|---|---|"
for f in "$L"/b-*.log; do
  [ -e "$f" ] || continue
  say "$(awk -F'|' -v run="$(basename "$f" .log)" '
    /^\| (fp|bf)/ { v = $7; gsub(/ /, "", v); if ($3 ~ /\.patch/) e = e (e ? ", " : "") v; else t = t (t ? ", " : "") v }
    END { printf "| %s | %s | %s |", substr(run, 3), t ? t : "-", e ? e : "-" }' "$f")"
done
say "done [$(el) s]"
