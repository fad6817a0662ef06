// expect: score <= 75
// expect: score >= 65
// needs: gpu
// Correct and slow, and prints about 90 KiB on the largest shapes. The grader drains its output
// while it runs (keeping the first 64 KiB): no child blocks on a full pipe, and the card is the
// honest slow kernel's.
#include "sgemm.cuh"

extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    const int row = blockIdx.y * blockDim.y + threadIdx.x, col = blockIdx.x * blockDim.x + threadIdx.y;
    if (M >= 2048 && row < 1500 && col == 0) printf("a line of output to fill the pipe: row %05d of the flood\n", row);
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    store_c(C, row * N + col, acc, alpha, beta);
}
