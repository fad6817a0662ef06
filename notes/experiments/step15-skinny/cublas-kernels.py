"""Which kernels cuBLAS runs at each decode shape (torch.matmul, FP16 and BF16 in and out, A row-major M x K, B
row-major K x N, as step 15's 16-bit-C precisions), for Nsight Compute to name and time. The inputs are made on the
CPU, so that the profile holds only the products and, before each case, a spin kernel that marks where it starts;
each case runs twice (the second is the one to read; the first picks the algorithm). The cases' order goes to the
file named by the first argument; shapes named after it (MxNxK) replace the decode shapes. Run on the GPU machine under ncu (as `p51.sh` in the archive of
notes/runs/h200-2026-11-30-550b07f-decode-kernels.tar.gz does):
    ncu --clock-control none --metrics gpu__time_duration.sum,launch__grid_size,launch__registers_per_thread,\
dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed --csv python3 cublas-kernels.py order.txt
and read the CSV with cublas-kernels-table.py.
"""
import sys

import torch

# The decode shapes, or those named after the order file (MxNxK each).
shapes = [tuple(int(x) for x in a.split("x")) for a in sys.argv[2:]] or [
    (m, n, k) for (n, k) in [(11008, 4096), (4096, 11008), (4096, 4096)] for m in [1, 8, 16, 32, 64, 128, 256]
]
torch.manual_seed(1)
with open(sys.argv[1], "w") as order:
    for dt in (torch.float16, torch.bfloat16):
        for (m, n, k) in shapes:
            a = torch.rand(m, k).to(dt).cuda()
            b = torch.rand(k, n).to(dt).cuda()
            torch.cuda.synchronize()
            order.write(f"{m}x{n}x{k} {str(dt)[6:]}\n")
            torch.cuda._sleep(1000)
            for _ in range(2):
                torch.matmul(a, b)
            torch.cuda.synchronize()
