// Step 15's operand swap (included as "skinny.cuh"): for a small M the kernel computes
// C^T = B^T A^T, so that N fills wgmma's 64 rows and M is the instruction's narrow N. What it needs
// beyond step 12: a wgmma that reads its first operand MN-major (B^T, as the TMA lands B) and its
// second K-major (A^T's columns are A's rows), for the narrow widths; and an epilogue that writes
// the tile of C^T into C transposed.
#pragma once
#include "hopper.cuh"
#include "schedule.cuh"  // step 11: Work, job_origin and the partial sums

// ANCHOR: wgmma_swapped
#define WG_D4 "{%0, %1, %2, %3}"
#define WG_D8 "{%0, %1, %2, %3, %4, %5, %6, %7}"
#define WG_D16 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"
#define WG_D32 "{" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31" \
    "}"
#define WG_ACC4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
// One 64 x W x 16 wgmma with the first operand transposed (MN-major) and the second not: the
// operands' numbers follow the W / 2 accumulators (a, b, then the accumulate flag).
#define WGMMA_SWAPPED(W, TYPE, D, A, B, ACC, ...)                                                         \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" ACC ", 0;\n"                                        \
                 "wgmma.mma_async.sync.aligned.m64n" #W "k16.f32." TYPE "." TYPE " " D ", %" A ", %" B \
                 ", p, 1, 1, 1, 0;\n}\n"                                                                  \
                 : __VA_ARGS__                                                                            \
                 : "l"(a), "l"(b), "r"(accumulate))
// d = A * B + (accumulate ? d : 0) for a 64 x W x 16 tile in FP16 or BF16, A MN-major (B^T: the
// TMA's boxes of 64 columns of B) and B K-major (A^T: rows of A), both from shared memory. W is
// the narrow tile, 8 to 128.
template <class P, int W, int NREG>
__device__ __forceinline__ void wgmma_swapped(float (&d)[NREG], unsigned long long a, unsigned long long b,
                                              int accumulate = 1) {
    static_assert(P::mma_k == 16 && NREG >= W / 2, "a 16-bit wgmma, W / 2 accumulators a thread");
    if constexpr (W == 8 && P::bf16) WGMMA_SWAPPED(8, "bf16", WG_D4, "4", "5", "6", WG_ACC4(0));
    else if constexpr (W == 8) WGMMA_SWAPPED(8, "f16", WG_D4, "4", "5", "6", WG_ACC4(0));
    else if constexpr (W == 16 && P::bf16) WGMMA_SWAPPED(16, "bf16", WG_D8, "8", "9", "10", WG_ACC8(0));
    else if constexpr (W == 16) WGMMA_SWAPPED(16, "f16", WG_D8, "8", "9", "10", WG_ACC8(0));
    else if constexpr (W == 32 && P::bf16)
        WGMMA_SWAPPED(32, "bf16", WG_D16, "16", "17", "18", WG_ACC8(0), WG_ACC8(8));
    else if constexpr (W == 32) WGMMA_SWAPPED(32, "f16", WG_D16, "16", "17", "18", WG_ACC8(0), WG_ACC8(8));
    else if constexpr (W == 64 && P::bf16)
        WGMMA_SWAPPED(64, "bf16", WG_D32, "32", "33", "34", WG_ACC8(0), WG_ACC8(8), WG_ACC8(16), WG_ACC8(24));
    else if constexpr (W == 64)
        WGMMA_SWAPPED(64, "f16", WG_D32, "32", "33", "34", WG_ACC8(0), WG_ACC8(8), WG_ACC8(16), WG_ACC8(24));
    else if constexpr (W == 128 && P::bf16) WGMMA_SWAPPED(128, "bf16", WG_D64, "64", "65", "66", WG_ACC64(0));
    else if constexpr (W == 128) WGMMA_SWAPPED(128, "f16", WG_D64, "64", "65", "66", WG_ACC64(0));
    else static_assert(W == 8, "a narrow tile of 8, 16, 32, 64 or 128");
}
// ANCHOR_END: wgmma_swapped

// ANCHOR: store_transposed
// A consumer's tile of C^T, 64 rows (columns n of C) x W (rows m of C), leaves as chunks of C: RB
// = min(W, 64) rows of C by one 128-byte row (64 halves or 32 floats of n), one TMA box of C's map
// (the host makes it RB rows tall). Through shared memory rather than by direct stores for the
// kernel's signature: C is a tensor map, as in step 12, and the TMA clips the tile at C's edges.
// Each thread stores its elements one by one at their transposed place: a thread's accumulators
// hold pairs along m, which are 128 bytes apart in C, so no wider store exists, and the swizzle
// spreads a warp's 32 stores over the 32 banks. C is small beside B at these shapes (M <= 256).
template <class P, int W>
struct Transposed {
    typedef typename P::out_t out_t;
    static constexpr int RB = W < 64 ? W : 64, CC = 128 / (int)sizeof(out_t);
    static constexpr int CHUNKS = W / RB * (64 / CC);  // chunks of a consumer's tile
};
// Chunk q of the tile (row block q / (64 / CC) of m, column block q % (64 / CC) of n) from the
// accumulators d into the staging buffer at `buf`, in the TMA's layout (16-byte unit u of row r
// at (u ^ r % 8) * 16), plus beta times C's old values already in the buffer when READ_C.
template <class P, bool READ_C, int W, int NREG>
__device__ __forceinline__ void write_transposed(unsigned buf, int q, const float (&d)[NREG], float alpha,
                                                 float beta) {
    typedef Transposed<P, W> T;
    const int tid = threadIdx.x % 128, lane = tid % 32;
    const int rb = q / (64 / T::CC), cb = q % (64 / T::CC);
#pragma unroll
    for (int i = 0; i < W / 2; ++i) {
        // Accumulator i: row n of the warpgroup's 64 (lane / 4, + 8 for its second pair), column
        // m of W (8 per group of four, two per thread).
        const int m = 8 * (i / 4) + 2 * (lane % 4) + i % 2, n = tid / 32 * 16 + lane / 4 + 8 * (i / 2 % 2);
        if (m / T::RB != rb || n / T::CC != cb) continue;
        const int r = m % T::RB, byte = (n % T::CC) * (int)sizeof(typename T::out_t);
        const unsigned at = buf + r * 128 + ((byte / 16) ^ (r % 8)) * 16 + byte % 16;
        float v = alpha * d[i];
        if constexpr (sizeof(typename T::out_t) == 2) {
            if constexpr (READ_C) {
                unsigned short old;
                asm volatile("ld.shared.u16 %0, [%1];\n" : "=h"(old) : "r"(at));
                v += beta * P::from_c(old);
            }
            asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(at), "h"((unsigned short)P::to_c(v)));
        } else {
            if constexpr (READ_C) {
                float old;
                asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(old) : "r"(at));
                v += beta * old;
            }
            asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(at), "f"(v));
        }
    }
}
// A 16-bit C: the consumer's tile of C^T at (n0, m0) into C through its two staging buffers at
// `stage`, one chunk (a row block of m, all 64 columns of n) at a time, the buffers taking turns:
// a chunk waits only for the store that read its buffer two chunks before (`chunks` counts the
// consumer's chunks, for the buffer and its barrier's parity). With READ_C the TMA first loads the
// chunk's old C into the buffer.
template <class P, bool READ_C, int W, int NREG>
__device__ __forceinline__ void store_transposed_as(const TensorMap* tmC, unsigned stage, unsigned long long* loaded,
                                                    int id, int& chunks, int n0, int m0, const float (&d)[NREG],
                                                    float alpha, float beta) {
    typedef Transposed<P, W> T;
    const int tid = threadIdx.x % 128;
#pragma unroll
    for (int q = 0; q < T::CHUNKS; ++q, ++chunks) {
        const int b = chunks % 2, x = n0 + q % (64 / T::CC) * T::CC, y = m0 + q / (64 / T::CC) * T::RB;
        const unsigned buf = stage + b * CHUNK_BYTES;
        if (tid == 0) tma_store_wait<1>();
        named_sync(id, 128);
        if constexpr (READ_C) {
            if (tid == 0) {
                mbar_expect_bytes(smem_addr(&loaded[b]), T::RB * 128);
                tma_load(buf, tmC, smem_addr(&loaded[b]), x, y);
            }
            mbar_wait(smem_addr(&loaded[b]), chunks / 2 % 2);
        }
        write_transposed<P, READ_C, W>(buf, q, d, alpha, beta);
        fence_async_shared();
        named_sync(id, 128);
        if (tid == 0) {
            tma_store(tmC, buf, x, y);
            tma_store_commit();
        }
    }
}
// An FP32 C in rounds: a chunk of floats is 32 columns of n, half of the consumer's 64, so one
// chunk at a time would leave two of the four warps idle in every chunk, behind two barriers and
// a wait for a store. Here a round is a whole row block of m: both buffers are filled at once (all
// four warps at work, one column block each), and one thread stores both; half the rounds, each
// waiting for the previous round's two stores to have read their buffers.
template <class P, bool READ_C, int W, int NREG>
__device__ __forceinline__ void store_rounds_as(const TensorMap* tmC, unsigned stage, unsigned long long* loaded,
                                                int id, int& chunks, int n0, int m0, const float (&d)[NREG],
                                                float alpha, float beta) {
    typedef Transposed<P, W> T;
    static_assert(T::CC == 32, "two column blocks of 32 floats in a consumer's 64 rows of n");
    const int tid = threadIdx.x % 128, cb = tid / 64;  // warps 0-1 hold n 0-31, warps 2-3 n 32-63
#pragma unroll
    for (int rb = 0; rb < W / T::RB; ++rb, chunks += 2) {
        const int y = m0 + rb * T::RB;
        if (tid == 0) tma_store_wait<0>();
        named_sync(id, 128);
        if constexpr (READ_C) {
            if (tid == 0)
                for (int b = 0; b < 2; ++b) {
                    mbar_expect_bytes(smem_addr(&loaded[b]), T::RB * 128);
                    tma_load(stage + b * CHUNK_BYTES, tmC, smem_addr(&loaded[b]), n0 + b * T::CC, y);
                }
            mbar_wait(smem_addr(&loaded[cb]), chunks / 2 % 2);
        }
        write_transposed<P, READ_C, W>(stage + cb * CHUNK_BYTES, rb * 2 + cb, d, alpha, beta);
        fence_async_shared();
        named_sync(id, 128);
        if (tid == 0) {
            for (int b = 0; b < 2; ++b) tma_store(tmC, stage + b * CHUNK_BYTES, n0 + b * T::CC, y);
            tma_store_commit();
        }
    }
}
template <class P, int W, int NREG>
__device__ __forceinline__ void store_transposed(const TensorMap* tmC, unsigned stage, unsigned long long* loaded,
                                                 int id, int& chunks, int n0, int m0, const float (&d)[NREG],
                                                 float alpha, float beta) {
    if constexpr (sizeof(typename P::out_t) == 4) {
        if (beta != 0.0f) store_rounds_as<P, true, W>(tmC, stage, loaded, id, chunks, n0, m0, d, alpha, beta);
        else store_rounds_as<P, false, W>(tmC, stage, loaded, id, chunks, n0, m0, d, alpha, beta);
    } else if (beta != 0.0f) {
        store_transposed_as<P, true, W>(tmC, stage, loaded, id, chunks, n0, m0, d, alpha, beta);
    } else {
        store_transposed_as<P, false, W>(tmC, stage, loaded, id, chunks, n0, m0, d, alpha, beta);
    }
}
// ANCHOR_END: store_transposed

// ANCHOR: slices
// Split-K in slices, for a product of few tiles (SPREAD: the host launches a cluster on every SM).
// Each tile's K-tiles are cut into S slices of equal length, and unit u is slice u / tiles of tile
// u % tiles: the units of one slice are numbered together, so that the clusters at work at one
// moment read the same K-tiles of neighbouring tiles, which lie side by side in B's rows, as
// cuBLAS's plain tiles do. Cluster c takes units c, c + clusters, ... S is the fewest slices that
// give at least half the clusters a unit (with slices of at least four K-tiles, and a slot for
// every partial slice): at these shapes about half of the SMs already stream B as fast as DRAM
// gives it, and each further slice adds partial sums and readers that are out of step
// (`slices` in lib.rs mirrors this, for the book's diagram and a test). A tile's last slice adds the
// partial sums of the slices before it, in a fixed order: the same bits from launch to launch.
// Each cut between slices lies SKEW K-tiles before the even one (the host's rule, `skew` in
// lib.rs): the first slice is shorter and the last longer, so that the slices that leave partial
// sums have saved them by the time the last slice, which waits for them, ends its K loop.
#define SLICE_SLOTS (3 * MAX_PARTIALS)  // a macro: a constant variable would be a symbol of every build
#ifndef SLICES
#define SLICES 0  // else an experiment's count (--define SLICES=n), where it fits
#endif
#ifndef SKEW
#define SKEW 0
#endif
// STREAM: B larger than L2, its loads marked to leave L2 first (the host's rule, `streams` in
// lib.rs, defines it only there, so that every other launch is the one it was before).
#ifndef STREAM
#define STREAM 0
#endif
template <int TM, int TN, int CM, int G>
struct Slices {
    int tiles, slices = 1, clusters, ktiles;
    __device__ Slices(int M, int N, int clusters_, int ktiles_) : clusters(clusters_), ktiles(ktiles_) {
        tiles = CEIL_DIV(CEIL_DIV(M, TM), CM) * CEIL_DIV(N, TN);
        const int want = SLICES > 0 ? SLICES : CEIL_DIV(clusters, 2 * max(tiles, 1));
        for (int s = 2; s <= min(want, 8) && ktiles / s >= 4 && (s - 1) * tiles * CM * (TM / 64) <= SLICE_SLOTS; ++s)
            slices = s;
    }
    // The unit cluster c takes in its wave i.
    __device__ int unit(int c, int i) const { return c + i * clusters; }
    // The first K-tile of slice s (of slices: ktiles): the even cut, SKEW earlier, every slice
    // keeping a K-tile at least.
    __device__ int cut(int s) const {
        const int even = s * ktiles / slices;
        return s == 0 || s == slices ? even : max(s, even - SKEW);
    }
    __device__ bool wave(int c, int i, int M, int N, unsigned rank, Work& w) const {
        const int u = unit(c, i), slice = u / tiles;
        if (slice >= slices) return false;
        w = {job_origin<TM, TN, CM, G>(u % tiles, M, N, rank), TN, cut(slice), cut(slice + 1), slice,
             slice < slices - 1, false};
        return true;
    }
};
// The partial sums of the slices, one slot per unit, block and consumer warpgroup (thread-major,
// as step 11's), and a flag per slot: zeroed at load, raised by a slice, lowered by its tile's last.
template <int NREG>
__device__ float4 slice_sums[SLICE_SLOTS * 128 * NREG / 4];
template <int NREG>
__device__ unsigned slice_ready[SLICE_SLOTS];

// A piece's partial sums: leave them in its slot (true: the piece is done), or add those of its
// tile's pieces before it to d. Step 11's stream-K keeps a slot per cluster, its pieces a
// cluster apart; a slice keeps one per unit, its tile's slices `tiles` units apart.
template <int TM, int TN, int CM, int G, bool HALF, int NREG>
__device__ __forceinline__ bool partial_sums_of(const Schedule<TM, TN, CM, G, HALF>&, const Work& w, int cluster, int,
                                                unsigned rank, int consumer, int id, float (&d)[NREG]) {
    const int slot = (cluster * CM + rank) * (TM / 64) + consumer;
    if (w.partial) {
        save_partial(slot, id, d);
        return true;
    }
    add_partials(slot, CM * (TM / 64), w.peers, id, d);
    return false;
}
template <int TM, int TN, int CM, int G, int NREG>
__device__ __forceinline__ bool partial_sums_of(const Slices<TM, TN, CM, G>& jobs, const Work& w, int cluster, int wave,
                                                unsigned rank, int consumer, int id, float (&d)[NREG]) {
    const int slot = (jobs.unit(cluster, wave) * CM + rank) * (TM / 64) + consumer;
    if (w.partial) {
        save_partial(slot, id, d, slice_sums<NREG>, slice_ready<NREG>);
        return true;
    }
    add_partials(slot, jobs.tiles * CM * (TM / 64), w.peers, id, d, slice_sums<NREG>, slice_ready<NREG>);
    return false;
}

// The first type where `pick` holds, else the second.
template <bool pick, class A, class B>
struct Either {
    typedef A type;
};
template <class A, class B>
struct Either<false, A, B> {
    typedef B type;
};
// ANCHOR_END: slices
