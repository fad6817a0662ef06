// expect: refused
// expect: note "so C++ renamed it"
// needs: nvrtc
// The honest slow kernel without `extern "C"`: C++ renames it, and the grader, which launches
// `sgemm`, would find no kernel. One failure names the cause.
#include "sgemm.cuh"

__global__ void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    const int row = blockIdx.y * blockDim.y + threadIdx.x, col = blockIdx.x * blockDim.x + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    store_c(C, row * N + col, acc, alpha, beta);
}
