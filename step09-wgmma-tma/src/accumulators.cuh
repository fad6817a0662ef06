// Step 9's epilogue, which steps 10 and 11 keep: a warpgroup's accumulators written to C from
// registers (included as "accumulators.cuh").
#pragma once

// ANCHOR: epilogue
// The accumulator layout of a 64 x W wgmma tile is mma.m16n8's, repeated: warp w of the
// warpgroup holds rows 16w + g and 16w + g + 8 (g = lane / 4), and d[4j..4j+3] are columns
// 8j + 2t, 8j + 2t + 1 (t = lane % 4) of those two rows.
// C[r][c], C[r][c+1] = alpha*acc + beta*C for the elements inside C (C is not read when
// beta == 0); one 8-byte store when rows of C are 8-byte aligned (VEC: N is even).
__device__ __forceinline__ void store_pair(float* C, int r, int c, int M, int N, float v0, float v1, float alpha,
                                           float beta) {
    if (r >= M) return;
    float* p = &C[r * N + c];
    if (VEC && c < N) {
        float2 out = make_float2(alpha * v0, alpha * v1);
        if (beta != 0.0f) out.x += beta * p[0], out.y += beta * p[1];
        *reinterpret_cast<float2*>(p) = out;
    } else if (!VEC) {
        if (c < N) p[0] = beta == 0.0f ? alpha * v0 : alpha * v0 + beta * p[0];
        if (c + 1 < N) p[1] = beta == 0.0f ? alpha * v1 : alpha * v1 + beta * p[1];
    }
}
// A warpgroup's 64 x W tile of accumulators at C[row0][col0].
template <int W, int NREG>
__device__ __forceinline__ void store_tile(float* C, int row0, int col0, int M, int N, const float (&d)[NREG],
                                           float alpha, float beta) {
    const int lane = threadIdx.x % 32, r = row0 + (threadIdx.x % 128) / 32 * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < W / 8; ++j) {
        const int c = col0 + 8 * j + 2 * (lane % 4);
        store_pair(C, r, c, M, N, d[4 * j], d[4 * j + 1], alpha, beta);
        store_pair(C, r + 8, c, M, N, d[4 * j + 2], d[4 * j + 3], alpha, beta);
    }
}
// ANCHOR_END: epilogue
