// expect: score <= 75
// needs: gpu
// Returns at once when C already holds a finite value and beta = 0: a result left by an
// earlier run of the same shape. C is poisoned before every run, timed ones included, so it
// always computes: the honest slow kernel's score.
#include "sgemm.cuh"

extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    if (beta == 0.0f && M * N > 0 && isfinite(C[0]) && isfinite(C[M * N - 1])) return;
    const int row = blockIdx.y * blockDim.y + threadIdx.x, col = blockIdx.x * blockDim.x + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    store_c(C, row * N + col, acc, alpha, beta);
}
