// How fast can 132 SMs stream a decode GEMM's weight, B (4096 x 11008 halves, row-major), by bulk
// copies into a ring of shared-memory buffers, as step 15's producer does, for each way of cutting
// it? A copy of `width` bytes of one row of B lands in a buffer; a buffer is 16 KiB, `16384 / width`
// rows of one strip of columns. Nothing is multiplied: this is the ceiling of the loads alone.
//   order 0 (stream-K, step 15's): the (strip, row group) units strip by strip, each block a run of
//            consecutive units: blocks at the same moment read different rows of B;
//   order 1 (lockstep): units row group by row group, block b taking units b, b + blocks, ...: the
//            blocks at the same moment read whole rows of B, one after another;
//   order 2 (contiguous): each block one contiguous stretch of B's bytes.
// Outside the harness (no GEMM, no tensor maps): built and run on the GPU machine with
//   nvcc -O3 -arch=sm_90a -o stream stream.cu && ./stream
#include <cstdio>
#include <cuda_runtime.h>

constexpr int K = 4096, N = 11008, PITCH = N * 2, BUF = 16384, MAX_STAGES = 12;

__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__global__ void __launch_bounds__(32) stream(const char* B, int width, int order, int stages, unsigned* sink) {
    extern __shared__ __align__(1024) char ring[];
    __shared__ __align__(8) unsigned long long full[MAX_STAGES];
    if (threadIdx.x != 0) return;
    for (int s = 0; s < stages; ++s) asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"(sa(&full[s])));
    asm volatile("fence.mbarrier_init.release.cluster;");
    const int rows = BUF / width, strips = PITCH / width, groups = K / rows;
    const long long units = order == 2 ? (long long)K * PITCH / BUF : (long long)strips * groups;
    const long long G = gridDim.x, b = blockIdx.x;
    long long u0 = b * units / G, u1 = (b + 1) * units / G, step = 1;
    if (order == 1) u0 = b, u1 = units, step = G;
    long long it = 0;  // copies issued: copy j fills buffer j % stages, its (j / stages)-th use
    auto wait = [&](long long j) {
        const unsigned bar = sa(&full[j % stages]), parity = (j / stages) % 2;
        asm volatile("{\n.reg .pred p;\nW: mbarrier.try_wait.parity.shared.b64 p, [%0], %1;\n@!p bra W;\n}\n" ::"r"(bar), "r"(parity));
    };
    for (long long u = u0; u < u1; u += step, ++it) {
        const int s = it % stages;
        if (it >= stages) wait(it - stages);  // the buffer's last copy has landed
        const unsigned bar = sa(&full[s]), dst = sa(ring + s * BUF);
        asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" ::"r"(bar), "r"(BUF));
        if (order == 2) {
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
                         "l"(B + u * BUF), "r"(BUF), "r"(bar) : "memory");
        } else {
            const long long strip = order == 0 ? u / groups : u % strips, group = order == 0 ? u % groups : u / strips;
            for (int r = 0; r < rows; ++r)
                asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst + r * width),
                             "l"(B + (group * rows + r) * PITCH + strip * width), "r"(width), "r"(bar) : "memory");
        }
    }
    for (long long j = it > stages ? it - stages : 0; j < it; ++j) wait(j);
    sink[blockIdx.x] = ((volatile unsigned*)ring)[0];
}

int main() {
    char* B;
    unsigned* sink;
    cudaMalloc(&B, (size_t)K * PITCH);
    cudaMemset(B, 1, (size_t)K * PITCH);
    cudaMalloc(&sink, 4096 * 4);
    int sms;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaFuncSetAttribute(stream, cudaFuncAttributeMaxDynamicSharedMemorySize, MAX_STAGES * BUF);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    printf("| order | width (B) | stages | blocks | us | GB/s |\n|---|---:|---:|---:|---:|---:|\n");
    struct Case { int order, width, stages, per_sm; };
    const Case cases[] = {{0, 128, 8, 1},  {0, 256, 8, 1},  {0, 512, 8, 1},  {0, 1024, 8, 1}, {0, 2048, 8, 1},
                          {0, 256, 4, 1},  {0, 256, 12, 1}, {0, 256, 6, 2},  {0, 1024, 6, 2}, {1, 256, 8, 1},
                          {1, 1024, 8, 1}, {2, 0, 8, 1},    {2, 0, 4, 1},   {2, 0, 12, 1},  {2, 0, 6, 2}};
    for (const Case& c : cases) {
        const int width = c.order == 2 ? BUF : c.width, blocks = sms * c.per_sm;
        float best = 1e9f, sum = 0.0f;
        for (int rep = 0; rep < 30; ++rep) {
            cudaEventRecord(e0);
            stream<<<blocks, 32, c.stages * BUF>>>(B, width, c.order, c.stages, sink);
            cudaEventRecord(e1);
            cudaEventSynchronize(e1);
            float ms;
            cudaEventElapsedTime(&ms, e0, e1);
            if (rep >= 5) best = ms < best ? ms : best, sum += ms;
        }
        cudaError_t err = cudaGetLastError();
        if (err != cudaSuccess) { printf("error: %s\n", cudaGetErrorString(err)); return 1; }
        const float mean = sum / 25;
        printf("| %s | %d | %d | %d | %.1f (best %.1f) | %.0f |\n", c.order == 0 ? "stream-K" : c.order == 1 ? "lockstep" : "contiguous",
               c.order == 2 ? BUF : c.width, c.stages, blocks, 1000 * mean, 1000 * best, (double)K * PITCH / (mean * 1e-3) / 1e9);
    }
    return 0;
}
