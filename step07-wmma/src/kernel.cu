// Step 7: tensor cores through WMMA. The block still stages tiles of A and B in shared
// memory (steps 3-4) and still gives each unit of work a tile of C to keep in registers
// (step 5), and the next tiles still load while this one computes (step 6). What changes
// is who multiplies: a warp hands 16x16 (or 8x8) fragments to the tensor cores, which do a
// whole small matrix product per instruction.
//
// One source, three precisions, picked by the define PREC (a code of precision.cuh's table):
//   FP16: FP16 inputs (half in memory), FP32 accumulation, m16n16k16 fragments;
//   TF32: FP32 inputs rounded to TF32 as fragments are loaded, m16n16k8;
//   FP64: FP64 (DGEMM) on the double-precision tensor cores, m8n8k4.
// The signature is the ladder's, with the element types of the precision; the entry keeps
// the ladder's name `sgemm` so that the harness launches every step the same way.
#include "sgemm.cuh"
#include "precision.cuh"
#include "tensor.cuh"
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

// ANCHOR: types
// P, the precision's row of the shared table (precision.cuh), gives the accumulators' type
// (also C's, alpha's and beta's) and the K of a fragment. WMMA's own types are this step's:
// what it loads fragments from (FP16 as half, where the table keeps FP16 as its bits), what the
// tensor cores multiply, and a fragment's M x N.
typedef Prec<PREC> P;
template <int> struct Wmma;
template <> struct Wmma<FP16> {
    typedef half elem_t, frag_t;
    static constexpr int M = 16, N = 16;
};
template <> struct Wmma<TF32> {
    typedef float elem_t;
    typedef wmma::precision::tf32 frag_t;
    static constexpr int M = 16, N = 16;
};
template <> struct Wmma<FP64> {
    typedef double elem_t, frag_t;
    static constexpr int M = 8, N = 8;
};
typedef Wmma<PREC>::elem_t elem_t;  // A and B in memory
typedef P::scalar_t acc_t;          // C, alpha, beta and the accumulators
typedef Wmma<PREC>::frag_t frag_t;  // what the tensor cores multiply
static_assert(sizeof(elem_t) == sizeof(P::in_t) && sizeof(acc_t) == sizeof(P::out_t), "stored as the table says");
constexpr int FM = Wmma<PREC>::M, FN = Wmma<PREC>::N, FK = P::mma_k;
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
constexpr int B_TILE = BM * LDA;            // where a stage's B tile starts, after its A tile
constexpr int TILES_M = WM / FM, TILES_N = WN / FN;
static_assert(BM % WM == 0 && BN % WN == 0 && WM % FM == 0 && WN % FN == 0 && BK % FK == 0, "tiles");
static_assert(BK % CHUNK == 0 && BN % CHUNK == 0, "tiles are made of 16-byte chunks");
static_assert((BM * BK / CHUNK) % NUM_THREADS == 0 && (BK * BN / CHUNK) % NUM_THREADS == 0,
              "every thread copies the same number of chunks");
static_assert(STAGES >= 2, "a pipeline needs at least two stages");
static_assert(PAD_A % CHUNK == 0 && PAD_B % CHUNK == 0, "padding keeps rows 16-byte aligned");

// The 16-byte cp.async copies (copy16, cp_async_commit, cp_async_wait) are in tensor.cuh.

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
        S[r * ld + col] = in ? G[(row0 + r) * cols_total + col0 + col] : static_cast<elem_t>(0.0f);
    }
#endif
}
// ANCHOR_END: load_tile


// The block's shared memory, sized by the host: STAGES ring buffers of (A tile, B tile).
extern __shared__ __align__(128) unsigned char smem_raw[];

// ANCHOR: fragment_loads
// A fragment load from a shared tile, `offset` elements into the block's shared memory.
// For half fragments the compiler sees that the tile is in shared memory and emits
// `wmma.load ... .shared` (LDSM in SASS). For tf32 and f64 fragments it does not:
// wmma::load_matrix_sync becomes a generic wmma.load, i.e. generic loads (LD) with 64-bit
// address arithmetic, measurably slower (notes/step07.md). So for those two the same WMMA
// load is written in PTX with its state space; the fragment layout is still WMMA's own.
// TF32 fragments are also rounded here: each FP32 value to 10 mantissa bits, to nearest with
// ties away from zero (cvt.rna.tf32.f32), as the WMMA documentation prescribes.
template <typename Use> struct is_matrix_a { static constexpr bool value = false; };
template <> struct is_matrix_a<wmma::matrix_a> { static constexpr bool value = true; };
template <typename Use, typename Frag>
__device__ __forceinline__ void load_fragment(Frag& f, int offset, int ld) {
    if constexpr (PREC == FP16) {
        wmma::load_matrix_sync(f, reinterpret_cast<const elem_t*>(smem_raw) + offset, ld);
    } else {
        constexpr bool is_a = is_matrix_a<Use>::value;
        const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem_raw) + offset * sizeof(elem_t));
        if constexpr (P::tf32) {
            unsigned r[4];
            if constexpr (is_a)
                asm volatile("wmma.load.a.sync.aligned.row.m16n16k8.shared.tf32 {%0, %1, %2, %3}, [%4], %5;\n"
                             : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(s), "r"(ld));
            else
                asm volatile("wmma.load.b.sync.aligned.row.m16n16k8.shared.tf32 {%0, %1, %2, %3}, [%4], %5;\n"
                             : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(s), "r"(ld));
#pragma unroll
            for (int e = 0; e < 4; ++e) f.x[e] = wmma::__float_to_tf32(__uint_as_float(r[e]));
        } else {
            if constexpr (is_a)
                asm volatile("wmma.load.a.sync.aligned.row.m8n8k4.shared.f64 {%0}, [%1], %2;\n"
                             : "=d"(f.x[0]) : "r"(s), "r"(ld));
            else
                asm volatile("wmma.load.b.sync.aligned.row.m8n8k4.shared.f64 {%0}, [%1], %2;\n"
                             : "=d"(f.x[0]) : "r"(s), "r"(ld));
        }
    }
}
// ANCHOR_END: fragment_loads

// ANCHOR: kernel
// MIN_BLOCKS blocks per SM: the register budget per thread is what the host picked.
extern "C" __global__ void __launch_bounds__(NUM_THREADS, MIN_BLOCKS)
    sgemm(int M, int N, int K, acc_t alpha, const elem_t* A, const elem_t* B, acc_t beta, acc_t* C) {
    elem_t* smem = reinterpret_cast<elem_t*>(smem_raw);

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int blockRow = blockIdx.y * BM, blockCol = blockIdx.x * BN;
    // This warp's WM x WN piece of the block tile.
    const int warpRow = (warp / (BN / WN)) * WM, warpCol = (warp % (BN / WN)) * WN;

    // ANCHOR: pipeline
    // Stage s of the ring holds K-tile t when t % STAGES == s; where it starts in shared
    // memory, in elements:
    auto stage = [](int t) { return (t % STAGES) * STAGE; };
    auto load_stage = [&](int t) {
        load_tile<BM, BK>(smem + stage(t), LDA, A, blockRow, t * BK, M, K);
        load_tile<BK, BN>(smem + stage(t) + B_TILE, LDB, B, t * BK, blockCol, K, N);
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
        __syncthreads();               // ... and everyone's; and everyone is done with tile t-1
        // Refill the stage tile t-1 used (nobody reads it any more) with tile t+STAGES-1.
        if (t + STAGES - 1 < tiles) load_stage(t + STAGES - 1);
        cp_async_commit();

        const int As = stage(t), Bs = As + B_TILE;  // this K-tile's A and B tiles
        // ANCHOR: mma
#pragma unroll
        for (int kk = 0; kk < BK; kk += FK) {
            wmma::fragment<wmma::matrix_a, FM, FN, FK, frag_t, wmma::row_major> a[TILES_M];
            wmma::fragment<wmma::matrix_b, FM, FN, FK, frag_t, wmma::row_major> b[TILES_N];
#pragma unroll
            for (int i = 0; i < TILES_M; ++i)
                load_fragment<wmma::matrix_a>(a[i], As + (warpRow + i * FM) * LDA + kk, LDA);
#pragma unroll
            for (int j = 0; j < TILES_N; ++j)
                load_fragment<wmma::matrix_b>(b[j], Bs + kk * LDB + warpCol + j * FN, LDB);
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
