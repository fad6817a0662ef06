// Shared by every kernel of the ladder (included as "sgemm.cuh"; the harness passes it to
// NVRTC from memory, so binaries need no source tree).
#pragma once

// Number of tiles of size b that cover a.
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

// Writes alpha*acc + beta*C[idx]. BLAS semantics: when beta == 0, C is not read at all,
// so whatever C held before (even NaN) cannot leak into the result.
__device__ __forceinline__ void store_c(float* C, int idx, float acc, float alpha, float beta) {
    C[idx] = (beta == 0.0f) ? alpha * acc : alpha * acc + beta * C[idx];
}

// The variants the host picks between (defines of the kernels that use load4 and store4):
//   VEC  = 1: every row starts 16-byte aligned (K % 4 == 0 and N % 4 == 0): 128-bit accesses.
//   EDGE = 0: M, N and K are multiples of the block tile, so no access can fall outside the
//             matrices and no bounds are checked at all. EDGE = 1 checks every access.
#ifndef EDGE
#define EDGE 1
#endif
#if !VEC && !EDGE
#error "the unchecked path (EDGE == 0) needs the aligned one (VEC == 1)"
#endif

// ANCHOR: load4
// Four consecutive floats of row `row`, columns col..col+3, of a rows x cols row-major
// matrix, with zeros for whatever lies outside it (edge tiles). With VEC == 1 the four are
// all inside or all outside and 16-byte aligned: one 128-bit load. Otherwise each element
// is loaded and checked alone.
__device__ __forceinline__ float4 load4(const float* M, int row, int col, int rows, int cols) {
#if VEC
    if (!EDGE || (row < rows && col < cols)) return *reinterpret_cast<const float4*>(&M[row * cols + col]);
    return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#else
    const bool r = row < rows;
    const float* p = &M[row * cols + col];
    return make_float4(r && col < cols ? p[0] : 0.0f, r && col + 1 < cols ? p[1] : 0.0f,
                       r && col + 2 < cols ? p[2] : 0.0f, r && col + 3 < cols ? p[3] : 0.0f);
#endif
}
// ANCHOR_END: load4

// ANCHOR: store4
// C[row][col..col+3] = alpha*acc + beta*C[row][col..col+3] for the elements inside C,
// as one 128-bit access when VEC allows; C is not read when beta == 0.
__device__ __forceinline__ void store4(float* C, int row, int col, int rows, int cols, float4 acc,
                                       float alpha, float beta) {
    if (EDGE && row >= rows) return;
#if VEC
    if (!EDGE || col < cols) {
        float4* p = reinterpret_cast<float4*>(&C[row * cols + col]);
        float4 out = make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w);
        if (beta != 0.0f) {
            const float4 old = *p;
            out.x += beta * old.x; out.y += beta * old.y; out.z += beta * old.z; out.w += beta * old.w;
        }
        *p = out;
    }
#else
    const float v[4] = {acc.x, acc.y, acc.z, acc.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        if (col + j < cols) store_c(C, row * cols + col + j, v[j], alpha, beta);
    }
#endif
}
// ANCHOR_END: store4
