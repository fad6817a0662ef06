// Step 15: skinny shapes. Step 12's kernel keeps a 128 x 256 tile of C per block: at M = 16 a
// tile is one eighth full, and N = 11008 makes 43 tiles for 132 SMs. Here, for a small M, A and B
// swap places (SWAP): the kernel computes C^T = B^T A^T, so that N (thousands) fills wgmma's 64
// rows per consumer and M becomes the instruction's N, a narrow BN of 8 to 128 that the host picks
// from the shape. B streams through the ring as step 12's boxes of 64 columns, now wgmma's first
// operand read MN-major; A's rows are the second, K-major. A tile has BM = 64, 128 or 192 rows of
// N (one to three consumers), as the host brings the count of tiles near the SMs'. The tiles are
// still few (86 at N = 11008), so the host launches a cluster on every SM, and where they number
// under half of the SMs the K-tiles of each tile are cut into slices (SPREAD, skinny.cuh),
// numbered slice by slice so that the clusters at work at one moment read the same rows of B side
// by side; the block with a tile's last slice adds the partial sums of the slices before it, in a
// fixed order, so that a launch on the same GPU gives the same bits. Where B is larger than L2
// (STREAM), its loads are marked to leave L2 first and A's, which every tile reads, last. The
// epilogue writes the tile of C^T into C transposed (skinny.cuh). Without SWAP and SPREAD (M
// large), this is step 12's kernel and launch.
//
// C is stored as Prec<PREC>::out_t: FP32, or for FP16_C16 and BF16_C16 the inputs' 16-bit type.
// The signature is step 12's: A, B and C as their tensor maps.
#include "sgemm.cuh"
#include "hopper.cuh"
#include "warpgroups.cuh"  // step 10: the block, its warpgroups and their ring of buffers
#include "schedule.cuh"    // step 11: the persistent schedule
#include "epilogue.cuh"    // step 12: C through shared memory and the TMA
#include "skinny.cuh"      // this step: the swapped wgmma, C^T's transposed epilogue, the slices

// ANCHOR: config
static_assert(SWAP || BN % (64 * CLUSTER) == 0, "the blocks of a cluster load equal shares of B's boxes");
static_assert(!HALVES || BN / 2 % (64 * CLUSTER) == 0, "half jobs split B's boxes among the cluster");
static_assert(!SWAP || (CLUSTER == 1 && !HALVES), "swapped, a block loads its narrow tile of A whole");
// The product the kernel computes, rows x columns: C, or C^T when swapped. Its BM rows come from
// A (K-major), or from B (MN-major: boxes of 64 columns); its BN columns from B, or from A.
#define ROWS (SWAP ? N : M)
#define COLS (SWAP ? M : N)
// The TMA's multicast mask: every block of the cluster (0: no multicast).
constexpr unsigned short MULTICAST = CLUSTER > 1 ? (1 << CLUSTER) - 1 : 0;
// A programmatic dependent launch (PDL=1, which the host's launch carries too): the swapped and
// sliced plans of the small shapes. Step 12's plan stays step 12's kernel.
#ifndef PDL
#define PDL 0
#endif
// This step's slices over every SM, or step 11's persistent schedule.
typedef Either<SPREAD, Slices<BM, BN, CLUSTER, GROUP>, Schedule<BM, BN, CLUSTER, GROUP, HALVES>>::type Jobs;
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
    // then (step 11) its share of the last wave's K-tiles; with SPREAD the units are slices.
    const Jobs jobs(ROWS, COLS, gridDim.x / CLUSTER, CEIL_DIV(K, BK));
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
    // Back to back, the host lets the next launch start as this one's blocks exit (PDL, the small
    // shapes' plans), so that its blocks are placed and set up while this one's last writes drain:
    // nothing here reads or writes global memory before the launch ahead has finished and its
    // writes are visible.
    if (PDL) wait_for_launch_before();

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (tid == 0) {
            int it = 0;  // buffers filled so far: the ring runs on from one unit to the next
            const unsigned long long first = STREAM ? l2_evict_first() : 0, last = STREAM ? l2_evict_last() : 0;
            Work w;
            for (int n = 0; jobs.wave(cluster, n, ROWS, COLS, rank, w); ++n) {
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
                    if constexpr (SWAP) {
                        // B^T's rows: BM columns of B in boxes of 64; A^T's columns: BN rows of A.
                        for (int j = 0; j < BM / 64; ++j)
                            if (STREAM) tma_load_priority(a_tile(s) + j * BOX_BYTES, &tmB, bar, w.at.x + 64 * j, k, first);
                            else tma_load(a_tile(s) + j * BOX_BYTES, &tmB, bar, w.at.x + 64 * j, k);
                        if (STREAM) tma_load_priority(b_tile(s), &tmA, bar, k, w.at.y, last);
                        else tma_load(b_tile(s), &tmA, bar, k, w.at.y);
                    } else {
                        tma_load(a_tile(s), &tmA, bar, k, w.at.x);
                        for (int j = rank * boxes; j < (int)(rank + 1) * boxes; ++j)
                            tma_load(b_tile(s) + j * BOX_BYTES, &tmB, bar, w.at.y + 64 * j, k, MULTICAST);
                    }
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
        // Three consumers (a tile of 192 rows of N) share what the producer gives back: 152 each.
        setmaxnreg_inc<(CONSUMERS > 2 ? 152 : 232)>();
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
        // This consumer's 64 rows of the product's first operand and all of its second in buffer 0;
        // buffer s lies a constant further. An MN-major operand's 64-column boxes lie BOX_BYTES apart.
        // Their descriptors step 16 elements of K: 32 bytes K-major, 16 rows of 128 bytes MN-major.
        const unsigned long long a0 = descriptor(a_tile(0) + consumer * 64 * ROW, SWAP ? BOX_BYTES : 16, 1024),
                                 b0 = descriptor(b_tile(0), SWAP ? 16 : BOX_BYTES, 1024);
        constexpr int A_STEP = SWAP ? 16 * ROW / 16 : 32 / 16, B_STEP = SWAP ? 32 / 16 : 16 * ROW / 16;
        unsigned it = 0;  // buffers used so far, as the producer counts them
        int chunks = 0;   // chunks of C this consumer has stored
        Work w;
        for (int n = 0; jobs.wave(cluster, n, ROWS, COLS, rank, w); ++n) {
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
            // The K loop for a tile W wide, compiled for W = BN and (half jobs) BN / 2.
            auto mainloop = [&](auto width) {
                constexpr int W = decltype(width)::value;
                // One K-tile's products from buffer s, issued and committed.
                auto products = [&](unsigned s) {
                    const unsigned long long a = a0 + s * (STAGE_BYTES / 16), b = b0 + s * (STAGE_BYTES / 16);
                    wgmma_fence();
#pragma unroll
                    for (int kk = 0; kk < BK / P::mma_k; ++kk) {
                        if constexpr (SWAP) wgmma_swapped<P, W>(d, a + kk * A_STEP, b + kk * B_STEP);
                        else wgmma<P, W>(d, a + kk * A_STEP, b + kk * B_STEP);
                    }
                    wgmma_commit();
                };
                if constexpr (SWAP) {
                    // The buffer and its phase carried from one K-tile to the next, and the buffer
                    // to hand back known before the products: after each wait only the arrival is
                    // left, so the producer refills it at once. With `(it - 1) % STAGES` after the
                    // wait, ptxas put the division and the barrier's address there, 10-12
                    // instructions before the arrival (notes/step15.md, "Next: the hand-back first
                    // after the wait").
                    unsigned s = it % STAGES, phase = (it / STAGES) % 2, last = s;  // last: read once a K-tile ran
                    for (int t = w.k0; t < w.k1; ++t, ++it) {
                        mbar_wait(smem_addr(&full[s]), phase);
                        const bool give = t > w.k0;
                        const unsigned back = last;
                        products(s);
                        last = s;
                        s = s + 1 == STAGES ? 0 : s + 1;
                        phase ^= s == 0;
                        wgmma_wait<1>();
                        if (give) release(back);
                    }
                    wgmma_wait<0>();
                    if (w.k1 > w.k0) release(last);
                } else {
                    // Step 12's plan keeps step 12's loop and its machine code.
                    for (int t = w.k0; t < w.k1; ++t, ++it) {
                        const unsigned s = it % STAGES;
                        mbar_wait(smem_addr(&full[s]), (it / STAGES) % 2);
                        products(s);
                        wgmma_wait<1>();
                        if (t > w.k0) release((it - 1) % STAGES);
                    }
                    wgmma_wait<0>();
                    if (w.k1 > w.k0) release((it - 1) % STAGES);
                }
            };
            const int row = w.at.x + consumer * 64, id = 1 + consumer;
            // The tile W wide into C: step 12's chunks, or swapped, C^T's chunks transposed.
            auto store = [&](auto width) {
                constexpr int W = decltype(width)::value;
                if constexpr (SWAP) store_transposed<P, W>(&tmC, stage, loaded[consumer], id, chunks, row, w.at.y, d, alpha, beta);
                else store_chunks<P, W>(&tmC, stage, loaded[consumer], id, chunks, row, w.at.y, d, alpha, beta);
            };
            if (HALVES && w.width < BN) {
                mainloop(Width<HALVES ? BN / 2 : BN>{});
                store(Width<HALVES ? BN / 2 : BN>{});
            } else {
                mainloop(Width<BN>{});
                // A piece of a tile: leave it, or complete the tile with the pieces before it.
                if (partial_sums_of(jobs, w, cluster, n, rank, consumer, id, d)) continue;
                store(Width<BN>{});
            }
        }
        // The staging buffers must outlive the stores that read them.
        if (tid == 0) tma_store_drain();
    }
}
// ANCHOR_END: kernel
