// The precisions of the ladder, one table for the host and every kernel (included as
// "precision.cuh"). The host passes the code of its precision as PREC (`Precision::code` in
// common/src/harness/precision.rs; a test checks that both sides agree), and a kernel reads what
// it needs of it from Prec<PREC>: the element types, the K of one tensor-core instruction, and the
// conversions of C. Code that differs by precision branches on these with `if constexpr`, so no
// function body holds an #if on the precision.
#pragma once

// ANCHOR: codes
enum PrecisionCode : int {
    FP32 = 0,      // FP32 in and out, FP32 arithmetic (steps 1-6)
    FP16 = 1,      // FP16 A and B, FP32 accumulation and C
    BF16 = 2,      // BF16 A and B, FP32 accumulation and C
    TF32 = 3,      // FP32 A and B rounded to TF32, FP32 accumulation and C
    FP64 = 4,      // FP64 everywhere
    TF32X3 = 5,    // FP32 A and B, each split into two TF32 parts, three products: FP32 accuracy
    FP16_C16 = 6,  // FP16 A and B, FP32 accumulation, FP16 C (what torch.matmul returns)
    BF16_C16 = 7,  // BF16 A and B, FP32 accumulation, BF16 C
    FP8 = 8,             // e4m3 A and B (B K-major), one scale each, FP32 accumulation, BF16 C
    FP8_C32 = 9,         // the same, FP32 C
    FP8_BLOCK = 10,      // e4m3 A and B with a scale per 1 x 128 of A and 128 x 128 of B, BF16 C
    FP8_BLOCK_C32 = 11,  // the same, FP32 C
};
// ANCHOR_END: codes

// FP32 -> FP16 / BF16 bits, rounded to nearest even, and back.
__device__ __forceinline__ unsigned short f32_to_f16(float x) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;\n" : "=h"(h) : "f"(x));
    return h;
}
__device__ __forceinline__ float f16_to_f32(unsigned short h) {
    float x;
    asm("cvt.f32.f16 %0, %1;\n" : "=f"(x) : "h"(h));
    return x;
}
__device__ __forceinline__ unsigned short f32_to_bf16(float x) {
#if __CUDA_ARCH__ >= 800
    unsigned short h;
    asm("cvt.rn.bf16.f32 %0, %1;\n" : "=h"(h) : "f"(x));
    return h;
#else
    // Before Ampere: add half of the last kept place (ties to even) to the bits; NaN stays NaN.
    const unsigned u = __float_as_uint(x);
    return isnan(x) ? 0x7fc0 : (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
#endif
}
__device__ __forceinline__ float bf16_to_f32(unsigned short h) { return __uint_as_float((unsigned)h << 16); }

// ANCHOR: traits
// in_t: how A and B are stored (16-bit types as their bits); out_t: how C is stored; scalar_t:
// alpha and beta. mma_k: the K of one tensor-core instruction (mma.sync m16n8k* and wgmma). to_c and
// from_c convert between the FP32 (FP64) accumulator and C's storage.
template <int P>
struct Prec;

template <>
struct Prec<FP32> {
    typedef float in_t, out_t, scalar_t;
    static constexpr int code = FP32, mma_k = 0;
    static constexpr bool bf16 = false, tf32 = false, split = false;
    static __device__ __forceinline__ out_t to_c(float x) { return x; }
    static __device__ __forceinline__ float from_c(out_t x) { return x; }
};
template <>
struct Prec<FP16> : Prec<FP32> {
    typedef unsigned short in_t;
    static constexpr int code = FP16, mma_k = 16;
};
template <>
struct Prec<BF16> : Prec<FP16> {
    static constexpr int code = BF16;
    static constexpr bool bf16 = true;
};
template <>
struct Prec<TF32> : Prec<FP32> {
    static constexpr int code = TF32, mma_k = 8;
    static constexpr bool tf32 = true;
};
template <>
struct Prec<TF32X3> : Prec<TF32> {
    static constexpr int code = TF32X3;
    static constexpr bool split = true;
};
template <>
struct Prec<FP64> {
    typedef double in_t, out_t, scalar_t;
    static constexpr int code = FP64, mma_k = 4;
    static constexpr bool bf16 = false, tf32 = false, split = false;
    static __device__ __forceinline__ out_t to_c(double x) { return x; }
    static __device__ __forceinline__ double from_c(out_t x) { return x; }
};
template <>
struct Prec<FP16_C16> : Prec<FP16> {
    typedef unsigned short out_t;
    static constexpr int code = FP16_C16;
    static __device__ __forceinline__ out_t to_c(float x) { return f32_to_f16(x); }
    static __device__ __forceinline__ float from_c(out_t x) { return f16_to_f32(x); }
};
template <>
struct Prec<BF16_C16> : Prec<BF16> {
    typedef unsigned short out_t;
    static constexpr int code = BF16_C16;
    static __device__ __forceinline__ out_t to_c(float x) { return f32_to_bf16(x); }
    static __device__ __forceinline__ float from_c(out_t x) { return bf16_to_f32(x); }
};
// ANCHOR_END: traits
