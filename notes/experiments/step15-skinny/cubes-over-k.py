#!/usr/bin/env python3
"""The cubes' time taken apart over K: Nsight Compute's CSVs of cublas-kernels.py (torch.matmul, FP16) and of the
rung (`rung-k.csv`: a line `# PRECISION MxNxK` before each case's CSV, one launch of `sgemm` from flushed caches) at
S x S x K for several K, a line a shape, then for each S a least-squares line through (K-tiles of 64, µs) and
(K-tiles, cycles of the busiest SM) for cuBLAS and the rung: the slope is what a K-tile costs, the intercept what a
launch costs whatever its K.
    python3 cubes-over-k.py DIR   (DIR holds torch-ncu.csv, torch-order.txt and rung-k.csv)
"""
import importlib.util
import pathlib
import sys

spec = importlib.util.spec_from_file_location("table", pathlib.Path(__file__).with_name("cublas-kernels-table.py"))
table = importlib.util.module_from_spec(spec)
spec.loader.exec_module(table)


def fit(points):
    """(slope, intercept) of the least-squares line through [(x, y)]."""
    n = len(points)
    mx, my = sum(x for x, _ in points) / n, sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx
    return slope, my - slope * mx


def figures(ks):
    """µs, cycles of the busiest SM (the sum over the case's kernels) and the first kernel's MHz."""
    cyc = sum(k[2].get("sm__cycles_active.max", 0) for k in ks)
    mhz = ks[0][2].get("sm__cycles_elapsed.avg.per_second", 0) / 1e6
    return table.us(ks), cyc, mhz


def main(d):
    torch_ks = table.torch_cases(d)
    rung_ks = {}
    cur = None
    for line in open(f"{d}/rung-k.csv"):
        if line.startswith("# "):
            cur = rung_ks.setdefault(tuple(line[2:].split()[::-1]), [])
        elif cur is not None:
            cur.append(line)
    rung_ks = {k: [r for r in table.kernels(v) if r[0].split("(")[0] == "sgemm"] for k, v in rung_ks.items()}
    print("| shape | cuBLAS's kernels (FP16) | µs | busiest SM, cycles | MHz | the rung, µs | cycles | MHz |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    lines = {}
    for (shape, dt), ks in torch_ks.items():
        if dt != "float16":
            continue
        m, n, k = (int(x) for x in shape.split("x"))
        r = rung_ks.get((shape, "fp16-c16"))
        c, f = figures(ks), figures(r) if r else None
        names = " + ".join(f"`{table.short(x[0])}`" for x in ks)
        rung = f"{f[0]:.2f} | {f[1]:,.0f} | {f[2]:.0f}" if f else "- | - | -"
        print(f"| {m} x {n} x {k} | {names} | {c[0]:.2f} | {c[1]:,.0f} | {c[2]:.0f} | {rung} |")
        lines.setdefault(m, []).append((k / 64, c, f))
    print()
    print("| S x S x K | who | a K-tile: µs | cycles | a launch: µs | cycles |")
    print("|---|---|---:|---:|---:|---:|")
    for m, pts in lines.items():
        for who, i in (("cuBLAS", 0), ("the rung", 1)):
            p = [(t, x[i]) for t, *x in pts if x[i]]
            if len(p) < 2:
                continue
            su, iu = fit([(t, v[0]) for t, v in p])
            sc, ic = fit([(t, v[1]) for t, v in p])
            print(f"| {m} x {m} x K | {who} | {su:.3f} | {sc:,.0f} | {iu:.2f} | {ic:,.0f} |")


if __name__ == "__main__":
    main(sys.argv[1])
