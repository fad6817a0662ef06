// Step 13: FP32 inputs on Hopper's tensor cores. wgmma multiplies 32-bit operands only as TF32
// (10 bits of mantissa), and reads its shared-memory operand only K-major: A is K-major, B
// (row-major, N-major) is not. So this rung computes the transposed product, C^T = B^T A^T, on
// step 12's machinery:
// - A, K-major as it lies, is wgmma's shared-memory operand. TF32: the TMA rounds it to TF32 as it
//   loads it (a tensor map of type TFLOAT32 rounds to nearest, ties to even, as cuBLAS does).
//   3xTF32: a pass (prepare_a) first splits A into a big and a small TF32 part, two planes that
//   the TMA loads side by side.
// - B^T is the register operand: each consumer reads its 64 columns of C from B's tile as the TMA
//   loaded it (TF32: rounded by the TMA too; 3xTF32: split in registers).
// - 3xTF32 computes small*big + big*small + big*big per K step (each input x = big + small, both
//   TF32): the product of FP32 inputs to within 2^-19, at a third of TF32's rate. The tensor
//   cores' additions truncate: summed over all of K in one accumulator their bias would grow with
//   K (10x SGEMM's error at K = 4096), so each K-tile's products are summed in a fresh accumulator
//   and added to C's in FP32, rounding to nearest: the error stays at SGEMM's level.
// Tiles, schedule and barriers are step 12's for the transposed problem (M and N swapped): BM is
// the columns of C a block computes, 64 per consumer; BN its rows (one wgmma's N). The epilogue
// writes the transposed accumulators into the TMA's layout of C, and C leaves by TMA store.
#include "sgemm.cuh"
#include "hopper.cuh"
#include "tensor.cuh"    // TF32 splitting
#include "schedule.cuh"  // step 11: the persistent schedule
#include "epilogue.cuh"  // step 12: C's chunks, staged in shared memory for the TMA

// ANCHOR: config
typedef Prec<PREC> P;
static_assert(P::tf32, "step 13 multiplies TF32 (or 3xTF32)");
constexpr int CONSUMERS = BM / 64;
#define NUM_THREADS (128 * (CONSUMERS + 1))
constexpr int ROW = 128;                    // bytes of a tile row in shared memory: 32 floats
constexpr int B_BOX = BK * ROW;             // a TMA box of B: 32 columns of C by BK
constexpr int B_BYTES = BM / 32 * B_BOX;    // the B tile: BK rows of BM floats, a box per 32
constexpr int A_PLANES = P::split ? 2 : 1;  // A rounded; for 3xTF32 its big and small parts
constexpr int A_BYTES = BN * ROW;           // one plane of the A tile: BN rows of BK floats
constexpr int A_BOX = 64 * ROW;             // a TMA box of A: 64 rows by BK
constexpr int STAGE_BYTES = B_BYTES + A_BYTES * A_PLANES;
constexpr int KSTEPS = BK / P::mma_k;  // wgmma per K-tile
static_assert(BK * sizeof(float) == ROW, "a tile row is one 128-byte swizzle row");
static_assert(BM % 64 == 0 && (BN == 128 || BN == 256) && BN % (64 * CLUSTER) == 0, "tiles");
static_assert(B_BYTES % 1024 == 0 && A_BYTES % 1024 == 0, "tiles start on the swizzle's 1024-byte period");
constexpr unsigned short MULTICAST = CLUSTER > 1 ? (1 << CLUSTER) - 1 : 0;
// The jobs are C^T's tiles, over (N, M): a cluster's blocks lie side by side along N and share A's
// rows. Whole jobs only: the K loop holds two sets of B^T fragments in registers, and a second
// copy of it for half-width tiles leaves too few (ptxas serializes the wgmma).
typedef Schedule<BM, BN, CLUSTER, GROUP, false> Jobs;
// ANCHOR_END: config

// ANCHOR: prepare_a
// 3xTF32 only, launched by the host before sgemm: A (M x K, row-major) split into its big parts
// (plane 0) and small parts (plane 1, at M * ldt floats), rows of pitch ldt (a multiple of four;
// past K, zeros). A thread splits four neighbours of a row: 16-byte loads and stores.
extern "C" __global__ void __launch_bounds__(256) prepare_a(int M, int K, const float* A, float* As, int ldt) {
    const int vecs = ldt / 4;
    const long long i = blockIdx.x * 256LL + threadIdx.x;
    if (i >= (long long)M * vecs) return;
    const int row = i / vecs, k = 4 * (int)(i % vecs);
    const float* a = A + (size_t)row * K + k;
    float v[4];
    if (K % 4 == 0 && (size_t)A % 16 == 0) {
        const float4 q = *reinterpret_cast<const float4*>(a);
        v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
    } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) v[e] = k + e < K ? a[e] : 0.0f;
    }
    unsigned big[4], small[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) split_tf32(v[e], big[e], small[e]);
    *reinterpret_cast<uint4*>(As + (size_t)row * ldt + k) = make_uint4(big[0], big[1], big[2], big[3]);
    *reinterpret_cast<uint4*>(As + ((size_t)M + row) * ldt + k) = make_uint4(small[0], small[1], small[2], small[3]);
}
// ANCHOR_END: prepare_a

// ANCHOR: load_b
// Row r of a warp's 16 accumulator rows (g = r % 8, h = r / 8) stands for column col_of(w, g, h)
// of the consumer's 64 columns of C. Any order works if the epilogue uses it too. In this one rows
// g and g + 8 are neighbouring columns, so that one 8-byte load fetches both; and the 16 lanes of
// a half-warp (which shared memory serves together for 8-byte loads) read 16 different 8-byte
// slots of the 32 banks (16-byte unit u of row k lies at u ^ k % 8): t picks the unit's two low
// bits through k, g % 4 its high bit and the slot within it.
__device__ __forceinline__ int col_of(int warp, int g, int h) {
    return 32 * (warp / 2) + 16 * (g / 2 % 2) + 8 * (warp % 2) + 4 * (g / 4) + 2 * (g % 2) + h;
}
// This warp's 16 columns of B^T, 8 k per step, as mma.m16n8k8 holds A: rows g and g + 8 (registers
// 2j and 2j + 1), k = t + 4j (g = lane / 4, t = lane % 4). TF32: as the TMA rounded them (big);
// 3xTF32: split (big + small).
__device__ __forceinline__ void load_b(unsigned b, unsigned (&big)[KSTEPS][4], unsigned (&small)[KSTEPS][4]) {
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int c = col_of(warp, g, 0);
#pragma unroll
    for (int kk = 0; kk < KSTEPS; ++kk)
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const int k = 8 * kk + t + 4 * j;
            const unsigned at = b + c / 32 * B_BOX + k * ROW + ((c % 32 / 4) ^ (k % 8)) * 16 + c % 4 * 4;
            float x[2];
            asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(x[0]), "=f"(x[1]) : "r"(at));
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                if constexpr (P::split) split_tf32(x[h], big[kk][2 * j + h], small[kk][2 * j + h]);
                else big[kk][2 * j + h] = __float_as_uint(x[h]);
            }
        }
}
// The compiler does not know that a wgmma reads its register operands after the instruction has
// issued: `keep` tells it a set is in use until the wait that proves its wgmma done.
__device__ __forceinline__ void keep(unsigned (&r)[KSTEPS][4]) {
#pragma unroll
    for (int kk = 0; kk < KSTEPS; ++kk)
#pragma unroll
        for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(r[kk][i])::"memory");
}
// ANCHOR_END: load_b

// ANCHOR: store
// One consumer's 64 x BN tile of C^T to C at (row, col) through its two staging buffers: for each
// 64 rows of C, warps 0-1 fill the box of the consumer's first 32 columns, warps 2-3 that of the
// last 32, and thread 0 stores both. `rounds` counts the consumer's rounds: the parity of its
// `loaded` barrier (the TMA's loads of old C when beta reads it). beta picks one of two copies of
// the loop, as in step 12.
template <bool READ_C, int NREG>
__device__ __forceinline__ void store_transposed_as(const TensorMap* tmC, unsigned stage, unsigned long long* loaded,
                                                    int id, int& rounds, int row, int col, const float (&d)[NREG],
                                                    float alpha, float beta) {
    const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    const unsigned buf = stage + warp / 2 * CHUNK_BYTES, bar = smem_addr(loaded);
#pragma unroll
    for (int q = 0; q < BN / 64; ++q, ++rounds) {
        // The stores of the last round must be done reading both buffers.
        if (tid == 0) tma_store_wait<0>();
        named_sync(id, 128);
        if constexpr (READ_C) {
            if (tid == 0) {
                mbar_expect_bytes(bar, 2 * CHUNK_BYTES);
                for (int h = 0; h < 2; ++h) tma_load(stage + h * CHUNK_BYTES, tmC, bar, col + 32 * h, row + 64 * q);
            }
            mbar_wait(bar, rounds % 2);
        }
#pragma unroll
        for (int jj = 0; jj < 8; ++jj)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                // d[4j + e]: row g + 8 (e / 2) of C^T (column c of C), its column 8j + 2t + e % 2
                // (row r of C).
                const int r = 8 * jj + 2 * t + e % 2, c = col_of(warp, g, e / 2) % 32;
                const unsigned at = buf + r * ROW + ((c / 4) ^ (r % 8)) * 16 + c % 4 * 4;
                float v = alpha * d[4 * (8 * q + jj) + e];
                if constexpr (READ_C) {
                    float old;
                    asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(old) : "r"(at));
                    v += beta * old;
                }
                asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(at), "f"(v));
            }
        // Every thread's writes, ordered before the TMA reads them; then one thread stores.
        fence_async_shared();
        named_sync(id, 128);
        if (tid == 0) {
            for (int h = 0; h < 2; ++h) tma_store(tmC, stage + h * CHUNK_BYTES, col + 32 * h, row + 64 * q);
            tma_store_commit();
        }
    }
}
template <int NREG>
__device__ __forceinline__ void store_transposed(const TensorMap* tmC, unsigned stage, unsigned long long* loaded,
                                                 int id, int& rounds, int row, int col, const float (&d)[NREG],
                                                 float alpha, float beta) {
    if (beta != 0.0f) store_transposed_as<true>(tmC, stage, loaded, id, rounds, row, col, d, alpha, beta);
    else store_transposed_as<false>(tmC, stage, loaded, id, rounds, row, col, d, alpha, beta);
}
// ANCHOR_END: store

// ANCHOR: kernel
extern "C" __global__ void __launch_bounds__(NUM_THREADS, 1)
    sgemm(int M, int N, int K, float alpha, const __grid_constant__ TensorMap tmA,
          const __grid_constant__ TensorMap tmB, float beta, const __grid_constant__ TensorMap tmC) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES], loaded[CONSUMERS];
    const unsigned smem = (smem_addr(smem_raw) + 1023) & ~1023u;
    auto b_tile = [&](int s) { return smem + s * STAGE_BYTES; };
    auto a_tile = [&](int s) { return smem + s * STAGE_BYTES + B_BYTES; };
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128, tiles = CEIL_DIV(K, BK);
    const unsigned rank = CLUSTER > 1 ? cluster_rank() : 0;
    const Jobs jobs(N, M, gridDim.x / CLUSTER);
    const int first = blockIdx.x / CLUSTER, stride = gridDim.x / CLUSTER;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(smem_addr(&full[s]), 1);
            mbar_init(smem_addr(&empty[s]), CONSUMERS * CLUSTER);
        }
        for (int c = 0; c < CONSUMERS; ++c) mbar_init(smem_addr(&loaded[c]), 1);
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
                const Work w = jobs.unit(u, N, M, rank, (u - first) / stride);  // at.x: its first column of C, at.y: first row
                const int boxes = BN / 64 / CLUSTER;
                for (int i = 0; i < tiles; ++i, ++it) {
                    const int s = it % STAGES, t = w.backwards ? tiles - 1 - i : i;  // this schedule keeps no K range
                    if (it >= STAGES) mbar_wait(smem_addr(&empty[s]), (it / STAGES + 1) % 2);
                    const unsigned bar = smem_addr(&full[s]);
                    mbar_expect_bytes(bar, STAGE_BYTES);
                    // B as it lies, 32 columns a box; this block's share of A's rows (of each
                    // plane), for the whole cluster.
                    for (int j = 0; j < BM / 32; ++j) tma_load(b_tile(s) + j * B_BOX, &tmB, bar, w.at.x + 32 * j, t * BK);
                    for (int j = rank * boxes; j < (int)(rank + 1) * boxes; ++j) {
                        if constexpr (P::split)
                            for (int plane = 0; plane < A_PLANES; ++plane)
                                tma_load(a_tile(s) + plane * A_BYTES + j * A_BOX, &tmA, bar, t * BK, w.at.y + 64 * j,
                                         plane, MULTICAST);
                        else tma_load(a_tile(s) + j * A_BOX, &tmA, bar, t * BK, w.at.y + 64 * j, MULTICAST);
                    }
                }
            }
            // As in step 12: no block leaves while a peer may still signal its barriers.
            if (CLUSTER > 1)
                for (int i = it > STAGES ? it - STAGES : 0; i < it; ++i) mbar_wait(smem_addr(&empty[i % STAGES]), (i / STAGES) % 2);
        }
        // ANCHOR_END: producer
    } else {
        // ANCHOR: consumer
        setmaxnreg_inc<232>();
        // Issue slots are what 3xTF32's loop runs short of: the consumer's number goes through a
        // shuffle, so that the compiler knows every lane has the same and keeps what depends on
        // it in uniform registers, and A's descriptors are buffer 0's plus constant offsets (in
        // the descriptor's 16-byte units), not rebuilt from addresses for every wgmma.
        const int consumer = __shfl_sync(0xffffffff, wg - 1, 0);
        const unsigned stage = smem + STAGES * STAGE_BYTES + consumer * 2 * CHUNK_BYTES;
        const unsigned long long a0 = descriptor(a_tile(0), 16, 1024);
        auto release = [&](int s) {
            if (tid == 0)
                for (int r = 0; r < CLUSTER; ++r) mbar_arrive_cluster(smem_addr(&empty[s]), r);
        };
        float d[BN / 2];
        unsigned it = 0;  // buffers used so far, as the producer counts them
        int rounds = 0;
        for (int u = first; u < jobs.units; u += stride) {
            const Work w = jobs.unit(u, N, M, rank, (u - first) / stride);
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
            if constexpr (!P::split) {
                // TF32: tile t's B^T fragments live in register set t % 2 (the loop is unrolled by
                // two), so tile t+1's load while tile t's wgmma still read theirs.
                unsigned rb0[KSTEPS][4], rb1[KSTEPS][4];
                auto tile = [&](int t, unsigned (&rb)[KSTEPS][4], unsigned (&previous)[KSTEPS][4]) {
                    const unsigned s = it % STAGES;
                    mbar_wait(smem_addr(&full[s]), (it / STAGES) % 2);
                    const unsigned long long a = a0 + s * STAGE_BYTES / 16;
                    load_b(b_tile(s) + consumer * 2 * B_BOX, rb, rb);
                    wgmma_fence();
#pragma unroll
                    for (int kk = 0; kk < KSTEPS; ++kk) wgmma_tf32<BN>(d, rb[kk], a + kk * 32 / 16);
                    wgmma_commit();
                    wgmma_wait<1>();  // tile t-1 done: its buffer and its registers are free
                    keep(previous);
                    if (t > 0) release((it - 1) % STAGES);
                    ++it;
                };
                int t = 0;
                for (; t + 1 < tiles; t += 2) tile(t, rb0, rb1), tile(t + 1, rb1, rb0);
                if (t < tiles) tile(t, rb0, rb1);
                wgmma_wait<0>();
                keep(rb0), keep(rb1);
                if (tiles > 0) release((it - 1) % STAGES);
            } else {
                // 3xTF32: a tile's three products go to a fresh accumulator dt, then added to d in
                // FP32 (above). Tile t's B^T parts live in register set t % 2: tile t+1's are
                // loaded and split while tile t's products run.
                unsigned rb0[KSTEPS][4], sb0[KSTEPS][4], rb1[KSTEPS][4], sb1[KSTEPS][4];
                float dt[BN / 2];
#pragma unroll
                for (int i = 0; i < BN / 2; ++i) dt[i] = 0.0f;
                auto load = [&](int s, unsigned (&rb)[KSTEPS][4], unsigned (&sb)[KSTEPS][4]) {
                    mbar_wait(smem_addr(&full[s]), (it / STAGES) % 2);
                    load_b(b_tile(s) + consumer * 2 * B_BOX, rb, sb);
                };
                // Tile t from set (rb, sb); the next tile, if any, into set (rn, sn).
                auto tile = [&](int t, unsigned (&rb)[KSTEPS][4], unsigned (&sb)[KSTEPS][4],
                                unsigned (&rn)[KSTEPS][4], unsigned (&sn)[KSTEPS][4]) {
                    const unsigned s = it % STAGES;
                    const unsigned long long a = a0 + s * STAGE_BYTES / 16;
                    wgmma_fence();
#pragma unroll
                    for (int kk = 0; kk < KSTEPS; ++kk) {
                        const unsigned long long big = a + kk * 32 / 16, small = a + (A_BYTES + kk * 32) / 16;
                        wgmma_tf32<BN>(dt, sb[kk], big, kk > 0);  // the small products first; kk = 0 starts dt afresh
                        wgmma_tf32<BN>(dt, rb[kk], small);
                        wgmma_tf32<BN>(dt, rb[kk], big);
                    }
                    wgmma_commit();
                    ++it;
                    if (t + 1 < tiles) load(it % STAGES, rn, sn);
                    wgmma_wait<0>();  // dt, this set of registers and the buffer are free again
                    keep(rb), keep(sb);
                    release(s);
#pragma unroll
                    for (int i = 0; i < BN / 2; ++i) d[i] += dt[i];
                };
                if (tiles > 0) load(it % STAGES, rb0, sb0);
                int t = 0;
                for (; t + 1 < tiles; t += 2) tile(t, rb0, sb0, rb1, sb1), tile(t + 1, rb1, sb1, rb0, sb0);
                if (t < tiles) tile(t, rb0, sb0, rb1, sb1);
            }
            // ANCHOR_END: consumer
            store_transposed(&tmC, stage, &loaded[consumer], 1 + consumer, rounds, w.at.y, w.at.x + consumer * 64, d,
                             alpha, beta);
        }
        if (tid == 0) tma_store_drain();
    }
    // Not a wait for anything: with the warps reconverged before the end, ptxas keeps all of
    // 3xTF32's split ahead of the wgmma wait, 2% faster (TF32's loop is faster without it;
    // notes/step13.md, "The producer's tail landed").
    if constexpr (P::split) __syncwarp();
}
// ANCHOR_END: kernel
