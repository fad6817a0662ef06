// expect: score >= 69.9
// expect: score <= 70
// expect: note "an illegal memory access"
// needs: gpu
// grade: --perf-shape 2048
// Correct on every case, and writes through a wild pointer at the shape the speed is measured
// at: an illegal address in a timed run. No speed points, the fault named, the correctness
// points kept.
#include "sgemm.cuh"

extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    if (M == 2048 && N == 2048 && K == 2048 && threadIdx.x == 0) {
        *(volatile float*)(0x10ull + 4096ull * blockIdx.x) = 1.0f;
    }
    const int row = blockIdx.y * blockDim.y + threadIdx.x, col = blockIdx.x * blockDim.x + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    store_c(C, row * N + col, acc, alpha, beta);
}
