// expect: stopped "grading budget exhausted"
// expect: score <= 70
// needs: gpu
// grade: --timeout 5 --budget 40
// Correct, but each launch spins for 3.5 s (its first block does), under the 5 s limit of a
// case: without a budget for the whole submission, grading would take 60 cases x 3.5 s. The
// budget ends it with what passed and the reason.
#include "sgemm.cuh"

extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    if (blockIdx.x == 0 && blockIdx.y == 0) {
        const unsigned long long start = clock64();
        while (clock64() - start < 3500ull * 1000 * 1000 * 2) {}
    }
    const int row = blockIdx.y * blockDim.y + threadIdx.x, col = blockIdx.x * blockDim.x + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    store_c(C, row * N + col, acc, alpha, beta);
}
