#!/usr/bin/env python3
"""How hard a kernel's K loop drives L2's output to the crossbar, from one launch's raw Nsight
Compute page (`ncu --page raw --csv`) and the cycles a K-tile of its busiest SM takes (the slope of
`cubes-over-k.py`'s line). The bytes L2 sent over the launch (`derived__lts__lts2xbar_bytes` per
second times the duration) divided by the K loop's time (K-tiles x cycles a K-tile at the launch's
SM clock) is an upper bound on the K loop's rate, the bytes sent outside it taken as none; beside
it the peak (the same counter's peak per L2 cycle at the launch's L2 clock).

    python3 l2-output.py PAGE.csv KTILES CYCLES_PER_KTILE [PAGE.csv KTILES CYCLES ...]
"""
import sys

from ncu_raw import launches

print("| kernel | L2 to the crossbar | K loop | upper bound, K loop | peak | % of peak | L2 sectors read | fan-out |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
args = sys.argv[1:]
for path, ktiles, cycles in zip(args[0::3], args[1::3], args[2::3]):
    r = launches(path)[0]
    name, get = r["Kernel Name"], r.get
    sent = get("derived__lts__lts2xbar_bytes.sum.per_second") * get("gpu__time_duration.sum")
    loop = int(ktiles) * float(cycles) / get("sm__cycles_elapsed.avg.per_second")
    peak = get("derived__lts__lts2xbar_bytes.sum.peak_sustained") * get("lts__cycles_elapsed.avg.per_second")
    read = get("lts__t_sectors_srcunit_tex_op_read.sum")
    fan = get("lrc__xbar2gpc_sectors_op_read.sum") / read
    rate = sent / loop
    print(f"| {name} | {sent / 1e6:.1f} MB | {loop * 1e6:.2f} µs | {rate / 1e12:.2f} TB/s | {peak / 1e12:.2f} TB/s "
          f"| {100 * rate / peak:.0f}% | {read:,.0f} | {fan:.2f} |")
