#!/usr/bin/env python3
"""Warp instructions per K-tile (executions / warp-iterations) of each K loop at 64x4096x4096, by kind.
usage: perktile.py [B_SRC C_SRC]"""
import os, re, sys, collections
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../step14-fp8/source-pages"))  # sp.py
import sp
B = sp.pages(1, sp.PAGES_B)
C = sp.pages(2, sp.PAGES_C)
def kind(t):
    t = re.sub(r"^@!?U?P\w+\s+", "", t)
    for k in ["HGMMA", "WARPGROUP.ARRIVE", "WARPGROUP.DEPBAR", "SYNCS.PHASECHK", "SYNCS.ARRIVE", "NANOSLEEP",
              "UTMALDG", "STS", "LDS", "BAR.SYNC", "BRA", "BSSY", "BSYNC", "ELECT", "NOP"]:
        if t.startswith(k):
            return k
    return "uniform (U*)" if t.startswith("U") else "other"
LOOPS = [("cuBLAS consumer (wg0)", os.path.join(B, "cublas-64x4096x4096.csv"), [(158, 198), (436, 488)], 32768),
         ("cuBLAS producer (1 warp)", os.path.join(B, "cublas-64x4096x4096.csv"), [(644, 673), (762, 802)], 8192),
         ("rung consumer", os.path.join(C, "rung-64x4096x4096.csv"), [(388, 435), (1425, 1427)], 16384),
         ("rung producer (1 warp, 1 thread)", os.path.join(C, "rung-64x4096x4096.csv"), [(1356, 1393), (1431, 1433)], 4096)]
for name, path, spans, iters in LOOPS:
    rows = sp.load(path)
    seg = [d for d in rows if any(lo <= d["idx"] <= hi for lo, hi in spans)]
    c = collections.Counter()
    for d in seg:
        c[kind(d["sass"])] += d["ex"]
    tot = sum(c.values())
    print(f"{name}: {tot / iters:.1f} warp instructions a K-tile ({iters} warp-iterations); " +
          ", ".join(f"{k} {v / iters:.2f}" for k, v in c.most_common()))
