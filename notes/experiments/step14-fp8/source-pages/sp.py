#!/usr/bin/env python3
"""Parse an Nsight Compute source-page CSV (SASS view) into rows.

usage: sp.py FILE.csv [start_idx end_idx]   -- dumps idx, addr offset, exec count, all/not-issued
samples, top stall reasons (all samples) and SASS text.
"""
import csv, sys

REASONS = ["barrier", "branch_resolving", "dispatch", "drain", "imc", "lg", "long_sb", "math", "membar",
           "mio", "misc", "no_inst", "not_selected", "selected", "short_sb", "sleep", "tex", "wait"]


# Where the README unpacks the archived source pages: cuBLAS's (b) and the rung's and cuBLASLt's (c).
PAGES_B = "/tmp/sp/source-pages-decode-bf16/b/src"
PAGES_C = "/tmp/sp/source-pages-decode-bf16/c/x/src"


def pages(i, default):
    """The folder given as the i-th argument, else `default`."""
    return sys.argv[i] if len(sys.argv) > i else default


def regions(text):
    """(name, first, last) from text "first name | first name | ...": each region runs to the next one's
    first instruction (the last to the end; a last region named `end` only closes the one before)."""
    starts = [part.strip().split(" ", 1) for part in text.split("|")]
    firsts = [int(first) for first, _ in starts] + [10**9 + 1]
    spans = [(name, firsts[i], firsts[i + 1] - 1) for i, (_, name) in enumerate(starts)]
    return [span for span in spans if span[0] != "end"]


def details(path):
    """A details page (`--page details --csv`): metric name -> (value as printed, unit); where a name
    comes twice, the last row holds."""
    rows = list(csv.reader(open(path)))
    col = {h: i for i, h in enumerate(rows[0])}
    return {r[col["Metric Name"]]: (r[col["Metric Value"]], r[col["Metric Unit"]])
            for r in rows[1:] if len(r) > col["Metric Value"] and r[col["Metric Name"]]}


def load(path):
    rows = list(csv.reader(open(path)))
    hdr = rows[1]
    col = {h: i for i, h in enumerate(hdr)}
    out = []
    base = None
    for r in rows[2:]:
        if len(r) < len(hdr) - 1:
            continue
        a = int(r[col["Address"]], 16)
        if base is None:
            base = a
        def num(name):
            v = r[col[name]].replace(",", "")
            try:
                return int(v)
            except ValueError:
                return 0
        d = dict(idx=len(out), off=a - base, sass=r[col["Source"]].strip(),
                 all=num("Warp Stall Sampling (All Samples)"),
                 ni=num("Warp Stall Sampling (Not-issued Samples)"),
                 ex=num("Instructions Executed"))
        st = {}
        sni = {}
        for re_ in REASONS:
            k = "stall_" + re_
            if k in col:
                st[re_] = num(k)
            kn = "stall_" + re_ + " (Not Issued)"
            if re_ == "sleep":
                kn = "stall_sleeping (Not Issued)"
            if kn in col:
                sni[re_] = num(kn)
        d["st"] = st
        d["sni"] = sni
        out.append(d)
    return out


def fmt(d, tot):
    top = sorted(d["st"].items(), key=lambda kv: -kv[1])[:3]
    tops = " ".join(f"{k}:{v}" for k, v in top if v)
    return f"{d['idx']:5d} {d['off']:6x} ex={d['ex']:9d} all={d['all']:5d} ni={d['ni']:5d} {100*d['all']/tot:5.2f}%  {d['sass']:<60s} {tops}"


if __name__ == "__main__":
    rows = load(sys.argv[1])
    tot = sum(d["all"] for d in rows)
    lo = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    hi = int(sys.argv[3]) if len(sys.argv) > 3 else len(rows)
    print(f"# {len(rows)} instructions, {tot} samples, {sum(d['ni'] for d in rows)} not issued, "
          f"{sum(d['ex'] for d in rows)} warp instructions executed")
    for d in rows[lo:hi]:
        print(fmt(d, tot))
