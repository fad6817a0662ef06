// Experiment for step 3 (bt.cu with PAD 1, As 16-byte aligned for 128-bit broadcasts): the B tile stored transposed, Bs[n][k], so that the dot product
// reads a row of As and a row of Bs. A warp then writes and reads Bs down a column.
// Run with step03's geometry.
#include "sgemm.cuh"

#ifndef PAD
#define PAD 1
#endif

extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A,
                                 const float* B, float beta, float* C) {
    __shared__ __align__(16) float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + PAD];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int cRow = blockIdx.y * TILE + ty;
    const int cCol = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        const int aCol = k0 + tx, bRow = k0 + ty;
        As[ty][tx] = (cRow < M && aCol < K) ? A[cRow * K + aCol] : 0.0f;
        Bs[tx][ty] = (bRow < K && cCol < N) ? B[bRow * N + cCol] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[tx][k];
        __syncthreads();
    }
    if (cRow < M && cCol < N) store_c(C, cRow * N + cCol, acc, alpha, beta);
}
