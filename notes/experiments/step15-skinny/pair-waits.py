#!/usr/bin/env python3
"""Where the warps of a kernel wait, from Nsight Compute source pages (SASS view, `--page source
--print-source sass --csv`), one page a variant, for "Next: which wait grows in a pair" in
notes/step15.md: the samples of all instructions, of the mbarrier waits (a `SYNCS.PHASECHK` and the
branch back to it, where a waiting warp's samples land), of the TMA's loads (`UTMALDG`) and of the
barrier arrivals (`SYNCS.ARRIVE`); then each wait with its executions (a consumer's wait runs in
four warps, the producer's in one) and the instructions that hold the most samples, with their SASS
and their first stall reasons. Where a page's details page sits beside it (PAGE-details.csv, `--page
details --csv`), a table of the launch's time, clock, grid and memory throughputs comes first.
With --details-only, each NAME names a details page itself and only that table is printed.

usage: pair-waits.py NAME=PAGE.csv [NAME=PAGE.csv ...] [--top N]
       pair-waits.py --details-only NAME=PAGE-details.csv [...]"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../step14-fp8/source-pages"))  # sp.py
import sp

KINDS = [("TMA loads", "UTMALDG"), ("barrier arrivals", "SYNCS.ARRIVE")]


DETAILS = ["Duration", "SM Frequency", "Elapsed Cycles", "Grid Size", "Cluster Size", "DRAM Throughput",
           "L2 Cache Throughput", "L2 Hit Rate"]


def details(page, beside=True):
    """The details page's metrics beside `page` (or `page` itself), name -> value with its unit, or None."""
    path = page if not beside else page[:-4] + "-details.csv" if page.endswith(".csv") else page + "-details.csv"
    if not os.path.exists(path):
        return None
    return {name: f"{value} {unit}".strip() for name, (value, unit) in sp.details(path).items()}


def waits(rows):
    """(index, executions, samples) of each mbarrier wait: the try-wait and a branch right after it."""
    out = []
    for d in rows:
        if "SYNCS.PHASECHK" in d["sass"]:
            after = rows[d["idx"] + 1] if d["idx"] + 1 < len(rows) else None
            extra = after["all"] if after and "BRA" in after["sass"] else 0
            out.append((d["idx"], d["ex"], d["all"] + extra))
    return out


def main(argv):
    top = 8
    if "--top" in argv:
        i = argv.index("--top")
        top = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    only = "--details-only" in argv
    argv = [a for a in argv if a != "--details-only"]
    if not argv:
        sys.exit(__doc__)
    given = [a.split("=", 1) for a in argv]
    found = [(name, details(page, beside=not only)) for name, page in given]
    if any(d for _, d in found):
        print("| variant | " + " | ".join(DETAILS) + " |")
        print("|---|" + "---:|" * len(DETAILS))
        for name, d in found:
            print(f"| {name} | " + " | ".join((d or {}).get(m, "-") for m in DETAILS) + " |")
        print()
    if only:
        return
    pages = [(name, sp.load(page)) for name, page in given]
    share = lambda s, total: f"{s:,} ({100 * s / max(total, 1):.1f}%)"
    print("| variant | samples | mbarrier waits | " + " | ".join(name for name, _ in KINDS) + " |")
    print("|---|---:|---:|" + "---:|" * len(KINDS))
    for name, rows in pages:
        total = sum(d["all"] for d in rows)
        kinds = [sum(d["all"] for d in rows if key in d["sass"]) for _, key in KINDS]
        cells = [share(sum(w[2] for w in waits(rows)), total)] + [share(s, total) for s in kinds]
        print(f"| {name} | {total:,} | " + " | ".join(cells) + " |")
    for name, rows in pages:
        total = sum(d["all"] for d in rows)
        print(f"\n{name}: each mbarrier wait (index, executions, samples)")
        for idx, ex, s in waits(rows):
            print(f"  {idx:5d} ex={ex:9d} {share(s, total)}")
        print(f"\n{name}: the {top} instructions with the most samples")
        for d in sorted(rows, key=lambda d: -d["all"])[:top]:
            print(sp.fmt(d, max(total, 1)))


if __name__ == "__main__":
    main(sys.argv[1:])
