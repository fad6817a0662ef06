#!/usr/bin/env python3
"""PyTorch's torch.matmul on this GPU, the cross-check of the project's cuBLAS figures: what most
users would call instead of the ladder. Times each precision and C type two ways, as
`cargo xtask references` times the ladder and cuBLAS, and writes a JSON file that command merges:

    python3 scripts/torch-matmul.py --out torch.json [--shapes 4096,8192,4096x11008x4096]
    bundle/bin/xtask references --torch torch.json

- one at a time: one call between two CUDA events, queued behind a sleeping kernel
  (torch.cuda._sleep) so that the start event waits for the host to queue the call, as the
  harness's gate does;
- back to back: 20 calls between two events, their mean, replayed from a CUDA graph (queueing
  20 calls from Python takes the host longer than the GPU takes to run a few of them).

The sleep lasts as long as the host takes to queue the sample, and a little more: the harness's
gate idles the GPU for just that long. A longer idle before each sample lets the GPU come off its
power cap and raises the figures (`--idle-us 1000` shows by how much).

Inputs are uniform in [-1, 1) in FP32, rounded to the precision's input type; the error is the
relative Frobenius error of 64 rows of C against float64 on the FP32 inputs.

FP8 (`--precisions fp8,fp8-block`) is torch._scaled_mm, the cuBLASLt FP8 call PyTorch makes:
e4m3 inputs quantized as the harness quantizes them (power-of-two FP32 scales that bring each
tensor's, or each block's, largest magnitude to at most 448), B given N x K and passed
transposed, fast accumulation off, C in BF16 and in FP32. fp8 has one scale per tensor; fp8-block
one per row of A per 128 of K and one per 128 x 128 block of B (PyTorch's BlockWise1x128 and
BlockWise128x128, cuBLAS 12.9 and later on Hopper); a PyTorch without them is noted and skipped.
"""
import argparse
import datetime
import json
import statistics
import time

import torch

BATCH = 20
E4M3_MAX = 448.0


def parse_shape(s):
    dims = [int(x) for x in s.lower().split("x")]
    if len(dims) == 1:
        dims *= 3
    if len(dims) != 3 or min(dims) < 1:
        raise argparse.ArgumentTypeError(f"{s}: a shape is MxNxK or S")
    return tuple(dims)


def sleep_cycles_per_us():
    """The rate torch.cuda._sleep counts at (SM clock cycles), measured with events."""
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(1000)
    start.record()
    torch.cuda._sleep(2_000_000)
    stop.record()
    stop.synchronize()
    return 2_000_000 / (start.elapsed_time(stop) * 1000)


def batch_of(call):
    """BATCH calls captured in a CUDA graph: one launch from the host."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            call()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(BATCH):
            call()
    return graph.replay


def timed(call, method, idle_us=None, warmup_s=0.1, measure_s=0.3, min_reps=5, max_reps=100):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    one = method == "one at a time"
    if one:
        sample = call
    else:
        try:
            sample = batch_of(call)
        except RuntimeError as e:  # no graph capture: queue the calls one by one
            print(f"note: no CUDA graph ({str(e).splitlines()[0]}): the batch is queued call by call")
            sample = lambda: [call() for _ in range(BATCH)]  # noqa: E731
    runs = 1 if one else BATCH
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < warmup_s:
        for _ in range(BATCH):
            call()
        torch.cuda.synchronize()
    if idle_us is None:
        # How long the host takes to queue one sample's calls, with a margin.
        queueing = []
        for _ in range(3):
            t = time.perf_counter()
            sample()
            queueing.append(time.perf_counter() - t)
            torch.cuda.synchronize()
        idle_us = 1.5 * max(queueing) * 1e6 + 20
    cycles = int(idle_us * sleep_cycles_per_us())
    samples = []
    t1 = time.perf_counter()
    while len(samples) < min_reps or (time.perf_counter() - t1 < measure_s and len(samples) < max_reps):
        torch.cuda._sleep(cycles)
        start.record()
        sample()
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) / runs)
    return statistics.median(samples), idle_us


def pow2_scale(amax):
    """The harness's scale: the power of two that brings amax to at most 448 (1 for zero)."""
    s = torch.exp2(torch.ceil(torch.log2(amax / E4M3_MAX)))
    return torch.where(amax > 0, s, torch.ones_like(s)).float()


def to_fp8(x, rows, cols):
    """x (R x C) in e4m3 with one scale per rows x cols block (the whole tensor when they are R, C):
    the values, and the scales as a (R / rows) x (C / cols) matrix."""
    r, c = x.shape
    blocks = x.view(r // rows, rows, c // cols, cols)
    s = pow2_scale(blocks.abs().amax(dim=(1, 3)))
    return (blocks / s[:, None, :, None]).to(torch.float8_e4m3fn).view(r, c), s


def fp8_cases(a32, b32, precisions, notes):
    """torch._scaled_mm's cases: (precision, C dtype, who, call), each tried once."""
    (m, k), n = a32.shape, b32.shape[1]
    w = b32.t().contiguous()  # B as a linear layer's weight: N x K
    if not hasattr(torch, "float8_e4m3fn") or not hasattr(torch, "_scaled_mm"):
        notes.append("fp8: this PyTorch has no float8_e4m3fn or _scaled_mm")
        return []
    scalings = []
    if "fp8" in precisions:
        (qa, sa), (qw, sw) = to_fp8(a32, m, k), to_fp8(w, n, k)
        scalings.append(("fp8", "torch._scaled_mm", qa, qw, sa.view(()), sw.view(())))
    if "fp8-block" in precisions:
        if m % 128 or n % 128 or k % 128:
            notes.append(f"fp8-block: {m}x{n}x{k} is not in whole 128 x 128 blocks")
        else:
            (qa, sa), (qw, sw) = to_fp8(a32, 1, 128), to_fp8(w, 128, 128)
            # scale_a M x K/128 with M contiguous ("outer-dim-major"); scale_b K/128 x N/128 whose
            # transpose is row-major, as PyTorch's _scaled_mm checks them for these scalings.
            scalings.append(("fp8-block", "torch._scaled_mm, 1x128 and 128x128 blocks",
                             qa, qw, sa.t().contiguous().t(), sw.t()))
    cases = []
    for prec, who, qa, qw, sa, sw in scalings:
        for out in (torch.bfloat16, torch.float32):
            call = lambda qa=qa, qw=qw, sa=sa, sw=sw, out=out: torch._scaled_mm(  # noqa: E731
                qa, qw.t(), scale_a=sa, scale_b=sw, out_dtype=out, use_fast_accum=False)
            try:
                call()
                cases.append((prec, out, who, call))
            except (TypeError, RuntimeError) as e:
                notes.append(f"{prec} C {out}: {e.__class__.__name__}: {str(e).splitlines()[0]}")
    return cases


def rel_err(c, exact, rows):
    got = c[rows].double()
    return ((got - exact).norm() / exact.norm()).item()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="the JSON file to write")
    ap.add_argument("--shapes", type=lambda s: [parse_shape(x) for x in s.split(",")],
                    default=[(4096, 4096, 4096), (8192, 8192, 8192), (4096, 11008, 4096)],
                    help="comma-separated MxNxK or S")
    ap.add_argument("--decode", action="store_true",
                    help="time the decode shapes instead: M = 1 to 256 against (N, K) = (11008, 4096), "
                         "(4096, 11008) and (4096, 4096), as cargo xtask references --decode")
    ap.add_argument("--precisions", type=lambda s: s.split(","), default=["fp16", "bf16", "tf32", "3xtf32"],
                    help="comma-separated, of fp16, bf16, tf32, 3xtf32, fp8, fp8-block")
    ap.add_argument("--idle-us", type=float, default=None, metavar="MICROSECONDS",
                    help="how long the GPU idles before each sample (default: the host's queueing time "
                         "of the sample, x1.5, + 20 us)")
    ap.add_argument("--warmup", type=float, default=0.1, metavar="SECONDS",
                    help="back-to-back calls before each timing: 0.1 s finds the GPU as the previous "
                         "call left it; seconds of them bring it to its sustained clock under the power cap")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("error: PyTorch sees no CUDA GPU")
    gen = torch.Generator(device="cuda").manual_seed(int(time.time_ns()) % (1 << 63))
    rows_out = []
    notes = []
    idles = []
    if args.decode:
        args.shapes = [(m, n, k) for (n, k) in ((11008, 4096), (4096, 11008), (4096, 4096))
                       for m in (1, 8, 16, 32, 64, 128, 256)]
    for (m, n, k) in args.shapes:
        a32 = torch.rand(m, k, device="cuda", generator=gen) * 2 - 1
        b32 = torch.rand(k, n, device="cuda", generator=gen) * 2 - 1
        rows = torch.linspace(0, m - 1, 64, device="cuda").long()
        exact = a32[rows].double() @ b32.double()
        flops = 2.0 * m * n * k
        cases = []
        for prec, dtype in (("fp16", torch.float16), ("bf16", torch.bfloat16)):
            a, b = a32.to(dtype), b32.to(dtype)
            cases.append((prec, dtype, "torch.matmul", lambda a=a, b=b: torch.matmul(a, b)))
            try:
                torch.mm(a[:8, :8], b[:8, :8], out_dtype=torch.float32)
                cases.append((prec, torch.float32, "torch.mm(out_dtype=float32)",
                              lambda a=a, b=b: torch.mm(a, b, out_dtype=torch.float32)))
            except (TypeError, RuntimeError) as e:
                notes.append(f"{prec}: no FP32 C ({e.__class__.__name__}: {str(e).splitlines()[0]})")
        cases.append(("tf32", torch.float32, "torch.matmul, TF32 on", lambda: torch.matmul(a32, b32)))
        cases.append(("3xtf32", torch.float32, "torch.matmul, TF32 off", lambda: torch.matmul(a32, b32)))
        cases += fp8_cases(a32, b32, args.precisions, notes)
        for prec, c_dtype, who, call in [c for c in cases if c[0] in args.precisions]:
            torch.backends.cuda.matmul.allow_tf32 = prec == "tf32"
            c = call()
            torch.cuda.synchronize()
            assert c.dtype == c_dtype, (who, c.dtype)
            err = rel_err(c, exact, rows)
            del c
            for method in ("one at a time", "back to back"):
                ms, idle = timed(call, method, idle_us=args.idle_us, warmup_s=args.warmup)
                idles.append(idle)
                rows_out.append({
                    "m": m, "n": n, "k": k, "precision": prec, "who": who,
                    "c": {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32"}[c_dtype],
                    "method": method, "ms": ms, "tflops": flops / (ms * 1e-3) / 1e12,
                    "rel_err_vs_exact": err,
                })
                print(f"{m}x{n}x{k} {prec:6} {who:30} {method:13} {rows_out[-1]['tflops']:8.1f} TFLOP/s  "
                      f"err {err:.1e}  (idle {idle:.0f} us before each sample)")
    torch.backends.cuda.matmul.allow_tf32 = False
    notes.append(f"idle before each sample {min(idles):.0f}-{max(idles):.0f} us" if idles else "nothing timed")
    result = {
        "tool": "scripts/torch-matmul.py; " + "; ".join(notes),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda or "unknown",
        "rows": rows_out,
    }
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
