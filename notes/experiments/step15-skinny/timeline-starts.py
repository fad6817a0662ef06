#!/usr/bin/env python3
"""Where a launch's time goes block by block, from timeline15's CSV (timeline.patch's probe): for
each launch after the first, over its blocks with work, the median time from entry to ready
(barriers set up, the launch before waited for), from entry to the first K-tile's data, and from
that to the block's end; the spread of the entries; and the launch's span (first entry to last
end). With the probe's TL_ISSUE=1 (the entry clock replaced by when the producer announced its first
buffer, in ns) also from ready to that announcement; with TL_ISSUE=2 (the entry clock by when the
producer gave up its registers, the exit clock by when it had worked out its first unit) from ready
to the first and from the first to the second. The medians over the launches, in µs, one row a
file.
  notes/experiments/step15-skinny/timeline-starts.py FILE.csv ..."""
import csv, statistics, sys
from collections import defaultdict

print("| run | entry to ready | ready to the first loads | ready to registers given up | to the first unit worked out | entry to first data | first data to end | entries spread over | span |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for path in sys.argv[1:]:
    launches = defaultdict(list)
    for r in csv.DictReader(open(path)):
        launches[int(r["launch"])].append({k: int(v) for k, v in r.items()})
    cols = defaultdict(list)
    for k in sorted(launches)[1:]:
        work = [r for r in launches[k] if r["first_ns"] != 0]
        med = lambda f: statistics.median(f(r) for r in work)
        cols["ready"].append(med(lambda r: r["ready_ns"] - r["entry_ns"]))
        if all(r["exit_clock"] > 10**15 for r in work):  # TL_ISSUE=2: times, not clocks
            cols["regs"].append(med(lambda r: r["entry_clock"] - r["ready_ns"]))
            cols["unit"].append(med(lambda r: r["exit_clock"] - r["entry_clock"]))
        elif all(r["entry_clock"] > 10**15 for r in work):  # TL_ISSUE=1: a time, not a clock
            cols["issue"].append(med(lambda r: r["entry_clock"] - r["ready_ns"]))
        cols["first"].append(med(lambda r: r["first_ns"] - r["entry_ns"]))
        cols["rest"].append(med(lambda r: r["exit_ns"] - r["first_ns"]))
        entries = [r["entry_ns"] for r in launches[k]]
        cols["spread"].append(max(entries) - min(entries))
        cols["span"].append(max(r["exit_ns"] for r in launches[k]) - min(entries))
    us = lambda c: f"{statistics.median(cols[c]) / 1000:.2f}" if cols[c] else "-"
    name = path.rsplit("/", 1)[-1].removesuffix(".csv")
    print(f"| {name} | {us('ready')} | {us('issue')} | {us('regs')} | {us('unit')} | {us('first')} | {us('rest')} | "
          f"{us('spread')} | {us('span')} |")
