#!/usr/bin/env python3
"""The references pairs timed since REV, beside REV's record: for each case of the decode table
(book/src/generated/<gpu>/references-decode.md) timed in both, the verdict's ratio then -> now and
how far the rung's own TFLOP/s and the fastest cuBLAS configuration's moved, one at a time and back
to back. Ratios move with cuBLAS too; the rung's own figures say whether the kernel did. With
--sweep, the same for step 15's runs in the sweep (results/<gpu>.json) swept again since REV: the
rung's GFLOP/s moved and its % of the fastest cuBLAS then -> now.

    python3 notes/experiments/step15-skinny/record-moves.py REV [gpu-slug] [--sweep]
"""
import json
import re
import statistics
import subprocess
import sys

args = [a for a in sys.argv[1:] if a != "--sweep"]
rev, gpu = args[0], args[1] if len(args) > 1 else "nvidia-h200"
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



def sweep_moves():
    """Step 15's runs swept again since REV (another seed), by shape and precision."""
    path = f"results/{gpu}.json"
    runs = lambda f: {(r["step"], r["m"], r["n"], r["k"]): r for r in f["runs"] if r["step"].startswith("step15")}
    old, new = runs(json.loads(show(path))), runs(json.load(open(path)))
    print("| shape | precision | the rung's GFLOP/s | % of the fastest cuBLAS |")
    print("|---|---|---:|---|")
    moved = []
    for key in sorted(new, key=lambda k: (k[2], k[3], k[1], k[0])):
        if key not in old or new[key]["seed"] == old[key]["seed"]:
            continue
        a, b = old[key], new[key]
        moved.append(100 * (b["gflops"] / a["gflops"] - 1))
        was, now_ = a["pct_of_fastest_cublas"], b["pct_of_fastest_cublas"]
        print(f"| {key[1]}x{key[2]}x{key[3]} | {key[0].removeprefix('step15-skinny-')} | {moved[-1]:+.1f}% | {was:.1f} → {now_:.1f} |")
    at = lambda f: sum(1 for k in new if k in old and new[k]["seed"] != old[k]["seed"] and f[k]["pct_of_fastest_cublas"] >= 100)
    print(f"\n{len(moved)} runs: {at(new)} at the fastest cuBLAS or above ({at(old)} in {rev}'s record); the rung's "
          f"GFLOP/s moved by {statistics.median(moved):+.2f}% at the median")


if "--sweep" in sys.argv:
    sweep_moves()
    sys.exit(0)
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
