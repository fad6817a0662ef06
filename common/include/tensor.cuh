// Device helpers shared by the tensor-core steps (7, 8, 13 and 14), included as "tensor.cuh" (the
// harness passes it to NVRTC from memory, like sgemm.cuh).
#pragma once

// ANCHOR: copy
// One 16-byte chunk global -> shared. On sm_80 and later with cp.async: the copy bypasses
// the registers and runs in the background until cp_async_wait. `valid == false` writes
// zeros (the source size is 0, nothing is read), which is how edge tiles are padded.
// `dst` is a shared-memory address (what __cvta_generic_to_shared returns) or a pointer.
__device__ __forceinline__ void copy16(unsigned dst, const void* src, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void copy16(void* dst, const void* src, bool valid) {
#if __CUDA_ARCH__ >= 800
    copy16(static_cast<unsigned>(__cvta_generic_to_shared(dst)), src, valid);
#else
    *reinterpret_cast<uint4*>(dst) = valid ? *reinterpret_cast<const uint4*>(src) : make_uint4(0, 0, 0, 0);
#endif
}
// One 4-byte value global -> shared, through L1 (cp.async.ca; 16 bytes is the least of .cg),
// zeros if `valid` is false: step 14's scales of B.
__device__ __forceinline__ void copy4(unsigned dst, const void* src, bool valid) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 4 : 0));
}
__device__ __forceinline__ void cp_async_commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}
// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}
// ANCHOR_END: copy

#if __CUDA_ARCH__ >= 800
// ANCHOR: tf32
// FP32 -> TF32 (10 mantissa bits), round to nearest with ties away from zero; the 13 low bits
// are left for the tensor cores to ignore.
__device__ __forceinline__ unsigned tf32(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

// The same rounding in two instructions (sm_90 spends three on cvt.rna, which also clears the
// 13 low bits that the tensor cores ignore anyway): half of TF32's last place added to the bits
// rounds the magnitude up exactly when the dropped bits are at least half a place (a carry into
// the exponent is the next binade, or infinity); NaN and infinities stay as they are. Step 8
// rounds every TF32 fragment it loads this way; step 9 measured slower with it (notes/step09.md)
// and keeps tf32().
__device__ __forceinline__ unsigned tf32_round(float x) {
    const unsigned u = __float_as_uint(x);
    return fabsf(x) < __uint_as_float(0x7f800000u) ? u + 0x1000u : u;
}

// ANCHOR: split
// 3xTF32: x = big + small, two TF32 numbers, in five instructions. big is x with its 13 low
// bits cleared (truncated, so the rest keeps x's sign); small is the rest's magnitude rounded
// by adding half of TF32's last place (the tensor cores drop the low bits), with x's sign, and
// at least the smallest normal float: where the rest is 0 (x fits in TF32) or NaN (x infinite:
// inf - inf, which fmaxf drops), an infinity in the other operand then gives inf, not
// 0 * inf = NaN, at a cost of at most 2^-126 |other|. A NaN x has a NaN big (unless its payload
// lies in the 13 low bits alone). Then big*big + big*small + small*big is a*b to within
// 2^-19 |a b|: the dropped small*small is below 2^-20 |a b|, each rounding of a small part below
// 2^-21 |x|. Steps 8 and 13 split every element of B in registers, in each warp that loads it,
// so the fewest instructions matter.
__device__ __forceinline__ void split_tf32(float x, unsigned& big, unsigned& small) {
    const unsigned u = __float_as_uint(x);
    big = u & 0xffffe000u;
    const float rest = fmaxf(fabsf(x - __uint_as_float(big)), 1.17549435e-38f);
    small = (__float_as_uint(rest) + 0x1000u) | (u & 0x80000000u);
}
// ANCHOR_END: split
// ANCHOR_END: tf32
#endif
