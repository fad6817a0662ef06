// expect: score <= 0.1
// expect: note "a fault: "
// needs: gpu
// A 16 MiB local array per thread, on a path no case takes: the driver reserves local memory for
// every thread the GPU can hold (16 MiB x 2048 threads x each SM, terabytes), so every launch
// fails with an out-of-memory error. Each case fails with the fault named, in a fresh process
// after each (a fault may leave a CUDA context unusable), and the card is written.
#include "sgemm.cuh"

extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    if (alpha == 1234.5f) {
        float big[1 << 22];
        for (int i = 0; i < K; ++i) big[(i * 7919) % (1 << 22)] = A[i];
        C[0] = big[K % (1 << 22)];
    }
    const int row = blockIdx.y * blockDim.y + threadIdx.x, col = blockIdx.x * blockDim.x + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    store_c(C, row * N + col, acc, alpha, beta);
}
