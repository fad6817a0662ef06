#!/usr/bin/env bash
# The GPU run that notes/step15.md's "Next: B^T's boxes in pieces dealt out in turn" waits for, one
# command of about 150 s on one Hopper GPU, with experiments/step15-skinny/cluster-pieces.patch in
# clusters of two and B^T's boxes in pieces of 32 rows (`--define CLUSTER=2 --define B_BOX_ROWS=32`):
#   - the step binary with the patch (the rule's plan) against float64 and cuBLAS, alpha 1.5 and
#     beta 0.5, at odd shapes, then memcheck and synccheck (scripts/record.sh, into $OUT/summary.md);
#   - tune15 --beside, two rounds, at 1024³ on cuBLAS's plan (`Swapped { bm: 128, bn: 64 }`) and
#     the rule's, FP16 with a 16-bit C and BF16, and once at odd shapes (every candidate verified);
#   - Nsight Compute at 1024³ (one launch each, two runs): the step, cluster-columns.patch and the
#     patch, L2 sectors looked up for the SMs and the busiest SM's cycles.
# Built beside the source tree (release binaries):
#   cargo xtask bundle --out .gpu/b2
#   tar czf .gpu/bundle.tgz -C .gpu/b2 ./run.sh ./bin ./examples/tune15
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
E=$R/notes/experiments/step15-skinny; P=$E/cluster-pieces.patch; X="--kernel $P --define CLUSTER=2 --define B_BOX_ROWS=32"
STEP=step15-skinny STEP_ARGS="$X" CHECKS="fp16-c16:1024x1024x1024 bf16:1000x1000x1000 bf16-c16:999x1023x1001 \
fp16:517x1024x777 fp16-c16:1023x1535x1025" SANITIZE="memcheck:fp16-c16:999x1023x1001 synccheck:fp16-c16:999x1023x1001" \
  bash "$R/scripts/record.sh" b "$OUT"
for c in 1024:fp16-c16:2 1024:bf16:2 1000:fp16:1 999x1023x1001:bf16-c16:1; do
  IFS=: read -r sh p n <<< "$c"; f=$OUT/tune15-$sh-$p.md
  timeout 150 b/examples/tune15 $sh $p --only "bm: 128, bn: 64|the rule's plan, 6 buffers" $X --beside --rounds $n > "$f" 2>&1
  echo "tune15 $sh $p rc=$? [$(el) s]"; grep -E "^\| (fp16|bf16)|fastest|error" "$f"
done
M=gpu__time_duration.sum,sm__cycles_active.max,lts__t_sectors_srcunit_tex.sum,l1tex__m_xbar2l1tex_read_bytes.sum
for w in "step|" "cluster-columns|--kernel $E/cluster-columns.patch --define CLUSTER=2" "cluster-pieces|$X"; do
  n=${w%%|*}; x=${w#*|}
  for i in 1 2; do
    echo "$n $i: $(timeout 40 ncu --clock-control none --metrics $M --csv -k regex:sgemm --launch-count 1 b/bin/step15-skinny $x \
      --precision fp16-c16 --shape 1024 --verify-only 2>/dev/null | grep '"sgemm"' | awk -F'","' '{printf "%s=%s ", $(NF-2), $NF}' | tr -d '"')"
  done
done | tee "$OUT/pieces-ncu.txt"
echo "done [$(el) s]"
