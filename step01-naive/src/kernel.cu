// Step 1: naive. One thread computes one element of C as a K-long dot product.
#include "sgemm.cuh"

// ANCHOR: kernel
extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A,
                                 const float* B, float beta, float* C) {
    // threadIdx.x walks down a column of C: the 32 threads of a warp take 32 different
    // rows, so their loads of A are K floats apart and their stores to C are N floats
    // apart. Neither coalesces; step 2 swaps the mapping.
    const int cRow = blockIdx.x * blockDim.x + threadIdx.x;
    const int cCol = blockIdx.y * blockDim.y + threadIdx.y;
    if (cRow < M && cCol < N) {
        float acc = 0.0f;
        for (int i = 0; i < K; ++i) {
            acc += A[cRow * K + i] * B[i * N + cCol];
        }
        store_c(C, cRow * N + cCol, acc, alpha, beta);
    }
}
// ANCHOR_END: kernel
