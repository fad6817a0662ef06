#!/usr/bin/env python3
"""Stall reasons on the promotion instructions (FFMA with block scales, FADD per tensor) of the four
kernels, and on every other instruction of the K loops, in samples and per executed warp instruction.
usage: promote_stalls.py [SRC_DIR]"""
import os, re, sys
sys.path.insert(0, os.path.dirname(__file__))
import sp
SRC = sp.pages(1, sp.PAGES_C)
R = ["selected", "dispatch", "not_selected", "misc", "wait", "short_sb", "long_sb", "barrier", "math", "branch_resolving", "no_inst", "mio"]
for f, op in [("rung-fp8-block.csv", "FFMA"), ("lt-fp8-block.csv", "FFMA"), ("rung-fp8.csv", "FADD"), ("lt-fp8.csv", "FADD")]:
    rows = sp.load(os.path.join(SRC, f))
    tot = sum(d["all"] for d in rows)
    hot = [d for d in rows if d["ex"] > 100000 and d["ex"] < 1000000]  # the K loops' steady state
    for name, sel in [(op, lambda d: d["sass"].startswith(op)), ("QGMMA", lambda d: d["sass"].startswith("QGMMA")),
                      ("rest of loop", lambda d: not d["sass"].startswith(op) and not d["sass"].startswith("QGMMA"))]:
        s = [d for d in hot if sel(d)]
        ex = sum(d["ex"] for d in s)
        a = sum(d["all"] for d in s)
        agg = {k: sum(d["st"].get(k, 0) for d in s) for k in R}
        other = a - sum(agg.values())
        print(f"{f:20s} {name:12s} ex={ex/1e6:6.2f}M samples={a:5d} ({100*a/tot:4.1f}%) per Minstr={a/ex*1e6:7.0f} | "
              + " ".join(f"{k}={100*v/tot:.1f}" for k, v in agg.items() if v) + f" other={100*other/tot:.1f}")
