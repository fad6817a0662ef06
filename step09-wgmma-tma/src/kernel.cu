// Step 9: the TMA and wgmma. Up to step 8 every thread of a block computed addresses, copied
// its share of each tile and loaded fragments into registers. On Hopper one thread asks the
// Tensor Memory Accelerator (TMA) for a whole tile of A or B, described by a tensor map; the
// tile lands in shared memory already swizzled, and its bytes complete a phase of an mbarrier.
// A warpgroup (4 warps, 128 threads) then multiplies the 64 x BN tile with `wgmma`, whose
// operands come straight from shared memory through 64-bit descriptors: only the accumulators
// live in registers. The block is one warpgroup; a ring of STAGES buffers keeps the next tiles
// in flight while it multiplies, and thread 0 refills a buffer as soon as the warpgroup's
// products from it are done.
//
// FP16 and BF16 (Prec<PREC>). A is K-major (row-major M x K) and B N-major (row-major K x N),
// which wgmma reads transposed. The signature is the ladder's with A and B replaced by their
// tensor maps, which the host builds from the same (M, N, K, A, B) call.
#include "sgemm.cuh"
#include "hopper.cuh"
#include "accumulators.cuh"  // the accumulators to C, from registers

// ANCHOR: config
typedef Prec<PREC> P;
static_assert(sizeof(P::in_t) == 2, "steps 9-12 multiply FP16 or BF16");
// BM x BN of C per block: one 64 x BN wgmma tile. BK is one 128-byte row of K (64 halves): the
// TMA's widest swizzle.
constexpr int ROW = 128;          // bytes of a tile row in shared memory
constexpr int A_BYTES = BM * ROW;  // A tile: BM rows of BK elements
constexpr int B_BYTES = BN * ROW;  // B tile: BK rows of BN elements, in boxes of 64 columns
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int BOX_BYTES = 64 * ROW;  // a TMA box of B: 64 columns of C by BK
static_assert(BK * sizeof(P::in_t) == ROW, "a tile row is one 128-byte swizzle row");
static_assert(BM == 64 && (BN == 128 || BN == 256), "one 64 x 128 or 64 x 256 wgmma tile");
static_assert(A_BYTES % 1024 == 0 && B_BYTES % 1024 == 0, "tiles start on the swizzle's 1024-byte period");
// ANCHOR_END: config

// ANCHOR: kernel
extern "C" __global__ void __launch_bounds__(128) sgemm(int M, int N, int K, float alpha,
                                                        const __grid_constant__ TensorMap tmA,
                                                        const __grid_constant__ TensorMap tmB, float beta, float* C) {
    // The ring of STAGES (A tile, B tile) buffers, each on a 1024-byte boundary (the period of
    // the 128-byte swizzle), and one barrier per buffer: full (the TMA's bytes have landed).
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long full[STAGES];
    const unsigned smem = (smem_addr(smem_raw) + 1023) & ~1023u;
    auto a_tile = [&](int s) { return smem + s * STAGE_BYTES; };
    auto b_tile = [&](int s) { return smem + s * STAGE_BYTES + A_BYTES; };
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN, tiles = CEIL_DIV(K, BK);

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) mbar_init(smem_addr(&full[s]), 1);
        fence_barrier_init();
    }
    __syncthreads();

    // ANCHOR: load
    // K-tile t into buffer t % STAGES: the A tile, and B in boxes of 64 columns (128 bytes).
    auto load = [&](int t) {
        const int s = t % STAGES;
        const unsigned bar = smem_addr(&full[s]);
        mbar_expect_bytes(bar, STAGE_BYTES);
        tma_load(a_tile(s), &tmA, bar, t * BK, row0);
        for (int j = 0; j < BN / 64; ++j) tma_load(b_tile(s) + j * BOX_BYTES, &tmB, bar, col0 + 64 * j, t * BK);
    };
    if (threadIdx.x == 0)
        for (int t = 0; t < min(STAGES, tiles); ++t) load(t);
    // ANCHOR_END: load

    // ANCHOR: mainloop
    float d[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
    // A descriptor holds its address in 16-byte units: those of buffer s and of the kk-th step of
    // K are buffer 0's plus a constant, not an address encoded again for every wgmma.
    const unsigned long long a0 = descriptor(a_tile(0), 16, 1024), b0 = descriptor(b_tile(0), BOX_BYTES, 1024);
    for (int t = 0; t < tiles; ++t) {
        const int s = t % STAGES;
        mbar_wait(smem_addr(&full[s]), (t / STAGES) % 2);
        const unsigned long long a = a0 + s * (STAGE_BYTES / 16), b = b0 + s * (STAGE_BYTES / 16);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / P::mma_k; ++kk)
            // A: +32 bytes of K per step inside the swizzled rows; B: +16 rows of K.
            wgmma<P, BN>(d, a + kk * 32 / 16, b + kk * 16 * ROW / 16);
        wgmma_commit();
        // Keep this tile's products running; once the previous tile's are done, its buffer
        // takes the K-tile STAGES further on.
        wgmma_wait<1>();
        if (threadIdx.x == 0 && t > 0 && t - 1 + STAGES < tiles) load(t - 1 + STAGES);
    }
    wgmma_wait<0>();
    // ANCHOR_END: mainloop
    store_tile<BN>(C, row0, col0, M, N, d, alpha, beta);
}
// ANCHOR_END: kernel
