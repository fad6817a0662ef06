// The roof of steps 3 and 4: a step without its copies from global memory. The block fills
// its two tiles once, then runs every K-tile exactly as the step does (barrier, inner loop,
// barrier) over those same tiles: only the shared-memory reads, the FMAs and the barriers
// are left. The result is not the GEMM (every K-tile is the first one), so `roof.rs` times
// it without a check. PAD = 0: step 3's tiles (Bs read down a column: a 32-way conflict);
// PAD = 1: step 4's.
#include "sgemm.cuh"

extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                                 float* C) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + PAD];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int cRow = blockIdx.y * TILE + ty;
    const int cCol = blockIdx.x * TILE + tx;
    As[ty][tx] = (cRow < M && tx < K) ? A[cRow * K + tx] : 0.0f;
    Bs[tx][ty] = (ty < K && cCol < N) ? B[ty * N + cCol] : 0.0f;

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        __syncthreads();  // as in the step (and the compiler must reload the tiles after it)
        for (int k = 0; k < TILE; ++k) {
            acc += As[ty][k] * Bs[tx][k];
        }
        __syncthreads();
    }
    if (cRow < M && cCol < N) {
        store_c(C, cRow * N + cCol, acc, alpha, beta);
    }
}
