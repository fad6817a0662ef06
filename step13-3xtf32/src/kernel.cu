// Step 13: FP32 accuracy on Hopper's tensor cores. wgmma multiplies 32-bit operands only as
// TF32 (10 bits of mantissa) and reads them K-major only. Step 12's kernel, changed where the
// operands differ:
// - B: the host first writes B^T (K-major), rounded to TF32; for 3xTF32 also the small parts
//   (prepare_b below), as a second plane that the TMA loads beside the first.
// - A comes K-major as it is, but goes through registers: ldmatrix reads this warp's rows from
//   the TMA-swizzled tile and the kernel rounds them to TF32 (or splits them, 3xTF32), so that A
//   needs no copy. wgmma takes A from registers, B from shared memory.
// - 3xTF32 computes small*big + big*small + big*big per K step (each input x = big + small,
//   both TF32): the product of FP32 inputs to within 2^-19, at a third of TF32's rate.
// C leaves through shared memory and the TMA as in step 12 (FP32).
#include "sgemm.cuh"
#include "hopper.cuh"
#include "tensor.cuh"  // TF32 rounding and splitting

// ANCHOR: config
typedef Prec<PREC> P;
static_assert(P::tf32, "step 13 multiplies TF32 (or 3xTF32)");
constexpr int CONSUMERS = BM / 64;
#define NUM_THREADS (128 * (CONSUMERS + 1))
constexpr int ROW = 128;                    // bytes of a tile row in shared memory
constexpr int A_BYTES = BM * ROW;           // A tile: BM rows of BK floats
constexpr int B_PLANES = P::split ? 2 : 1;  // B^T rounded; for 3xTF32 also its small parts
constexpr int B_BYTES = BN * ROW * B_PLANES;
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int BOX_BYTES = 64 * ROW;  // a TMA box of B^T: 64 rows (columns of C) of BK
constexpr int KSTEPS = BK / P::mma_k;  // wgmma per K-tile
static_assert(BK * sizeof(float) == ROW, "a tile row is one 128-byte swizzle row");
static_assert(BM % 64 == 0 && (BN == 128 || BN == 256) && BN % (64 * CLUSTER) == 0, "tiles");
static_assert(A_BYTES % 1024 == 0 && B_BYTES % 1024 == 0, "tiles start on the swizzle's 1024-byte period");
constexpr unsigned short MULTICAST = CLUSTER > 1 ? (1 << CLUSTER) - 1 : 0;
// Whole jobs only: TF32's K loop holds two sets of A fragments in registers, and a second copy
// of it for half-width tiles leaves too few (ptxas serializes the wgmma).
typedef Schedule<BM, BN, CLUSTER, GROUP, false> Jobs;
// ANCHOR_END: config

// ANCHOR: prepare_b
// Launched by the host before sgemm: B (K x N, row-major) -> B^T (N x K, row pitch ldt), rounded
// to TF32 (plane 0), and for 3xTF32 the small parts (plane 1, at N * ldt floats). A 32 x 32 tile
// goes through shared memory so that reads and writes are both coalesced, 16 bytes a thread: a
// thread reads four neighbours of a row of B and writes four of a row of B^T (ldt is a multiple of
// four, and past K the tile holds zeros).
extern "C" __global__ void __launch_bounds__(256) prepare_b(int K, int N, const float* B, float* Bt, int ldt) {
    __shared__ float tile[32][33];
    const int k0 = blockIdx.y * 32, n0 = blockIdx.x * 32, r = threadIdx.x / 8, c = 4 * (threadIdx.x % 8);
    {
        const int k = k0 + r, n = n0 + c;
        float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        if (k < K && n + 3 < N && N % 4 == 0 && (size_t)B % 16 == 0) {
            const float4 q = *reinterpret_cast<const float4*>(B + (size_t)k * N + n);
            v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
        } else if (k < K) {
#pragma unroll
            for (int i = 0; i < 4; ++i)
                if (n + i < N) v[i] = B[(size_t)k * N + n + i];
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) tile[r][c + i] = v[i];
    }
    __syncthreads();
    const int n = n0 + r, k = k0 + c;
    if (n >= N || k >= K) return;
    unsigned big[4], small[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        if constexpr (!P::split) big[i] = tf32(tile[c + i][r]);
        else split_tf32(tile[c + i][r], big[i], small[i]);
    }
    *reinterpret_cast<uint4*>(Bt + (size_t)n * ldt + k) = make_uint4(big[0], big[1], big[2], big[3]);
    if constexpr (P::split)
        *reinterpret_cast<uint4*>(Bt + (size_t)(N + n) * ldt + k) = make_uint4(small[0], small[1], small[2], small[3]);
}
// ANCHOR_END: prepare_b

// ANCHOR: load_a
// This warp's 16 rows of a 64-row A tile, 8 k per step, as mma.m16n8k8 holds them, rounded to
// TF32 (big) or split (big + small). ldmatrix undoes the TMA's swizzle: 16-byte chunk c of row r
// is at chunk c ^ (r % 8).
__device__ __forceinline__ void load_a(unsigned a, unsigned (&big)[KSTEPS][4], unsigned (&small)[KSTEPS][4]) {
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
#pragma unroll
    for (int kk = 0; kk < KSTEPS; ++kk) {
        const int r = warp * 16 + lane % 16, chunk = 2 * kk + lane / 16;
        unsigned x[4];
        ldmatrix_x4(x, a + r * ROW + ((chunk ^ (r % 8)) << 4));
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            if constexpr (P::split) split_tf32(__uint_as_float(x[i]), big[kk][i], small[kk][i]);
            else big[kk][i] = tf32(__uint_as_float(x[i]));
        }
    }
}
// The compiler does not know that a wgmma reads its register operands after the instruction has
// issued: `keep` tells it a set is in use until the wait that proves its wgmma done.
__device__ __forceinline__ void keep(unsigned (&ra)[KSTEPS][4]) {
#pragma unroll
    for (int kk = 0; kk < KSTEPS; ++kk)
#pragma unroll
        for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(ra[kk][i])::"memory");
}
// ANCHOR_END: load_a

// ANCHOR: kernel
extern "C" __global__ void __launch_bounds__(NUM_THREADS, 1)
    sgemm(int M, int N, int K, float alpha, const __grid_constant__ TensorMap tmA,
          const __grid_constant__ TensorMap tmB, float beta, const __grid_constant__ TensorMap tmC) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES], loaded[CONSUMERS][2];
    const unsigned smem = (smem_addr(smem_raw) + 1023) & ~1023u;
    auto a_tile = [&](int s) { return smem + s * STAGE_BYTES; };
    auto b_tile = [&](int s) { return smem + s * STAGE_BYTES + A_BYTES; };
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128, tiles = CEIL_DIV(K, BK);
    const unsigned rank = CLUSTER > 1 ? cluster_rank() : 0;
    const Jobs jobs(M, N, gridDim.x / CLUSTER);
    const int first = blockIdx.x / CLUSTER, stride = gridDim.x / CLUSTER;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(smem_addr(&full[s]), 1);
            mbar_init(smem_addr(&empty[s]), CONSUMERS * CLUSTER);
        }
        for (int c = 0; c < CONSUMERS; ++c)
            for (int b = 0; b < 2; ++b) mbar_init(smem_addr(&loaded[c][b]), 1);
        fence_barrier_init();
    }
    if (CLUSTER > 1) cluster_sync();
    else __syncthreads();

    if (wg == 0) {
        // ANCHOR: producer
        setmaxnreg_dec<40>();
        if (tid == 0) {
            int it = 0;
            for (int u = first; u < jobs.units; u += stride) {
                const Work w = jobs.unit(u, M, N, rank);
                const int boxes = w.width / 64 / CLUSTER;
                for (int t = 0; t < tiles; ++t, ++it) {
                    const int s = it % STAGES;
                    if (it >= STAGES) mbar_wait(smem_addr(&empty[s]), (it / STAGES + 1) % 2);
                    const unsigned bar = smem_addr(&full[s]);
                    mbar_expect_bytes(bar, A_BYTES + w.width * ROW * B_PLANES);
                    tma_load(a_tile(s), &tmA, bar, t * BK, w.at.x);
                    // B^T is K-major: a box is 64 rows (columns of C) of BK, per plane.
                    for (int j = rank * boxes; j < (int)(rank + 1) * boxes; ++j)
                        for (int plane = 0; plane < B_PLANES; ++plane)
                            tma_load(b_tile(s) + plane * BN * ROW + j * BOX_BYTES, &tmB, bar, t * BK, w.at.y + 64 * j,
                                     plane, MULTICAST);
                }
            }
        }
        // ANCHOR_END: producer
    } else {
        // ANCHOR: consumer
        setmaxnreg_inc<232>();
        const int consumer = wg - 1;
        const unsigned stage = smem + STAGES * STAGE_BYTES + consumer * 2 * CHUNK_BYTES;
        auto release = [&](int s) {
            if (tid == 0)
                for (int r = 0; r < CLUSTER; ++r) mbar_arrive_cluster(smem_addr(&empty[s]), r);
        };
        float d[BN / 2];
        int it = 0, chunks = 0;
        for (int u = first; u < jobs.units; u += stride) {
            const Work w = jobs.unit(u, M, N, rank);
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
            if constexpr (!P::split) {
                // TF32: tile t's A fragments live in register set t % 2 (the loop is unrolled by
                // two), so tile t+1's load while tile t's wgmma still read theirs.
                unsigned ra0[KSTEPS][4], ra1[KSTEPS][4];
                auto tile = [&](int t, unsigned (&ra)[KSTEPS][4], unsigned (&previous)[KSTEPS][4]) {
                    const int s = it % STAGES;
                    mbar_wait(smem_addr(&full[s]), (it / STAGES) % 2);
                    const unsigned b = b_tile(s);
                    load_a(a_tile(s) + consumer * 64 * ROW, ra, ra);
                    wgmma_fence();
#pragma unroll
                    for (int kk = 0; kk < KSTEPS; ++kk) wgmma_tf32<BN>(d, ra[kk], descriptor(b + kk * 32, 16, 1024));
                    wgmma_commit();
                    wgmma_wait<1>();  // tile t-1 done: its buffer and its registers are free
                    keep(previous);
                    if (t > 0) release((it - 1) % STAGES);
                    ++it;
                };
                int t = 0;
                for (; t + 1 < tiles; t += 2) tile(t, ra0, ra1), tile(t + 1, ra1, ra0);
                if (t < tiles) tile(t, ra0, ra1);
                wgmma_wait<0>();
                keep(ra0), keep(ra1);
                if (tiles > 0) release((it - 1) % STAGES);
            } else {
                // 3xTF32: a tile's three products go to a fresh accumulator dt, then added to d in
                // FP32, rounding to nearest. The tensor cores' additions truncate: summed over all
                // of K in one accumulator their bias would grow with K (10x SGEMM's error at K =
                // 4096); summed per tile it stays at SGEMM's level. Tile t's A parts live in
                // register set t % 2: tile t+1's are loaded and split while tile t's products run.
                unsigned ra0[KSTEPS][4], sa0[KSTEPS][4], ra1[KSTEPS][4], sa1[KSTEPS][4];
                float dt[BN / 2];
#pragma unroll
                for (int i = 0; i < BN / 2; ++i) dt[i] = 0.0f;
                auto load = [&](int s, unsigned (&ra)[KSTEPS][4], unsigned (&sa)[KSTEPS][4]) {
                    mbar_wait(smem_addr(&full[s]), (it / STAGES) % 2);
                    load_a(a_tile(s) + consumer * 64 * ROW, ra, sa);
                };
                // Tile t from set (ra, sa); the next tile, if any, into set (rn, sn).
                auto tile = [&](int t, unsigned (&ra)[KSTEPS][4], unsigned (&sa)[KSTEPS][4],
                                unsigned (&rn)[KSTEPS][4], unsigned (&sn)[KSTEPS][4]) {
                    const int s = it % STAGES;
                    const unsigned b = b_tile(s);
                    wgmma_fence();
#pragma unroll
                    for (int kk = 0; kk < KSTEPS; ++kk) {
                        const unsigned long long big = descriptor(b + kk * 32, 16, 1024);
                        const unsigned long long small = descriptor(b + BN * ROW + kk * 32, 16, 1024);
                        wgmma_tf32<BN>(dt, sa[kk], big, kk > 0);  // the small products first; kk = 0 starts dt afresh
                        wgmma_tf32<BN>(dt, ra[kk], small);
                        wgmma_tf32<BN>(dt, ra[kk], big);
                    }
                    wgmma_commit();
                    ++it;
                    if (t + 1 < tiles) load(it % STAGES, rn, sn);
                    wgmma_wait<0>();  // dt, this set of registers and the buffer are free again
                    keep(ra), keep(sa);
                    release(s);
#pragma unroll
                    for (int i = 0; i < BN / 2; ++i) d[i] += dt[i];
                };
                if (tiles > 0) load(it % STAGES, ra0, sa0);
                int t = 0;
                for (; t + 1 < tiles; t += 2) tile(t, ra0, sa0, ra1, sa1), tile(t + 1, ra1, sa1, ra0, sa0);
                if (t < tiles) tile(t, ra0, sa0, ra1, sa1);
            }
            // ANCHOR_END: consumer
            store_chunks<P, BN>(&tmC, stage, loaded[consumer], 1 + consumer, chunks, w.at.x + consumer * 64, w.at.y,
                                d, alpha, beta);
        }
        if (tid == 0) tma_store_drain();
    }
    if (CLUSTER > 1) cluster_sync();
}
// ANCHOR_END: kernel
