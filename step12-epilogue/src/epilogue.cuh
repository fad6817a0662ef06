// Step 12's epilogue, which step 13 keeps: C leaves through shared memory and the TMA (included
// as "epilogue.cuh").
#pragma once
#include "hopper.cuh"

// ANCHOR: store_chunks
// C leaves in chunks of CHUNK_BYTES (hopper.cuh): 64 rows of one 128-byte swizzled row each (32
// floats or 64 halves), one TMA box of C's tensor map.
// alpha * (a0, a1) + beta * C's old pair `old` (READ_C), as the two 16-bit halves of a register.
template <class P, bool READ_C>
__device__ __forceinline__ unsigned to_c_pair(float a0, float a1, unsigned old, float alpha, float beta) {
    float v0 = alpha * a0, v1 = alpha * a1;
    if constexpr (READ_C) {
        v0 += beta * P::from_c(old & 0xffff);
        v1 += beta * P::from_c(old >> 16);
    }
    return (unsigned)P::to_c(v0) | (unsigned)P::to_c(v1) << 16;
}
// Chunk q of a consumer's 64 x W tile of accumulators d into the staging buffer at `buf`, in the
// TMA's layout (16-byte unit u of row r at (u ^ r % 8) * 16), with C's old values from the
// buffer when READ_C. FP32: one 8-byte store per pair of elements; 16 bits: one stmatrix per
// four 8 x 8 matrices, two 8-column groups of the warp's 16 rows.
template <class P, bool READ_C, int NREG>
__device__ __forceinline__ void write_chunk(unsigned buf, int q, const float (&d)[NREG], float alpha, float beta) {
    constexpr int ROW = 128, CHUNK_COLS = ROW / (int)sizeof(typename P::out_t);
    const int tid = threadIdx.x % 128, lane = tid % 32;
    if constexpr (sizeof(typename P::out_t) == 2) {
        // This lane's address: row lane % 8 of matrix lane / 8 (its row half, then its group).
        const int r = tid / 32 * 16 + lane / 8 % 2 * 8 + lane % 8;
#pragma unroll
        for (int jj = 0; jj < CHUNK_COLS / 8; jj += 2) {
            const int j = q * CHUNK_COLS / 8 + jj;
            const unsigned at = buf + r * ROW + ((jj + lane / 16) ^ (lane % 8)) * 16;
            unsigned old[4] = {0, 0, 0, 0}, v[4];
            if constexpr (READ_C) ldmatrix_x4(old, at);
#pragma unroll
            for (int m = 0; m < 4; ++m) {
                const int e = 4 * (j + m / 2) + 2 * (m % 2);
                v[m] = to_c_pair<P, READ_C>(d[e], d[e + 1], old[m], alpha, beta);
            }
            stmatrix_x4(at, v);
        }
    } else {
        const int r = tid / 32 * 16 + lane / 4, t4 = lane % 4;  // rows r and r + 8, columns 8j + 2 t4
#pragma unroll
        for (int jj = 0; jj < CHUNK_COLS / 8; ++jj) {
            const int j = q * CHUNK_COLS / 8 + jj, byte = (8 * jj + 2 * t4) * 4;
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int rr = r + 8 * half;
                const unsigned at = buf + rr * ROW + ((byte / 16) ^ (rr % 8)) * 16 + byte % 16;
                float v0 = alpha * d[4 * j + 2 * half], v1 = alpha * d[4 * j + 2 * half + 1];
                if constexpr (READ_C) {
                    float o0, o1;
                    asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(o0), "=f"(o1) : "r"(at));
                    v0 += beta * o0, v1 += beta * o1;
                }
                asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(at), "f"(v0), "f"(v1));
            }
        }
    }
}
// One consumer's 64 x W tile of accumulators d to C at (row, col) through its NB staging buffers at
// `stage` (two; step 14's 192-wide tiles three, its per-tensor FP32 C four), NB chunks at a time:
// one in each buffer, then one proxy fence and one barrier for the round (the fence waits for the
// writes before it, so paying it per round divides that wait). Before a round's writes, the last
// round's stores must be done reading the buffers. The consumer's 128 threads meet at named barrier
// `id`; thread 0 talks to the TMA. With READ_C the TMA first loads the round's old C into the
// buffers (`loaded`, NB barriers; `chunks` counts the consumer's chunks so far, for their parity).
// A last round with fewer chunks than buffers (64 columns of BF16 in two) leaves the others'
// barriers turning on an arrival of no bytes, so that the parity holds for all. beta picks one of
// two copies of the loop (READ_C), so that a C that is not read costs no instructions (a test
// inside the loop would be issued, predicated off, for every element).
template <class P, bool READ_C, int W, int NB, int NREG>
__device__ __forceinline__ void store_chunks_as(const TensorMap* tmC, unsigned stage, unsigned long long* loaded,
                                                int id, int& chunks, int row, int col, const float (&d)[NREG],
                                                float alpha, float beta) {
    constexpr int CHUNK_COLS = 128 / (int)sizeof(typename P::out_t), NC = W / CHUNK_COLS;
    static_assert(W % CHUNK_COLS == 0, "whole chunks");
    static_assert(NB >= 2 && NB <= 4, "two to four staging buffers");
    const int tid = threadIdx.x % 128;
#pragma unroll
    for (int q = 0; q < NC; q += NB, chunks += NB) {
        const int n = NC - q < NB ? NC - q : NB;  // chunks in this round
        if (tid == 0) tma_store_wait<0>();
        named_sync(id, 128);
        if constexpr (READ_C) {
            if (tid == 0)
                for (int b = 0; b < NB; ++b) {
                    mbar_expect_bytes(smem_addr(&loaded[b]), b < n ? CHUNK_BYTES : 0);
                    if (b < n) tma_load(stage + b * CHUNK_BYTES, tmC, smem_addr(&loaded[b]), col + (q + b) * CHUNK_COLS, row);
                }
            for (int b = 0; b < NB; ++b) mbar_wait(smem_addr(&loaded[b]), chunks / NB % 2);
        }
        // Written out, not a loop over the buffers: with two, a loop changed ptxas's instruction
        // choices in every kernel that stores this way.
        write_chunk<P, READ_C>(stage, q, d, alpha, beta);
        if (n >= 2) write_chunk<P, READ_C>(stage + CHUNK_BYTES, q + 1, d, alpha, beta);
        if (n >= 3) write_chunk<P, READ_C>(stage + 2 * CHUNK_BYTES, q + 2, d, alpha, beta);
        if (n >= 4) write_chunk<P, READ_C>(stage + 3 * CHUNK_BYTES, q + 3, d, alpha, beta);
        // Every thread's writes, ordered before the TMA reads them; then one thread stores.
        fence_async_shared();
        named_sync(id, 128);
        if (tid == 0) {
            for (int b = 0; b < n; ++b) tma_store(tmC, stage + b * CHUNK_BYTES, col + (q + b) * CHUNK_COLS, row);
            tma_store_commit();
        }
    }
}
template <class P, int W, int NB = 2, int NREG>
__device__ __forceinline__ void store_chunks(const TensorMap* tmC, unsigned stage, unsigned long long* loaded, int id,
                                             int& chunks, int row, int col, const float (&d)[NREG], float alpha,
                                             float beta) {
    if (beta != 0.0f) store_chunks_as<P, true, W, NB>(tmC, stage, loaded, id, chunks, row, col, d, alpha, beta);
    else store_chunks_as<P, false, W, NB>(tmC, stage, loaded, id, chunks, row, col, d, alpha, beta);
}
// ANCHOR_END: store_chunks
