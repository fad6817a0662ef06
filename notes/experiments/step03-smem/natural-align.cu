// Experiment for step 3 (natural.cu, As 16-byte aligned): the layout most worklogs use. As[m][k] row-major; a warp covers one
// row of the C tile, so every read of As is a broadcast and reads of Bs are consecutive.
// Run with step03's geometry: step03-smem --kernel notes/experiments/step03-smem/natural.cu
#include "sgemm.cuh"

extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A,
                                 const float* B, float beta, float* C) {
    __shared__ __align__(16) float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int cRow = blockIdx.y * TILE + ty;
    const int cCol = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        const int aCol = k0 + tx, bRow = k0 + ty;
        As[ty][tx] = (cRow < M && aCol < K) ? A[cRow * K + aCol] : 0.0f;
        Bs[ty][tx] = (bRow < K && cCol < N) ? B[bRow * N + cCol] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (cRow < M && cCol < N) store_c(C, cRow * N + cCol, acc, alpha, beta);
}
