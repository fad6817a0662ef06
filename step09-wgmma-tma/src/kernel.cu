// Step 9: Hopper's own GEMM. Up to step 8 every thread of a block both moved tiles and
// multiplied them. Here the hardware moves the tiles: one thread asks the Tensor Memory
// Accelerator (TMA) for a whole tile of A or B, described by a tensor map, and the copy lands
// in shared memory already swizzled, signalling an mbarrier when its bytes have arrived. And a
// warpgroup (4 warps, 128 threads) multiplies a 64 x BN tile with one `wgmma` instruction whose
// operands come straight from shared memory through 64-bit descriptors. The block is warp-
// specialised: warpgroup 0 produces (issues TMA copies into a ring of STAGES buffers), the
// others consume (wait for a full buffer, multiply, hand the buffer back). CLUSTER blocks that
// compute vertically adjacent tiles of C share one B tile: each loads a part and the TMA
// multicasts it into every block of the cluster. The grid is persistent: one cluster per pair of
// SMs, each walking through C's tiles (in groups that share rows of A and columns of B in L2),
// so the producer loads the next tile while the consumers store the last one.
//
// Precisions (PREC):
//   FP16, BF16: A and B from shared memory; B is N-major (row-major K x N), which wgmma reads
//               transposed (imm-trans-b) for 16-bit types.
//   TF32:       wgmma reads TF32 operands K-major only, so the host gives the kernel B^T
//               (prepare_b below, rounded to TF32); A comes K-major as it is and goes through
//               registers (ldmatrix, rounded to TF32), so that no copy of A is needed.
//   TF32X3:     as TF32, with B^T in two planes (big and small parts) and A split in registers:
//               three wgmma per step (small*big, big*small, big*big), FP32 accuracy.
// The signature is the ladder's with A and B replaced by their tensor maps, which the host
// builds from the same (M, N, K, A, B) call (the TMA needs a descriptor, not a pointer).
#include "sgemm.cuh"
#include "tensor.cuh"  // TF32 rounding and splitting

#define FP16 1
#define BF16 2
#define TF32 3
#define TF32X3 5

// ANCHOR: config
#if PREC == FP16 || PREC == BF16
typedef unsigned short elem_t;  // FP16 or BF16 bits
constexpr int MMA_K = 16;       // K of one wgmma
#elif PREC == TF32 || PREC == TF32X3
typedef float elem_t;
constexpr int MMA_K = 8;
#else
#error "PREC must be FP16, BF16, TF32 or TF32X3"
#endif
// BM x BN of C per block: BM / 64 consumer warpgroups, each one wgmma tile of 64 x BN. BK is
// one 128-byte row of K (64 halves, 32 floats): the TMA's widest swizzle.
constexpr int CONSUMERS = BM / 64;
#define NUM_THREADS (128 * (CONSUMERS + 1))
constexpr int ROW = 128;                         // bytes of a tile row in shared memory
constexpr int A_BYTES = BM * ROW;                // A tile: BM rows of BK elements
constexpr int B_PLANES = PREC == TF32X3 ? 2 : 1; // B^T big, B^T small
constexpr int B_BYTES = BN * BK * (int)sizeof(elem_t) * B_PLANES;
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
static_assert(BK * sizeof(elem_t) == ROW, "a tile row is one 128-byte swizzle row");
constexpr int BOX_BYTES = 64 * ROW;              // a TMA box of B: 64 columns of C by BK
static_assert(BM % 64 == 0 && (BN == 128 || BN == 256) && BN % (64 * CLUSTER) == 0, "tiles");
// Half jobs (see Schedule): FP16 and BF16 only. TF32's K loop holds two sets of A fragments in
// registers; a second copy of it for half-width tiles leaves too few, and ptxas serializes the wgmma.
static_assert(!HALVES || ((PREC == FP16 || PREC == BF16) && BN / 2 % (64 * CLUSTER) == 0), "half jobs");
static_assert(A_BYTES % 1024 == 0 && B_BYTES % 1024 == 0, "tiles start on the swizzle's 1024-byte period");
// The TMA's multicast mask: every block of the cluster (0: no multicast).
constexpr unsigned short MULTICAST = CLUSTER > 1 ? (1 << CLUSTER) - 1 : 0;
// ANCHOR_END: config

// A CUtensorMap (cuda.h): 128 opaque bytes the host fills with cuTensorMapEncodeTiled. Passed
// by value as a __grid_constant__ kernel parameter, the TMA reads it from parameter memory.
struct __align__(64) TensorMap {
    unsigned long long opaque[16];
};

// ---------------------------------------------------------------- mbarriers, TMA, clusters
// ANCHOR: barriers
// An mbarrier is a 64-bit word in shared memory counting arrivals (and, for TMA, bytes) of the
// current phase; when all have arrived the phase flips. Waiters spin on the parity of the phase.
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals));
}
// The producer's arrival, announcing how many bytes the TMA will deliver for this phase.
__device__ __forceinline__ void mbar_expect_bytes(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
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
__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
// Every thread of every block of the cluster meets here (a __syncthreads across the cluster).
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// ANCHOR_END: barriers

// ANCHOR: tma
// A box of the tensor `map` at coordinates (x innermost, y) into shared memory at `dst`,
// completing bytes on `bar`. With a multicast mask the same box lands at `dst` (and completes
// on `bar`) in every block of the cluster whose bit is set.
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

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most N committed groups of this warpgroup's wgmma are still running.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

#define STR2(x) #x
#define STR(x) STR2(x)
// The accumulators as asm operands: each thread holds NREG = BN / 2 floats of the 64 x BN tile.
constexpr int NREG = BN / 2;
#define ACC8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
                "+f"(d[i + 6]), "+f"(d[i + 7])
#define ACC64(i) ACC8(i), ACC8(i + 8), ACC8(i + 16), ACC8(i + 24), ACC8(i + 32), ACC8(i + 40), ACC8(i + 48), ACC8(i + 56)
#define D64 "{" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63" \
    "}"
#define D128 "{" \
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
// wgmma<W>: d = A * B + (accumulate ? d : 0) for a 64 x W tile, W = BN or (half jobs) BN / 2;
// a tile W wide uses the first W / 2 accumulators. The operands after them are numbered from W / 2.
#if PREC == FP16 || PREC == BF16
#if PREC == FP16
#define TYPE "f16"
#else
#define TYPE "bf16"
#endif
// 64 x W x 16, A (K-major) and B (N-major: transposed, the last immediate) from shared memory.
template <int W>
__device__ __forceinline__ void wgmma(float (&d)[NREG], unsigned long long a, unsigned long long b, int accumulate = 1) {
    static_assert(W == 128 || W == 256, "wgmma tiles here are 128 or 256 wide");
#if BN == 256
    if constexpr (W == 256)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE " " D128
                     ", %128, %129, p, 1, 1, 0, 1;\n}\n"
                     : ACC64(0), ACC64(64)
                     : "l"(a), "l"(b), "r"(accumulate));
    else
#endif
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " " D64
                     ", %64, %65, p, 1, 1, 0, 1;\n}\n"
                     : ACC64(0)
                     : "l"(a), "l"(b), "r"(accumulate));
}
#else
// 64 x W x 8 in TF32, A from registers (this warp's 16 rows, as mma.m16n8k8 holds them), B
// (K-major) from shared memory.
template <int W>
__device__ __forceinline__ void wgmma(float (&d)[NREG], const unsigned (&a)[4], unsigned long long b,
                                      int accumulate = 1) {
    static_assert(W == 128 || W == 256, "wgmma tiles here are 128 or 256 wide");
#if BN == 256
    if constexpr (W == 256)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " D128
                     ", {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
                     : ACC64(0), ACC64(64)
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
    else
#endif
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 " D64
                     ", {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
                     : ACC64(0)
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
}
#endif
// ANCHOR_END: wgmma

// C[r][c], C[r][c+1] = alpha*acc + beta*C for the elements inside C (C is not read when
// beta == 0); one 8-byte store when VEC says rows of C are 8-byte aligned (c is even).
__device__ __forceinline__ void store_pair(float* C, int r, int c, int M, int N, float v0, float v1, float alpha,
                                           float beta) {
    if (EDGE && r >= M) return;
    float* p = &C[r * N + c];
#if VEC
    if (EDGE && c >= N) return;
    float2 out = make_float2(alpha * v0, alpha * v1);
    if (beta != 0.0f) out.x += beta * p[0], out.y += beta * p[1];
    *reinterpret_cast<float2*>(p) = out;
#else
    if (c < N) p[0] = beta == 0.0f ? alpha * v0 : alpha * v0 + beta * p[0];
    if (c + 1 < N) p[1] = beta == 0.0f ? alpha * v1 : alpha * v1 + beta * p[1];
#endif
}

// ANCHOR: schedule
// A job is one cluster's tile of C: CLUSTER vertically adjacent BM x BN block tiles. Jobs are
// numbered down a group of GROUP cluster rows, one column of the group after another, then the
// next group: the jobs running at the same time (consecutive numbers) cover a squarish patch of
// C and share its rows of A and columns of B in L2, where row after row (GROUP = 1) every patch
// would need all of B.
__device__ __forceinline__ int2 job_origin(int job, int M, int N, unsigned rank) {
    const int cols = CEIL_DIV(N, BN), rows = CEIL_DIV(CEIL_DIV(M, BM), CLUSTER);
    const int first = job / (GROUP * cols) * GROUP, height = min(GROUP, rows - first);
    const int in_group = job % (GROUP * cols);
    const int row = first + in_group % height, col = in_group / height;
    return make_int2((row * CLUSTER + (int)rank) * BM, col * BN);
}

template <int W>
struct Width {
    static constexpr int value = W;
};

// What a cluster computes in one turn: a block's tile of C at `at` (row, column), `width`
// columns wide.
struct Work {
    int2 at;
    int width;
};
// The clusters take jobs in turns: cluster c does jobs c, c + clusters, ... When the last turn
// would leave more than half of the clusters idle (`tail` jobs for `clusters` clusters), its
// jobs are cut in two halves of BN / 2 columns (HALVES), so that the last turn takes half as
// long: `units` counts whole jobs and halves.
struct Schedule {
    int jobs, whole, units;
    __device__ Schedule(int M, int N, int clusters) {
        jobs = CEIL_DIV(CEIL_DIV(M, BM), CLUSTER) * CEIL_DIV(N, BN);
        const int tail = jobs % clusters;
        whole = HALVES && 2 * tail <= clusters ? jobs - tail : jobs;
        units = whole + 2 * (jobs - whole);
    }
    __device__ Work unit(int u, int M, int N, unsigned rank) const {
        if (u < whole) return {job_origin(u, M, N, rank), BN};
        const int2 at = job_origin(whole + (u - whole) / 2, M, N, rank);
        return {make_int2(at.x, at.y + (u - whole) % 2 * (BN / 2)), BN / 2};
    }
};
// ANCHOR_END: schedule

#if PREC == TF32 || PREC == TF32X3
// ANCHOR: prepare_b
// TF32 and 3xTF32 only, launched by the host before sgemm: B (K x N, row-major) -> B^T (N x K,
// row pitch ldt), rounded to TF32 (plane 0), and for 3xTF32 the small parts (plane 1, at
// N * ldt floats). A 32 x 32 tile goes through shared memory so that reads and writes are both
// coalesced. Costs one read and one or two writes of B, about 2-3% of the GEMM at 4096^3.
extern "C" __global__ void __launch_bounds__(256) prepare_b(int K, int N, const float* B, float* Bt, int ldt) {
    __shared__ float tile[32][33];
    const int k0 = blockIdx.y * 32, n0 = blockIdx.x * 32, tx = threadIdx.x % 32, ty = threadIdx.x / 32;
#pragma unroll
    for (int i = ty; i < 32; i += 8)
        tile[i][tx] = (k0 + i < K && n0 + tx < N) ? B[(k0 + i) * N + n0 + tx] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int i = ty; i < 32; i += 8) {
        if (n0 + i >= N || k0 + tx >= K) continue;
        if constexpr (B_PLANES == 1) {
            Bt[(n0 + i) * ldt + k0 + tx] = __uint_as_float(tf32(tile[tx][i]));
        } else {
            unsigned big, small;
            split_tf32(tile[tx][i], big, small);
            Bt[(n0 + i) * ldt + k0 + tx] = __uint_as_float(big);
            Bt[(N + n0 + i) * ldt + k0 + tx] = __uint_as_float(small);
        }
    }
}
// ANCHOR_END: prepare_b
#endif

// ANCHOR: kernel
extern "C" __global__ void __launch_bounds__(NUM_THREADS, 1)
    sgemm(int M, int N, int K, float alpha, const __grid_constant__ TensorMap tmA,
          const __grid_constant__ TensorMap tmB, float beta, float* C) {
    // The ring of STAGES (A tile, B tile) buffers, each tile on a 1024-byte boundary (the
    // period of the 128-byte swizzle), and two barriers per buffer: full (the TMA's bytes have
    // landed) and empty (every consumer of the cluster is done with it).
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    const unsigned smem = (static_cast<unsigned>(__cvta_generic_to_shared(smem_raw)) + 1023) & ~1023u;
    auto a_tile = [&](int s) { return smem + s * STAGE_BYTES; };
    auto b_tile = [&](int s) { return smem + s * STAGE_BYTES + A_BYTES; };
    auto bar = [](unsigned long long* b, int s) { return static_cast<unsigned>(__cvta_generic_to_shared(b + s)); };

    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const unsigned rank = CLUSTER > 1 ? cluster_rank() : 0;
    const int tiles = CEIL_DIV(K, BK);
    // This cluster's turns: its number in the grid, then every (clusters in the grid)-th unit.
    const Schedule schedule(M, N, gridDim.x / CLUSTER);
    const int first = blockIdx.x / CLUSTER, stride = gridDim.x / CLUSTER;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(bar(full, s), 1);                      // the producer's arrival (+ bytes)
            mbar_init(bar(empty, s), CONSUMERS * CLUSTER);   // one per consumer of the cluster
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    // Barriers initialised in every block before any block signals them.
    if (CLUSTER > 1) cluster_sync();
    else __syncthreads();

    if (wg == 0) {
        // ANCHOR: producer
        // The producer warpgroup gives registers away (consumers hold the accumulators); one
        // thread issues every copy.
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (tid == 0) {
            int it = 0;  // buffers filled so far: the ring runs on from one unit to the next
            for (int u = first; u < schedule.units; u += stride) {
                const Work w = schedule.unit(u, M, N, rank);
                // B comes in boxes of 64 columns of C (8 KiB: 64 x BK); this block loads its
                // share of the unit's boxes for the whole cluster.
                const int boxes = w.width / 64 / CLUSTER;
                for (int t = 0; t < tiles; ++t, ++it) {
                    const int s = it % STAGES;
                    // Wait until the consumers of the cluster released this buffer's last use.
                    if (it >= STAGES) mbar_wait(bar(empty, s), (it / STAGES + 1) % 2);
                    // A, and all of the unit's B (own part + peers')
                    mbar_expect_bytes(bar(full, s), A_BYTES + w.width * ROW * B_PLANES);
                    tma_load(a_tile(s), &tmA, bar(full, s), t * BK, w.at.x);
                    for (int j = rank * boxes; j < (int)(rank + 1) * boxes; ++j) {
                        const int col = w.at.y + 64 * j;
#if PREC == FP16 || PREC == BF16
                        // B is N-major: a box is BK rows of 64 columns (128 bytes).
                        tma_load(b_tile(s) + j * BOX_BYTES, &tmB, bar(full, s), col, t * BK, MULTICAST);
#else
                        // B^T is K-major: a box is 64 rows (columns of B) of BK; per plane for 3xTF32.
                        if constexpr (B_PLANES == 1)
                            tma_load(b_tile(s) + j * BOX_BYTES, &tmB, bar(full, s), t * BK, col, MULTICAST);
                        else
                            for (int plane = 0; plane < B_PLANES; ++plane)
                                tma_load(b_tile(s) + plane * BN * ROW + j * BOX_BYTES, &tmB, bar(full, s), t * BK,
                                         col, plane, MULTICAST);
#endif
                    }
                }
            }
        }
        // ANCHOR_END: producer
    } else {
        // ANCHOR: consumer
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
        const int consumer = wg - 1, warp = tid / 32, lane = tid % 32;
        // Hands buffer s back: one arrival per consumer warpgroup on every block's empty barrier.
        auto release = [&](int s) {
            if (tid == 0)
                for (int r = 0; r < CLUSTER; ++r) mbar_arrive_cluster(bar(empty, s), r);
        };
        float d[NREG];
        int it = 0;  // buffers used so far, as the producer counts them
        for (int u = first; u < schedule.units; u += stride) {
            const Work w = schedule.unit(u, M, N, rank);
            const bool half = w.width < BN;  // a half job: the first BN / 2 accumulators
#pragma unroll
            for (int i = 0; i < NREG; ++i) d[i] = 0.0f;
#if PREC == FP16 || PREC == BF16
            // The K loop for a tile `width` wide (a Width<W>): written once, compiled for W = BN
            // and BN / 2, chosen once per unit (a choice inside the loop would make the compiler
            // serialize the wgmma).
            auto mainloop = [&](auto width) {
                constexpr int W = decltype(width)::value;
                for (int t = 0; t < tiles; ++t, ++it) {
                    const int s = it % STAGES;
                    mbar_wait(bar(full, s), (it / STAGES) % 2);
                    const unsigned a = a_tile(s) + consumer * 64 * ROW, b = b_tile(s);
                    wgmma_fence();
#pragma unroll
                    for (int kk = 0; kk < BK / MMA_K; ++kk)
                        // A: +32 bytes of K per step inside the swizzled rows; B: +16 rows of K.
                        wgmma<W>(d, descriptor(a + kk * 32, 16, 1024), descriptor(b + kk * 16 * ROW, BOX_BYTES, 1024));
                    wgmma_commit();
                    // Keep this tile's products running; wait for the previous tile's, then free its buffer.
                    if (t > 0) {
                        wgmma_wait<1>();
                        release((it - 1) % STAGES);
                    }
                }
                wgmma_wait<0>();
                if (tiles > 0) release((it - 1) % STAGES);
            };
            if (HALVES && half) mainloop(Width<HALVES ? BN / 2 : BN>{});
            else mainloop(Width<BN>{});
#else
            // TF32: A through registers, this warp's 16 rows, 8 k per step, as mma.m16n8k8 holds
            // them (ldmatrix undoes the TMA's swizzle: chunk c of row r is at chunk c ^ (r % 8)).
            auto load_a = [&](unsigned a, unsigned (&big)[BK / MMA_K][4], unsigned (&small)[BK / MMA_K][4]) {
#pragma unroll
                for (int kk = 0; kk < BK / MMA_K; ++kk) {
                    const int r = warp * 16 + lane % 16, chunk = 2 * kk + lane / 16;
                    unsigned x[4];
                    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                                 : "=r"(x[0]), "=r"(x[1]), "=r"(x[2]), "=r"(x[3])
                                 : "r"(a + r * ROW + ((chunk ^ (r % 8)) << 4)));
#pragma unroll
                    for (int i = 0; i < 4; ++i) {
                        if constexpr (PREC == TF32X3) split_tf32(__uint_as_float(x[i]), big[kk][i], small[kk][i]);
                        else big[kk][i] = tf32(__uint_as_float(x[i]));
                    }
                }
            };
#if PREC == TF32
            // Tile t's A fragments live in register set t % 2 (the loop below is unrolled by two):
            // tile t+1's are loaded while tile t's wgmma still read theirs. The compiler does not know
            // that a wgmma reads its registers after the instruction has issued, so `keep` tells it
            // a set is in use until the wait that proves its wgmma done; else it could give those
            // registers to the next set's loads.
            unsigned ra0[BK / MMA_K][4], ra1[BK / MMA_K][4];
            auto keep = [](unsigned (&ra)[BK / MMA_K][4]) {
#pragma unroll
                for (int kk = 0; kk < BK / MMA_K; ++kk)
#pragma unroll
                    for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(ra[kk][i])::"memory");
            };
            auto tile = [&](int t, unsigned (&ra)[BK / MMA_K][4], unsigned (&previous)[BK / MMA_K][4]) {
                const int s = it % STAGES;
                mbar_wait(bar(full, s), (it / STAGES) % 2);
                const unsigned a = a_tile(s) + consumer * 64 * ROW, b = b_tile(s);
                load_a(a, ra, ra);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < BK / MMA_K; ++kk) wgmma<BN>(d, ra[kk], descriptor(b + kk * 32, 16, 1024));
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
#else
            // 3xTF32: the three products of a tile go to a fresh accumulator (dt), which is then
            // added to d in FP32, rounding to nearest. The tensor cores' additions truncate: summed
            // over all of K in one accumulator their bias would grow with K, as in TF32 (10x the
            // error of SGEMM at K = 4096); summed per tile it stays at SGEMM's level.
            unsigned ra[BK / MMA_K][4], sa[BK / MMA_K][4];
            float dt[NREG];
#pragma unroll
            for (int i = 0; i < NREG; ++i) dt[i] = 0.0f;
            for (int t = 0; t < tiles; ++t, ++it) {
                const int s = it % STAGES;
                mbar_wait(bar(full, s), (it / STAGES) % 2);
                const unsigned a = a_tile(s) + consumer * 64 * ROW, b = b_tile(s);
                load_a(a, ra, sa);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < BK / MMA_K; ++kk) {
                    const unsigned long long big = descriptor(b + kk * 32, 16, 1024);
                    const unsigned long long small = descriptor(b + BN * ROW + kk * 32, 16, 1024);
                    wgmma<BN>(dt, sa[kk], big, kk > 0);  // the small products first; kk = 0 starts dt afresh
                    wgmma<BN>(dt, ra[kk], small);
                    wgmma<BN>(dt, ra[kk], big);
                }
                wgmma_commit();
                wgmma_wait<0>();  // dt, A's registers and the buffer are free again
                release(s);
#pragma unroll
                for (int i = 0; i < NREG; ++i) d[i] += dt[i];
            }
#endif
#endif
            // ANCHOR_END: consumer

            // ANCHOR: epilogue
            // The accumulator layout of wgmma is mma.m16n8's, repeated: warp w holds rows 16w + g
            // and 16w + g + 8, and d[4j..4j+3] are columns 8j + 2t, 8j + 2t + 1 of those rows.
            const int g = lane / 4, t4 = lane % 4;
            const int r = w.at.x + consumer * 64 + warp * 16 + g;
#pragma unroll
            for (int j = 0; j < BN / 8; ++j) {
                if (HALVES && half && j >= BN / 16) break;
                const int c = w.at.y + 8 * j + 2 * t4;
                store_pair(C, r, c, M, N, d[4 * j], d[4 * j + 1], alpha, beta);
                store_pair(C, r + 8, c, M, N, d[4 * j + 2], d[4 * j + 3], alpha, beta);
            }
            // ANCHOR_END: epilogue
        }
    }
    // No block leaves while a peer may still signal its barriers.
    if (CLUSTER > 1) cluster_sync();
}
// ANCHOR_END: kernel
