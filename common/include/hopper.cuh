// Hopper's machinery for the top of the ladder (steps 9-13), one named function per PTX
// instruction, so that a kernel body reads as its idea (included as "hopper.cuh"; sm_90a).
//   mbarriers     a 64-bit counter in shared memory that the TMA and threads arrive on
//   TMA           whole tiles between global and shared memory, described by a tensor map
//   clusters      blocks on neighbouring SMs that signal each other's barriers
//   wgmma         a warpgroup's asynchronous matrix product from shared memory
//   epilogue      the accumulators' layout, and how steps 9-11 write them to C
#pragma once
#include "precision.cuh"

// A CUtensorMap (cuda.h): 128 opaque bytes the host fills with cuTensorMapEncodeTiled. Passed
// by value as a __grid_constant__ kernel parameter, the TMA reads it from parameter memory.
struct __align__(64) TensorMap {
    unsigned long long opaque[16];
};

// The shared-memory address of a pointer into shared memory (what PTX's .shared operands take).
__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// ---------------------------------------------------------------- mbarriers
// ANCHOR: barriers
// An mbarrier counts the arrivals (and, for the TMA, the bytes) of its current phase; when all
// that was announced has arrived, the phase completes and the barrier's parity flips. Waiters
// spin on the parity of the phase they wait for.
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals));
}
// Makes the initialised barriers visible to the TMA and to the other blocks of the cluster.
__device__ __forceinline__ void fence_barrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// The producer's arrival, announcing how many bytes the TMA will deliver in this phase.
__device__ __forceinline__ void mbar_expect_bytes(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// A plain arrival on a barrier of this block.
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ bool mbar_try_wait(unsigned bar, unsigned parity) {
    unsigned done;
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
    return done;
}
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
    while (!mbar_try_wait(bar, parity)) {
    }
}
// ANCHOR_END: barriers

// ---------------------------------------------------------------- clusters
// ANCHOR: cluster
__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
// Every thread of every block of the cluster meets here, after the barriers' initialisation.
// The arrival is relaxed: the one thing a peer must see, the initialisation, fence_barrier_init
// has already released, and the wait acquires it. The default (a release) costs every thread a
// GPU-wide memory barrier, which orders nothing here.
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// An arrival on the barrier at the same address in block `rank` of the cluster (this block too).
// It orders nothing but itself (the default, CTA-scope release): the consumers wrote nothing the
// producer needs to see, and a cluster-scope release would cost a GPU-wide memory barrier.
__device__ __forceinline__ void mbar_arrive_cluster(unsigned bar, unsigned rank) {
    asm volatile(
        "{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
        " mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
        "r"(rank)
        : "memory");
}
// ANCHOR_END: cluster

// ---------------------------------------------------------------- TMA
// ANCHOR: tma
// A box of the tensor `map` at coordinates (x innermost, y) into shared memory at `dst`,
// completing its bytes on `bar`. With a multicast mask the same box lands at `dst` (and
// completes on `bar`) in every block of the cluster whose bit is set.
__device__ __forceinline__ void tma_load(unsigned dst, const TensorMap* map, unsigned bar, int x, int y,
                                         unsigned short multicast = 0) {
    const unsigned long long m = reinterpret_cast<unsigned long long>(map);
    if (multicast)
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
            " [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(dst),
            "l"(m), "r"(bar), "r"(x), "r"(y), "h"(multicast)
            : "memory");
    else
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(dst),
                     "l"(m), "r"(bar), "r"(x), "r"(y)
                     : "memory");
}
// The same for a 3-dimensional tensor (3xTF32's B^T: z picks the big or the small plane).
__device__ __forceinline__ void tma_load(unsigned dst, const TensorMap* map, unsigned bar, int x, int y, int z,
                                         unsigned short multicast) {
    const unsigned long long m = reinterpret_cast<unsigned long long>(map);
    if (multicast)
        asm volatile(
            "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
            " [%0], [%1, {%3, %4, %5}], [%2], %6;\n" ::"r"(dst),
            "l"(m), "r"(bar), "r"(x), "r"(y), "r"(z), "h"(multicast)
            : "memory");
    else
        asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
                     "l"(m), "r"(bar), "r"(x), "r"(y), "r"(z)
                     : "memory");
}
// ANCHOR_END: tma

// ANCHOR: tma_store
// A box of shared memory at `src` into the tensor `map` at (x, y); the TMA writes only what lies
// inside the tensor. The copy reads shared memory after the instruction has issued: ordinary
// stores to `src` must be fenced into the async proxy first (fence_async_shared, by every thread
// that wrote, before a barrier), and `src` rewritten only after tma_store_wait says it was read.
__device__ __forceinline__ void tma_store(const TensorMap* map, unsigned src, int x, int y) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                     reinterpret_cast<unsigned long long>(map)),
                 "r"(src), "r"(x), "r"(y)
                 : "memory");
}
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Waits until at most N of this thread's committed stores still read their shared memory.
template <int N>
__device__ __forceinline__ void tma_store_wait() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
// Waits until every committed store has written global memory (before a block may exit).
__device__ __forceinline__ void tma_store_drain() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
// Ordinary shared-memory stores, ordered before the async proxy's (the TMA's) reads.
__device__ __forceinline__ void fence_async_shared() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// A barrier for `threads` threads (a multiple of 32) under the name `id` (1-15; 0 is
// __syncthreads): one warpgroup meets without stopping the others.
__device__ __forceinline__ void named_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// ANCHOR_END: tma_store

// ---------------------------------------------------------------- wgmma
// ANCHOR: descriptor
// A wgmma operand in shared memory: start address, the byte distance between 8-row groups
// (SBO) and between 64-element column blocks of an MN-major tile (LBO), and the swizzle (1:
// 128 bytes, as the TMA wrote it). Addresses and offsets are stored in units of 16 bytes.
__device__ __forceinline__ unsigned long long descriptor(unsigned addr, unsigned lbo, unsigned sbo) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (unsigned long long)(lbo >> 4) << 16 |
           (unsigned long long)(sbo >> 4) << 32 | 1ull << 62;
}
// ANCHOR_END: descriptor

// ANCHOR: wgmma_sync
// Registers the accumulators as written before the first wgmma reads them; commit closes a group
// of wgmma; wait<N> returns when at most N of this warpgroup's groups are still running.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Moves registers between the warpgroups of a block: a producer that needs few gives them to
// consumers that hold accumulators (only with __launch_bounds__(threads, 1)).
template <int R>
__device__ __forceinline__ void setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
}
template <int R>
__device__ __forceinline__ void setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
}
// ANCHOR_END: wgmma_sync

// The accumulators as asm operands: a 64 x W tile is W / 2 floats per thread.
#define WG_ACC8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
                   "+f"(d[i + 6]), "+f"(d[i + 7])
#define WG_ACC64(i) WG_ACC8(i), WG_ACC8(i + 8), WG_ACC8(i + 16), WG_ACC8(i + 24), WG_ACC8(i + 32), WG_ACC8(i + 40), \
                    WG_ACC8(i + 48), WG_ACC8(i + 56)
#define WG_D64 "{" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63" \
    "}"
#define WG_D128 "{" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127" \
    "}"

// ANCHOR: wgmma
// d = A * B + (accumulate ? d : 0) for a 64 x W x 16 tile in FP16 or BF16 (Prec<P>::bf16), A
// (K-major) and B (N-major: read transposed, the last immediate) from shared memory. W is 128
// or 256; a tile W wide uses the first W / 2 of the thread's accumulators.
template <class P, int W, int NREG>
__device__ __forceinline__ void wgmma(float (&d)[NREG], unsigned long long a, unsigned long long b, int accumulate = 1) {
    static_assert(P::mma_k == 16 && (W == 128 || W == 256) && NREG >= W / 2, "a 64 x 128 or 64 x 256 16-bit wgmma");
    if constexpr (W == 256 && P::bf16)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " WG_D128 ", %128, %129, p, 1, 1, 0, 1;\n}\n"
                     : WG_ACC64(0), WG_ACC64(64)
                     : "l"(a), "l"(b), "r"(accumulate));
    else if constexpr (W == 256)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " WG_D128 ", %128, %129, p, 1, 1, 0, 1;\n}\n"
                     : WG_ACC64(0), WG_ACC64(64)
                     : "l"(a), "l"(b), "r"(accumulate));
    else if constexpr (P::bf16)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " WG_D64 ", %64, %65, p, 1, 1, 0, 1;\n}\n"
                     : WG_ACC64(0)
                     : "l"(a), "l"(b), "r"(accumulate));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " WG_D64 ", %64, %65, p, 1, 1, 0, 1;\n}\n"
                     : WG_ACC64(0)
                     : "l"(a), "l"(b), "r"(accumulate));
}
// ANCHOR_END: wgmma

// ANCHOR: wgmma_tf32
// The same, 64 x W x 8 in TF32: A from registers (this warp's 16 rows, as mma.m16n8k8 holds
// them), B K-major from shared memory (wgmma reads 32-bit operands K-major only).
template <int W, int NREG>
__device__ __forceinline__ void wgmma_tf32(float (&d)[NREG], const unsigned (&a)[4], unsigned long long b,
                                           int accumulate = 1) {
    static_assert((W == 128 || W == 256) && NREG >= W / 2, "a 64 x 128 or 64 x 256 TF32 wgmma");
    if constexpr (W == 256)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " WG_D128
                     ", {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
                     : WG_ACC64(0), WG_ACC64(64)
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 " WG_D64
                     ", {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
                     : WG_ACC64(0)
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
}
// ANCHOR_END: wgmma_tf32

// ---------------------------------------------------------------- epilogue
// ANCHOR: epilogue
// The accumulator layout of a 64 x W wgmma tile is mma.m16n8's, repeated: warp w of the
// warpgroup holds rows 16w + g and 16w + g + 8 (g = lane / 4), and d[4j..4j+3] are columns
// 8j + 2t, 8j + 2t + 1 (t = lane % 4) of those two rows.
// C[r][c], C[r][c+1] = alpha*acc + beta*C for the elements inside C (C is not read when
// beta == 0); one 8-byte store when rows of C are 8-byte aligned (VEC: N is even).
__device__ __forceinline__ void store_pair(float* C, int r, int c, int M, int N, float v0, float v1, float alpha,
                                           float beta) {
    if (r >= M) return;
    float* p = &C[r * N + c];
    if (VEC && c < N) {
        float2 out = make_float2(alpha * v0, alpha * v1);
        if (beta != 0.0f) out.x += beta * p[0], out.y += beta * p[1];
        *reinterpret_cast<float2*>(p) = out;
    } else if (!VEC) {
        if (c < N) p[0] = beta == 0.0f ? alpha * v0 : alpha * v0 + beta * p[0];
        if (c + 1 < N) p[1] = beta == 0.0f ? alpha * v1 : alpha * v1 + beta * p[1];
    }
}
// A warpgroup's 64 x W tile of accumulators at C[row0][col0].
template <int W, int NREG>
__device__ __forceinline__ void store_tile(float* C, int row0, int col0, int M, int N, const float (&d)[NREG],
                                           float alpha, float beta) {
    const int lane = threadIdx.x % 32, r = row0 + (threadIdx.x % 128) / 32 * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < W / 8; ++j) {
        const int c = col0 + 8 * j + 2 * (lane % 4);
        store_pair(C, r, c, M, N, d[4 * j], d[4 * j + 1], alpha, beta);
        store_pair(C, r + 8, c, M, N, d[4 * j + 2], d[4 * j + 3], alpha, beta);
    }
}
// ANCHOR_END: epilogue

// ANCHOR: store_chunks
// Steps 12 and 13: C through shared memory and the TMA. A chunk of C is 64 rows of one
// 128-byte swizzled row each (32 floats or 64 halves), one TMA box of C's tensor map.
constexpr int CHUNK_BYTES = 64 * 128;
// Four 8 x 8 matrices of 16-bit elements between shared memory and registers: lane l gives the
// address of row l % 8 of matrix l / 8, and register i holds, as an mma.m16n8 fragment does, two
// neighbouring elements of one row of matrix i (lane / 4, columns 2 (lane % 4) and the next).
// stmatrix writes what ldmatrix reads; volatile keeps both in order with the barriers around them.
__device__ __forceinline__ void stmatrix_x4(unsigned addr, const unsigned (&r)[4]) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r[0]),
                 "r"(r[1]), "r"(r[2]), "r"(r[3])
                 : "memory");
}
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
// alpha * (a0, a1) + beta * C's old pair `old` (READ_C), as the two 16-bit halves of a register.
template <class P, bool READ_C>
__device__ __forceinline__ unsigned to_c_pair(float a0, float a1, unsigned old, float alpha, float beta) {
    float v0 = alpha * a0, v1 = alpha * a1;
    if constexpr (READ_C) {
        v0 += beta * P::from_c(old & 0xffff);
        v1 += beta * P::from_c(old >> 16);
    }
    return (unsigned)P::to_c(v0) | (unsigned)P::to_c(v1) << 16;
}
// Chunk q of a consumer's 64 x W tile of accumulators d into the staging buffer at `buf`, in the
// TMA's layout (16-byte unit u of row r at (u ^ r % 8) * 16), with C's old values from the
// buffer when READ_C. FP32: one 8-byte store per pair of elements; 16 bits: one stmatrix per
// four 8 x 8 matrices, two 8-column groups of the warp's 16 rows.
template <class P, bool READ_C, int NREG>
__device__ __forceinline__ void write_chunk(unsigned buf, int q, const float (&d)[NREG], float alpha, float beta) {
    constexpr int ROW = 128, CHUNK_COLS = ROW / (int)sizeof(typename P::out_t);
    const int tid = threadIdx.x % 128, lane = tid % 32;
    if constexpr (sizeof(typename P::out_t) == 2) {
        // This lane's address: row lane % 8 of matrix lane / 8 (its row half, then its group).
        const int r = tid / 32 * 16 + lane / 8 % 2 * 8 + lane % 8;
#pragma unroll
        for (int jj = 0; jj < CHUNK_COLS / 8; jj += 2) {
            const int j = q * CHUNK_COLS / 8 + jj;
            const unsigned at = buf + r * ROW + ((jj + lane / 16) ^ (lane % 8)) * 16;
            unsigned old[4] = {0, 0, 0, 0}, v[4];
            if constexpr (READ_C) ldmatrix_x4(old, at);
#pragma unroll
            for (int m = 0; m < 4; ++m) {
                const int e = 4 * (j + m / 2) + 2 * (m % 2);
                v[m] = to_c_pair<P, READ_C>(d[e], d[e + 1], old[m], alpha, beta);
            }
            stmatrix_x4(at, v);
        }
    } else {
        const int r = tid / 32 * 16 + lane / 4, t4 = lane % 4;  // rows r and r + 8, columns 8j + 2 t4
#pragma unroll
        for (int jj = 0; jj < CHUNK_COLS / 8; ++jj) {
            const int j = q * CHUNK_COLS / 8 + jj, byte = (8 * jj + 2 * t4) * 4;
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int rr = r + 8 * half;
                const unsigned at = buf + rr * ROW + ((byte / 16) ^ (rr % 8)) * 16 + byte % 16;
                float v0 = alpha * d[4 * j + 2 * half], v1 = alpha * d[4 * j + 2 * half + 1];
                if constexpr (READ_C) {
                    float o0, o1;
                    asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(o0), "=f"(o1) : "r"(at));
                    v0 += beta * o0, v1 += beta * o1;
                }
                asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(at), "f"(v0), "f"(v1));
            }
        }
    }
}
// One consumer's 64 x W tile of accumulators d to C at (row, col) through its two staging
// buffers at `stage`, two chunks at a time: one in each buffer, then one proxy fence and one
// barrier for both (the fence waits for the writes before it, so paying it per pair halves that
// wait). The consumer's 128 threads meet at named barrier `id`; thread 0 talks to the TMA. With
// READ_C the TMA first loads the pair's old C into the buffers (`loaded`; `chunks` counts the
// consumer's chunks so far, for the barriers' parity). beta picks one of two copies of the loop
// (READ_C), so that a C that is not read costs no instructions (a test inside the loop would be
// issued, predicated off, for every element).
template <class P, bool READ_C, int W, int NREG>
__device__ __forceinline__ void store_chunks_as(const TensorMap* tmC, unsigned stage, unsigned long long* loaded,
                                                int id, int& chunks, int row, int col, const float (&d)[NREG],
                                                float alpha, float beta) {
    constexpr int CHUNK_COLS = 128 / (int)sizeof(typename P::out_t);
    static_assert(W / CHUNK_COLS % 2 == 0, "chunks come in pairs");
    const int tid = threadIdx.x % 128;
#pragma unroll
    for (int q = 0; q < W / CHUNK_COLS; q += 2, chunks += 2) {
        // Both stores of the last pair must be done reading their buffers.
        if (tid == 0) tma_store_wait<0>();
        named_sync(id, 128);
        if constexpr (READ_C) {
            if (tid == 0)
                for (int b = 0; b < 2; ++b) {
                    mbar_expect_bytes(smem_addr(&loaded[b]), CHUNK_BYTES);
                    tma_load(stage + b * CHUNK_BYTES, tmC, smem_addr(&loaded[b]), col + (q + b) * CHUNK_COLS, row);
                }
            for (int b = 0; b < 2; ++b) mbar_wait(smem_addr(&loaded[b]), chunks / 2 % 2);
        }
        write_chunk<P, READ_C>(stage, q, d, alpha, beta);
        write_chunk<P, READ_C>(stage + CHUNK_BYTES, q + 1, d, alpha, beta);
        // Every thread's writes, ordered before the TMA reads them; then one thread stores.
        fence_async_shared();
        named_sync(id, 128);
        if (tid == 0) {
            for (int b = 0; b < 2; ++b) tma_store(tmC, stage + b * CHUNK_BYTES, col + (q + b) * CHUNK_COLS, row);
            tma_store_commit();
        }
    }
}
template <class P, int W, int NREG>
__device__ __forceinline__ void store_chunks(const TensorMap* tmC, unsigned stage, unsigned long long* loaded, int id,
                                             int& chunks, int row, int col, const float (&d)[NREG], float alpha,
                                             float beta) {
    if (beta != 0.0f) store_chunks_as<P, true, W>(tmC, stage, loaded, id, chunks, row, col, d, alpha, beta);
    else store_chunks_as<P, false, W>(tmC, stage, loaded, id, chunks, row, col, d, alpha, beta);
}
// ANCHOR_END: store_chunks

// ---------------------------------------------------------------- the persistent schedule
// ANCHOR: schedule
// A job is one cluster's tile of C: CM vertically adjacent TM x TN block tiles (the kernel's
// CLUSTER, BM and BN). Jobs are numbered down a group of G cluster rows (GROUP), one column of the
// group after another, then the next group: the jobs running at the same time (consecutive
// numbers) cover a squarish patch of C and share its rows of A and columns of B in L2, where row
// after row (G = 1) every patch would need all of B. The odd groups go right to left, so that the
// turn that starts a group shares columns of B with the turn that ended the last one.
template <int TM, int TN, int CM, int G>
__device__ __forceinline__ int2 job_origin(int job, int M, int N, unsigned rank) {
    const int cols = CEIL_DIV(N, TN), rows = CEIL_DIV(CEIL_DIV(M, TM), CM);
    const int group = job / (G * cols), first = group * G, height = min(G, rows - first);
    const int in_group = job % (G * cols);
    const int row = first + in_group % height, col = group % 2 ? cols - 1 - in_group / height : in_group / height;
    return make_int2((row * CM + (int)rank) * TM, col * TN);
}

// What a cluster computes in one turn: its block's tile of C at `at` (row, column), `width`
// columns wide, over K-tiles k0 to k1. A partial turn leaves its sums for another cluster
// (save_partial); a turn that ends a job adds the partials of the `peers` clusters before it
// (add_partials) and stores the tile. Odd turns load their K-tiles last to first (`backwards`):
// the jobs of consecutive turns share rows of A or columns of B, and a turn then starts on the
// K-tiles the turn before loaded last, which L2 still holds, where K-tile 0 is long evicted.
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
// Most blocks x consumer warpgroups whose partial sums the last turn can keep (below).
constexpr int MAX_PARTIALS = 144 * 2;
// The clusters take jobs in turns: cluster c does jobs c, c + clusters, ... The last turn, if
// it would leave clusters idle (`tail` jobs for `clusters` clusters), is balanced one of two ways:
// - HALF: when at most half of the clusters would work, its jobs are cut in two halves of TN / 2
//   columns, so that the last turn takes half as long; `units` counts whole jobs and halves.
// - Otherwise, when `tiles` (K-tiles a job) is given and sharing the tail out would save each
//   cluster at least 20 K-tiles (the partial sums cost about 14 of them on an H100, measured),
//   the tail's K-tiles, laid end to end, are shared out evenly: cluster c takes
//   [begin(c), begin(c + 1)). A job is then finished from two or more pieces (stream-K).
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
    // Unit u, taken as a cluster's turn number `turn`.
    __device__ Work unit(int u, int M, int N, unsigned rank, int turn) const {
        const bool back = turn % 2;
        if (u < whole) return {job_origin<TM, TN, CM, G>(u, M, N, rank), TN, 0, tiles, 0, false, back};
        const int2 at = job_origin<TM, TN, CM, G>(whole + (u - whole) / 2, M, N, rank);
        return {make_int2(at.x, at.y + (u - whole) % 2 * (TN / 2)), TN / 2, 0, tiles, 0, false, back};
    }
    __device__ int begin(int c) const { return (int)((long long)c * tail * tiles / clusters); }
    // Turn i of cluster c into w; false after its last. Its units first, then its share of the
    // tail, which spans at most two jobs: the end of one and the start of the next. It multiplies
    // the start first and leaves it as a partial; the cluster holding a job's last K-tile
    // multiplies that piece last, and adds the partials that the clusters before it made first.
    // So a cluster waits only for work done at the start of theirs (all are resident at once).
    __device__ bool turn(int c, int i, int M, int N, unsigned rank, Work& w) const {
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
// The partial sums of the last turn, one slot per block and consumer warpgroup (the slot's
// number is the cluster's times CLUSTER x consumers, plus the block's and the warpgroup's), kept
// thread-major so that each store is 512 contiguous bytes a warp, and a flag per slot. NREG: the
// accumulators a thread holds. The flags start at 0 (a module's globals are zeroed at load).
template <int NREG>
__device__ float4 partial_sums[MAX_PARTIALS * 128 * NREG / 4];
template <int NREG>
__device__ unsigned partial_ready[MAX_PARTIALS];
// The consumer's 128 threads (named barrier `id`) leave d in `slot`, then one thread raises its
// flag, after a GPU-wide fence that orders every thread's stores before it.
template <int NREG>
__device__ __forceinline__ void save_partial(int slot, int id, const float (&d)[NREG]) {
    const int tid = threadIdx.x % 128;
    float4* p = partial_sums<NREG> + (size_t)slot * 128 * (NREG / 4);
#pragma unroll
    for (int q = 0; q < NREG / 4; ++q)
        asm volatile("st.global.cg.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(p + q * 128 + tid), "f"(d[4 * q]),
                     "f"(d[4 * q + 1]), "f"(d[4 * q + 2]), "f"(d[4 * q + 3])
                     : "memory");
    named_sync(id, 128);
    if (tid == 0) {
        __threadfence();
        asm volatile("st.release.gpu.global.u32 [%0], 1;\n" ::"l"(partial_ready<NREG> + slot) : "memory");
    }
}
// Adds to d the partials of slots slot - gap, slot - 2 gap, ... (`peers` of them): one thread
// waits for each flag and lowers it for the next launch, then all 128 read the sums from L2.
template <int NREG>
__device__ __forceinline__ void add_partials(int slot, int gap, int peers, int id, float (&d)[NREG]) {
    const int tid = threadIdx.x % 128;
    for (int j = 1; j <= peers; ++j) {
        const int from = slot - j * gap;
        if (tid == 0) {
            unsigned ready;
            do asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(ready) : "l"(partial_ready<NREG> + from) : "memory");
            while (!ready);
            partial_ready<NREG>[from] = 0;
        }
        named_sync(id, 128);
        const float4* p = partial_sums<NREG> + (size_t)from * 128 * (NREG / 4);
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
