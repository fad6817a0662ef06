#!/usr/bin/env python3
"""The wide block-scaled rung's samples at 4096^3 and 4096 x 7168 x 16384 by region (kernel start, a tile's
setup, the K loop, the epilogue, the producer), per tile and per K-tile: what a tile's end costs against
its K loop ("The last two waves shared, and two leads that did not pay" in notes/step14.md). Input: the
source pages in notes/runs/h200-2026-12-01-f17abd6-refs-tune-source-pages.tar.gz:
    mkdir -p /tmp/te && tar xzf notes/runs/h200-2026-12-01-f17abd6-refs-tune-source-pages.tar.gz -C /tmp/te
    tar xzf /tmp/te/logs.tgz -C /tmp/te
and, for cuBLASLt's block-scaled kernel at 4096^3 (128 x 128 tiles), the page in
notes/runs/h200-2026-11-30-d3e97d3-source-pages-decode-bf16.tar.gz, unpacked as README.md says (/tmp/sp/...).
usage: tile_ends.py [SRC_DIR [LT_DIR]]   (defaults /tmp/te/src, /tmp/sp/source-pages-decode-bf16/c/x/src)"""
import csv, os, sys

SRC = sys.argv[1] if len(sys.argv) > 1 else "/tmp/te/src"
LT = sys.argv[2] if len(sys.argv) > 2 else "/tmp/sp/source-pages-decode-bf16/c/x/src"
# Index ranges of the SASS (read from the pages: the per-wave code starts where the executions become a
# multiple of the waves, the loop at the first instruction run every K-tile, the producer at its own loop).
REGIONS = [("kernel start", 0, 158), ("a wave's job and setup", 158, 889), ("K loop", 889, 1174),
           ("epilogue (partials, stores)", 1174, 2800), ("producer", 2800, None)]
# Tiles (128 x 192 jobs of a block) and K-tiles a tile at each shape.
SHAPES = {"src-4096.csv": (704, 32), "src-4096x7168x16384.csv": (1216, 128)}
for name, (tiles, ktiles) in SHAPES.items():
    rows = list(csv.reader(open(os.path.join(SRC, name))))
    head, data = rows[1], rows[2:]
    col = head.index("Warp Stall Sampling (All Samples)")
    samples = [int(r[col]) for r in data]
    total = sum(samples)
    print(f"{name}: {total} samples, {tiles} tiles of {ktiles} K-tiles")
    for what, lo, hi in REGIONS:
        s = sum(samples[lo:hi])
        print(f"  {what:28s} {s:6d}  {100 * s / total:5.1f}%  {s / tiles:6.2f} a tile")
    loop = sum(samples[889:1174])
    print(f"  K loop a K-tile of a tile: {loop / tiles / ktiles:.3f}; the rest of a consumer's tile: "
          f"{(sum(samples[158:889]) + sum(samples[1174:2800])) / tiles:.2f}")
    # The stall reasons of a tile's setup and of its epilogue, a tile.
    reasons = [h for h in head if h.startswith("stall_") and "Not Issued" not in h]
    for what, lo, hi in REGIONS[1:4]:
        by = {h: sum(int(r[head.index(h)]) for r in data[lo:hi] if r[head.index(h)] not in ("", "-")) for h in reasons}
        top = sorted(by.items(), key=lambda kv: -kv[1])[:5]
        print(f"  {what}: " + ", ".join(f"{h[6:]} {v / tiles:.2f}" for h, v in top) + " a tile")
# cuBLASLt's nvjet kernel: its K loop in two copies (the ranges whose executions follow the K-tiles), the
# epilogue between them, the producer after; 1,024 tiles of 128 x 128, 32 K-tiles each.
lt = os.path.join(LT, "lt-fp8-block.csv")
if os.path.exists(lt):
    rows = list(csv.reader(open(lt)))
    col = rows[1].index("Warp Stall Sampling (All Samples)")
    samples = [int(r[col]) for r in rows[2:]]
    loop = sum(samples[214:341]) + sum(samples[1070:1196])
    rest = sum(samples[0:214]) + sum(samples[341:1070])
    print(f"cuBLASLt lt-fp8-block.csv: {sum(samples)} samples, 1024 tiles of 32 K-tiles")
    print(f"  K loop a K-tile of a tile: {loop / 1024 / 32:.3f}; the rest of a consumer's tile: {rest / 1024:.2f}")
    print("  (a tile of 128 x 128 is two thirds of the rung's 128 x 192: per the same work, multiply by 1.5)")
