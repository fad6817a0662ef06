// Experiment for step 3 (rowwarp.cu with PAD 1): a warp covers a column of the C tile (threadIdx.x picks the row, as
// in step 1), so the A tile is read down a column: As[tx][k], 32 floats apart, one bank.
// Loads stay coalesced. Run with step03's geometry.
#include "sgemm.cuh"

#ifndef PAD
#define PAD 1
#endif

extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A,
                                 const float* B, float beta, float* C) {
    __shared__ float As[TILE][TILE + PAD];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int blockRow = blockIdx.y * TILE, blockCol = blockIdx.x * TILE;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        const int aRow = blockRow + ty, aCol = k0 + tx, bRow = k0 + ty, bCol = blockCol + tx;
        As[ty][tx] = (aRow < M && aCol < K) ? A[aRow * K + aCol] : 0.0f;
        Bs[ty][tx] = (bRow < K && bCol < N) ? B[bRow * N + bCol] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[tx][k] * Bs[k][ty];
        __syncthreads();
    }
    const int cRow = blockRow + tx, cCol = blockCol + ty;
    if (cRow < M && cCol < N) store_c(C, cRow * N + cCol, acc, alpha, beta);
}
