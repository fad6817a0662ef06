#!/usr/bin/env python3
"""The references pairs timed since REV, beside REV's record: for each case of the decode table
(book/src/generated/<gpu>/references-decode.md) timed in both, the verdict's ratio then -> now and
how far the rung's own TFLOP/s and the fastest cuBLAS configuration's moved, one at a time and back
to back. Ratios move with cuBLAS too; the rung's own figures say whether the kernel did.

    python3 notes/experiments/step15-skinny/record-moves.py REV [gpu-slug]
"""
import json
import re
import statistics
import subprocess
import sys

rev = sys.argv[1]
gpu = sys.argv[2] if len(sys.argv) > 2 else "nvidia-h200"
refs, table = f"results/references/{gpu}.json", f"book/src/generated/{gpu}/references-decode.md"


def show(path):
    return subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True, check=True).stdout


def ratios(text):
    out = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 6 and re.fullmatch(r"\d+x\d+x\d+", cells[0]):
            out[tuple(cells[:3])] = (cells[4], cells[5])
    return out


def tflops(record, shape, precision, c, method, rung):
    m, n, k = map(int, shape.split("x"))
    key = (m, n, k, precision, c, method)
    found = [r["tflops"] for r in record["rows"]
             if (r["m"], r["n"], r["k"], r["precision"], r["c"], r["method"]) == key
             and r["who"].startswith("step") == rung]
    return max(found) if found else None


then, now = json.loads(show(refs)), json.load(open(refs))
was, is_ = ratios(show(table)), ratios(open(table).read())
print("| shape | precision | C | one at a time: ratio | rung | cuBLAS | back to back: ratio | rung | cuBLAS |")
print("|---|---|---|---|---:|---:|---|---:|---:|")
moves, up, before = [], 0, 0
for case, (one, b2b) in is_.items():
    if case not in was:
        continue
    shape, precision, c = case
    cells = list(case)
    for method, old, new in [("one at a time", was[case][0], one), ("back to back", was[case][1], b2b)]:
        rung = [tflops(f, shape, precision, c, method, True) for f in (then, now)]
        cublas = [tflops(f, shape, precision, c, method, False) for f in (then, now)]
        dr, dc = 100 * (rung[1] / rung[0] - 1), 100 * (cublas[1] / cublas[0] - 1)
        moves.append(dr)
        up, before = up + (float(new) >= 1.0), before + (float(old) >= 1.0)
        cells += [f"{old} → {new}", f"{dr:+.1f}%", f"{dc:+.1f}%"]
    print("| " + " | ".join(cells) + " |")
print(f"\n{len(moves)} cases: {up} at cuBLAS or above ({before} in {rev}'s record); the rung's own "
      f"TFLOP/s moved by {statistics.median(moves):+.2f}% at the median")
