// Step 12: the epilogue. In step 11 a consumer stores its 64 x BN tile of C from registers,
// 8 bytes per thread and instruction, and starts the next tile only when the last of those
// stores has issued: the tensor cores wait. Here C leaves the way A and B came in: each
// consumer writes its accumulators into shared memory in chunks of 64 rows x 128 bytes, and one
// thread hands them to the TMA, which stores them in the background while the consumer goes on
// to the next chunks and then to the next tile's products. Two staging buffers per consumer: it
// fills both and hands them over together, one proxy fence for two chunks (with beta != 0 the TMA
// first loads the two chunks' old C into them).
//
// C is stored as Prec<PREC>::out_t: FP32, or for FP16_C16 and BF16_C16 the inputs' 16-bit type,
// which halves the bytes of C (what torch.matmul returns for 16-bit tensors). The signature is
// the ladder's with A, B and C replaced by their tensor maps.
#include "sgemm.cuh"
#include "hopper.cuh"
#include "warpgroups.cuh"  // step 10: the block, its warpgroups and their ring of buffers
#include "schedule.cuh"    // step 11: the persistent schedule
#include "epilogue.cuh"    // this step's epilogue: C through shared memory and the TMA

// ANCHOR: config
static_assert(BN % (64 * CLUSTER) == 0, "the blocks of a cluster load equal shares of B's boxes");
static_assert(!HALVES || BN / 2 % (64 * CLUSTER) == 0, "half jobs split B's boxes among the cluster");
// The TMA's multicast mask: every block of the cluster (0: no multicast).
constexpr unsigned short MULTICAST = CLUSTER > 1 ? (1 << CLUSTER) - 1 : 0;
typedef Schedule<BM, BN, CLUSTER, GROUP, HALVES> Jobs;
// ANCHOR_END: config

// ANCHOR: kernel
extern "C" __global__ void __launch_bounds__(NUM_THREADS, 1)
    sgemm(int M, int N, int K, float alpha, const __grid_constant__ TensorMap tmA,
          const __grid_constant__ TensorMap tmB, float beta, const __grid_constant__ TensorMap tmC) {
    // The ring of STAGES (A tile, B tile) buffers and, after it, two staging buffers of C per
    // consumer, each on a 1024-byte boundary (the period of the 128-byte swizzle). Barriers: full
    // and empty per ring buffer, and per staging buffer one for the TMA's loads of old C.
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES], loaded[CONSUMERS][2];
    const unsigned smem = (smem_addr(smem_raw) + 1023) & ~1023u;
    auto a_tile = [&](int s) { return smem + s * STAGE_BYTES; };
    auto b_tile = [&](int s) { return smem + s * STAGE_BYTES + A_BYTES; };
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const unsigned rank = CLUSTER > 1 ? cluster_rank() : 0;
    // This cluster's waves: every (clusters in the grid)-th unit from its number in the grid on,
    // then its share of the last wave's K-tiles.
    const Jobs jobs(M, N, gridDim.x / CLUSTER, CEIL_DIV(K, BK));
    const int cluster = blockIdx.x / CLUSTER;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(smem_addr(&full[s]), 1);                      // the producer's arrival (+ bytes)
            mbar_init(smem_addr(&empty[s]), CONSUMERS * CLUSTER);   // one per consumer of the cluster
        }
        for (int c = 0; c < CONSUMERS; ++c)
            for (int b = 0; b < 2; ++b) mbar_init(smem_addr(&loaded[c][b]), 1);
        fence_barrier_init();
    }
    // Barriers initialised in every block before any block signals them.
    if (CLUSTER > 1) cluster_sync();
    else __syncthreads();

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (tid == 0) {
            int it = 0;  // buffers filled so far: the ring runs on from one unit to the next
            Work w;
            for (int n = 0; jobs.wave(cluster, n, M, N, rank, w); ++n) {
                // B comes in boxes of 64 columns of C (8 KiB: 64 x BK); this block loads its
                // share of the unit's boxes for the whole cluster.
                const int boxes = w.width / 64 / CLUSTER;
                for (int t = w.k0, k = w.k_first() * BK; t < w.k1; ++t, ++it, k += w.k_step() * BK) {
                    const int s = it % STAGES;
                    // Wait until the consumers of the cluster released this buffer's last use.
                    if (it >= STAGES) mbar_wait(smem_addr(&empty[s]), (it / STAGES + 1) % 2);
                    // A, and all of the unit's B (own part + peers')
                    const unsigned bar = smem_addr(&full[s]);
                    mbar_expect_bytes(bar, A_BYTES + w.width * ROW);
                    tma_load(a_tile(s), &tmA, bar, k, w.at.x);
                    for (int j = rank * boxes; j < (int)(rank + 1) * boxes; ++j)
                        tma_load(b_tile(s) + j * BOX_BYTES, &tmB, bar, w.at.y + 64 * j, k, MULTICAST);
                }
            }
            // No block leaves while a peer may still signal its barriers, and none waits for its
            // peer's epilogue either: the producer waits until the cluster's consumers released
            // the last use of each buffer. After that no peer arrives on this block's barriers,
            // and every multicast into this block has landed and been read.
            if (CLUSTER > 1)
                for (int i = it > STAGES ? it - STAGES : 0; i < it; ++i) mbar_wait(smem_addr(&empty[i % STAGES]), (i / STAGES) % 2);
        }
    } else {
        setmaxnreg_inc<232>();
        // The consumer's number goes through a shuffle, so that the compiler knows every lane
        // has the same and keeps what depends on it (the descriptors) in uniform registers.
        const int consumer = __shfl_sync(0xffffffff, wg - 1, 0);
        const unsigned stage = smem + STAGES * STAGE_BYTES + consumer * 2 * CHUNK_BYTES;
        // Hands buffer s back: one arrival per consumer warpgroup on every block's empty barrier.
        auto release = [&](int s) {
            if (tid == 0)
                for (int r = 0; r < CLUSTER; ++r) mbar_arrive_cluster(smem_addr(&empty[s]), r);
        };
        float d[BN / 2];
        // This consumer's 64 rows of A and all of B in buffer 0; buffer s lies a constant further.
        const unsigned long long a0 = descriptor(a_tile(0) + consumer * 64 * ROW, 16, 1024),
                                 b0 = descriptor(b_tile(0), BOX_BYTES, 1024);
        unsigned it = 0;  // buffers used so far, as the producer counts them
        int chunks = 0;   // chunks of C this consumer has stored
        Work w;
        for (int n = 0; jobs.wave(cluster, n, M, N, rank, w); ++n) {
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
            // The K loop for a tile W wide, compiled for W = BN and (half jobs) BN / 2.
            auto mainloop = [&](auto width) {
                constexpr int W = decltype(width)::value;
                for (int t = w.k0; t < w.k1; ++t, ++it) {
                    const unsigned s = it % STAGES;
                    mbar_wait(smem_addr(&full[s]), (it / STAGES) % 2);
                    const unsigned long long a = a0 + s * (STAGE_BYTES / 16), b = b0 + s * (STAGE_BYTES / 16);
                    wgmma_fence();
#pragma unroll
                    for (int kk = 0; kk < BK / P::mma_k; ++kk)
                        wgmma<P, W>(d, a + kk * 32 / 16, b + kk * 16 * ROW / 16);
                    wgmma_commit();
                    wgmma_wait<1>();
                    if (t > w.k0) release((it - 1) % STAGES);
                }
                wgmma_wait<0>();
                if (w.k1 > w.k0) release((it - 1) % STAGES);
            };
            const int row = w.at.x + consumer * 64, id = 1 + consumer;
            if (HALVES && w.width < BN) {
                mainloop(Width<HALVES ? BN / 2 : BN>{});
                store_chunks<P, HALVES ? BN / 2 : BN>(&tmC, stage, loaded[consumer], id, chunks, row, w.at.y, d, alpha, beta);
            } else {
                mainloop(Width<BN>{});
                // A piece of the last wave: leave it, or complete the tile with the pieces before it.
                const int slot = (cluster * CLUSTER + rank) * CONSUMERS + consumer;
                if (w.partial) {
                    save_partial(slot, id, d);
                    continue;
                }
                add_partials(slot, CLUSTER * CONSUMERS, w.peers, id, d);
                store_chunks<P, BN>(&tmC, stage, loaded[consumer], id, chunks, row, w.at.y, d, alpha, beta);
            }
        }
        // The staging buffers must outlive the stores that read them.
        if (tid == 0) tma_store_drain();
    }
}
// ANCHOR_END: kernel
