// expect: score <= 75
// needs: gpu
// Reads just before C: if the grader's guard pattern is there, it is being verified and
// computes; if not, it is being timed and returns at once. Timed runs have guard zones too
// (of a random number of pages), so it always computes: the honest slow kernel's score.
#include "sgemm.cuh"

extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    if (__float_as_uint(C[-1]) != 0x7fbadbadu) return;
    const int row = blockIdx.y * blockDim.y + threadIdx.x, col = blockIdx.x * blockDim.x + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    store_c(C, row * N + col, acc, alpha, beta);
}
