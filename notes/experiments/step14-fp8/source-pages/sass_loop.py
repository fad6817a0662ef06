#!/usr/bin/env python3
"""The consumer's pair loop in nvdisasm -c output: finds the backward branch whose target lies between
the first QGMMA-writing-R24 block and the loop's end (the shortest loop holding eight QGMMAs: the pair loop), prints its
instructions by kind, and the instructions skipped on the common path (branches taken around blocks
are listed, not resolved).  usage: sass_loop.py FILE.sass"""
import re, sys, collections
lines = open(sys.argv[1]).read().splitlines()
ins, labels = [], {}
for l in lines:
    m = re.match(r"^(\.L_x_\d+):", l.strip())
    if m:
        labels[m.group(1)] = len(ins)
        continue
    m = re.match(r"^\s+/\*([0-9a-f]+)\*/\s+(.*?)\s*;", l)
    if m:
        ins.append((int(m.group(1), 16), m.group(2)))
best = None
for i, (a, t) in enumerate(ins):
    m = re.search(r"BRA `\((\.L_x_\d+)\)", t)
    if m and labels.get(m.group(1), 10**9) < i:
        lo = labels[m.group(1)]
        q = sum(1 for _, x in ins[lo:i + 1] if x.startswith("QGMMA"))
        if q == 8 and (best is None or i - lo < best[1] - best[0]):  # the pair loop: two groups of four
            best = (lo, i, q)
lo, hi, q = best
body = ins[lo:hi + 1]
def kind(t):
    t = re.sub(r"^@!?U?P\w+\s+", "", t)
    for k in ["QGMMA", "WARPGROUP", "FFMA", "FMUL", "LDS", "BAR.SYNC", "SYNCS.PHASECHK", "SYNCS.ARRIVE", "LDGSTS", "LDGDEPBAR", "DEPBAR",
              "BRA", "BSSY", "BSYNC", "S2UR", "NOP"]:
        if t.startswith(k):
            return k
    if re.match(r"U(?!TMA)", t) or t.startswith("VOTEU"):
        return "uniform"
    if re.match(r"(MOV|IMAD.MOV|PRMT|SEL)", t):
        return "move/select"
    return "other integer"
c = collections.Counter(kind(t) for _, t in body)
print(f"loop {hex(ins[lo][0])}..{hex(ins[hi][0])}: {len(body)} instructions, {q} QGMMA")
for k, n in c.most_common():
    print(f"  {k:16s} {n}")
