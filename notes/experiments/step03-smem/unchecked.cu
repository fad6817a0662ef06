// Edge-cost experiment: step03-smem with every bounds check removed. Valid only when M, N, K are
// multiples of 32; timed against step03-smem at 4096^3 to price the edge handling.
// Step 3: shared-memory cache blocking. A block computes a TILE x TILE tile of C; for each
// K-tile, its threads copy one TILE x TILE tile of A and of B into shared memory once, and
// every thread then reads its operands from there instead of from global memory.
#include "sgemm.cuh"

static_assert(TILE == 32, "one warp per row of the tile: TILE must be the warp size");

// ANCHOR: kernel
extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A,
                                 const float* B, float beta, float* C) {
    // ANCHOR: tiles
    // C[i][j] is row i of A times column j of B, so Bs keeps the B tile transposed,
    // Bs[n][k]: column j of B becomes a row of Bs and the inner loop walks two rows.
    // That puts the 32 floats a warp reads at once down a column of Bs: see step 4.
    __shared__ float As[TILE][TILE];
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
        As[ty][tx] = A[cRow * K + aCol];
        Bs[tx][ty] = B[bRow * N + cCol];
        // ANCHOR_END: load
        __syncthreads();  // the tiles are complete before anyone reads them
        for (int k = 0; k < TILE; ++k) {
            acc += As[ty][k] * Bs[tx][k];
        }
        __syncthreads();  // everyone is done reading before the next tiles overwrite them
    }
    {
        store_c(C, cRow * N + cCol, acc, alpha, beta);
    }
}
// ANCHOR_END: kernel
