// Experiment for step 3: kmajor-a.cu with As padded to TILE + 1 columns.
#include "sgemm.cuh"

static_assert(TILE == 32, "one warp per row of the tile: TILE must be the warp size");

// ANCHOR: kernel
extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A,
                                 const float* B, float beta, float* C) {
    // ANCHOR: tiles
    // As still holds the A tile transposed, As[k][m]. Shared memory has 32 banks of 4 bytes;
    // with 32 floats per row, a column of As sits in one bank and the warp that writes it
    // waits for 32 turns. One float of padding shifts each row by one bank: conflict-free.
    __shared__ float As[TILE][TILE + 1];
    __shared__ float Bs[TILE][TILE];
    // ANCHOR_END: tiles
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int cRow = blockIdx.y * TILE + ty;
    const int cCol = blockIdx.x * TILE + tx;

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // ANCHOR: load
        // Each thread copies one element of each tile; a warp reads 32 consecutive floats
        // of a row of A and of B (coalesced). Outside the matrices the tiles get zeros,
        // which add nothing to the dot products: edge tiles need no other special case.
        const int aCol = k0 + tx, bRow = k0 + ty;
        As[tx][ty] = (cRow < M && aCol < K) ? A[cRow * K + aCol] : 0.0f;
        Bs[ty][tx] = (bRow < K && cCol < N) ? B[bRow * N + cCol] : 0.0f;
        // ANCHOR_END: load
        __syncthreads();  // the tiles are complete before anyone reads them
        for (int k = 0; k < TILE; ++k) {
            acc += As[k][ty] * Bs[k][tx];
        }
        __syncthreads();  // everyone is done reading before the next tiles overwrite them
    }
    if (cRow < M && cCol < N) {
        store_c(C, cRow * N + cCol, acc, alpha, beta);
    }
}
// ANCHOR_END: kernel
