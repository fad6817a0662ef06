#!/usr/bin/env python3
"""Samples by region and stall reason for cuBLAS (nvjet 64x32 pingpong) and the rung (d3e97d3) at
64x4096x4096, from the Nsight Compute source pages.  The index ranges were chosen by reading
flow.py's dumps (analysis.md lists them).  usage: regions64.py [B_SRC C_SRC]"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../step14-fp8/source-pages"))  # sp.py
import sp
B = sp.pages(1, sp.PAGES_B)
C = sp.pages(2, sp.PAGES_C)
R = ["long_sb", "wait", "selected", "not_selected", "dispatch", "branch_resolving", "no_inst", "barrier",
     "membar", "short_sb", "math", "imc", "drain", "sleep", "mio", "lg"]
KERNELS = {
    "cublas": (os.path.join(B, "cublas-64x4096x4096.csv"), [
        ("prologue (all warps)", [(0, 5)]),
        ("consumers' setup (both wgs)", [(6, 150)]),
        ("wg0 K loop body (4 HGMMA 64x32x16)", [(158, 170), (172, 198), (436, 477)]),
        ("wg0 top: BRA on full-barrier probe", [(171, 171)]),
        ("wg0 full-barrier wait loop (NANOSLEEP)", [(479, 488)]),
        ("wg0 epilogue (STSM + TMA store)", [(199, 362)]),
        ("wg1 (idle: waits for wg0's mainloop, no 2nd tile)", [(151, 157), (363, 435), (489, 512)]),
        ("producer setup", [(513, 643)]),
        ("producer K loop", [(644, 673), (762, 792)]),
        ("producer empty-barrier wait", [(793, 802)]),
        ("producer tail (drain waits, tile sched)", [(674, 761), (803, 857)]),
        ("EXIT", [(858, 863)]),
    ], 32768, 64),  # consumer warp-iterations executed, K-tiles per block
    "rung": (os.path.join(C, "rung-64x4096x4096.csv"), [
        ("prologue + barrier init", [(0, 165)]),
        ("consumer setup (unit, descriptors)", [(166, 387)]),
        ("consumer K loop body (4 HGMMA 64x64x16)", [(388, 395), (397, 435)]),
        ("consumer top: BRA on full-barrier try_wait", [(396, 396)]),
        ("consumer full-barrier retry", [(1425, 1427)]),
        ("consumer after loop: wait<0>, release", [(436, 456)]),
        ("partials: flag spin + read back + add", [(457, 527)]),
        ("epilogue (STS.U16 transposed, TMA store)", [(528, 1074)]),
        ("partials: save + fence + flag", [(1075, 1146)]),
        ("consumer exit", [(1147, 1151)]),
        ("producer-wg exit / setup", [(1152, 1355)]),
        ("producer K loop", [(1356, 1370), (1372, 1393)]),
        ("producer: BRA on empty-barrier try_wait", [(1371, 1371)]),
        ("producer tail", [(1394, 1424), (1428, 1447)]),
    ], 16384, 32),
}
for name, (path, regs, iters, ktiles) in KERNELS.items():
    rows = sp.load(path)
    tot = sum(d["all"] for d in rows)
    seen = set()
    print(f"\n## {name}: {tot} samples, {len(rows)} instructions")
    print("| region | idx | samples | % | top reasons |")
    print("|---|---|---:|---:|---|")
    for rname, spans in regs:
        seg = [d for d in rows if any(lo <= d["idx"] <= hi for lo, hi in spans)]
        seen.update(d["idx"] for d in seg)
        a = sum(d["all"] for d in seg)
        agg = {k: sum(d["st"].get(k, 0) for d in seg) for k in R}
        top = ", ".join(f"{k} {v}" for k, v in sorted(agg.items(), key=lambda kv: -kv[1])[:3] if v)
        idx = ",".join(f"{lo}-{hi}" for lo, hi in spans)
        print(f"| {rname} | {idx} | {a} | {100*a/tot:.1f} | {top} |")
    rest = [d for d in rows if d["idx"] not in seen]
    print(f"| (not in a region) | | {sum(d['all'] for d in rest)} | | |")
