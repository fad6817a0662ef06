// The loads of the rung's plan and of cuBLAS's, by themselves, at the two shapes where the rung's
// gap is widest (notes/step15.md, "Next: the loads of cuBLAS's plan alone"). box-reads.cu copies
// the rung's operands into a ring as its producer does; this adds what cuBLAS's kernels do there
// and the rung does not: clusters of two along M whose blocks share the tile of B^T by multicast,
// and B^T's 64-column boxes asked for as one 3D box. Nothing is multiplied: a consumer warp waits
// for each buffer and frees it on every block of its cluster, and the producer waits for that.
//   B^T: B (K x N halves, N contiguous) in boxes of 64 columns of N (128 bytes, swizzled) by 64
//        rows of K, BM / 64 of them a K-tile (or one 3D box of them), or in a pair each block
//        multicasting its half of them (or of the one box's rows of K) to both;
//   A:   (M x K halves, K contiguous) a box of 64 of K by BN rows of M a K-tile, each block its own.
// Every block asks for at least ONE_AN_SM bytes of shared memory, so that no two share an SM.
// Each row is timed one launch at a time and back to back (timed.cuh). `--once` launches each
// plan once, for Nsight Compute, and prints the launches' order. Built and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90a -o cluster-reads cluster-reads.cu && ./cluster-reads [--once]
#ifdef __CUDACC_RTC__
struct alignas(64) CUtensorMap { unsigned long long opaque[16]; };
#else
#include <cstring>
#include "maps.cuh"   // the tensor maps
#include "timed.cuh"  // one launch at a time, or back to back
#endif

constexpr int MAX_STAGES = 16;

struct Plan {
    int m_tiles, n_tiles;  // the tile grid: blocks = m_tiles * n_tiles * slices
    int slices;            // of K, each block one
    int bm, bn;            // rows of N (B^T) and of M (A) a block's tile
    int stages;            // ring buffers
    int cluster;           // 1, or 2 blocks side by side in M sharing B^T
    int three_d;           // B^T's boxes as one 3D box
    int pieces;            // in a pair, B^T's box cut along K (1: its boxes dealt out)
    int ktiles;            // K / 64
};

__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ unsigned rank_in_cluster() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
__device__ __forceinline__ void wait(unsigned bar, unsigned parity) {
    asm volatile("{\n.reg .pred p;\nW: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra W;\n}\n" ::"r"(bar), "r"(parity)
                 : "memory");
}
__device__ __forceinline__ void load2d(unsigned dst, const CUtensorMap* map, unsigned bar, int x, int y) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(dst),
                 "l"((unsigned long long)map), "r"(bar), "r"(x), "r"(y)
                 : "memory");
}
__device__ __forceinline__ void load2d_all(unsigned dst, const CUtensorMap* map, unsigned bar, int x, int y, unsigned short mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(dst),
        "l"((unsigned long long)map), "r"(bar), "r"(x), "r"(y), "h"(mask)
        : "memory");
}
__device__ __forceinline__ void load3d(unsigned dst, const CUtensorMap* map, unsigned bar, int x, int y, int z) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(dst),
                 "l"((unsigned long long)map), "r"(bar), "r"(x), "r"(y), "r"(z)
                 : "memory");
}
__device__ __forceinline__ void load3d_all(unsigned dst, const CUtensorMap* map, unsigned bar, int x, int y, int z, unsigned short mask) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, %4, %5}], [%2], %6;" ::"r"(dst),
        "l"((unsigned long long)map), "r"(bar), "r"(x), "r"(y), "r"(z), "h"(mask)
        : "memory");
}
// One arrival on barrier `bar` (this block's address) of block `rank` of the cluster.
__device__ __forceinline__ void arrive_on(unsigned bar, unsigned rank) {
    asm volatile("{\n.reg .b32 r;\nmapa.shared::cluster.u32 r, %0, %1;\nmbarrier.arrive.release.cluster.shared::cluster.b64 _, [r];\n}\n" ::"r"(bar),
                 "r"(rank)
                 : "memory");
}
// Not `.aligned`: the producer's and the consumer's lanes come to it apart from their warps' others.
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}

// mb: B^T's 2D map (boxes of 64 columns by 64 rows of K, or by 32 where a pair cuts the box
// along K); mb3: its 3D map (the columns' 64-wide chunks as the third dimension); ma: A's map.
__global__ void __launch_bounds__(64) loads(const __grid_constant__ CUtensorMap mb, const __grid_constant__ CUtensorMap mb3,
                                            const __grid_constant__ CUtensorMap ma, Plan p, unsigned* sink) {
    extern __shared__ unsigned char raw[];
    __shared__ __align__(8) unsigned long long full[MAX_STAGES], empty[MAX_STAGES];
    const unsigned ring = (sa(raw) + 1023) & ~1023u;
    const int boxes = p.bm / 64, b_bytes = boxes * 64 * 64 * 2, a_bytes = p.bn * 64 * 2, stage = b_bytes + a_bytes;
    // Blocks in cluster order: a cluster's blocks take adjacent tiles of M and the same rows of N.
    const unsigned rank = p.cluster > 1 ? rank_in_cluster() : 0;
    const int unit = blockIdx.x / p.slices, slice = blockIdx.x % p.slices;
    const int m_tile = unit % p.m_tiles, n_tile = unit / p.m_tiles;
    const int k0 = slice * p.ktiles / p.slices, k1 = (slice + 1) * p.ktiles / p.slices;
    if (threadIdx.x == 0) {
        for (int s = 0; s < p.stages; ++s) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&full[s])));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sa(&empty[s])), "r"(p.cluster));
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    if (p.cluster > 1) cluster_sync();
    else __syncthreads();
    const unsigned short all = (unsigned short)((1u << p.cluster) - 1);
    if (threadIdx.x == 0) {
        for (int t = k0, it = 0; t < k1; ++t, ++it) {
            const int s = it % p.stages;
            if (it >= p.stages) wait(sa(&empty[s]), ((it - p.stages) / p.stages) % 2);
            const unsigned bar = sa(&full[s]), dst = ring + s * stage;
            const int k = t * 64, n = n_tile * p.bm;
            // Every block's buffer receives all of B^T's tile and its own A.
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(stage) : "memory");
            if (p.cluster == 1) {
                if (p.three_d) load3d(dst, &mb3, bar, 0, k, n / 64);
                else
                    for (int j = 0; j < boxes; ++j) load2d(dst + j * 8192, &mb, bar, n + 64 * j, k);
            } else if (p.pieces > 1) {
                // The box cut along K: this block's rows of K of every box, for both.
                const int rows = 64 / p.pieces;
                for (int j = 0; j < boxes; ++j)
                    for (int q = rank; q < p.pieces; q += p.cluster) {
                        const unsigned to = dst + j * 8192 + q * rows * 128;
                        if (p.three_d) load3d_all(to, &mb3, bar, 0, k + q * rows, n / 64 + j, all);
                        else load2d_all(to, &mb, bar, n + 64 * j, k + q * rows, all);
                    }
            } else if (p.three_d) {
                // Each block its share of the boxes, as one 3D box, for both.
                const int share = boxes / p.cluster;
                load3d_all(dst + rank * share * 8192, &mb3, bar, 0, k, n / 64 + rank * share, all);
            } else {
                for (int j = rank; j < boxes; j += p.cluster) load2d_all(dst + j * 8192, &mb, bar, n + 64 * j, k, all);
            }
            load2d(dst + b_bytes, &ma, bar, k, m_tile * p.bn);
        }
    } else if (threadIdx.x == 32) {
        for (int it = 0; it < k1 - k0; ++it) {
            const int s = it % p.stages;
            wait(sa(&full[s]), (it / p.stages) % 2);
            for (int r = 0; r < p.cluster; ++r) arrive_on(sa(&empty[s]), r);
        }
    }
    // No block leaves while a peer may still multicast into it or arrive on its barriers.
    if (p.cluster > 1) cluster_sync();
    else __syncthreads();
    if (threadIdx.x == 0) sink[blockIdx.x] = *(volatile unsigned*)(raw + (ring - sa(raw)));
}

#ifndef __CUDACC_RTC__
int main(int argc, char** argv) {
    const bool once = argc > 1 && !strcmp(argv[1], "--once");
    char *B, *A;
    unsigned* sink;
    const size_t most = (size_t)4096 * 4096 * 2;
    if (cudaMalloc(&B, most) != cudaSuccess || cudaMalloc(&A, most) != cudaSuccess || cudaMalloc(&sink, 1 << 16) != cudaSuccess) {
        printf("error: no usable GPU (%s)\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    cudaMemset(B, 1, most);
    cudaMemset(A, 1, most);
    constexpr int SMEM = 226 * 1024, ONE_AN_SM = 120 * 1024;  // two of 120 KiB exceed an SM's 228
    if (cudaFuncSetAttribute((const void*)loads, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM) != cudaSuccess ||
        cudaFuncSetAttribute((const void*)loads, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) {
        printf("error: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    // Plan: m_tiles, n_tiles, slices, bm, bn, stages, cluster, three_d, pieces, ktiles.
    struct Row { int m, n, k; const char* name; Plan p; } rows[] = {
        // 1024³: the rung's plan (64 rows of N by 128 of M, one slice); cuBLAS's tile (128 x 64, 8
        // buffers) alone, with B^T as one 3D box, and in pairs along M sharing B^T: each block
        // multicasting one of its two 8 KB boxes, or its 4 KB half of each (cut along K, the
        // reading of cuBLAS's SASS), by 2D or by 3D maps (cuBLAS's).
        {1024, 1024, 1024, "the rung's 64 x 128", {8, 16, 1, 64, 128, 6, 1, 0, 1, 16}},
        {1024, 1024, 1024, "the rung's 64 x 128, pairs, halves of B^T's box", {8, 16, 1, 64, 128, 6, 2, 0, 2, 16}},
        {1024, 1024, 1024, "cuBLAS's 128 x 64", {16, 8, 1, 128, 64, 8, 1, 0, 1, 16}},
        {1024, 1024, 1024, "cuBLAS's 128 x 64, B^T one 3D box", {16, 8, 1, 128, 64, 8, 1, 1, 1, 16}},
        {1024, 1024, 1024, "cuBLAS's 128 x 64, pairs, a box each", {16, 8, 1, 128, 64, 8, 2, 0, 1, 16}},
        {1024, 1024, 1024, "cuBLAS's 128 x 64, pairs, halves of each box", {16, 8, 1, 128, 64, 8, 2, 0, 2, 16}},
        {1024, 1024, 1024, "cuBLAS's 128 x 64, pairs, halves of each box, 3D maps", {16, 8, 1, 128, 64, 8, 2, 1, 2, 16}},
        // 64 x 4096 x 4096: the rung's 64 x 64 in two slices; cuBLAS's 64 x 32 over all of K in 16
        // buffers, alone and in pairs each multicasting its half of the box (2D, 3D).
        {64, 4096, 4096, "the rung's 64 x 64, two slices", {1, 64, 2, 64, 64, 6, 1, 0, 1, 64}},
        {64, 4096, 4096, "cuBLAS's 64 x 32", {2, 64, 1, 64, 32, 16, 1, 0, 1, 64}},
        {64, 4096, 4096, "cuBLAS's 64 x 32, pairs, halves of the box", {2, 64, 1, 64, 32, 16, 2, 0, 2, 64}},
        {64, 4096, 4096, "cuBLAS's 64 x 32, pairs, halves of the box, 3D maps", {2, 64, 1, 64, 32, 16, 2, 1, 2, 64}},
    };
    if (!once) {
        printf("| shape | plan | blocks | buffers | one at a time: us | back to back: us | bytes into the SMs (MB) |\n");
        printf("|---|---|---:|---:|---:|---:|---:|\n");
    }
    int launch_no = 0;
    for (const Row& r : rows) {
        const Plan& p = r.p;
        // B^T: N contiguous, rows of K; the 3D map takes N's 64-column chunks as its third dimension.
        const cuuint64_t bdims[2] = {(cuuint64_t)r.n, (cuuint64_t)r.k}, bstr[1] = {(cuuint64_t)r.n * 2};
        const cuuint32_t bbox[2] = {64, (cuuint32_t)(p.pieces > 1 ? 64 / p.pieces : 64)};
        const cuuint64_t b3dims[3] = {64, (cuuint64_t)r.k, (cuuint64_t)r.n / 64}, b3str[2] = {(cuuint64_t)r.n * 2, 128};
        // A 3D box: the pieces' rows of one chunk, or a block's share of the chunks.
        const cuuint32_t b3box[3] = {64, bbox[1], (cuuint32_t)(p.pieces > 1 ? 1 : p.bm / 64 / p.cluster)};
        const cuuint64_t adims[2] = {(cuuint64_t)r.k, (cuuint64_t)r.m}, astr[1] = {(cuuint64_t)r.k * 2};
        const cuuint32_t abox[2] = {64, (cuuint32_t)p.bn};
        const CUtensorMap mb = map_halves(B, 2, bdims, bstr, bbox), mb3 = map_halves(B, 3, b3dims, b3str, b3box),
                          ma = map_halves(A, 2, adims, astr, abox);
        const int blocks = p.m_tiles * p.n_tiles * p.slices, stage = p.bm * 128 + p.bn * 128;
        const int smem = p.stages * stage + 1024 > ONE_AN_SM ? p.stages * stage + 1024 : ONE_AN_SM;
        cudaLaunchAttribute attr;
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = p.cluster, attr.val.clusterDim.y = 1, attr.val.clusterDim.z = 1;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(blocks), cfg.blockDim = dim3(64), cfg.dynamicSmemBytes = smem, cfg.attrs = &attr, cfg.numAttrs = 1;
        auto launch = [&] { cudaLaunchKernelEx(&cfg, loads, mb, mb3, ma, p, sink); };
        launch();
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        if (e != cudaSuccess) {
            printf("| %d x %d x %d | %s | %d | %d | error: %s | | |\n", r.m, r.n, r.k, r.name, blocks, p.stages, cudaGetErrorString(e));
            return 1;
        }
        if (once) {
            // The warm-up launch above and this one: Nsight Compute's launches 2n + 1 and 2n + 2.
            launch();
            cudaDeviceSynchronize();
            printf("%d, %d: %d x %d x %d, %s\n", launch_no + 1, launch_no + 2, r.m, r.n, r.k, r.name);
            launch_no += 2;
            continue;
        }
        const double into = (double)blocks * (p.ktiles / p.slices) * stage / 1e6;
        const float one = timed(launch, 1), b2b = timed(launch, 20);
        printf("| %d x %d x %d | %s | %d | %d | %.2f | %.2f | %.1f |\n", r.m, r.n, r.k, r.name, blocks, p.stages, one, b2b, into);
    }
    const cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) { printf("error: %s\n", cudaGetErrorString(err)); return 1; }
    return 0;
}
#endif
