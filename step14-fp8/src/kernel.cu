// Step 14: FP8. A and B arrive as e4m3, one byte a value, so a 128-byte row of a tile holds 128
// of K and the tensor cores multiply twice as many values a cycle as in FP16. Two things change
// with the bytes:
// - B is K-major (N x K, as a linear layer stores its weight): FP8 wgmma transposes neither
//   operand, so B's tiles come in as A's do, rows of N with K along the 128-byte swizzled row.
// - The tensor cores add FP8 products in a format narrower than FP32 (about 14 bits). Each
//   consumer lets them sum one K-tile (128 of K, four wgmma) into fresh registers, and then
//   promotes: d += t * scale, in FP32. The scales enter there: one per row of A and 128 of K
//   times one per 128 x 128 block of B (FP8_BLOCK), which each consumer copies into a ring of its
//   own in shared memory, eight K-tiles at a time; or 1, the tensors' two scales going into alpha.
// - A consumer promotes while the tensor cores sum its next K-tile into a second set of
//   registers. With block scales at large shapes the promotion, an FMA by a scale, is slow while
//   the consumer's own products run: there the two consumers take turns instead, each promoting
//   under the other's products with one set, and the registers of the second set make the tile
//   192 columns wide (TURNS).
//
// Everything else is step 12's: the warp-specialized block, the persistent schedule in clusters
// (whose last wave, where it is too small to share out alone, is shared out with the wave before
// it: Jobs), C through shared memory and the TMA (BF16, or FP32 for the _C32 precisions; three
// staging buffers a consumer for a 192-wide tile, four for the per-tensor FP32 C's: CBUF). The
// signature is step 12's with the scales of A and B after C.
#include "sgemm.cuh"
#include "hopper.cuh"
#include "tensor.cuh"  // cp.async copies: the block scales' ring

// ANCHOR: traits
// The FP8 precisions of precision.cuh's table, here rather than there: their traits' constants
// would be globals of every kernel that includes it. e4m3 inputs, stored as bytes; one wgmma
// multiplies 32 of K; `block`: fine-grained scales.
template <>
struct Prec<FP8> : Prec<BF16_C16> {
    typedef unsigned char in_t;
    static constexpr int code = FP8, mma_k = 32;
    static constexpr bool block = false;
};
template <>
struct Prec<FP8_C32> : Prec<FP32> {
    typedef unsigned char in_t;
    static constexpr int code = FP8_C32, mma_k = 32;
    static constexpr bool block = false;
};
template <>
struct Prec<FP8_BLOCK> : Prec<FP8> {
    static constexpr int code = FP8_BLOCK;
    static constexpr bool block = true;
};
template <>
struct Prec<FP8_BLOCK_C32> : Prec<FP8_C32> {
    static constexpr int code = FP8_BLOCK_C32;
    static constexpr bool block = true;
};
// ANCHOR_END: traits

#include "warpgroups.cuh"  // step 10: the block, its warpgroups and their ring of buffers
#include "schedule.cuh"    // step 11: the persistent schedule
#include "epilogue.cuh"    // step 12: C through shared memory and the TMA

// ANCHOR: config
static_assert(P::mma_k == 32, "step 14 multiplies FP8");
static_assert(BK == 128 && (BN % 128 == 0 || BN == 192), "a K-tile is one block of scales; a tile spans whole blocks of B's, or 192 columns");
// The blocks of B's scales a tile spans: a 192-wide tile spans two, split at its column 128 (tiles
// at even multiples of 192) or 64 (odd). (A macro: a constant at namespace scope would be a global.)
#define NBLK (BN % 128 ? BN / 128 + 1 : BN / 128)
// The consumers take turns with one set of fresh sums where the tile is 192 wide (block scales at
// large shapes, lib.rs); elsewhere each keeps two sets and promotes one while the other runs.
#define TURNS (P::block && BN % 128 != 0)
// Staging buffers of C a consumer: three for a 192-wide tile, so that its three chunks of BF16
// leave in one round (an FP32 C's six in two), without waiting halfway for the TMA to read the
// first buffers while the tensor cores wait for both consumers; four for per-tensor scales' FP32
// C, whose 128-wide tile is four chunks (lib.rs leaves the room, in place of a buffer of tiles).
#define CBUF (TURNS ? 3 : !P::block && sizeof(P::out_t) == 4 && BN == 128 ? 4 : 2)
constexpr unsigned short MULTICAST = CLUSTER > 1 ? (1 << CLUSTER) - 1 : 0;
// The block scales of one K-tile that a thread needs: A's of its two rows, B's of the tile's blocks.
struct Scales {
    float a[2], b[NBLK];
};
// ANCHOR_END: config

// ANCHOR: tail
// Step 11's schedule, with one more way to even out the last wave. Step 11 shares a last wave out
// along K only where each cluster gets two of its K-tiles or more; a smaller one runs whole, on
// as many clusters as it has jobs, while the others wait (4096 x 11008 x 4096 in 192-wide tiles:
// 4 jobs for 66 clusters, a whole wave for 4). Here such a wave is shared out together with the
// wave before it: each cluster takes a job's worth of K-tiles and a few more, across at most three
// jobs, in the order step 11 keeps: first the piece it leaves as a partial, last the piece that
// finishes a job, after the partials of the clusters before it.
struct Jobs : Schedule<BM, BN, CLUSTER, GROUP, false> {
    __device__ Jobs(int M, int N, int clusters_, int tiles_) : Schedule(M, N, clusters_, tiles_) {
        const int t = jobs % clusters;
        if (tail == 0 && t > 0 && jobs > clusters && t * tiles < 2 * clusters && (clusters - t) * tiles >= 20 * clusters &&
            (int)gridDim.x * (BM / 64) <= MAX_PARTIALS)
            tail = t + clusters, whole = jobs - tail, units = whole;
    }
    // Wave i of cluster c into w (Schedule::wave, its share of the tail in up to three pieces).
    __device__ bool wave(int c, int i, int M, int N, unsigned rank, Work& w) const {
        const int own = c < units ? (units - 1 - c) / clusters + 1 : 0;
        if (i < own) {
            w = unit(c + i * clusters, M, N, rank, i);
            return true;
        }
        const int b = begin(c), e = begin(c + 1), first = b / tiles, last = (e - 1) / tiles, p = i - own;
        if (tail == 0 || e <= b || p > last - first) return false;
        // The pieces in order: the last job's, if it leaves a partial; the whole jobs between; the
        // first job's, which finishes it.
        const bool leaves = e < (last + 1) * tiles;
        const int job = p == last - first ? first : leaves ? (p == 0 ? last : first + p) : first + 1 + p;
        const int k0 = max(b, job * tiles), k1 = min(e, (job + 1) * tiles);
        w = {job_origin<BM, BN, CLUSTER, GROUP>(whole + job, M, N, rank), BN, k0 - job * tiles, k1 - job * tiles, 0,
             k1 < (job + 1) * tiles, i % 2 == 1};
        if (!w.partial)
            while (c - 1 - w.peers >= 0 && begin(c - w.peers) > job * tiles) ++w.peers;
        return true;
    }
};
// ANCHOR_END: tail

// ANCHOR: promote
// d += t * scale, the K-tile's sums promoted into FP32. A thread holds rows r and r + 8 of its
// warp's 16 (t[i] is on row r + 8 when i % 4 >= 2) and, for every 64 of its accumulators, 128
// columns: one block of B's scales, from OFF columns into the tile's first block (0, or 64 for
// a 192-wide tile that starts halfway into one). s.a: the scales of rows r and r + 8; s.b: of
// the tile's blocks.
template <int NREG, int OFF = 0>
__device__ __forceinline__ void promote(float (&d)[NREG], const float (&t)[NREG], const Scales& s) {
#pragma unroll
    for (int i = 0; i < NREG; ++i) {
        if constexpr (P::block) d[i] = fmaf(t[i], s.a[i % 4 / 2] * s.b[(i + OFF / 2) / 64], d[i]);
        else d[i] += t[i];
    }
}
// ANCHOR_END: promote

// ANCHOR: kernel
extern "C" __global__ void __launch_bounds__(NUM_THREADS, 1)
    sgemm(int M, int N, int K, float alpha, const __grid_constant__ TensorMap tmA,
          const __grid_constant__ TensorMap tmB, float beta, const __grid_constant__ TensorMap tmC,
          const float* __restrict__ scale_a, const float* __restrict__ scale_b) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES], loaded[CONSUMERS][CBUF];
    const unsigned smem = (smem_addr(smem_raw) + 1023) & ~1023u;
    auto a_tile = [&](int s) { return smem + s * STAGE_BYTES; };
    auto b_tile = [&](int s) { return smem + s * STAGE_BYTES + A_BYTES; };
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const unsigned rank = CLUSTER > 1 ? cluster_rank() : 0;
    const int KB = CEIL_DIV(K, BK);
    const Jobs jobs(M, N, gridDim.x / CLUSTER, KB);
    const int cluster = blockIdx.x / CLUSTER;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(smem_addr(&full[s]), 1);
            mbar_init(smem_addr(&empty[s]), CONSUMERS * CLUSTER);
        }
        for (int c = 0; c < CONSUMERS; ++c)
            for (int b = 0; b < CBUF; ++b) mbar_init(smem_addr(&loaded[c][b]), 1);
        fence_barrier_init();
    }
    if (CLUSTER > 1) cluster_sync();
    else __syncthreads();

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (tid == 0) {
            int it = 0;
            Work w;
            for (int n = 0; jobs.wave(cluster, n, M, N, rank, w); ++n) {
                const int boxes = w.width / 64 / (BN % (64 * CLUSTER) ? 1 : CLUSTER);
                for (int t = w.k0, k = w.k_first() * BK; t < w.k1; ++t, ++it, k += w.k_step() * BK) {
                    const int s = it % STAGES;
                    if (it >= STAGES) mbar_wait(smem_addr(&empty[s]), (it / STAGES + 1) % 2);
                    const unsigned bar = smem_addr(&full[s]);
                    mbar_expect_bytes(bar, A_BYTES + w.width * ROW);
                    tma_load(a_tile(s), &tmA, bar, k, w.at.x);
                    // B is K-major: a box is 64 rows of N, each one 128-byte row of K. Each block
                    // of the cluster loads an equal run of boxes, or (a 192-wide tile's three) the
                    // boxes in turn.
                    if constexpr (BN % (64 * CLUSTER) == 0) {
                        for (int j = rank * boxes; j < (int)(rank + 1) * boxes; ++j)
                            tma_load(b_tile(s) + j * BOX_BYTES, &tmB, bar, k, w.at.y + 64 * j, MULTICAST);
                    } else {
                        for (int j = rank; j < boxes; j += CLUSTER)
                            tma_load(b_tile(s) + j * BOX_BYTES, &tmB, bar, k, w.at.y + 64 * j, MULTICAST);
                    }
                }
            }
            if (CLUSTER > 1)
                for (int i = it > STAGES ? it - STAGES : 0; i < it; ++i) mbar_wait(smem_addr(&empty[i % STAGES]), (i / STAGES) % 2);
        }
    } else {
        setmaxnreg_inc<232>();
        const int consumer = __shfl_sync(0xffffffff, wg - 1, 0);
        const unsigned stage = smem + STAGES * STAGE_BYTES + consumer * CBUF * CHUNK_BYTES;
        // A buffer freed in both blocks of the cluster (in turns by lanes 0 and 1 at once).
        auto release = [&](int s) {
            if (TURNS) mbar_arrive_cluster_if(smem_addr(&empty[s]), tid % CLUSTER, tid < CLUSTER);
            else if (tid == 0)
                for (int r = 0; r < CLUSTER; ++r) mbar_arrive_cluster(smem_addr(&empty[s]), r);
        };
        float d[BN / 2], t0[BN / 2], t1[BN / 2];  // t1: not in turns
        // Both operands K-major: A's and B's descriptors alike, a k-step 32 bytes further along the row.
        const unsigned long long a0 = descriptor(a_tile(0) + consumer * 64 * ROW, 16, 1024),
                                 b0 = descriptor(b_tile(0), 16, 1024);
        // One scale per tensor: applied once, with alpha, and read once.
        const float scale = P::block ? alpha : alpha * scale_a[0] * scale_b[0];
        // Where the block scales lie (quantize.rs): A's (kb, m) at kb * M4 + m, B's (nb, kb) at
        // nb * KB4 + kb; M4 and KB4 are M and KB rounded up to 4.
        const unsigned M4 = CEIL_DIV(M, 4) * 4, KB4 = CEIL_DIV(KB, 4) * 4;
        const int NB = CEIL_DIV(N, 128);
        unsigned it = 0;
        int chunks = 0;
        Work w;
        for (int n = 0; jobs.wave(cluster, n, M, N, rank, w); ++n) {
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
            // A K-tile: wait for its buffer (unless the consumer found it `ready`), start its
            // products into t; in TURNS, ordered at barrier 3 (see "turns" below).
            auto start = [&](float(&t)[BN / 2], bool ready = false) {
                const unsigned s = it % STAGES;
                if (TURNS && consumer == 0) named_sync_apart(3, 256);
                if (!ready) mbar_wait(smem_addr(&full[s]), (it / STAGES) % 2);
                const unsigned long long a = a0 + s * (STAGE_BYTES / 16), b = b0 + s * (STAGE_BYTES / 16);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < BK / P::mma_k; ++kk) wgmma_fp8<BN>(t, a + kk * 32 / 16, b + kk * 32 / 16, kk > 0);
                wgmma_commit();
                if (TURNS && consumer == 1) named_sync_apart(3, 256);
                ++it;
            };
            // The K-tile started `ago` K-tiles back (in u, with its scales su), its products done:
            // free its buffer and promote it. A 192-wide tile at an odd multiple of 192 starts
            // halfway into a block of B's scales (OFF: its column 64 is the next block's first).
            auto finish = [&](const float(&u)[BN / 2], const Scales& su, unsigned ago) {
                release((it - ago) % STAGES);
                if (BN % 128 && w.at.y % 128) promote<BN / 2, 64>(d, u, su);
                else promote(d, u, su);
            };
            // ANCHOR: ring
            // The block scales reach a consumer through a ring in shared memory that its own 128
            // threads fill by cp.async through L1, a chunk of eight K-tiles at a time, a chunk
            // ahead: copies that complete on no barrier of the tiles', so they delay no tile, as
            // every ring the producer filled did (notes/step14.md). A slot a K-tile: A's scales of
            // the consumer's 64 rows (256 bytes), then B's of the tile's blocks; the ring lies after
            // the staging of C (lib.rs leaves it room). Chunk c (the piece's K-tiles 8c to 8c + 7)
            // goes to the slots from 8c % 16: thread tid copies K-tile tid / 16's four rows of A's
            // from 4 (tid % 16), and the first NBLK x 8 threads one of B's each. Rows past M4
            // and K-tiles past the piece are zeros, whose sums are not stored. (Constants local:
            // at namespace scope they would be globals, which shift every FP8 kernel's code.)
            constexpr int SLOTS = 16, SLOT_BYTES = 512, CHUNK = SLOTS / 2;
            static_assert(64 * 4 + NBLK * 4 <= SLOT_BYTES, "a slot holds a K-tile's scales");
            static_assert(CHUNK * 64 / 4 == 128, "a chunk of A's scales is one 16-byte copy a thread");
            const int count = w.k1 - w.k0, step = w.k_step();
            const unsigned ring = smem + STAGES * STAGE_BYTES + CONSUMERS * CBUF * CHUNK_BYTES + consumer * SLOTS * SLOT_BYTES;
            const unsigned quad = w.at.x + consumer * 64 + tid % 16 * 4;
            auto copy_chunk = [&](int c) {
                if (c * CHUNK < count) {  // none past the piece: the next piece's copies would race them
                    const int j = c * CHUNK + tid / 16;
                    const unsigned kb = w.k_first() + min(j, count - 1) * step;
                    copy16(ring + (unsigned)j % SLOTS * SLOT_BYTES + tid % 16 * 16,
                           scale_a + (kb * M4 + min(quad, M4 - 4)), j < count && quad < M4);
                    if (tid < NBLK * CHUNK) {
                        const int jb = c * CHUNK + tid % CHUNK, q = tid / CHUNK;
                        const unsigned kbb = w.k_first() + min(jb, count - 1) * step;
                        copy4(ring + (unsigned)jb % SLOTS * SLOT_BYTES + 256 + q * 4,
                              scale_b + (min(w.at.y / 128 + q, NB - 1) * KB4 + kbb), jb < count);
                    }
                }
                cp_async_commit();  // a group a chunk, empty or not: the waits count groups
            };
            // A K-tile's scales, from its slot (`slot` bytes into the ring): a thread's rows r and
            // r + 8 of A's, B's of the tile's blocks: three shared loads a K-tile, four in turns.
            const unsigned rows = ring + (tid / 32 * 16 + tid % 32 / 4) * 4;
            auto fetch = [&](Scales& st, unsigned slot) {
                if constexpr (P::block) {
                    st.a[0] = ld_shared(rows + slot), st.a[1] = ld_shared(rows + slot + 32);
#pragma unroll
                    for (int q = 0; q < NBLK; ++q) st.b[q] = ld_shared(ring + slot + 256 + q * 4);
                }
            };
            // The slot of K-tile j - 1, for j odd (j's is the next: a pair does not wrap the ring).
            auto slot_before = [](int j) { return (unsigned)(j - 1) % SLOTS * SLOT_BYTES; };
            // Before K-tile j = 8c's scales are read, if it starts chunk c > 0: this thread's
            // copies of chunk c have arrived, and at the barrier every thread's have, and every
            // thread has read chunk c - 1, whose slots chunk c + 1 then takes. (The test at the
            // call, not in here: ptxas gave the loop five instructions more a pair that way.)
            auto chunk_starts = [](int j) { return j > 0 && (unsigned)j % CHUNK == 0; };
            auto next_chunk = [&](int j) {
                if constexpr (P::block) {
                    cp_async_wait<0>();
                    named_sync(1 + consumer, 128);
                    copy_chunk(j / CHUNK + 1);
                }
            };
            // ANCHOR_END: ring
            // The first two chunks of scales are copied before the first K-tile, the first waited
            // for after it. (All in one branch, K = 0 outside it: on a path where t0 might not have
            // started, ptxas would wait for every wgmma before reading t0 or t1.)
            if (count > 0) {
                Scales s0, s1;  // a K-tile's block scales (s1: the pair's second, not in turns)
                if constexpr (P::block) {
                    named_sync(1 + consumer, 128);  // every thread has read the last piece's
                    copy_chunk(0), copy_chunk(1);
                }
                start(t0);
                if constexpr (P::block) cp_async_wait<1>(), named_sync(1 + consumer, 128);
                if constexpr (TURNS) {
                    // ANCHOR: turns
                    // One set of fresh sums, the two consumers in turns. A K-tile's products run
                    // in t0 while the consumer tests whether the next buffer is full and reads the
                    // K-tile's scales; then it waits for them, promotes, and starts the next K-tile
                    // after the other consumer started its own (`start` meets at barrier 3:
                    // consumer 0 before its products, consumer 1 after). So each promotes while
                    // the other's products run, not its own, which make the FMAs slow
                    // (notes/step14.md, "The consumers in turns"), and the registers of a second
                    // set make the tile 192 wide.
                    int j = 0;
                    for (; j + 1 < count; ++j) {
                        const bool ready = mbar_test_wait(smem_addr(&full[it % STAGES]), (it / STAGES) % 2);
                        if (chunk_starts(j)) next_chunk(j);
                        fetch(s0, (unsigned)j % SLOTS * SLOT_BYTES);
                        wgmma_wait<0>();
                        finish(t0, s0, 1);
                        start(t0, ready);
                    }
                    if (chunk_starts(j)) next_chunk(j);
                    fetch(s0, (unsigned)j % SLOTS * SLOT_BYTES);
                    wgmma_wait<0>();
                    finish(t0, s0, 1);
                    // ANCHOR_END: turns
                } else {
                    // The K-tiles in pairs, t0 and t1 taking turns: one is always running while
                    // the other is promoted.
                    int i = 1;
                    for (; i + 1 < count; i += 2) {
                        start(t1);
                        if (chunk_starts(i - 1)) next_chunk(i - 1);
                        fetch(s0, slot_before(i)), fetch(s1, slot_before(i) + SLOT_BYTES);
                        wgmma_wait<1>();
                        finish(t0, s0, 2);
                        start(t0);
                        wgmma_wait<1>();
                        finish(t1, s1, 2);
                    }
                    if (chunk_starts(i - 1)) next_chunk(i - 1);
                    fetch(s0, slot_before(i)), fetch(s1, slot_before(i) + SLOT_BYTES);
                    if (i < count) {
                        start(t1);
                        wgmma_wait<1>();
                        finish(t0, s0, 2);
                        wgmma_wait<0>();
                        finish(t1, s1, 1);
                    } else {
                        wgmma_wait<0>();
                        finish(t0, s0, 1);
                    }
                }
            }
            const int slot = (cluster * CLUSTER + rank) * CONSUMERS + consumer, id = 1 + consumer;
            if (w.partial) {
                save_partial(slot, id, d);
                continue;
            }
            add_partials(slot, CLUSTER * CONSUMERS, w.peers, id, d);
            store_chunks<P, BN, CBUF>(&tmC, stage, loaded[consumer], id, chunks, w.at.x + consumer * 64, w.at.y, d, scale, beta);
        }
        if (tid == 0) tma_store_drain();
    }
}
// ANCHOR_END: kernel
