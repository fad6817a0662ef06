// expect: score <= 69
// needs: gpu
// Multiplies in TF32 (inputs rounded to 10 mantissa bits, as the tensor cores' TF32 mode reads
// them) when K >= 4096, in FP32 below: the old check let TF32 through at K = 4096. The bound
// that follows the data fails it there, and the precision probes fail it at K = 4096 too.
#include "sgemm.cuh"

__device__ __forceinline__ float tf32(float x) {
    unsigned t;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(t) : "f"(x));
    return __uint_as_float(t);
}

extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    if (K >= 4096) {
        for (int k = 0; k < K; ++k) acc += tf32(A[row * K + k]) * tf32(B[k * N + col]);
    } else {
        for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    }
    store_c(C, row * N + col, acc, alpha, beta);
}
