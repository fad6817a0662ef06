#!/usr/bin/env python3
"""cluster-reads' plans under Nsight Compute: one row a plan (the second of its two launches), with
L2's sectors read for the SMs, the sectors the crossbar delivered to the GPCs, their ratio (how
many SMs each sector L2 read reached: multicast and L2's merging of requests for the same sector
raise it), the bytes into the SMs and the time.

    ncu --clock-control none --csv --page raw --log-file reads-ncu.csv --metrics M,... \
        ./cluster-reads --once > reads-order.txt
    python3 cluster-reads-table.py reads-ncu.csv reads-order.txt
"""
import csv
import sys

METRICS = {
    "lts__t_sectors_srcunit_tex_op_read.sum": "L2 sectors read",
    "lrc__xbar2gpc_sectors_op_read.sum": "sectors to the GPCs",
    "l1tex__m_xbar2l1tex_read_bytes.sum": "into the SMs",
    "gpu__time_duration.sum": "time",
}


def scaled(value, unit):
    """Bytes from Nsight Compute's scaled units (Kbyte, Mbyte, ...); sectors as they are."""
    v = float(value.replace(",", ""))
    factor = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
    return v * factor.get(unit[:1], 1.0) if unit.endswith("byte") else v


def main(csv_path, order_path):
    lines = [l for l in open(csv_path) if l.startswith('"')]
    rows = list(csv.reader(lines))
    header, units, data = rows[0], rows[1], rows[2:]
    col = {name: header.index(name) for name in METRICS if name in header}
    missing = [m for m in METRICS if m not in col]
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
        get = lambda m: scaled(r[col[m]], units[col[m]])
        read, out = get("lts__t_sectors_srcunit_tex_op_read.sum"), get("lrc__xbar2gpc_sectors_op_read.sum")
        into = get("l1tex__m_xbar2l1tex_read_bytes.sum")
        t, unit = float(r[col["gpu__time_duration.sum"]].replace(",", "")), units[col["gpu__time_duration.sum"]]
        us = t / 1e3 if unit.startswith("n") else t * 1e3 if unit.startswith("m") else t
        print(f"| {name} | {read:,.0f} | {out:,.0f} | {out / read:.2f} | {into / 1e6:.1f} | {us:.2f} |")


if __name__ == "__main__":
    main(*sys.argv[1:3])
