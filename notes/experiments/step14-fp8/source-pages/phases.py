#!/usr/bin/env python3
"""The K loops cut into phases in program order; each phase's share of the loop's samples, converted to
cycles of one consumer warp's iteration (loop samples spread over the measured cycles a K-tile).
usage: phases.py [SRC_DIR]"""
import os, sys
sys.path.insert(0, os.path.dirname(__file__))
import sp
SRC = sp.pages(1, sp.PAGES_C)
R = ["selected", "dispatch", "not_selected", "misc", "wait", "short_sb", "long_sb", "barrier", "math", "branch_resolving", "no_inst"]
PH = {
    "rung-fp8-block.csv": (2, sp.regions("""856 top: stage = it % 5, S2UR CgaCtaId, try_wait full, BRA (t1)
        | 881 4 QGMMA -> t1 | 892 chunk start? (1 in 5: wait cp.async, BAR 128, 2 copies)
        | 938 fetch: 6 LDS, 4 FMUL | 954 DEPBAR<=1, FFMA t0 (64), release (tid 0 branch), try_wait full (t0)
        | 1043 ARRIVE, 4 QGMMA -> t0 | 1074 DEPBAR<=1, FFMA t1 (64), predicated release, BRA back | 1145 end""")),
    "lt-fp8-block.csv": (1, sp.regions("""214 top: counters, stage/phase increments, BRA !P2 (probe of last iteration)
        | 228 LDS tile info, BAR.SYNC 0 (128), try_wait full (next), NOP
        | 237 3 LDS scales, B-scale address, 4 FMUL, DEPBAR<=0 | 252 FFMA (64), WARPGROUP.WAIT, release (predicated)
        | 318 counters, BAR.SYNC 2 (256) before (consumer 0), NOP | 323 ARRIVE, 4 QGMMA
        | 334 BAR.SYNC 2 after (consumer 1), UMOV, BRA back | 341 end""")),
}
CYC = {"rung-fp8-block.csv": 174757 / (32768 / 132), "lt-fp8-block.csv": 165997 / (32768 / 132)}
for f, (per, phases) in PH.items():
    rows = sp.load(os.path.join(SRC, f))
    loop = [d for lo_, hi_ in [(phases[0][1], phases[-1][2])] for d in rows if lo_ <= d["idx"] <= hi_]
    tot = sum(d["all"] for d in loop)
    cyc = CYC[f] * per  # cycles a warp spends on one iteration if the loop is all its time
    print(f"\n{f}: loop samples {tot}; an iteration ({per} K-tile(s)) ~ {cyc:.0f} cycles of SM-active time")
    print("| phase | instr. | samples % of loop | ~cycles | top reasons (samples) |")
    print("|---|---:|---:|---:|---|")
    for name, lo, hi in phases:
        seg = [d for d in rows if lo <= d["idx"] <= hi]
        a = sum(d["all"] for d in seg)
        n = sum(d["ex"] for d in seg) / seg[0]["ex"] if seg[0]["ex"] else 0
        agg = {k: sum(d["st"].get(k, 0) for d in seg) for k in R}
        agg["other(QGMMA)"] = a - sum(agg.values())
        top = ", ".join(f"{k} {v}" for k, v in sorted(agg.items(), key=lambda kv: -kv[1])[:4] if v)
        print(f"| {name} | {hi-lo+1} | {100*a/tot:.1f} | {cyc*a/tot:.0f} | {top} |")
