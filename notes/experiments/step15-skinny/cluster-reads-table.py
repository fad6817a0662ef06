#!/usr/bin/env python3
"""cluster-reads' plans under Nsight Compute: one row a plan (the second of its two launches), with
L2's sectors read for the SMs, the sectors the crossbar delivered to the GPCs, their ratio (how
many SMs each sector L2 read reached: multicast and L2's merging of requests for the same sector
raise it), the bytes into the SMs and the time.

    ncu --clock-control none --csv --page raw --log-file reads-ncu.csv --metrics M,... \
        ./cluster-reads --once > reads-order.txt
    python3 cluster-reads-table.py reads-ncu.csv reads-order.txt
"""
import sys

from ncu_raw import launches

METRICS = [
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "lrc__xbar2gpc_sectors_op_read.sum",
    "l1tex__m_xbar2l1tex_read_bytes.sum",
    "gpu__time_duration.sum",
]


def main(csv_path, order_path):
    data = launches(csv_path)
    missing = [m for m in METRICS if data and m not in data[0]]
    if missing:
        sys.exit(f"error: {csv_path} has no column for {', '.join(missing)}")
    plans = []
    for line in open(order_path):
        head, _, name = line.partition(": ")
        if "," in head and name:
            plans.append((int(head.split(",")[1]) - 1, name.strip()))
    print("| plan | L2 sectors read | sectors to the GPCs | fan-out | into the SMs (MB) | time (µs) |")
    print("|---|---:|---:|---:|---:|---:|")
    for launch, name in plans:
        if launch >= len(data):
            print(f"| {name} | no launch {launch + 1} in the profile | | | | |")
            continue
        r = data[launch]
        read, out = r["lts__t_sectors_srcunit_tex_op_read.sum"], r["lrc__xbar2gpc_sectors_op_read.sum"]
        into, t = r["l1tex__m_xbar2l1tex_read_bytes.sum"], r["gpu__time_duration.sum"]
        print(f"| {name} | {read:,.0f} | {out:,.0f} | {out / read:.2f} | {into / 1e6:.1f} | {t * 1e6:.2f} |")


if __name__ == "__main__":
    main(*sys.argv[1:3])
