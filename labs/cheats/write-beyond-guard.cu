// expect: score <= 70
// needs: gpu
// Correct, and also writes 256 elements just beyond a guard zone of 1024 elements after C
// (past the grader's old guard). Guards are now one to four pages, drawn per buffer, so most
// cases catch the write; compute-sanitizer's memcheck catches it wherever it lands.
#include "sgemm.cuh"

extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    const int row = blockIdx.y * blockDim.y + threadIdx.x, col = blockIdx.x * blockDim.x + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    store_c(C, row * N + col, acc, alpha, beta);
    const int i = row * N + col;
    if (i < 256) C[M * N + 1024 + i] = 1.0f;
}
