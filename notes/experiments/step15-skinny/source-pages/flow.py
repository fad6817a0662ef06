#!/usr/bin/env python3
"""Print a source page's SASS with branch targets as instruction indices (for reading control flow).
usage: flow.py FILE.csv [lo hi]   -- index, exec count, all samples, SASS (targets rewritten as ->idx)."""
import csv, os, re, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../step14-fp8/source-pages"))  # sp.py
from sp import load
rows = load(sys.argv[1])
base = None
raw = list(csv.reader(open(sys.argv[1])))
base = int(raw[2][0], 16)
by_off = {d["off"]: d["idx"] for d in rows}
lo = int(sys.argv[2]) if len(sys.argv) > 2 else 0
hi = int(sys.argv[3]) if len(sys.argv) > 3 else len(rows)
for d in rows[lo:hi]:
    s = d["sass"]
    m = re.search(r"0x([0-9a-f]{8,})", s)
    if m and ("BRA" in s or "CALL" in s or "BSSY" in s):
        t = int(m.group(1), 16) - base
        s = s.replace(m.group(0), f"->{by_off.get(t, '?')}")
    top = sorted(d["st"].items(), key=lambda kv: -kv[1])[:2]
    tops = " ".join(f"{k}:{v}" for k, v in top if v)
    print(f"{d['idx']:4d} ex={d['ex']:7d} s={d['all']:4d}  {s:<62s} {tops}")
