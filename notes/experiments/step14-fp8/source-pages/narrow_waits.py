#!/usr/bin/env python3
"""Where the balanced narrow column loses (notes/step14.md, "Where the balanced narrow column loses,
measured"): for each source page of narrow-pages.sh, the samples, the samples on warp 1's code (the
patch's bounds: the branch after the producer's warpgroup gives up its registers, taken by warp 1
alone), the consumers' wait for a K-tile's data in the wide K loop (the try-wait on the full barrier before the loop's QGMMAs, and its branch
back), and the producer's K-tile loop (its instructions, spills and samples). Input: the archive
notes/runs/h200-2026-12-02-ced2de3-narrow-pages.tar.gz, unpacked:
    mkdir -p /tmp/np && tar xzf notes/runs/h200-2026-12-02-ced2de3-narrow-pages.tar.gz -C /tmp/np
usage: narrow_waits.py [SRC_DIR]   (default /tmp/np/src)"""
import csv, os, re, sys

SRC = sys.argv[1] if len(sys.argv) > 1 else "/tmp/np/src"
PAGES = ["step-4096", "narrow-inplace-4096", "narrow-balanced-4096", "step-8192", "narrow-balanced-8192"]
print("| page | samples | warp 1's code | the consumers' wait for data | its share | the producer's loop: instructions, spills, samples |")
print("|---|---:|---:|---:|---:|---|")
for page in PAGES:
    rows = list(csv.reader(open(os.path.join(SRC, page + ".csv"), errors="replace")))
    h = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    ix = {n: i for i, n in enumerate(rows[h])}
    data = [r for r in rows[h + 1:] if len(r) >= len(rows[h]) and r[0].startswith("0x")]
    src = [r[ix["Source"]] for r in data]
    smp = [int(r[ix["Warp Stall Sampling (All Samples)"]]) for r in data]
    ex = [int(r[ix["Instructions Executed"]]) for r in data]
    # The wide loop's products: the second group of four 64x192 QGMMAs (the first starts a piece).
    g = [i for i, s in enumerate(src) if "QGMMA.64x192" in s][4]
    w = max(i for i in range(g - 40, g) if "TRYWAIT" in src[i])
    wait = smp[w] + smp[w + 1]
    # The producer's loop: from the try-wait on an empty buffer before its load of A (the plain 2D
    # load run most often) to the branch back after its loads of B.
    a = max((i for i, s in enumerate(src) if "UTMALDG.2D " in s), key=lambda i: ex[i])
    p = max(i for i in range(a - 60, a) if "TRYWAIT" in src[i])
    e = next(i for i in range(a + 100, a + 250) if re.search(r"BRA ", src[i]) and ex[i] >= 0.9 * ex[a])
    lo = max(i for i in range(p - 40, p) if ex[i] != ex[p]) + 1  # the loop's first instruction
    spills = sum(1 for s in src[lo:e + 1] if re.search(r"\b(LDL|STL)", s))
    total = sum(smp)
    # Warp 1's branch: after the producer's setmaxnreg, the test of the warp and its branch past the
    # bounds (the step and narrow-inplace have no such branch: no samples there).
    d = next(i for i, s in enumerate(src) if "DEALLOC" in s)
    bounds = 0
    if "@P2   BRA" in src[d + 4] or "BRA" in src[d + 4]:
        addr = [int(r[0], 16) for r in data]
        target = int(src[d + 4].split()[-1], 16)
        if target in addr and "BSSY" in src[d + 2]:
            bounds = sum(smp[d + 5:addr.index(target)])
    print(f"| {page} | {total} | {bounds} | {wait} | {100 * wait / total:.1f}% | {e + 1 - lo}, {spills}, {sum(smp[lo:e + 1])} |")
