// Step 6 experiment: K-tiles 16 deep instead of 8 (half the barriers and loop overhead per
// FMA), each thread moving two float4s of A and two of B per K-tile. UNCHECKED=1 drops the
// bounds checks (tile multiples only). Run with step06's geometry (BK is overridden here).
#include "sgemm.cuh"

#undef BK
#define BK 16
#ifndef UNCHECKED
#define UNCHECKED 1
#endif
#define NUM_THREADS ((BM / TM) * (BN / TN))
#define A_LOADS (BM * BK / 4 / NUM_THREADS)
#define B_LOADS (BN * BK / 4 / NUM_THREADS)
static_assert(TM == 8 && TN == 8, "thread tile is 2x2 quadrants of 4x4");
static_assert(A_LOADS * NUM_THREADS * 4 == BM * BK && B_LOADS * NUM_THREADS * 4 == BN * BK, "whole float4s");

__device__ __forceinline__ float4 ld4(const float* M, int row, int col, int rows, int cols) {
#if UNCHECKED
    return *reinterpret_cast<const float4*>(&M[row * cols + col]);
#else
    return load4(M, row, col, rows, cols);
#endif
}

extern "C" __global__ void __launch_bounds__(NUM_THREADS, VEC ? 2 : 1)
    sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    __shared__ __align__(16) float As[2][BK][BM + 4];
    __shared__ __align__(16) float Bs[2][BK][BN];
    const int tid = threadIdx.x;
    const int blockRow = blockIdx.y * BM, blockCol = blockIdx.x * BN;
    const int aRow = tid / (BK / 4), aCol = (tid % (BK / 4)) * 4;  // + i * (NUM_THREADS / (BK / 4)) rows
    const int bRow = tid / (BN / 4), bCol = (tid % (BN / 4)) * 4;  // + i * (NUM_THREADS / (BN / 4)) rows
    constexpr int A_STRIDE = NUM_THREADS / (BK / 4), B_STRIDE = NUM_THREADS / (BN / 4);
    const int tRow = tid / (BN / TN), tCol = tid % (BN / TN);
    const int rows[2] = {tRow * 4, BM / 2 + tRow * 4};
    const int cols[2] = {tCol * 4, BN / 2 + tCol * 4};

    float4 a[A_LOADS], b[B_LOADS];
    auto fetch = [&](int k0) {
#pragma unroll
        for (int i = 0; i < A_LOADS; ++i) a[i] = ld4(A, blockRow + aRow + i * A_STRIDE, k0 + aCol, M, K);
#pragma unroll
        for (int i = 0; i < B_LOADS; ++i) b[i] = ld4(B, k0 + bRow + i * B_STRIDE, blockCol + bCol, K, N);
    };
    auto put = [&](int buf) {
#pragma unroll
        for (int i = 0; i < A_LOADS; ++i) {
            As[buf][aCol + 0][aRow + i * A_STRIDE] = a[i].x;
            As[buf][aCol + 1][aRow + i * A_STRIDE] = a[i].y;
            As[buf][aCol + 2][aRow + i * A_STRIDE] = a[i].z;
            As[buf][aCol + 3][aRow + i * A_STRIDE] = a[i].w;
        }
#pragma unroll
        for (int i = 0; i < B_LOADS; ++i) *reinterpret_cast<float4*>(&Bs[buf][bRow + i * B_STRIDE][bCol]) = b[i];
    };

    float acc[TM][TN] = {};
    fetch(0);
    put(0);
    __syncthreads();
    int cur = 0;
    for (int k0 = 0; k0 < K; k0 += BK) {
        const bool has_next = k0 + BK < K;
        if (has_next) fetch(k0 + BK);
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a_frag[TM], b_frag[TN];
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float4 av = *reinterpret_cast<const float4*>(&As[cur][k][rows[h]]);
                const float4 bv = *reinterpret_cast<const float4*>(&Bs[cur][k][cols[h]]);
                a_frag[4 * h + 0] = av.x; a_frag[4 * h + 1] = av.y;
                a_frag[4 * h + 2] = av.z; a_frag[4 * h + 3] = av.w;
                b_frag[4 * h + 0] = bv.x; b_frag[4 * h + 1] = bv.y;
                b_frag[4 * h + 2] = bv.z; b_frag[4 * h + 3] = bv.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += a_frag[i] * b_frag[j];
        }
        if (has_next) put(cur ^ 1);
        __syncthreads();
        cur ^= 1;
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = blockRow + rows[i / 4] + i % 4;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const float4 v = make_float4(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2], acc[i][4 * h + 3]);
            store4(C, row, blockCol + cols[h], M, N, v, alpha, beta);
        }
    }
}
