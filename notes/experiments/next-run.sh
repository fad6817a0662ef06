#!/usr/bin/env bash
# The GPU run that notes/step15.md's "Next: the rung's loads alone at 1024²" waits for, one command on
# one Hopper GPU (about 30 s): Nsight Compute (one launch each, flushed caches) of the step binary and
# of experiments/step15-skinny/loads-only.patch (unchecked: it multiplies nothing) at 1024 x 1024 x
# {512, 1024, 2048}, FP16 with a 16-bit C: cycles of the busiest SM, for each a line over K.
# Built beside the source tree (release binaries):
#   cargo xtask bundle --out .gpu/b2
#   tar czf .gpu/bundle.tgz -C .gpu/b2 ./run.sh ./bin ./examples/tune15
#   git rev-parse --short HEAD > .gpu/bundle-commit
# and run from the repository root with .gpu/bundle.tgz and .gpu/bundle-commit carried:
#   bash notes/experiments/next-run.sh
# With GRID=64 each launch is also run on 64 clusters (`--define GRID_CLUSTERS=64`: half the SMs,
# two tiles each), to tell a pace set by the whole GPU's traffic from one set by each SM's own loads.
set -u
OUT=${OUT:?the folder whose files come back}
R=$PWD; A=$(mktemp -d /tmp/fresh.XXXXXX); mkdir -p "$A/b"
tar xzf "$R/.gpu/bundle.tgz" -C "$A/b" || { echo "no bundle at .gpu/bundle.tgz (see the header)"; exit 1; }
export SGEMM_CUBIN_CACHE=$A/cubins PATH=$PATH:/usr/local/cuda/bin; mkdir -p "$SGEMM_CUBIN_CACHE"
echo "bundle of $(cat "$R/.gpu/bundle-commit") in $A"
cd "$A" || exit 1
P=$R/notes/experiments/step15-skinny/loads-only.patch
M=gpu__time_duration.sum,sm__cycles_active.max,sm__cycles_elapsed.avg.per_second
: > "$OUT/loads-k.csv"
for sh in 1024x1024x512 1024x1024x1024 1024x1024x2048; do
  for who in step loads-only ${GRID:+step@$GRID loads-only@$GRID}; do
    echo "# $who $sh" >> "$OUT/loads-k.csv"
    x=""; case $who in loads-only*) x="--kernel $P";; esac
    case $who in *@*) x="$x --define GRID_CLUSTERS=${who#*@}";; esac
    # The patch computes nothing, so its check fails; Nsight Compute still profiles its launch.
    timeout 40 ncu --clock-control none --metrics $M --csv -k regex:sgemm --launch-count 1 b/bin/step15-skinny $x \
      --precision fp16-c16 --shape $sh --verify-only >> "$OUT/loads-k.csv" 2>/dev/null
  done
done
python3 - "$OUT/loads-k.csv" <<'PY'
import csv, sys
cur = None; rows = {}
for line in open(sys.argv[1]):
    if line.startswith("# "): cur = tuple(line.split()[1:]); rows[cur] = {}
    elif cur and line.startswith('"') and '"sgemm"' in line:
        r = next(csv.reader([line])); rows[cur].setdefault(r[-3], float(r[-1].replace(",", "")))
print("| shape | who | µs | busiest SM, cycles | MHz |"); print("|---|---|---:|---:|---:|")
pts = {}
for (who, sh), m in rows.items():
    if not m: continue
    print(f"| {sh} | {who} | {m['gpu__time_duration.sum']/1e3:.2f} | {m['sm__cycles_active.max']:,.0f} | {m['sm__cycles_elapsed.avg.per_second']/1e6:.0f} |")
    pts.setdefault(who, []).append((int(sh.split("x")[2]) / 64, m["sm__cycles_active.max"]))
for who, p in pts.items():
    n = len(p); mx = sum(x for x, _ in p) / n; my = sum(y for _, y in p) / n
    s = sum((x - mx) * (y - my) for x, y in p) / sum((x - mx) ** 2 for x, _ in p)
    print(f"{who}: {s:,.0f} cycles a K-tile, {my - s * mx:,.0f} a launch")
PY
