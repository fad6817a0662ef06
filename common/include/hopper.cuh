// Hopper's machinery for the top of the ladder (steps 9-14), one named function per PTX
// instruction, so that a kernel body reads as its idea (included as "hopper.cuh"; sm_90a). What
// the rungs build from them lives in the crate of the rung that introduces it.
//   mbarriers     a 64-bit counter in shared memory that the TMA and threads arrive on
//   launches      the wait of a launch that may start before the one ahead of it has finished
//   clusters      blocks on neighbouring SMs that signal each other's barriers
//   TMA           whole tiles between global and shared memory, described by a tensor map
//   wgmma         a warpgroup's asynchronous matrix product from shared memory
//   matrices      8 x 8 matrices of 16-bit elements between shared memory and registers
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
// mbar_try_wait's question asked with test_wait, which answers at once where try_wait may wait a
// while in hardware first (step 14 looks at its next buffer early and waits only if it was empty).
__device__ __forceinline__ bool mbar_test_wait(unsigned bar, unsigned parity) {
    unsigned done;
    asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    return done;
}

// ---------------------------------------------------------------- dependent launches
// A programmatic dependent launch (the host's attribute, step 15) may start before the launch
// ahead of it in the stream has finished. Each thread waits here, before its first access to
// global memory, until that launch has finished and its writes are visible; in a launch without
// the attribute it returns at once.
__device__ __forceinline__ void wait_for_launch_before() {
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
}

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
// The same, made only by the threads with `pred`: one predicated instruction, where a branch
// around mbar_arrive_cluster costs a few (step 14's lanes 0 and 1 arrive in blocks 0 and 1).
__device__ __forceinline__ void mbar_arrive_cluster_if(unsigned bar, unsigned rank, bool pred) {
    asm volatile(
        "{\n .reg .pred p;\n .reg .b32 remote;\n setp.ne.u32 p, %2, 0;\n"
        " mapa.shared::cluster.u32 remote, %0, %1;\n"
        " @p mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
        "r"(rank), "r"((unsigned)pred)
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

// ANCHOR: tma_priority
// L2 priorities for the TMA's loads, as cache policies (createpolicy): evict-first for bytes a
// kernel reads once, so that L2 gives them up before anything else, and evict-last for bytes
// that every block reads again.
__device__ __forceinline__ unsigned long long l2_evict_first() {
    unsigned long long policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
    return policy;
}
__device__ __forceinline__ unsigned long long l2_evict_last() {
    unsigned long long policy;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(policy));
    return policy;
}
// tma_load (2-dimensional, no multicast) with one of those priorities.
__device__ __forceinline__ void tma_load_priority(unsigned dst, const TensorMap* map, unsigned bar, int x, int y,
                                                  unsigned long long policy) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
                 " [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(dst),
                 "l"(reinterpret_cast<unsigned long long>(map)), "r"(bar), "r"(x), "r"(y), "l"(policy)
                 : "memory");
}
// ANCHOR_END: tma_priority

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
// The same barrier for threads that reach it from different instructions (not `.aligned`): step
// 14's two consumer warpgroups, taking turns, meet at it from two places in their loop.
__device__ __forceinline__ void named_sync_apart(int id, int threads) {
    asm volatile("barrier.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
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
#define WG_D96 "{" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95" \
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

// ANCHOR: wgmma_fp8
// The same, 64 x W x 32 in FP8 (e4m3), both operands K-major from shared memory (FP8 wgmma
// transposes neither). The tensor cores add the 32 products of a k-step into d in a format
// narrower than FP32: step 14 promotes d into FP32 registers every few instructions.
template <int W, int NREG>
__device__ __forceinline__ void wgmma_fp8(float (&d)[NREG], unsigned long long a, unsigned long long b,
                                          int accumulate = 1) {
    static_assert((W == 128 || W == 192 || W == 256) && NREG >= W / 2, "a 64 x 128, 192 or 256 FP8 wgmma");
    if constexpr (W == 256)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 " WG_D128 ", %128, %129, p, 1, 1;\n}\n"
                     : WG_ACC64(0), WG_ACC64(64)
                     : "l"(a), "l"(b), "r"(accumulate));
    else if constexpr (W == 192)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3 " WG_D96 ", %96, %97, p, 1, 1;\n}\n"
                     : WG_ACC64(0), WG_ACC8(64), WG_ACC8(72), WG_ACC8(80), WG_ACC8(88)
                     : "l"(a), "l"(b), "r"(accumulate));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 " WG_D64 ", %64, %65, p, 1, 1;\n}\n"
                     : WG_ACC64(0)
                     : "l"(a), "l"(b), "r"(accumulate));
}
// ANCHOR_END: wgmma_fp8

// ---------------------------------------------------------------- matrices
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
// One float from shared memory (step 14's block scales); volatile too, so that it stays after the
// barrier that says the value arrived.
__device__ __forceinline__ float ld_shared(unsigned addr) {
    float v;
    asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr));
    return v;
}

// ---------------------------------------------------------------- sizes
// Two sizes of the top rungs, kept here rather than with the rungs that use them because a
// constant at namespace scope is a global of every module that includes it, in the order of its
// definition: moving one changes the CUBIN of every Hopper rung (step 11's code reaches its
// globals through a table that would shift), and the recorded results of all of them with it.
// A chunk of C, as steps 12 and 13 stage it for the TMA: 64 rows of one 128-byte swizzled row
// (32 floats or 64 halves), one box of C's tensor map.
constexpr int CHUNK_BYTES = 64 * 128;
// Most blocks x consumer warpgroups whose partial sums stream-K can keep (step 11's schedule.cuh):
// a persistent grid of one block per SM (a block's ring fills the SM's shared memory) on at most
// 144 SMs (the whole GH100; an H100 or H200 enables 132), two consumers each (BM = 128). A larger
// grid evens out its last wave without stream-K (Schedule checks it): correct, and slower where
// stream-K would have paid.
constexpr int MAX_PARTIALS = 144 * 2;
