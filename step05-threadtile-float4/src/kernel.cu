// Step 5: register tiling with float4. A block computes a BM x BN tile of C with
// (BM/TM)*(BN/TN) threads; each thread keeps a TM x TN tile of C in registers and, for every
// k, multiplies a column of TM values of A by a row of TN values of B (an outer product):
// TM + TN shared-memory reads feed TM * TN FMAs.
#include "sgemm.cuh"

#define NUM_THREADS ((BM / TM) * (BN / TN))
// Each thread moves A_LOADS float4s of every A tile and B_LOADS of every B tile.
#define A_LOADS (BM * BK / 4 / NUM_THREADS)
#define B_LOADS (BN * BK / 4 / NUM_THREADS)
static_assert(TM == 8 && TN == 8, "a thread tile is 2x2 quadrants of 4x4, read as float4");
static_assert(BK % 4 == 0 && BM % 8 == 0 && BN % 8 == 0, "tiles are made of float4s");
static_assert(A_LOADS * 4 * NUM_THREADS == BM * BK && B_LOADS * 4 * NUM_THREADS == BN * BK,
              "the threads move whole tiles, each the same number of float4s");

// ANCHOR: kernel
extern "C" __global__ void __launch_bounds__(NUM_THREADS)
    sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    // ANCHOR: tiles
    // As is the A tile transposed, As[k][m]: the TM values of A a thread needs for one k
    // sit side by side and come in as float4s. The 4 floats of padding per row (step 4's
    // idea, kept a multiple of 4 for alignment) spread the transposing stores over the banks.
    __shared__ __align__(16) float As[BK][BM + 4];
    __shared__ __align__(16) float Bs[BK][BN];
    // ANCHOR_END: tiles

    const int tid = threadIdx.x;
    const int blockRow = blockIdx.y * BM, blockCol = blockIdx.x * BN;

    // ANCHOR: coords
    // This thread's share of a K-tile: A_LOADS float4s of the A tile (rows A_STRIDE apart)
    // and B_LOADS of the B tile. Consecutive threads read consecutive float4s of a row.
    const int aRow = tid / (BK / 4), aCol = (tid % (BK / 4)) * 4;
    const int bRow = tid / (BN / 4), bCol = (tid % (BN / 4)) * 4;
    constexpr int A_STRIDE = NUM_THREADS / (BK / 4), B_STRIDE = NUM_THREADS / (BN / 4);
    // ANCHOR_END: coords

    // ANCHOR: mapping
    // The thread's TM x TN tile of C is four 4x4 quadrants, BM/2 rows and BN/2 columns
    // apart. Neighbouring threads then read neighbouring float4s of Bs (conflict-free),
    // where one 8-wide strip per thread would put pairs of lanes in the same banks.
    const int tRow = tid / (BN / TN), tCol = tid % (BN / TN);
    const int rows[2] = {tRow * 4, BM / 2 + tRow * 4};
    const int cols[2] = {tCol * 4, BN / 2 + tCol * 4};
    // ANCHOR_END: mapping

    // ANCHOR: tile_io
    float4 a[A_LOADS], b[B_LOADS];
    // Global -> registers, for the K-tile that starts at k0.
    auto load_tiles = [&](int k0) {
#pragma unroll
        for (int i = 0; i < A_LOADS; ++i) a[i] = load4(A, blockRow + aRow + i * A_STRIDE, k0 + aCol, M, K);
#pragma unroll
        for (int i = 0; i < B_LOADS; ++i) b[i] = load4(B, k0 + bRow + i * B_STRIDE, blockCol + bCol, K, N);
    };
    // Registers -> shared memory: A transposed into As[k][m], B as it is into Bs[k][n].
    auto store_tiles = [&]() {
#pragma unroll
        for (int i = 0; i < A_LOADS; ++i) {
            As[aCol + 0][aRow + i * A_STRIDE] = a[i].x;
            As[aCol + 1][aRow + i * A_STRIDE] = a[i].y;
            As[aCol + 2][aRow + i * A_STRIDE] = a[i].z;
            As[aCol + 3][aRow + i * A_STRIDE] = a[i].w;
        }
#pragma unroll
        for (int i = 0; i < B_LOADS; ++i) *reinterpret_cast<float4*>(&Bs[bRow + i * B_STRIDE][bCol]) = b[i];
    };
    // ANCHOR_END: tile_io


    float acc[TM][TN] = {};
    // ANCHOR: loop
    for (int k0 = 0; k0 < K; k0 += BK) {
        load_tiles(k0);
        store_tiles();
        __syncthreads();  // the tiles are complete before anyone reads them
        // ANCHOR: outer
        // The BK outer products: for each k, TM values of A (two float4s of As[k]) times
        // TN values of B (two float4s of Bs[k]).
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a_frag[TM], b_frag[TN];
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float4 av = *reinterpret_cast<const float4*>(&As[k][rows[h]]);
                const float4 bv = *reinterpret_cast<const float4*>(&Bs[k][cols[h]]);
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
        __syncthreads();  // everyone is done reading before the next tiles overwrite them
    }
    // ANCHOR_END: loop

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
