// What is the fastest this GPU reads a decode GEMM's weight once? B at 11008 x 4096 halves is
// 90.2 MB, more than L2 holds, so every byte comes from DRAM. The target of 3.8 TB/s (23.7 us) is
// 90% of the device-to-device copy rate, which counts bytes read plus bytes written; this measures
// reads alone, with no GEMM around them, two ways, each timed one launch at a time and back to back:
//   ldg:  every thread of `blocks_per_sm` blocks of 1024 an SM loads 16 bytes at a time, the blocks
//         striding over B, and folds them into one word so that the loads are not dropped;
//   bulk: one thread a block copies contiguous 16 KiB pieces into a ring of `stages` shared-memory
//         buffers (cp.async.bulk, as the TMA does for step 15's producer), nothing multiplied; on
//         every SM, and on as few SMs as step 15's tiles take (86 or 64 blocks).
// The same at 2 GiB gives the rate a long read settles at. Outside the harness: built and run on
// the GPU machine with
//   nvcc -O3 -arch=sm_90a -o read-ceiling read-ceiling.cu && ./read-ceiling
#include <cstdio>
#include <cuda_runtime.h>
#include "timed.cuh"  // one launch at a time, or back to back

constexpr int BUF = 16384, MAX_STAGES = 12;

__global__ void __launch_bounds__(1024) ldg(const uint4* B, size_t n16, unsigned* sink) {
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n16; i += (size_t)gridDim.x * blockDim.x) {
        const uint4 v = __ldcs(B + i);  // streamed: read once, not kept in L2
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) sink[blockIdx.x] = acc;  // never true for the data written below
}

__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__global__ void __launch_bounds__(32) bulk(const char* B, long long pieces, int stages, unsigned* sink) {
    extern __shared__ __align__(1024) char ring[];
    __shared__ __align__(8) unsigned long long full[MAX_STAGES];
    if (threadIdx.x != 0) return;
    for (int s = 0; s < stages; ++s) asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"(sa(&full[s])));
    asm volatile("fence.mbarrier_init.release.cluster;");
    const long long G = gridDim.x, b = blockIdx.x, u0 = b * pieces / G, u1 = (b + 1) * pieces / G;
    auto wait = [&](long long j) {
        const unsigned bar = sa(&full[j % stages]), parity = (j / stages) % 2;
        asm volatile("{\n.reg .pred p;\nW: mbarrier.try_wait.parity.shared.b64 p, [%0], %1;\n@!p bra W;\n}\n" ::"r"(bar), "r"(parity));
    };
    long long it = 0;
    for (long long u = u0; u < u1; ++u, ++it) {
        const int s = it % stages;
        if (it >= stages) wait(it - stages);  // the buffer's last copy has landed
        const unsigned bar = sa(&full[s]), dst = sa(ring + s * BUF);
        asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" ::"r"(bar), "r"(BUF));
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
                     "l"(B + u * BUF), "r"(BUF), "r"(bar) : "memory");
    }
    for (long long j = it > stages ? it - stages : 0; j < it; ++j) wait(j);
    sink[blockIdx.x] = ((volatile unsigned*)ring)[0];
}

int main() {
    const size_t decode = (size_t)11008 * 4096 * 2, big = (size_t)2 << 30;
    char* B;
    unsigned* sink;
    if (cudaMalloc(&B, big) != cudaSuccess || cudaMalloc(&sink, 1 << 16) != cudaSuccess) return 1;
    cudaMemset(B, 1, big);
    int sms;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaFuncSetAttribute(bulk, cudaFuncAttributeMaxDynamicSharedMemorySize, MAX_STAGES * BUF);
    printf("| bytes | kernel | blocks | one at a time: us | TB/s | back to back: us | TB/s |\n|---|---|---:|---:|---:|---:|---:|\n");
    for (size_t bytes : {decode, big}) {
        auto row = [&](const char* name, int blocks, auto launch) {
            const float one = timed(launch, 1), b2b = timed(launch, 20);
            printf("| %zu | %s | %d | %.1f | %.2f | %.1f | %.2f |\n", bytes, name, blocks, one, bytes / (one * 1e-6) / 1e12, b2b,
                   bytes / (b2b * 1e-6) / 1e12);
        };
        for (int per_sm : {1, 2}) {
            const int blocks = sms * per_sm;
            row(per_sm == 1 ? "ldg, 1024 threads x 1 an SM" : "ldg, 1024 threads x 2 an SM", blocks,
                [&] { ldg<<<blocks, 1024>>>((const uint4*)B, bytes / 16, sink); });
        }
        for (int stages : {4, 8, 12}) {
            char name[64];
            snprintf(name, sizeof name, "bulk 16 KiB, %d buffers", stages);
            const long long pieces = bytes / BUF;
            row(name, sms, [&] { bulk<<<sms, 32, stages * BUF>>>(B, pieces, stages, sink); });
        }
        // On as many SMs as step 15's tiles: 86 of 128 rows at N = 11008, 64 of 64 rows at N = 4096.
        for (int blocks : {86, 64}) {
            const long long pieces = bytes / BUF;
            row("bulk 16 KiB, 6 buffers", blocks, [&] { bulk<<<blocks, 32, 6 * BUF>>>(B, pieces, 6, sink); });
        }
    }
    const cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) { printf("error: %s\n", cudaGetErrorString(err)); return 1; }
    return 0;
}
