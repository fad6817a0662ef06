// Step 10: warp specialization. In step 9 the warpgroup that multiplies also issues the copies,
// and between two tiles it waits: for the TMA while the ring is empty, for its own products
// before it may refill a buffer. Here the block divides the work. Warpgroup 0, the producer,
// only copies: one of its threads keeps the ring of STAGES buffers full, waiting on an `empty`
// barrier per buffer. The other warpgroups, the consumers, only multiply: each waits for a full
// buffer, multiplies its 64 rows of the tile with wgmma, and hands the buffer back by arriving
// on `empty`. Two consumers share each B tile, so the block's tile is 128 x BN for the same copy
// of B. The producer needs few registers and the consumers many (their accumulators):
// `setmaxnreg` moves registers from one to the other.
//
// FP16 and BF16 (Prec<PREC>), as step 9.
#include "sgemm.cuh"
#include "hopper.cuh"
#include "accumulators.cuh"  // step 9: the accumulators to C
#include "warpgroups.cuh"    // the block: its warpgroups and their ring of buffers

// ANCHOR: kernel
extern "C" __global__ void __launch_bounds__(NUM_THREADS, 1)
    sgemm(int M, int N, int K, float alpha, const __grid_constant__ TensorMap tmA,
          const __grid_constant__ TensorMap tmB, float beta, float* C) {
    // The ring of STAGES (A tile, B tile) buffers, each on a 1024-byte boundary (the period of
    // the 128-byte swizzle), and two barriers per buffer: full (the TMA's bytes have landed) and
    // empty (every consumer is done with it).
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    const unsigned smem = (smem_addr(smem_raw) + 1023) & ~1023u;
    auto a_tile = [&](int s) { return smem + s * STAGE_BYTES; };
    auto b_tile = [&](int s) { return smem + s * STAGE_BYTES + A_BYTES; };
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN, tiles = CEIL_DIV(K, BK);
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(smem_addr(&full[s]), 1);           // the producer's arrival (+ bytes)
            mbar_init(smem_addr(&empty[s]), CONSUMERS);  // one per consumer warpgroup
        }
        fence_barrier_init();
    }
    __syncthreads();

    if (wg == 0) {
        // ANCHOR: producer
        // The producer gives registers away (consumers hold the accumulators); one thread
        // issues every copy.
        setmaxnreg_dec<40>();
        if (tid == 0) {
            for (int t = 0; t < tiles; ++t) {
                const int s = t % STAGES;
                // Wait until the consumers released this buffer's last use.
                if (t >= STAGES) mbar_wait(smem_addr(&empty[s]), (t / STAGES + 1) % 2);
                const unsigned bar = smem_addr(&full[s]);
                mbar_expect_bytes(bar, STAGE_BYTES);
                tma_load(a_tile(s), &tmA, bar, t * BK, row0);
                for (int j = 0; j < BN / 64; ++j)
                    tma_load(b_tile(s) + j * BOX_BYTES, &tmB, bar, col0 + 64 * j, t * BK);
            }
        }
        // ANCHOR_END: producer
    } else {
        // ANCHOR: consumer
        setmaxnreg_inc<232>();
        // The consumer's number goes through a shuffle, so that the compiler knows every lane
        // has the same and keeps what depends on it (the descriptors) in uniform registers.
        const int consumer = __shfl_sync(0xffffffff, wg - 1, 0);
        float d[BN / 2];
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
        // This consumer's 64 rows of A and all of B in buffer 0; buffer s lies a constant further.
        const unsigned long long a0 = descriptor(a_tile(0) + consumer * 64 * ROW, 16, 1024),
                                 b0 = descriptor(b_tile(0), BOX_BYTES, 1024);
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
            // Keep this tile's products running; once the previous tile's are done, hand its
            // buffer back (one arrival per consumer warpgroup).
            wgmma_wait<1>();
            if (tid == 0 && t > 0) mbar_arrive(smem_addr(&empty[(t - 1) % STAGES]));
        }
        wgmma_wait<0>();
        // ANCHOR_END: consumer
        store_tile<BN>(C, row0 + consumer * 64, col0, M, N, d, alpha, beta);
    }
}
// ANCHOR_END: kernel
