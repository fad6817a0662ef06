#!/usr/bin/env python3
"""Per-region and per-category summary of the two block-scaled source pages.

Regions are index ranges into the SASS listing (sp.py's idx column), chosen by reading the listings
that `sp.py FILE.csv` dumps.  Instruction counts are divided by the number of
warp-K-tiles of the consumers (32 x 32 tiles x 32 K-tiles x 8 consumer warps = 262,144) or, for the
producer, by the 32,768 tile-K-tiles (one producer thread each).

usage: regions.py [SRC_DIR]
"""
import re, sys, os
sys.path.insert(0, os.path.dirname(__file__))
import sp

SRC = sp.pages(1, sp.PAGES_C)
WARP_KTILES = 32 * 32 * 32 * 8
TILE_KTILES = 32 * 32 * 32

# Each region runs from its first instruction's index to the next region's (the last to the end).
STARTS = {
    "rung-fp8-block.csv": """0 setup | 141 consumer: tile prologue (d=0, chunks 0-1, first start)
        | 856 consumer: pair loop (2 K-tiles an iteration) | 1145 consumer: loop tail (last pair)
        | 1550 consumer: epilogue (partials, C store) | 2183 producer
        | 2784 out-of-line retries (try_wait spins) | 2814 other""",
    "lt-fp8-block.csv": """0 setup + consumer tile prologue | 214 consumer: K loop, copy A
        | 341 consumer: loop tail, epilogue, next tile | 1070 consumer: K loop, copy B
        | 1198 consumer retries (try_wait + nanosleep) | 1212 producer | 1583 tile-scheduler warp (atomics)""",
}


REGIONS = {f: sp.regions(text) for f, text in STARTS.items()}

CATS = [
    ("QGMMA", r"^QGMMA"),
    ("WARPGROUP.*", r"^WARPGROUP"),
    ("FFMA", r"^FFMA"),
    ("FMUL", r"^FMUL"),
    ("LDS (scales)", r"^LDS "),
    ("@!PT LDS (dummy)", r"^@!PT\s+LDS"),
    ("BAR.SYNC", r"BAR\.SYNC"),
    ("SYNCS try_wait", r"SYNCS\.PHASECHK"),
    ("SYNCS arrive", r"SYNCS\.ARRIVE"),
    ("LDGSTS/LDGDEPBAR/DEPBAR", r"LDGSTS|LDGDEPBAR|^DEPBAR"),
    ("BRA/BSSY/BSYNC", r"BRA|BSSY|BSYNC"),
    ("S2UR/S2R", r"S2UR|S2R"),
    ("uniform int (U*)", r"^(@!?U?P\w+\s+)?U(?!TMA)"),
    ("MOV/IMAD.MOV/PRMT", r"MOV|PRMT"),
    ("NOP", r"^NOP"),
    ("other int (IADD3, LOP3, ISETP, LEA, SHF, IMAD...)", r"."),
]
REASONS = ["dispatch", "wait", "selected", "not_selected", "long_sb", "short_sb", "barrier", "misc",
           "branch_resolving", "no_inst", "math", "mio", "other"]


def cat(s):
    body = re.sub(r"^@!?U?P\w+\s+", "", s)
    for name, pat in CATS:
        if name.startswith("@!PT") and re.search(pat, s):
            return name
        if name == "uniform int (U*)":
            if re.match(r"U(?!TMA|CGA)", body):
                return name
            continue
        if not name.startswith("@!PT") and re.search(pat, body):
            return name
    return "other"


def reasons(d):
    st = dict(d["st"])
    r = {k: st.get(k, 0) for k in REASONS if k != "other"}
    r["other"] = d["all"] - sum(r.values())  # incl. the reason absent from the export (on QGMMA)
    return r


def summarize(fname):
    rows = sp.load(os.path.join(SRC, fname))
    tot = sum(d["all"] for d in rows)
    print(f"\n## {fname}: {len(rows)} SASS instructions, {tot} samples "
          f"({sum(d['ni'] for d in rows)} not issued), {sum(d['ex'] for d in rows)/1e6:.2f} M warp instr. executed")
    print("| region | warp instr. executed (M) | per warp-K-tile | samples % | not issued % |")
    print("|---|---:|---:|---:|---:|")
    for name, lo, hi in REGIONS[fname]:
        seg = [d for d in rows if lo <= d["idx"] <= hi]
        ex = sum(d["ex"] for d in seg)
        per = ex / (TILE_KTILES if name.startswith("producer") else WARP_KTILES)
        print(f"| {name} | {ex/1e6:.2f} | {per:.1f} | {100*sum(d['all'] for d in seg)/tot:.1f} | "
              f"{100*sum(d['ni'] for d in seg)/tot:.1f} |")
    return rows, tot


def loop_table(fname, ranges, label):
    rows = sp.load(os.path.join(SRC, fname))
    tot = sum(d["all"] for d in rows)
    seg = [d for d in rows if any(lo <= d["idx"] <= hi for lo, hi in ranges)]
    ktiles = WARP_KTILES
    agg = {}
    for d in seg:
        c = cat(d["sass"])
        a = agg.setdefault(c, dict(ex=0, all=0, ni=0, r={k: 0 for k in REASONS}))
        a["ex"] += d["ex"]; a["all"] += d["all"]; a["ni"] += d["ni"]
        for k, v in reasons(d).items():
            a["r"][k] += v
    print(f"\n### {label} ({fname}, idx {ranges}); per warp-K-tile, samples as % of the kernel's {tot}")
    print("| category | instr./K-tile | samples % | not issued % | " + " | ".join(REASONS) + " |")
    print("|---|---:|---:|---:|" + "---:|" * len(REASONS))
    T = dict(ex=0, all=0, ni=0, r={k: 0 for k in REASONS})
    for c, _ in CATS + [("other", None)]:
        if c not in agg:
            continue
        a = agg[c]
        T["ex"] += a["ex"]; T["all"] += a["all"]; T["ni"] += a["ni"]
        for k in REASONS:
            T["r"][k] += a["r"][k]
        print(f"| {c} | {a['ex']/ktiles:.2f} | {100*a['all']/tot:.1f} | {100*a['ni']/tot:.1f} | "
              + " | ".join(f"{100*a['r'][k]/tot:.1f}" for k in REASONS) + " |")
    print(f"| **total** | {T['ex']/ktiles:.1f} | {100*T['all']/tot:.1f} | {100*T['ni']/tot:.1f} | "
          + " | ".join(f"{100*T['r'][k]/tot:.1f}" for k in REASONS) + " |")


if __name__ == "__main__":
    for f in REGIONS:
        summarize(f)
    # the K loops with everything executed once per K-tile in steady state
    loop_table("rung-fp8-block.csv", [(856, 1144)], "rung: pair loop (per K-tile = per pair / 2, x 245,760/262,144 of the K-tiles)")
    loop_table("lt-fp8-block.csv", [(214, 340), (1070, 1197)], "cuBLASLt: K loop, both copies")
