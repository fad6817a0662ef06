// How fast do step 15's loads run by themselves, in its own pattern? At the decode shapes the rung
// takes the time of its loads (loads-only.patch), and 86 blocks copying contiguous 16 KiB pieces
// read B at 3.39 TB/s one launch at a time (read-ceiling.cu). This copies B (K x N halves, N
// contiguous) into a ring of shared-memory buffers by the TMA's 2D boxes, as the rung's producer
// does, and takes away one piece of the rung at a time:
//   bulk:  contiguous 16 KiB pieces, the same bytes a block (the ceiling of read-ceiling.cu);
//   B:     the rung's boxes of B, 64 columns of N (128 bytes, swizzled) by BK rows of K, BM / 64
//          of them a K-tile, each block its tile of N rows down its share of K; the producer
//          waits only for its own copies to land before it reuses a buffer;
//   +hs:   a consumer warp waits for each buffer and frees it, the producer waits for that (the
//          rung's handshake, with nothing multiplied);
//   +A:    A's tile too (M x K, K contiguous, boxes of 64 of K by BN rows of M), from L2 after its
//          first read, as the rung loads it.
// Each row of the table is timed one launch at a time and back to back (as read-ceiling.cu), and
// says TB/s of B alone. Every block asks for at least ONE_AN_SM bytes of shared memory, so that no
// two share an SM, as the rung's never do (the table of 2026-12-01 ran without it, and its small
// rings could put two or three blocks on one SM). Outside the harness: built and run on the GPU machine with
//   nvcc -O3 -arch=sm_90a -o box-reads box-reads.cu && ./box-reads
#include "maps.cuh"   // the tensor maps
#include "timed.cuh"  // one launch at a time, or back to back

constexpr int MAX_STAGES = 16;

struct Cfg {
    int tiles;     // tiles of N rows; blocks = tiles * slices
    int slices;    // of K, each block one (tile, slice)
    int boxes;     // boxes of B a K-tile (BM / 64)
    int bk;        // rows of K a K-tile
    int a_rows;    // rows of A's box (BN); 0: no A
    int stages;    // ring buffers
    int handshake; // a consumer warp frees the buffers
    int ktiles;    // K / bk
};

__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void wait(unsigned bar, unsigned parity) {
    asm volatile("{\n.reg .pred p;\nW: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra W;\n}\n" ::"r"(bar), "r"(parity));
}
__device__ __forceinline__ void load2d(unsigned dst, const CUtensorMap* map, unsigned bar, int x, int y) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(dst),
                 "l"((unsigned long long)map), "r"(bar), "r"(x), "r"(y)
                 : "memory");
}

__global__ void __launch_bounds__(64) boxes(const __grid_constant__ CUtensorMap mb, const __grid_constant__ CUtensorMap ma, Cfg c,
                                            unsigned* sink) {
    extern __shared__ unsigned char raw[];
    __shared__ __align__(8) unsigned long long full[MAX_STAGES], empty[MAX_STAGES];
    const unsigned ring = (sa(raw) + 1023) & ~1023u;
    const int b_bytes = c.boxes * 64 * c.bk * 2, a_bytes = c.a_rows * c.bk * 2, stage = b_bytes + a_bytes;
    const int tile = blockIdx.x % c.tiles, slice = blockIdx.x / c.tiles;
    const int k0 = slice * c.ktiles / c.slices, k1 = (slice + 1) * c.ktiles / c.slices;
    if (threadIdx.x == 0) {
        for (int s = 0; s < c.stages; ++s) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&full[s])));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&empty[s])));
        }
        asm volatile("fence.mbarrier_init.release.cluster;");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int t = k0, it = 0; t < k1; ++t, ++it) {
            const int s = it % c.stages;
            if (it >= c.stages) {
                const int prev = it - c.stages;  // the buffer's last use
                if (c.handshake) wait(sa(&empty[s]), (prev / c.stages) % 2);
                else wait(sa(&full[s]), (prev / c.stages) % 2);
            }
            const unsigned bar = sa(&full[s]), dst = ring + s * stage;
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(stage));
            for (int j = 0; j < c.boxes; ++j) load2d(dst + j * 64 * c.bk * 2, &mb, bar, tile * c.boxes * 64 + j * 64, t * c.bk);
            for (int q = 0; q < c.bk / 64 && c.a_rows; ++q) load2d(dst + b_bytes + q * c.a_rows * 128, &ma, bar, t * c.bk + q * 64, 0);
        }
        if (!c.handshake)
            for (int it = k1 - k0 > c.stages ? k1 - k0 - c.stages : 0; it < k1 - k0; ++it) wait(sa(&full[it % c.stages]), (it / c.stages) % 2);
    } else if (threadIdx.x == 32 && c.handshake) {
        for (int it = 0; it < k1 - k0; ++it) {
            const int s = it % c.stages;
            wait(sa(&full[s]), (it / c.stages) % 2);
            asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(sa(&empty[s])));
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) sink[blockIdx.x] = *(volatile unsigned*)(raw + (ring - sa(raw)));
}

// Contiguous 16 KiB pieces, each block an even share of `bytes` (read-ceiling.cu's bulk).
__global__ void __launch_bounds__(32) bulk(const char* B, long long pieces, int stages, unsigned* sink) {
    extern __shared__ unsigned char raw[];
    __shared__ __align__(8) unsigned long long full[MAX_STAGES];
    const unsigned ring = (sa(raw) + 1023) & ~1023u;
    if (threadIdx.x != 0) return;
    for (int s = 0; s < stages; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&full[s])));
    asm volatile("fence.mbarrier_init.release.cluster;");
    const long long G = gridDim.x, b = blockIdx.x, u0 = b * pieces / G, u1 = (b + 1) * pieces / G;
    long long it = 0;
    for (long long u = u0; u < u1; ++u, ++it) {
        const int s = it % stages;
        if (it >= stages) wait(sa(&full[s]), ((it - stages) / stages) % 2);
        const unsigned bar = sa(&full[s]);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(16384));
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(ring + s * 16384),
                     "l"(B + u * 16384), "r"(16384), "r"(bar)
                     : "memory");
    }
    for (long long j = it > stages ? it - stages : 0; j < it; ++j) wait(sa(&full[j % stages]), (j / stages) % 2);
    sink[blockIdx.x] = *(volatile unsigned*)(raw + (ring - sa(raw)));
}

// A 2D map of halves, `cols` contiguous, boxes of 64 columns (128 bytes, swizzled) by `rows`.
static CUtensorMap map2d(void* base, size_t cols, size_t rows, unsigned box_rows) {
    const cuuint64_t dims[2] = {cols, rows}, strides[1] = {cols * 2};
    const cuuint32_t box[2] = {64, box_rows};
    return map_halves(base, 2, dims, strides, box);
}

int main() {
    char *B, *A;
    unsigned* sink;
    const size_t most = (size_t)11008 * 4096 * 2;
    if (cudaMalloc(&B, most) != cudaSuccess || cudaMalloc(&A, 256 * 11008 * 2) != cudaSuccess || cudaMalloc(&sink, 1 << 16) != cudaSuccess) {
        printf("error: no usable GPU (%s)\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    cudaMemset(B, 1, most);
    cudaMemset(A, 1, 256 * 11008 * 2);
    // The opt-in limit counts the static shared memory too (the barriers): leave it 1 KiB.
    constexpr int SMEM = 226 * 1024, ONE_AN_SM = 120 * 1024;  // two of 120 KiB exceed an SM's 228
    auto room = [](int bytes) { return bytes > ONE_AN_SM ? bytes : ONE_AN_SM; };
    if (cudaFuncSetAttribute(boxes, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM) != cudaSuccess ||
        cudaFuncSetAttribute(bulk, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM) != cudaSuccess) {
        printf("error: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    printf("| shape (the rung's tile) | loads | blocks | buffers | one at a time: us | TB/s of B | back to back: us | TB/s of B |\n");
    printf("|---|---|---:|---:|---:|---:|---:|---:|\n");
    struct Shape { int m, n, k, bm, bn, slices, stages; } shapes[] = {
        {128, 11008, 4096, 128, 128, 1, 6},  // 86 tiles of 128 x 128, all of K
        {64, 11008, 4096, 128, 64, 1, 6},    // 86 tiles of 128 x 64
        {64, 4096, 4096, 64, 64, 2, 6},      // 64 tiles of 64 x 64, two slices
        {1, 4096, 11008, 64, 8, 2, 8},       // 64 tiles of 64 x 8, two slices
    };
    for (const Shape& s : shapes) {
        const size_t bytes = (size_t)s.n * s.k * 2;
        const CUtensorMap mb64 = map2d(B, s.n, s.k, 64), mb128 = map2d(B, s.n, s.k, 128), ma = map2d(A, s.k, s.m, s.bn);
        const int tiles = (s.n + s.bm - 1) / s.bm, blocks = tiles * s.slices;
        char tag[64];
        snprintf(tag, sizeof tag, "%d x %d x %d (%d x %d)", s.m, s.n, s.k, s.bm, s.bn);
        auto row = [&](const char* name, int grid, int buffers, auto launch) {
            launch();
            cudaError_t e = cudaGetLastError();  // a launch refused
            if (e == cudaSuccess) e = cudaDeviceSynchronize();  // or one that failed
            if (e != cudaSuccess) {
                printf("| %s | %s | %d | %d | error: %s | | | |\n", tag, name, grid, buffers, cudaGetErrorString(e));
                return;
            }
            const float one = timed(launch, 1), b2b = timed(launch, 20);
            printf("| %s | %s | %d | %d | %.2f | %.2f | %.2f | %.2f |\n", tag, name, grid, buffers, one, bytes / (one * 1e-6) / 1e12, b2b,
                   bytes / (b2b * 1e-6) / 1e12);
        };
        row("bulk 16 KiB", blocks, 6, [&] { bulk<<<blocks, 32, room(6 * 16384 + 1024)>>>(B, bytes / 16384, 6, sink); });
        auto variant = [&](const char* name, int bk, bool hs, bool with_a, int stages) {
            Cfg c{tiles, s.slices, s.bm / 64, bk, with_a ? s.bn : 0, stages, hs ? 1 : 0, s.k / bk};
            const int stage = c.boxes * 64 * bk * 2 + c.a_rows * bk * 2;
            if (stages * stage + 1024 > SMEM) return;
            const CUtensorMap& mb = bk == 64 ? mb64 : mb128;
            row(name, blocks, stages, [&] { boxes<<<blocks, 64, room(stages * stage + 1024)>>>(mb, ma, c, sink); });
        };
        variant("B", 64, false, false, s.stages);
        variant("B +hs", 64, true, false, s.stages);
        variant("B +hs +A (the rung's loads)", 64, true, true, s.stages);
        variant("B +hs +A, twice the buffers", 64, true, true, 2 * s.stages);
        variant("B +hs +A, K-tiles of 128", 128, true, true, s.stages / 2);
        variant("B, K-tiles of 128", 128, false, false, s.stages / 2);
        const cudaError_t err = cudaDeviceSynchronize();
        if (err != cudaSuccess) { printf("error: %s\n", cudaGetErrorString(err)); return 1; }
    }
    return 0;
}
