#!/usr/bin/env bash
# The GPU run that notes/step15.md's "Next: cuBLAS's plan at 1024³" waits for, one command on one
# Hopper GPU (about 150 s): tune15 with experiments/step15-skinny/cluster-columns.patch in clusters
# of two (`--define CLUSTER=2`), beside the step's kernel, on the tuner's two consumers of 64 x 64
# (`Swapped { bm: 128, bn: 64, stages: 8 }`) and on the rule's plan; every candidate verified
# against cuBLAS first (the odd shapes are there for that).
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
export SGEMM_CUBIN_CACHE=$A/cubins; mkdir -p "$SGEMM_CUBIN_CACHE"
echo "bundle of $(cat "$R/.gpu/bundle-commit") in $A"
cd "$A" || exit 1
t0=$(date +%s); P=$R/notes/experiments/step15-skinny/cluster-columns.patch
for c in 1024:fp16-c16:2 1024:bf16:2 1024x1024x2048:fp16-c16:1 1000:fp16:1 999x1023x1001:bf16-c16:1; do
  IFS=: read -r sh p n <<< "$c"; f=$OUT/tune15-$sh-$p.md
  timeout 150 b/examples/tune15 $sh $p --only "bm: 128, bn: 64|the rule's plan, 6 buffers" --kernel "$P" \
    --define CLUSTER=2 --beside --rounds $n > "$f" 2>&1
  echo "tune15 $sh $p rc=$? [$(( $(date +%s) - t0 )) s]"; grep -E "^\| (fp16|bf16)|fastest|error" "$f"
done
