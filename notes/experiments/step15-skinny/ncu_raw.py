"""Nsight Compute's raw page (`ncu --page raw --csv`) read into figures in base units: bytes (and
bytes a second) from Kbyte, Mbyte, ...; hertz from Mhz, Ghz; seconds from nsecond, usecond (us),
msecond; anything else (sectors, cycles) as it stands. For the scripts beside it (cluster-reads-table.py, l2-output.py)."""
import csv

PREFIX = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
SECONDS = {"nsecond": 1e-9, "ns": 1e-9, "usecond": 1e-6, "us": 1e-6, "msecond": 1e-3, "ms": 1e-3, "second": 1.0}


def launches(path):
    """One dict a profiled launch: metric name -> value in base units (Kernel Name as text)."""
    lines = [line for line in open(path) if line.startswith('"')]
    rows = list(csv.reader(lines))
    header, units = rows[0], rows[1]

    def value(text, unit):
        try:
            v = float(text.replace(",", ""))
        except ValueError:
            return text
        if unit in SECONDS:
            return v * SECONDS[unit]
        return v * PREFIX.get(unit[:1], 1.0) if "byte" in unit or unit.lower().endswith("hz") else v

    return [{name: value(text, unit) for name, unit, text in zip(header, units, row)} for row in rows[2:]]
