// FP32 -> FP8 (e4m3) with scales, on the GPU: the harness's quantization of A and B for the FP8
// precisions (common/src/harness/quantize.rs). Not a rung and never timed. A stored value q stands
// for q * scale; each scale is the power of two that brings its block's largest magnitude to at
// most 448, e4m3's largest finite value, so that dequantizing is exact.

// The scale of a block whose largest finite magnitude is `amax`: 2^ceil(log2(amax / 448)); 1 for
// a block of zeros.
__device__ float scale_for(float amax) {
    if (!(amax > 0.0f)) return 1.0f;
    int e;
    const float m = frexpf(amax / 448.0f, &e);  // amax / 448 = m * 2^e, m in [0.5, 1)
    return ldexpf(1.0f, m == 0.5f ? e - 1 : e);
}

// e4m3 has no infinity: an infinite input becomes NaN (as a cast in PyTorch makes it), so that
// it still shows in C; finite values beyond 448 saturate (they cannot occur: the scale prevents it).
__device__ unsigned char to_e4m3(float x) {
    if (isinf(x)) return 0x7f;
    unsigned short pair;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(pair) : "f"(0.0f), "f"(x));
    return (unsigned char)(pair & 0xff);
}

// |x| where it is finite: a block's scale comes from its finite values.
__device__ float magnitude(float x) { return isfinite(x) ? fabsf(x) : 0.0f; }

__device__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
    return v;
}

// Per tensor, pass 1: the largest |x| of `n` values into *amax (as bits: non-negative floats
// order as their bits do).
extern "C" __global__ void amax_tensor(const float* x, long long n, unsigned* amax) {
    float m = 0.0f;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        m = fmaxf(m, magnitude(x[i]));
    m = warp_max(m);
    if (threadIdx.x % 32 == 0) atomicMax(amax, __float_as_uint(m));
}

// Per tensor, pass 2: x (rows x cols, row-major) into q with the tensor's scale, transposed
// (q is cols x rows) when `transpose`; the scale into *scale.
extern "C" __global__ void quantize_tensor(const float* x, int rows, int cols, int transpose, const unsigned* amax,
                                           unsigned char* q, float* scale) {
    const float s = scale_for(__uint_as_float(*amax));
    const long long n = (long long)rows * cols;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const long long r = i / cols, c = i % cols;
        q[transpose ? c * rows + r : i] = to_e4m3(x[i] / s);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) *scale = s;
}

// A with a scale per row per 128 of K: one warp per (row, K-block), 4 values per lane. Scale
// (kb, m) at scales[kb * M4 + m]: the rows of a K-block side by side, M rounded up to 4 (the
// padding stays zero).
extern "C" __global__ void quantize_rows(const float* x, int M, int K, unsigned char* q, float* scales) {
    const int KB = (K + 127) / 128;
    const long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (warp >= (long long)M * KB) return;
    const int m = (int)(warp / KB), kb = (int)(warp % KB);
    float v[4], a = 0.0f;
    for (int i = 0; i < 4; ++i) {
        const int k = kb * 128 + i * 32 + lane;
        v[i] = k < K ? x[(long long)m * K + k] : 0.0f;
        a = fmaxf(a, magnitude(v[i]));
    }
    const float s = scale_for(warp_max(a));
    for (int i = 0; i < 4; ++i) {
        const int k = kb * 128 + i * 32 + lane;
        if (k < K) q[(long long)m * K + k] = to_e4m3(v[i] / s);
    }
    if (lane == 0) scales[(long long)kb * ((M + 3) / 4 * 4) + m] = s;
}

// B (K x N, row-major) with a scale per 128 x 128 block, stored K-major (q is N x K): one block of
// 256 threads per tile. Scale (nb, kb) at scales[nb * KB4 + kb]: the K-blocks of a row of tiles side
// by side, KB rounded up to 4 (the padding stays zero).
extern "C" __global__ void quantize_blocks(const float* x, int K, int N, unsigned char* q, float* scales) {
    const int KB = (K + 127) / 128, kb = blockIdx.x, nb = blockIdx.y;
    __shared__ float part[8];
    float a = 0.0f;
    for (int i = threadIdx.x; i < 128 * 128; i += blockDim.x) {
        const int k = kb * 128 + i / 128, n = nb * 128 + i % 128;
        if (k < K && n < N) a = fmaxf(a, magnitude(x[(long long)k * N + n]));
    }
    a = warp_max(a);
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = a;
    __syncthreads();
    a = 0.0f;
    for (int w = 0; w < 8; ++w) a = fmaxf(a, part[w]);
    const float s = scale_for(a);
    // Read along N (coalesced), write each value at (n, k) of the K-major copy.
    for (int i = threadIdx.x; i < 128 * 128; i += blockDim.x) {
        const int k = kb * 128 + i / 128, n = nb * 128 + i % 128;
        if (k < K && n < N) q[(long long)n * K + k] = to_e4m3(x[(long long)k * N + n] / s);
    }
    if (threadIdx.x == 0) scales[(long long)nb * ((KB + 3) / 4 * 4) + kb] = s;
}
