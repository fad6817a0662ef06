// Step 11's persistent schedule, which steps 12 and 13 keep: the order in which the clusters of a
// persistent grid take C's tiles, the last wave evened out (half tiles, stream-K), and
// stream-K's partial sums (included as "schedule.cuh").
#pragma once
#include "sgemm.cuh"
#include "hopper.cuh"

// ANCHOR: schedule
// A job is one cluster's tile of C: CM vertically adjacent TM x TN block tiles (the kernel's
// CLUSTER, BM and BN). Jobs are numbered down a group of G cluster rows (GROUP), one column of the
// group after another, then the next group: the jobs running at the same time (consecutive
// numbers) cover a squarish patch of C and share its rows of A and columns of B in L2, where row
// after row (G = 1) every patch would need all of B. The odd groups go right to left, so that the
// wave that starts a group shares columns of B with the wave that ended the last one.
template <int TM, int TN, int CM, int G>
__device__ __forceinline__ int2 job_origin(int job, int M, int N, unsigned rank) {
    const int cols = CEIL_DIV(N, TN), rows = CEIL_DIV(CEIL_DIV(M, TM), CM);
    const int group = job / (G * cols), first = group * G, height = min(G, rows - first);
    const int in_group = job % (G * cols);
    const int row = first + in_group % height, col = group % 2 ? cols - 1 - in_group / height : in_group / height;
    return make_int2((row * CM + (int)rank) * TM, col * TN);
}

// What a cluster computes in one wave: its block's tile of C at `at` (row, column), `width`
// columns wide, over K-tiles k0 to k1. A partial piece leaves its sums for another cluster
// (save_partial); a piece that ends a job adds the partials of the `peers` clusters before it
// (add_partials) and stores the tile. Odd waves load their K-tiles last to first (`backwards`):
// the jobs of consecutive waves share rows of A or columns of B, and a wave then starts on the
// K-tiles the wave before loaded last, which L2 still holds, where K-tile 0 is long evicted.
struct Work {
    int2 at;
    int width, k0, k1, peers;
    bool partial, backwards;
    // The K-tile to load first, and the step to the next (k1 - k0 of them). A schedule built
    // without the count of K-tiles (step 13's) gives no K range: such a kernel reverses its own
    // count.
    __device__ int k_first() const { return backwards ? k1 - 1 : k0; }
    __device__ int k_step() const { return backwards ? -1 : 1; }
};
// The clusters take jobs in waves: cluster c does jobs c, c + clusters, ... The last wave, if
// it would leave clusters idle (`tail` jobs for `clusters` clusters), is balanced one of two ways:
// - HALF: when at most half of the clusters would work, its jobs are cut in two halves of TN / 2
//   columns, so that the last wave takes half as long; `units` counts whole jobs and halves.
// - Otherwise, when `tiles` (K-tiles a job) is given and sharing the tail out would save each
//   cluster at least 20 K-tiles (the partial sums cost about 14 of them on an H100, measured),
//   the tail's K-tiles, laid end to end, are shared out evenly: cluster c takes
//   [begin(c), begin(c + 1)). A job is then finished from two or more pieces (stream-K), when
//   the grid's blocks x consumers fit the MAX_PARTIALS slots of partial sums (hopper.cuh).
template <int TM, int TN, int CM, int G, bool HALF>
struct Schedule {
    int jobs, whole, units, clusters, tiles, tail = 0;
    __device__ Schedule(int M, int N, int clusters_, int tiles_ = 0) : clusters(clusters_), tiles(tiles_) {
        jobs = CEIL_DIV(CEIL_DIV(M, TM), CM) * CEIL_DIV(N, TN);
        const int t = jobs % clusters;
        whole = HALF && 2 * t <= clusters ? jobs - t : jobs;
        if (whole == jobs && t > 0 && (clusters - t) * tiles >= 20 * clusters && t * tiles >= 2 * clusters &&
            (int)gridDim.x * (TM / 64) <= MAX_PARTIALS)
            tail = t, whole = jobs - t;
        units = tail ? whole : whole + 2 * (jobs - whole);
    }
    // Unit u, taken in the cluster's wave `wave`.
    __device__ Work unit(int u, int M, int N, unsigned rank, int wave) const {
        const bool back = wave % 2;
        if (u < whole) return {job_origin<TM, TN, CM, G>(u, M, N, rank), TN, 0, tiles, 0, false, back};
        const int2 at = job_origin<TM, TN, CM, G>(whole + (u - whole) / 2, M, N, rank);
        return {make_int2(at.x, at.y + (u - whole) % 2 * (TN / 2)), TN / 2, 0, tiles, 0, false, back};
    }
    __device__ int begin(int c) const { return (int)((long long)c * tail * tiles / clusters); }
    // Wave i of cluster c into w; false after its last. Its units first, then its share of the
    // tail, which spans at most two jobs: the end of one and the start of the next. It multiplies
    // the start first and leaves it as a partial; the cluster holding a job's last K-tile
    // multiplies that piece last, and adds the partials that the clusters before it made first.
    // So a cluster waits only for work done at the start of theirs (all are resident at once).
    __device__ bool wave(int c, int i, int M, int N, unsigned rank, Work& w) const {
        const int own = c < units ? (units - 1 - c) / clusters + 1 : 0;
        if (i < own) {
            w = unit(c + i * clusters, M, N, rank, i);
            return true;
        }
        if (tail == 0) return false;
        const int b = begin(c), e = begin(c + 1), next = (b / tiles + 1) * tiles;
        int k0, k1;
        if (i == own && e > next) k0 = next, k1 = e;
        else if (i == own + (e > next)) k0 = b, k1 = min(e, next);
        else return false;
        const int job = k0 / tiles;
        w = {job_origin<TM, TN, CM, G>(whole + job, M, N, rank), TN, k0 - job * tiles, k1 - job * tiles, 0, k1 < (job + 1) * tiles, i % 2 == 1};
        if (!w.partial)
            while (c - 1 - w.peers >= 0 && begin(c - w.peers) > job * tiles) ++w.peers;
        return true;
    }
};
// ANCHOR_END: schedule

// ANCHOR: partials
// The partial sums of the last wave, one slot per block and consumer warpgroup (MAX_PARTIALS of
// them; the slot's number is the cluster's times CLUSTER x consumers, plus the block's and the
// warpgroup's), kept thread-major so that each store is 512 contiguous bytes a warp, and a flag per
// slot. NREG: the accumulators a thread holds. The flags start at 0 (a module's globals are zeroed
// at load).
template <int NREG>
__device__ float4 partial_sums[MAX_PARTIALS * 128 * NREG / 4];
template <int NREG>
__device__ unsigned partial_ready[MAX_PARTIALS];
// The consumer's 128 threads (named barrier `id`) leave d in `slot`, then one thread raises its
// flag, after a GPU-wide fence that orders every thread's stores before it. (A schedule with more
// slots than these brings its own `sums` and `ready`.)
template <int NREG>
__device__ __forceinline__ void save_partial(int slot, int id, const float (&d)[NREG], float4* sums = partial_sums<NREG>,
                                             unsigned* ready = partial_ready<NREG>) {
    const int tid = threadIdx.x % 128;
    float4* p = sums + (size_t)slot * 128 * (NREG / 4);
#pragma unroll
    for (int q = 0; q < NREG / 4; ++q)
        asm volatile("st.global.cg.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(p + q * 128 + tid), "f"(d[4 * q]),
                     "f"(d[4 * q + 1]), "f"(d[4 * q + 2]), "f"(d[4 * q + 3])
                     : "memory");
    named_sync(id, 128);
    if (tid == 0) {
        __threadfence();
        asm volatile("st.release.gpu.global.u32 [%0], 1;\n" ::"l"(ready + slot) : "memory");
    }
}
// Adds to d the partials of slots slot - gap, slot - 2 gap, ... (`peers` of them): one thread
// waits for each flag and lowers it for the next launch, then all 128 read the sums from L2.
template <int NREG>
__device__ __forceinline__ void add_partials(int slot, int gap, int peers, int id, float (&d)[NREG],
                                             const float4* sums = partial_sums<NREG>, unsigned* ready = partial_ready<NREG>) {
    const int tid = threadIdx.x % 128;
    for (int j = 1; j <= peers; ++j) {
        const int from = slot - j * gap;
        if (tid == 0) {
            unsigned raised;
            do asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(raised) : "l"(ready + from) : "memory");
            while (!raised);
            ready[from] = 0;
        }
        named_sync(id, 128);
        const float4* p = sums + (size_t)from * 128 * (NREG / 4);
#pragma unroll
        for (int q = 0; q < NREG / 4; ++q) {
            float4 v;
            asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                         : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                         : "l"(p + q * 128 + tid)
                         : "memory");
            d[4 * q] += v.x, d[4 * q + 1] += v.y, d[4 * q + 2] += v.z, d[4 * q + 3] += v.w;
        }
    }
}
// ANCHOR_END: partials

// A compile-time width for a generic lambda: the K loop is written once and compiled for BN and
// BN / 2 (a choice made inside the loop would make the compiler serialize the wgmma).
template <int W>
struct Width {
    static constexpr int value = W;
};
