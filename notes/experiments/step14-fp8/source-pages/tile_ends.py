#!/usr/bin/env python3
"""The wide block-scaled rung's samples at 4096^3 and 4096 x 7168 x 16384 by region (kernel start, a tile's
setup, the K loop, the epilogue, the producer), per tile and per K-tile: what a tile's end costs against
its K loop ("The last two waves shared, and two leads that did not pay" in notes/step14.md). Input: the
source pages in notes/runs/h200-2026-12-01-f17abd6-refs-tune-source-pages.tar.gz:
    mkdir -p /tmp/te && tar xzf notes/runs/h200-2026-12-01-f17abd6-refs-tune-source-pages.tar.gz -C /tmp/te
    tar xzf /tmp/te/logs.tgz -C /tmp/te
usage: tile_ends.py [SRC_DIR]   (default /tmp/te/src)"""
import csv, os, sys

SRC = sys.argv[1] if len(sys.argv) > 1 else "/tmp/te/src"
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
