#!/usr/bin/env python3
"""Samples -> cycles at 64x4096x4096 (cuBLAS nvjet 64x32 and the rung of d3e97d3), from the source pages
and the details pages.  Model: each SM sub-partition (SMSP) is sampled every I cycles and a sample picks
one of its resident warps; a warp sharing its SMSP with n-1 others gets 1/n of them.  So a region's
cycles on one SM = samples * I / (SMs running it * sum over the warpgroup's 4 warps of 1/n).
I is calibrated so that the working warpgroup's samples cover its SM's active cycles (sm active
cycles * 132 / 128: four SMs hold no unit/block), for each kernel separately; both give about 2^13.
usage: cycles64.py [B_SRC C_SRC]"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../step14-fp8/source-pages"))  # sp.py
import sp
B = sp.pages(1, sp.PAGES_B)
C = sp.pages(2, sp.PAGES_C)

def details(path):
    """The details page's numeric metrics, as numbers."""
    out = {}
    for name, (value, _) in sp.details(path).items():
        try:
            out[name] = float(value.replace(",", ""))
        except ValueError:
            pass
    return out

def samples(rows, spans, reasons=None):
    seg = [d for d in rows if any(lo <= d["idx"] <= hi for lo, hi in spans)]
    if reasons is None:
        return sum(d["all"] for d in seg)
    return sum(d["st"].get(r, 0) for d in seg for r in reasons)

def show(name, rows, det, total_spans, loop, top, wait, inv_n, ktiles, sms, smem_bytes, issued_bytes, extra):
    active = det["SM Active Cycles"] * 132 / sms  # per SM that holds work
    tot = samples(rows, total_spans)
    I = active * sms * inv_n / tot
    cyc = lambda s, n_sms=sms, inv=inv_n: s * I / (n_sms * inv)
    lp = samples(rows, loop) + samples(rows, top) + samples(rows, wait)
    print(f"\n## {name}: elapsed {det['Elapsed Cycles']:.0f} cyc ({det['Duration']} us at {det['SM Frequency']} GHz), "
          f"SM active {det['SM Active Cycles']:.0f} avg -> {active:.0f} per working SM; DRAM {det['DRAM Throughput']}%, "
          f"L2 {det['L2 Cache Throughput']}%")
    print(f"working warpgroup samples {tot}, sum 1/n = {inv_n:.3f} -> interval I = {I:.0f} cycles")
    kt = cyc(lp) / ktiles
    print(f"K loop: {lp} samples = {cyc(lp):.0f} cycles = {kt:.0f} cycles per K-tile ({ktiles} K-tiles)")
    for label, spans, rs in [("  waiting for the full barrier (data)", top + wait, None),
                             ("  body (wgmma issue, DEPBAR, release, counters)", loop, None)]:
        s = samples(rows, spans)
        print(f"{label}: {s} samples, {cyc(s) / ktiles:.0f} cycles per K-tile")
    rs = {}
    for d in rows:
        if any(lo <= d["idx"] <= hi for lo, hi in loop + top + wait):
            for k, v in d["st"].items():
                rs[k] = rs.get(k, 0) + v
    print("  by reason, cycles per K-tile: " + ", ".join(f"{k} {cyc(v) / ktiles:.0f}" for k, v in sorted(rs.items(), key=lambda kv: -kv[1]) if v))
    print(f"  bytes per K-tile into shared memory {smem_bytes}, issued by this SM {issued_bytes}: "
          f"{smem_bytes / kt:.1f} and {issued_bytes / kt:.1f} B/cycle/SM; all SMs: {smem_bytes / kt * sms * det['SM Frequency'] / 1e3:.2f} "
          f"and {issued_bytes / kt * sms * det['SM Frequency'] / 1e3:.2f} TB/s")
    for label, spans, n_sms, inv in extra:
        s = samples(rows, spans)
        print(f"{label}: {s} samples -> {cyc(s, n_sms, inv):.0f} cycles on each of {n_sms} SMs")
    return I

cub = sp.load(os.path.join(B, "cublas-64x4096x4096.csv"))
run = sp.load(os.path.join(C, "rung-64x4096x4096.csv"))
dc = details(os.path.join(B, "cublas-64x4096x4096-details.csv"))
dr = details(os.path.join(C, "rung-64x4096x4096-details.csv"))
# cuBLAS: 12 warps, 3 an SMSP (wg0, wg1, producer wg); the producer wg's warps 9-11 leave at once,
# so wg0's warp 0 shares SMSP 0 with two warps (n = 3) and warps 1-3 with one (n = 2).
inv_c = 1 / 3 + 3 / 2
# wg0's own samples: its loop, waits, epilogue, half of the consumers' setup (both wgs run it).
cub_half_setup = samples(cub, [(6, 150)]) / 2
tot_c = [(158, 362), (436, 488)]
ex_c = show("cuBLAS nvjet_sm90_hsh_64x32_64x16_1x2_h_bz_NNT", cub, dc, tot_c,
            loop=[(158, 170), (172, 198), (436, 477)], top=[(171, 171)], wait=[(479, 488)], inv_n=inv_c,
            ktiles=64, sms=128, smem_bytes=12288, issued_bytes=8192,
            extra=[("epilogue (STSM, TMA store)", [(199, 362)], 128, inv_c)])
print(f"(wg0's half of the consumers' setup, {cub_half_setup:.0f} samples, left out of the calibration)")
# The rung: 8 warps; producer-wg warps 1-3 leave after setmaxnreg, so consumer warp 4 shares SMSP 0
# with the producer warp (n = 2) and warps 5-7 run alone (n = 1).
inv_r = 1 / 2 + 3
tot_r = [(166, 1151), (1425, 1427)]
show("the rung (d3e97d3, slices even: 32 + 32 K-tiles)", run, dr, tot_r,
     loop=[(388, 395), (397, 435)], top=[(396, 396)], wait=[(1425, 1427)], inv_n=inv_r,
     ktiles=32, sms=128, smem_bytes=16384, issued_bytes=16384,
     extra=[("consumer setup", [(166, 387)], 128, inv_r),
            ("last slice: flag wait at the named barrier (warps 5-7 alone: sum 1/n = 3)", [(473, 478)], 64, 3.0),
            ("last slice: spin of thread 0 (warp 4, its producer gone: n = 1)", [(464, 472)], 64, 1.0),
            ("last slice: read-back + adds (long_sb on the FADDs)", [(479, 526)], 64, inv_r),
            ("last slice: epilogue", [(527, 1074)], 64, inv_r),
            ("first slice: stores + barrier", [(1075, 1101)], 64, inv_r),
            ("first slice: the two fences + flag (warp 4 alone: n = 1)", [(1102, 1112)], 64, 1.0)])
print("\nproducer, from execution counts: cuBLAS's empty-barrier probe failed "
      f"{[d for d in cub if d['idx'] == 793][0]['ex']} times in {sum(d['ex'] for d in cub if d['idx'] in (663, 781))} loads "
      f"(samples in its K loop: {samples(cub, [(644, 673), (762, 802)])}); the rung's try_wait on empty retried "
      f"{[d for d in run if d['idx'] == 1431][0]['ex']} times in {[d for d in run if d['idx'] == 1370][0]['ex']} waits, "
      f"{samples(run, [(1371, 1371)])} samples on the branch after it, {samples(run, [(1356, 1393)])} in its K loop")
