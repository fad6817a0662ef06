// Experiment: TF32 rounded once per element in shared memory, with two integer
// operations, instead of wmma::__float_to_tf32 on every fragment load. Measured slower
// (76-81 vs 83-86 TFLOP/s at 4096^3): the rounding is not what limits TF32 here.
// Step 7: tensor cores through WMMA. The block still stages tiles of A and B in shared
// memory (steps 3-4) and still gives each unit of work a tile of C to keep in registers
// (step 5), and the next tiles still load while this one computes (step 6). What changes
// is who multiplies: a warp hands 16x16 (or 8x8) fragments to the tensor cores, which do a
// whole small matrix product per instruction.
//
// One source, three precisions, picked by the define PREC:
//   PREC == 16: FP16 inputs (half in memory), FP32 accumulation, m16n16k16 fragments;
//   PREC == 32: FP32 inputs rounded to TF32 in shared memory, m16n16k8;
//   PREC == 64: FP64 (DGEMM) on the double-precision tensor cores, m8n8k4.
// The signature is the ladder's, with the element types of the precision; the entry keeps
// the ladder's name `sgemm` so that the harness launches every step the same way.
#include "sgemm.cuh"
#include <mma.h>
#if PREC == 16
#include <cuda_fp16.h>
#endif
using namespace nvcuda;

// ANCHOR: types
#if PREC == 16
typedef half elem_t;     // A and B in memory
typedef float acc_t;     // C, alpha, beta and the accumulators
typedef half frag_t;     // what the tensor cores multiply
constexpr int FM = 16, FN = 16, FK = 16;
#elif PREC == 32
typedef float elem_t;
typedef float acc_t;
typedef wmma::precision::tf32 frag_t;
constexpr int FM = 16, FN = 16, FK = 8;
#elif PREC == 64
typedef double elem_t;
typedef double acc_t;
typedef double frag_t;
constexpr int FM = 8, FN = 8, FK = 4;
#else
#error "PREC must be 16, 32 or 64"
#endif
// ANCHOR_END: types

// Tiles: BM x BN of C per block, BK deep in K per stage; each warp owns WM x WN of C.
#define WARPS ((BM / WM) * (BN / WN))
#define NUM_THREADS (WARPS * 32)
// Elements in one 16-byte copy. Every shared row ends in PAD_A or PAD_B elements of padding
// (16 or 32 bytes, set by the host): rows keep the 16-byte alignment of the copies and the
// 32-byte alignment WMMA wants for every fragment, while the rows a fragment load touches
// start in different banks.
constexpr int CHUNK = 16 / sizeof(elem_t);
constexpr int LDA = BK + PAD_A;  // row length of an A tile in shared memory, As[BM][LDA]
constexpr int LDB = BN + PAD_B;  // row length of a B tile, Bs[BK][LDB]
constexpr int STAGE = BM * LDA + BK * LDB;  // elements of one stage (an A and a B tile)
constexpr int TILES_M = WM / FM, TILES_N = WN / FN;
static_assert(BM % WM == 0 && BN % WN == 0 && WM % FM == 0 && WN % FN == 0 && BK % FK == 0, "tiles");
static_assert(BK % CHUNK == 0 && BN % CHUNK == 0, "tiles are made of 16-byte chunks");
static_assert((BM * BK / CHUNK) % NUM_THREADS == 0 && (BK * BN / CHUNK) % NUM_THREADS == 0,
              "every thread copies the same number of chunks");
static_assert(STAGES >= 2, "a pipeline needs at least two stages");
static_assert(PAD_A % CHUNK == 0 && PAD_B % CHUNK == 0, "padding keeps rows 16-byte aligned");

// ANCHOR: tf32
// FP32 -> TF32: round to 10 mantissa bits, to nearest with ties away from zero (what
// cvt.rna.tf32.f32 does), with two integer operations: add half of the last kept bit, clear
// the 13 dropped ones. Infinity and NaN pass unchanged.
__device__ __forceinline__ float to_tf32(float x) {
    const unsigned bits = __float_as_uint(x);
    return (bits & 0x7fffffffu) < 0x7f800000u ? __uint_as_float((bits + 0x1000u) & 0xffffe000u) : x;
}
// ANCHOR_END: tf32

// ANCHOR: copy
// One 16-byte chunk global -> shared. On sm_80 and later with cp.async: the copy bypasses
// the registers and runs in the background until cp_async_wait. `valid == false` writes
// zeros (the source size is 0, nothing is read), which is how edge tiles are padded.
__device__ __forceinline__ void copy16(void* dst, const void* src, bool valid) {
#if __CUDA_ARCH__ >= 800
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(valid ? 16 : 0));
#else
    *reinterpret_cast<uint4*>(dst) = valid ? *reinterpret_cast<const uint4*>(src) : make_uint4(0, 0, 0, 0);
#endif
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

// ANCHOR: load_tile
// Copies the rows x cols tile of the row-major matrix G (rows_total x cols_total) whose
// corner is (row0, col0) into shared memory (row length ld), zeros outside the matrix.
// VEC == 1: rows are 16-byte aligned (cols_total is a multiple of CHUNK), so a chunk is all
// inside or all outside. VEC == 0: element by element, an ordinary load and store each.
template <int ROWS, int COLS>
__device__ __forceinline__ void load_tile(elem_t* S, int ld, const elem_t* G, int row0, int col0, int rows_total,
                                          int cols_total) {
#if VEC
    constexpr int PER_ROW = COLS / CHUNK;
#pragma unroll
    for (int i = 0; i < ROWS * PER_ROW / NUM_THREADS; ++i) {
        const int c = threadIdx.x + i * NUM_THREADS;
        const int r = c / PER_ROW, col = (c % PER_ROW) * CHUNK;
        const bool in = !EDGE || (row0 + r < rows_total && col0 + col < cols_total);
        copy16(&S[r * ld + col], in ? &G[(row0 + r) * cols_total + col0 + col] : G, in);
    }
#else
#pragma unroll 4
    for (int e = threadIdx.x; e < ROWS * COLS; e += NUM_THREADS) {
        const int r = e / COLS, col = e % COLS;
        const bool in = row0 + r < rows_total && col0 + col < cols_total;
        elem_t v = in ? G[(row0 + r) * cols_total + col0 + col] : static_cast<elem_t>(0.0f);
#if PREC == 32
        v = to_tf32(v);
#endif
        S[r * ld + col] = v;
    }
#endif
}
// ANCHOR_END: load_tile

#if PREC == 32 && VEC
// TF32 with cp.async: the copies land as FP32, so each thread rounds the chunks it copied
// itself (the same indices as load_tile), once per element, before the barrier publishes them.
template <int ROWS, int COLS>
__device__ __forceinline__ void round_tile(float* S, int ld) {
    constexpr int PER_ROW = COLS / CHUNK;
#pragma unroll
    for (int i = 0; i < ROWS * PER_ROW / NUM_THREADS; ++i) {
        const int c = threadIdx.x + i * NUM_THREADS;
        float4* p = reinterpret_cast<float4*>(&S[(c / PER_ROW) * ld + (c % PER_ROW) * CHUNK]);
        float4 v = *p;
        *p = make_float4(to_tf32(v.x), to_tf32(v.y), to_tf32(v.z), to_tf32(v.w));
    }
}
#endif

// ANCHOR: kernel
// MIN_BLOCKS blocks per SM: the register budget per thread is what the host picked.
extern "C" __global__ void __launch_bounds__(NUM_THREADS, MIN_BLOCKS)
    sgemm(int M, int N, int K, acc_t alpha, const elem_t* A, const elem_t* B, acc_t beta, acc_t* C) {
    // STAGES ring buffers of (A tile, B tile), sized by the host (dynamic shared memory).
    extern __shared__ __align__(128) unsigned char smem_raw[];
    elem_t* smem = reinterpret_cast<elem_t*>(smem_raw);

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int blockRow = blockIdx.y * BM, blockCol = blockIdx.x * BN;
    // This warp's WM x WN piece of the block tile.
    const int warpRow = (warp / (BN / WN)) * WM, warpCol = (warp % (BN / WN)) * WN;

    // ANCHOR: pipeline
    // Stage s of the ring holds K-tile t when t % STAGES == s.
    auto load_stage = [&](int t) {
        elem_t* As = smem + (t % STAGES) * STAGE;
        elem_t* Bs = As + BM * LDA;
        load_tile<BM, BK>(As, LDA, A, blockRow, t * BK, M, K);
        load_tile<BK, BN>(Bs, LDB, B, t * BK, blockCol, K, N);
    };

    wmma::fragment<wmma::accumulator, FM, FN, FK, acc_t> acc[TILES_M][TILES_N];
#pragma unroll
    for (int i = 0; i < TILES_M; ++i)
#pragma unroll
        for (int j = 0; j < TILES_N; ++j) wmma::fill_fragment(acc[i][j], acc_t(0));

    const int tiles = CEIL_DIV(K, BK);
    // Prologue: the first STAGES-1 K-tiles in flight. One commit group per K-tile, even an
    // empty one, so that "all but the newest STAGES-2 groups have landed" always means
    // "K-tile t has landed".
#pragma unroll
    for (int t = 0; t < STAGES - 1; ++t) {
        if (t < tiles) load_stage(t);
        cp_async_commit();
    }
    for (int t = 0; t < tiles; ++t) {
        cp_async_wait<STAGES - 2>();  // my copies of K-tile t have landed ...
#if PREC == 32 && VEC
        round_tile<BM, BK>(smem + (t % STAGES) * STAGE, LDA);
        round_tile<BK, BN>(smem + (t % STAGES) * STAGE + BM * LDA, LDB);
#endif
        __syncthreads();               // ... and everyone's; and everyone is done with tile t-1
        // Refill the stage tile t-1 used (nobody reads it any more) with tile t+STAGES-1.
        if (t + STAGES - 1 < tiles) load_stage(t + STAGES - 1);
        cp_async_commit();

        const elem_t* As = smem + (t % STAGES) * STAGE;
        const elem_t* Bs = As + BM * LDA;
        // ANCHOR: mma
#pragma unroll
        for (int kk = 0; kk < BK; kk += FK) {
            wmma::fragment<wmma::matrix_a, FM, FN, FK, frag_t, wmma::row_major> a[TILES_M];
            wmma::fragment<wmma::matrix_b, FM, FN, FK, frag_t, wmma::row_major> b[TILES_N];
            // (TF32: the tiles in shared memory hold TF32 values already.)
#pragma unroll
            for (int i = 0; i < TILES_M; ++i) wmma::load_matrix_sync(a[i], &As[(warpRow + i * FM) * LDA + kk], LDA);
#pragma unroll
            for (int j = 0; j < TILES_N; ++j) wmma::load_matrix_sync(b[j], &Bs[kk * LDB + warpCol + j * FN], LDB);
            // Every A fragment meets every B fragment: TILES_M + TILES_N loads feed
            // TILES_M * TILES_N tensor-core products.
#pragma unroll
            for (int i = 0; i < TILES_M; ++i)
#pragma unroll
                for (int j = 0; j < TILES_N; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
        }
        // ANCHOR_END: mma
    }
    // ANCHOR_END: pipeline

    // ANCHOR: epilogue
    // A fragment's elements are spread over the lanes in an unspecified order, so each warp
    // stores a row of fragments to its own corner of shared memory (free now), then writes
    // alpha*acc + beta*C from there, lanes along the row (coalesced) and bounds checked.
    cp_async_wait<0>();
    __syncthreads();
    constexpr int LDE = WN + 16 / sizeof(acc_t);
    acc_t* E = reinterpret_cast<acc_t*>(smem_raw) + warp * FM * LDE;
#pragma unroll
    for (int i = 0; i < TILES_M; ++i) {
#pragma unroll
        for (int j = 0; j < TILES_N; ++j) wmma::store_matrix_sync(&E[j * FN], acc[i][j], LDE, wmma::mem_row_major);
        __syncwarp();
#pragma unroll 4
        for (int e = lane; e < FM * WN; e += 32) {
            const int r = blockRow + warpRow + i * FM + e / WN, c = blockCol + warpCol + e % WN;
            if (!EDGE || (r < M && c < N)) {
                const acc_t v = alpha * E[(e / WN) * LDE + e % WN];
                C[r * N + c] = (beta == acc_t(0)) ? v : v + beta * C[r * N + c];
            }
        }
        __syncwarp();
    }
    // ANCHOR_END: epilogue
}
// ANCHOR_END: kernel
