#!/usr/bin/env python3
"""What timeline15's CSV says about each launch after the first: the period (last end to last end,
median), the median gap before it (its first entry after the last end before it), how many of its
blocks with work landed on an SM that had no block with work in the launch before, and the median
time from ready to end of those blocks and of the others.
  notes/experiments/step15-skinny/timeline-split.py FILE.csv ..."""
import csv, statistics, sys
from collections import defaultdict

for path in sys.argv[1:]:
    launches = defaultdict(list)
    for r in csv.DictReader(open(path)):
        launches[int(r["launch"])].append({k: int(v) for k, v in r.items()})
    ends, gaps, moved, stayed, n_moved = [], [], [], [], []
    prev_sms, prev_end = None, None
    for k in sorted(launches):
        rows = launches[k]
        work = [r for r in rows if r["first_ns"] != 0]
        end = max(r["exit_ns"] for r in rows)
        if prev_sms is not None:
            gaps.append(min(r["entry_ns"] for r in rows) - prev_end)
            on_new = [r for r in work if r["sm"] not in prev_sms]
            n_moved.append(len(on_new))
            moved += [r["exit_ns"] - r["ready_ns"] for r in on_new]
            stayed += [r["exit_ns"] - r["ready_ns"] for r in work if r["sm"] in prev_sms]
        ends.append(end)
        prev_sms, prev_end = {r["sm"] for r in work}, end
    period = statistics.median(b - a for a, b in zip(ends[1:], ends[2:]))
    med = lambda xs: f"{statistics.median(xs) / 1000:.1f} µs" if xs else "-"
    print(f"| {path.rsplit('/', 1)[-1].removesuffix('.csv')} | {period / 1000:.2f} µs | "
          f"{statistics.median(gaps) / 1000:.2f} µs | {statistics.median(n_moved):.0f} | "
          f"{med(moved)} | {med(stayed)} |")
