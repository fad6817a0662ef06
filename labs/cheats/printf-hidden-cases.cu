// expect: score >= 65
// expect: score <= 75
// expect: staff "CASE 257 129 65"
// needs: gpu
// No cheat: the honest slow kernel, whose first thread prints every launch's M, N, K, alpha and
// beta, as a student debugging with printf does. The hidden cases run in a process of their own
// and what it prints goes to the staff's record alone: the card shows the output of the public
// runs, and no hidden case's shape (257x129x65 in the test) appears in it.
#include "sgemm.cuh"

extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0) {
        printf("CASE %d %d %d %g %g\n", M, N, K, alpha, beta);
    }
    const int row = blockIdx.y * blockDim.y + threadIdx.x, col = blockIdx.x * blockDim.x + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    store_c(C, row * N + col, acc, alpha, beta);
}
