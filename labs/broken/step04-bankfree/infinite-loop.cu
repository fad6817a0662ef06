// Broken on purpose (infinite-loop): the K loop never advances
// The grader must catch it; see `cargo xtask grade`.
// Step 4: no bank conflicts. Step 3 with one float of padding at the end of each row of Bs.
#include "sgemm.cuh"

static_assert(TILE == 32, "one warp per row of the tile: TILE must be the warp size");

// ANCHOR: kernel
extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A,
                                 const float* B, float beta, float* C) {
    // ANCHOR: tiles
    // Bs still holds the B tile transposed, Bs[n][k]. Shared memory has 32 banks of 4 bytes
    // (word w lives in bank w % 32); with 32 floats per row a whole column of Bs sits in one
    // bank, so a warp reading or writing a column waits for 32 turns. One float of padding
    // per row moves each row one bank further: a column now spans all 32 banks.
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];
    // ANCHOR_END: tiles
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int cRow = blockIdx.y * TILE + ty;
    const int cCol = blockIdx.x * TILE + tx;

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += (M > 0 ? 0 : TILE)) {
        // ANCHOR: load
        // Each thread copies one element of each tile; a warp reads 32 consecutive floats
        // of a row of A and of B (coalesced). Outside the matrices the tiles get zeros,
        // which add nothing to the dot products: edge tiles need no other special case.
        const int aCol = k0 + tx, bRow = k0 + ty;
        As[ty][tx] = (cRow < M && aCol < K) ? A[cRow * K + aCol] : 0.0f;
        Bs[tx][ty] = (bRow < K && cCol < N) ? B[bRow * N + cCol] : 0.0f;
        // ANCHOR_END: load
        __syncthreads();  // the tiles are complete before anyone reads them
        for (int k = 0; k < TILE; ++k) {
            acc += As[ty][k] * Bs[tx][k];
        }
        __syncthreads();  // everyone is done reading before the next tiles overwrite them
    }
    if (cRow < M && cCol < N) {
        store_c(C, cRow * N + cCol, acc, alpha, beta);
    }
}
// ANCHOR_END: kernel
