// expect: score >= 69.9
// expect: score <= 70
// expect: note "not timed: a fault"
// needs: gpu
// grade: --perf-shape 2048
// Correct on every case, and traps (`__trap()`) at the shape the speed is measured at (2048^3
// here, which no case uses). A fault in a timed run gives no speed points and names the fault;
// it takes none of the correctness points the cases earned.
#include "sgemm.cuh"

extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    if (M == 2048 && N == 2048 && K == 2048) __trap();
    const int row = blockIdx.y * blockDim.y + threadIdx.x, col = blockIdx.x * blockDim.x + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    store_c(C, row * N + col, acc, alpha, beta);
}
