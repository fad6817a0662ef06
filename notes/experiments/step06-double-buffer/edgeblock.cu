// Step 6 experiment: bounds checks only in edge blocks (block-uniform flag).
// Step 6: double buffering. Step 5's kernel with two copies of each shared tile: while the
// block computes on one, the next K-tile travels from global memory into registers and then
// into the other copy. The loads' latency hides behind the math, and one barrier per K-tile
// is enough.
#include "sgemm.cuh"

// Measured as step 6 stood then: BK = 8, VEC-only checks (no EDGE switch).
#undef BK
#define BK 8
#undef EDGE
#define EDGE 1

// Loads without checks where the whole block tile is inside the matrices (a block-uniform
// flag), with load4's checks on edge blocks.
__device__ __forceinline__ float4 load4_edge(const float* M, int row, int col, int rows, int cols, bool edge) {
    if (!edge) return *reinterpret_cast<const float4*>(&M[row * cols + col]);
    return load4(M, row, col, rows, cols);
}

#define NUM_THREADS ((BM / TM) * (BN / TN))
static_assert(TM == 8 && TN == 8, "a thread tile is 2x2 quadrants of 4x4, read as float4");
static_assert(BM * BK == 4 * NUM_THREADS && BN * BK == 4 * NUM_THREADS,
              "each thread loads exactly one float4 of the A tile and one of the B tile");
static_assert(BK % 4 == 0 && BM % 8 == 0 && BN % 8 == 0, "tiles are made of float4s");

// ANCHOR: store_tiles
// Writes one thread's float4 of the A tile (transposed) and of the B tile.
__device__ __forceinline__ void store_tiles(float (*As)[BM + 4], float (*Bs)[BN], float4 a, float4 b,
                                            int aRow, int aCol, int bRow, int bCol) {
    As[aCol + 0][aRow] = a.x;
    As[aCol + 1][aRow] = a.y;
    As[aCol + 2][aRow] = a.z;
    As[aCol + 3][aRow] = a.w;
    *reinterpret_cast<float4*>(&Bs[bRow][bCol]) = b;
}
// ANCHOR_END: store_tiles

// ANCHOR: kernel
// Two blocks per SM (at most 128 registers a thread) so one block's math covers the other's
// barrier; the scalar edge path (VEC == 0) needs a few more registers and runs one.
extern "C" __global__ void __launch_bounds__(NUM_THREADS, VEC ? 2 : 1)
    sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    // ANCHOR: tiles
    // As is the A tile transposed, As[k][m]: the TM values of A a thread needs for one k
    // sit side by side and come in as float4s. The 4 floats of padding per row (step 4's
    // idea, kept a multiple of 4 for alignment) spread the transposing stores over the banks.
    __shared__ __align__(16) float As[2][BK][BM + 4];
    __shared__ __align__(16) float Bs[2][BK][BN];
    // ANCHOR_END: tiles

    const int tid = threadIdx.x;
    const int blockRow = blockIdx.y * BM, blockCol = blockIdx.x * BN;
    // Where this thread's float4 of each tile comes from.
    const int aRow = tid / (BK / 4), aCol = (tid % (BK / 4)) * 4;
    const int bRow = tid / (BN / 4), bCol = (tid % (BN / 4)) * 4;
    // ANCHOR: mapping
    // The thread's TM x TN tile of C is four 4x4 quadrants, BM/2 rows and BN/2 columns
    // apart. Neighbouring threads then read neighbouring float4s of Bs (conflict-free),
    // where one 8-wide strip per thread would put pairs of lanes in the same banks.
    const int tRow = tid / (BN / TN), tCol = tid % (BN / TN);
    const int rows[2] = {tRow * 4, BM / 2 + tRow * 4};
    const int cols[2] = {tCol * 4, BN / 2 + tCol * 4};
    // ANCHOR_END: mapping

    const bool edge = !VEC || blockRow + BM > M || blockCol + BN > N || K % BK != 0;
    float acc[TM][TN] = {};
    // ANCHOR: prologue
    // The first K-tile goes straight into buffer 0.
    float4 a = load4_edge(A, blockRow + aRow, aCol, M, K, edge);
    float4 b = load4_edge(B, bRow, blockCol + bCol, K, N, edge);
    store_tiles(As[0], Bs[0], a, b, aRow, aCol, bRow, bCol);
    __syncthreads();
    // ANCHOR_END: prologue

    int cur = 0;
    for (int k0 = 0; k0 < K; k0 += BK) {
        // ANCHOR: prefetch
        // Issue the next K-tile's global loads now; nothing waits for them until after
        // the math below, so their latency overlaps it.
        const bool has_next = k0 + BK < K;
        if (has_next) {
            a = load4_edge(A, blockRow + aRow, k0 + BK + aCol, M, K, edge);
            b = load4_edge(B, k0 + BK + bRow, blockCol + bCol, K, N, edge);
        }
        // ANCHOR_END: prefetch

        // ANCHOR: outer
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a_frag[TM], b_frag[TN];
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float4 av = *reinterpret_cast<const float4*>(&As[cur][k][rows[h]]);
                const float4 bv = *reinterpret_cast<const float4*>(&Bs[cur][k][cols[h]]);
                a_frag[4 * h + 0] = av.x; a_frag[4 * h + 1] = av.y;
                a_frag[4 * h + 2] = av.z; a_frag[4 * h + 3] = av.w;
                b_frag[4 * h + 0] = bv.x; b_frag[4 * h + 1] = bv.y;
                b_frag[4 * h + 2] = bv.z; b_frag[4 * h + 3] = bv.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i) {
#pragma unroll
                for (int j = 0; j < TN; ++j) {
                    acc[i][j] += a_frag[i] * b_frag[j];
                }
            }
        }
        // ANCHOR_END: outer
        // ANCHOR: swap
        // Fill the other buffer. Nobody reads it now: its last readers finished before the
        // barrier that ended the previous K-tile. One barrier per K-tile then publishes it
        // and, at the same time, retires the buffer just read.
        if (has_next) store_tiles(As[cur ^ 1], Bs[cur ^ 1], a, b, aRow, aCol, bRow, bCol);
        __syncthreads();
        cur ^= 1;
        // ANCHOR_END: swap
    }

    // ANCHOR: epilogue
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = blockRow + rows[i / 4] + i % 4;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const float4 v = make_float4(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2], acc[i][4 * h + 3]);
            store4(C, row, blockCol + cols[h], M, N, v, alpha, beta);
        }
    }
    // ANCHOR_END: epilogue
}
// ANCHOR_END: kernel
