#!/usr/bin/env bash
# The GPU run that notes/step15.md's "Next: the operands' L2 promotion at 1024³" waits for, one
# command on one Hopper GPU (about 60 s): Nsight Compute (one launch each, flushed caches, two runs)
# of the step binary at 1024³, FP16 with a 16-bit C, with A's and B's tensor maps promoting 256
# bytes (the step), 128 or none (`--define A_PROMOTION=n --define B_PROMOTION=n`), then tune15
# --beside with 128 bytes for both, two rounds.
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
M=gpu__time_duration.sum,sm__cycles_active.max,lts__t_sectors_srcunit_tex.sum,l1tex__m_xbar2l1tex_read_bytes.sum,dram__bytes_read.sum
for w in "step|" "A128|--define A_PROMOTION=128" "B128|--define B_PROMOTION=128" \
         "A128-B128|--define A_PROMOTION=128 --define B_PROMOTION=128" "none|--define A_PROMOTION=0 --define B_PROMOTION=0"; do
  n=${w%%|*}; x=${w#*|}
  for i in 1 2; do
    echo "$n $i: $(timeout 40 ncu --clock-control none --metrics $M --csv -k regex:sgemm --launch-count 1 b/bin/step15-skinny $x \
      --precision fp16-c16 --shape 1024 --verify-only 2>/dev/null | grep '"sgemm"' | awk -F'","' '{printf "%s=%s ", $(NF-2), $NF}' | tr -d '"')"
  done
done | tee "$OUT/promotion-ncu.txt"
timeout 120 b/examples/tune15 1024 fp16-c16 --only "the rule's plan, 6 buffers" --define A_PROMOTION=128 \
  --define B_PROMOTION=128 --beside --rounds 2 > "$OUT/tune15.md" 2>&1
echo "tune15 rc=$?"; grep -E "^\| fp16|fastest" "$OUT/tune15.md"
