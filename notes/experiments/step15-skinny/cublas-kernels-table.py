#!/usr/bin/env python3
"""A markdown table from Nsight Compute's CSVs of cublas-kernels.py (torch.matmul at the decode shapes, FP16 and
BF16) and of the rung (`rung-ncu.csv`: a line `# PRECISION MxNxK` before each case's CSV, one launch of `sgemm`):
a line a shape, cuBLAS's kernels of the case's second call (short names, time in µs) and the rung's time.
    python3 cublas-kernels-table.py DIR   (DIR holds torch-ncu.csv, torch-order.txt and rung-ncu.csv)
"""
import collections
import csv
import sys


def kernels(lines):
    """[(name, grid, {metric: value})] in launch order, from ncu's --csv lines."""
    rows = list(csv.reader(line for line in lines if line.startswith('"')))
    if not rows:
        return []
    col = {h: i for i, h in enumerate(rows[0])}
    out = collections.OrderedDict()
    for r in rows[1:]:
        if r[0] == "ID":
            continue
        key = (r[col["Process ID"]], r[col["ID"]])
        out.setdefault(key, [r[col["Kernel Name"]], r[col["Grid Size"]], {}])
        out[key][2][r[col["Metric Name"]]] = float(r[col["Metric Value"]].replace(",", ""))
    return list(out.values())


def us(ks):
    return sum(k[2]["gpu__time_duration.sum"] for k in ks) / 1000


def short(name):
    name = name.split("(")[0].replace("void ", "")
    if "splitKreduce" in name:
        return "reduce"
    return name.replace("nvjet_sm90_", "").replace("_bz", "")


def torch_cases(d):
    names = [line.split() for line in open(f"{d}/torch-order.txt")]
    cases, cur = [], None
    for k in kernels(open(f"{d}/torch-ncu.csv")):
        if "spin_kernel" in k[0]:
            cur = []
            cases.append(cur)
        elif cur is not None:
            cur.append(k)
    return {(shape, dt): ks[len(ks) // 2:] for (shape, dt), ks in zip(names, cases)}


def rung_cases(d):
    out, cur = {}, None
    for line in open(f"{d}/rung-ncu.csv"):
        if line.startswith("# "):
            prec, shape = line[2:].split()
            cur = out.setdefault((shape, prec.replace("-c16", "")), [])
        elif cur is not None:
            cur.append(line)
    # A case whose first `sgemm` launch is not the rung's (cuBLAS's check can come first) is not measured.
    return {key: [k for k in kernels(lines) if k[0].split("(")[0] == "sgemm"] for key, lines in out.items()}


def main(d):
    torch_ks, rung_ks = torch_cases(d), rung_cases(d)
    print("| shape | FP16: cuBLAS's kernels | µs | BF16: cuBLAS's kernels | µs | the rung, FP16 / BF16 (µs) |")
    print("|---|---|---:|---|---:|---|")
    for shape in dict.fromkeys(s for s, _ in torch_ks):
        cells = []
        for dt in ("float16", "bfloat16"):
            ks = torch_ks[(shape, dt)]
            cells += [" + ".join(f"`{short(k[0])}`" for k in ks), f"{us(ks):.2f}"]
        rung = [rung_ks.get((shape, p)) for p in ("fp16", "bf16")]
        cells.append(" / ".join(f"{us(r):.2f}" if r else "-" for r in rung))
        print(f"| {shape.replace('x', ' x ')} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
