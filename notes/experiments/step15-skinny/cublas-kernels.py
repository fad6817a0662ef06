"""Which kernel cuBLAS runs at each decode shape (torch.matmul, FP16 in and out, A row-major M x K,
B row-major K x N, as step 15's FP16-C16), for Nsight Compute to name and time. A one-element fill
kernel separates the shapes. Run on the GPU machine under ncu:
    ncu --clock-control none --metrics gpu__time_duration.sum,launch__grid_size \
        --csv python3 cublas-kernels.py
"""
import torch

shapes = [(m, n, k) for (n, k) in [(11008, 4096), (4096, 11008), (4096, 4096)] for m in [1, 8, 16, 32, 64, 128, 256]]
marker = torch.empty(1, device="cuda")
for i, (m, n, k) in enumerate(shapes):
    a = torch.rand(m, k, device="cuda", dtype=torch.float16) - 0.5
    b = torch.rand(k, n, device="cuda", dtype=torch.float16) - 0.5
    torch.matmul(a, b)  # the first call picks the algorithm
    torch.cuda.synchronize()
    marker.fill_(i)  # separates the shapes in the profile
    for _ in range(2):
        torch.matmul(a, b)
    torch.cuda.synchronize()
    print(f"shape {i}: {m}x{n}x{k}")
