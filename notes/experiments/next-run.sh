#!/usr/bin/env bash
# The GPU run that notes/step15.md's "Next: the narrow tile of A shared out at 1024³" waits for, one
# command of up to 560 s on one Hopper GPU, with experiments/step15-skinny/swap-split.patch in
# clusters of two (`--define CLUSTER=2 --define A_BOX_ROWS=64`: each block loads half of the 128
# rows of A's narrow tile for both):
#   - the step binary with the patch against float64 and cuBLAS (alpha 1.5, beta 0.5) at 1024³ and
#     odd shapes the rule gives the same tiles, then memcheck and synccheck;
#   - tune15 --beside at 1024³, FP16 with a 16-bit C and BF16 with an FP32 C, two rounds;
#   - Nsight Compute (one launch each, flushed caches) of the patch at 1024 x 1024 x {512, 1024,
#     2048}: cycles of the busiest SM and L2 bytes, for its line over K (cubes-over-k.py's).
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
export PATH=$PATH:/usr/local/cuda/bin; t0=$(date +%s); el() { echo "$(( $(date +%s) - t0 ))"; }
P=$R/notes/experiments/step15-skinny/swap-split.patch; X="--kernel $P --define CLUSTER=2 --define A_BOX_ROWS=64"
mkdir -p "$OUT/logs"
for c in fp16-c16:1024x1024x1024 bf16:1024x1024x1024 fp16:1000x1000x1000 bf16-c16:999x1023x1001 \
         fp16-c16:517x1024x777 bf16:200x2048x3000 fp16-c16:1023x1535x1025; do
  p=${c%%:*}; sh=${c##*:}; f=$OUT/logs/check-$p-$sh.log
  timeout 60 b/bin/step15-skinny $X --precision $p --shape $sh --alpha 1.5 --beta 0.5 --verify-only > "$f" 2>&1
  echo "check $p $sh rc=$? $(grep -E 'vs (CPU|cuBLAS)' "$f" | sed 's/(limit.*//' | tr -s ' ' | tr '\n' ' ')[$(el) s]"
done
for t in memcheck synccheck; do
  f=$OUT/logs/$t.log
  timeout 120 compute-sanitizer --tool $t b/bin/step15-skinny $X --precision fp16-c16 --shape 999x1023x1001 --beta 0.5 --verify-only > "$f" 2>&1
  echo "$t rc=$? $(grep -E 'ERROR SUMMARY' "$f" | tail -1) [$(el) s]"
done
for p in fp16-c16 bf16; do
  timeout 150 b/examples/tune15 1024 $p --only "the rule's plan, 6 buffers" $X --beside --rounds 2 > "$OUT/tune15-$p.md" 2>&1
  echo "tune15 $p rc=$? [$(el) s]"; grep -E "^\| (fp16|bf16)|fastest" "$OUT/tune15-$p.md"
done
M=gpu__time_duration.sum,sm__cycles_active.max,sm__cycles_elapsed.avg.per_second,launch__grid_size,lts__t_bytes.sum,dram__bytes_read.sum
: > "$OUT/patch-k.csv"
for sh in 1024x1024x512 1024x1024x1024 1024x1024x2048; do
  for who in step patch; do
    echo "# $who $sh" >> "$OUT/patch-k.csv"
    x=""; [ $who = patch ] && x=$X
    timeout 40 ncu --clock-control none --metrics $M --csv -k regex:sgemm --launch-count 1 b/bin/step15-skinny $x \
      --precision fp16-c16 --shape $sh --verify-only >> "$OUT/patch-k.csv" 2>/dev/null
  done
done
python3 - "$OUT/patch-k.csv" <<'PY'
import csv, sys
cur = None; rows = {}
for line in open(sys.argv[1]):
    if line.startswith("# "): cur = tuple(line.split()[1:]); rows[cur] = {}
    elif cur and line.startswith('"') and '"sgemm"' in line:
        r = next(csv.reader([line])); rows[cur].setdefault(r[-3], float(r[-1].replace(",", "")))
print("| shape | who | µs | busiest SM, cycles | MHz | L2 MB |"); print("|---|---|---:|---:|---:|---:|")
for (who, sh), m in rows.items():
    if m: print(f"| {sh} | {who} | {m['gpu__time_duration.sum']/1e3:.2f} | {m['sm__cycles_active.max']:,.0f} | {m['sm__cycles_elapsed.avg.per_second']/1e6:.0f} | {m['lts__t_bytes.sum']/1e6:.1f} |")
PY
echo "done [$(el) s]"
