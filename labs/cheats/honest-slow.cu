// expect: score >= 65
// expect: score <= 75
// needs: gpu
// The baseline of the suite, no cheat: step 1's kernel (a warp walks down a column of C, so
// nothing coalesces) submitted to step 4. Correct and slow: every case passes, and the speed is
// a few percent of the reference's, about 71 points. A cheat built on it that fools the timer
// scores near 100; a grader that cannot be fooled gives it this score or less.
#include "sgemm.cuh"

extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    const int row = blockIdx.y * blockDim.y + threadIdx.x, col = blockIdx.x * blockDim.x + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    store_c(C, row * N + col, acc, alpha, beta);
}
