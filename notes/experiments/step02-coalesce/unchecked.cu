// Edge-cost experiment: step02-coalesce with every bounds check removed. Valid only when M, N, K are
// multiples of 32; timed against step02-coalesce at 4096^3 to price the edge handling.
// Step 2: coalesced. The same work per thread as step 1; only which thread gets which
// element of C changes.
#include "sgemm.cuh"

// ANCHOR: kernel
extern "C" __global__ void sgemm(int M, int N, int K, float alpha, const float* A,
                                 const float* B, float beta, float* C) {
    // threadIdx.x now walks along a row of C: the 32 threads of a warp take 32 neighbouring
    // columns, so each load of B and each store of C is one 128-byte transaction, and all
    // 32 threads read the same element of A (a broadcast).
    const int cRow = blockIdx.y * blockDim.y + threadIdx.y;
    const int cCol = blockIdx.x * blockDim.x + threadIdx.x;
    {
        float acc = 0.0f;
        for (int i = 0; i < K; ++i) {
            acc += A[cRow * K + i] * B[i * N + cCol];
        }
        store_c(C, cRow * N + cCol, acc, alpha, beta);
    }
}
// ANCHOR_END: kernel
