// Step 8: the tensor cores through their own instruction. Step 7 handed 16x16 fragments to
// WMMA, which hides where each element lives. Here a warp issues PTX `mma.sync` on 16x8
// tiles of C and builds its operand registers itself: `ldmatrix` gathers them from shared
// memory (eight rows of 16 bytes per matrix, one row address per lane), from a layout that is
// XOR-swizzled so that those eight rows fall into eight different groups of banks. The
// cp.async pipeline of step 7 stays, with deeper K-tiles.
//
// One source, five precisions, picked by the define PREC (a code of precision.cuh's table):
//   FP16, BF16: 16-bit inputs, FP32 accumulation, mma.m16n8k16; ldmatrix for A and B.
//   TF32:       FP32 inputs rounded to TF32, mma.m16n8k8; ldmatrix for A, 32-bit loads for B.
//   FP64:       DGEMM, mma.m16n8k16 on sm_90 (eight m8n8k4 on sm_80); 64-bit loads.
//   TF32X3:     FP32 inputs, each split into two TF32 numbers (big + small), three mma.m16n8k8
//               per product (small*big + big*small + big*big): an SGEMM with FP32 accuracy.
// The signature is the ladder's, with the element types of the precision.
#include "sgemm.cuh"
#include "precision.cuh"
#include "tensor.cuh"  // cp.async copies; TF32 rounding

// ANCHOR: types
// P, the precision's row of the shared table (precision.cuh): its types, its K, and what the
// code below branches on with `if constexpr` (P::bf16, P::tf32, P::split).
typedef Prec<PREC> P;
typedef P::in_t elem_t;     // A and B in memory: FP16 or BF16 bits, float, double
typedef P::scalar_t acc_t;  // C, alpha, beta and the accumulators
static_assert(P::mma_k > 0 && sizeof(P::out_t) == sizeof(acc_t), "a tensor-core precision, C stored as accumulated");
// One mma.sync computes a 16x8 tile of C, MMA_K deep: the table's K, except FP64's 16 (one
// m16n8k16 on sm_90; eight of the table's m8n8k4 before it).
constexpr int MMA_M = 16, MMA_N = 8, MMA_K = PREC == FP64 ? 16 : P::mma_k;
// ANCHOR_END: types

// Tiles: BM x BN of C per block, BK deep in K per stage; each warp owns WM x WN of C, that is
// TM x TN mma tiles. Shared memory holds STAGES (A tile, B tile) pairs, rows unpadded.
#define WARPS ((BM / WM) * (BN / WN))
#define NUM_THREADS (WARPS * 32)
constexpr int CHUNK = 16 / sizeof(elem_t);      // elements in one 16-byte chunk
constexpr int ROW_A = BK * sizeof(elem_t);      // bytes of a row of an A tile (BM rows)
constexpr int ROW_B = BN * sizeof(elem_t);      // bytes of a row of a B tile (BK rows)
constexpr int A_BYTES = BM * ROW_A;
// 3xTF32 keeps A split in shared memory: its small parts in a third tile, after B.
constexpr int A_SMALL = P::split ? A_BYTES + BK * ROW_B : 0;  // offset in a stage
constexpr int STAGE_BYTES = A_BYTES + BK * ROW_B + (P::split ? A_BYTES : 0);
constexpr int TM = WM / MMA_M, TN = WN / MMA_N;
constexpr int KSTEPS = BK / MMA_K;  // mma k-steps per K-tile
// The pipeline's shape per precision (the other choices are experiments in
// notes/experiments/step08-mma-ldmatrix: copy-parts.patch, frag-sets.patch):
//   COPY_STEPS: the next stage's copies go out in this many parts, one in each of the first
//               k-steps of a tile, between the mma (KSTEPS - 1: none in the step that waits);
//               in one part where each element is copied alone (no VEC), and in 3xTF32, whose
//               split of the next A tile follows the last part and so starts in the first step.
//   FRAG_SETS:  2 = the next k-step's fragments load while this step's mma run, on the fast
//               path (VEC, no EDGE); the bounds checks of the others, and the larger fragments
//               of FP64 and 3xTF32, leave no registers for a second set.
#define COPY_STEPS (VEC && KSTEPS > 1 && !P::split ? KSTEPS - 1 : 1)
#define FRAG_SETS (PREC == FP64 || P::split || !VEC || EDGE ? 1 : 2)
static_assert(BM % WM == 0 && BN % WN == 0 && WM % MMA_M == 0 && WN % (2 * MMA_N) == 0 && BK % MMA_K == 0, "tiles");
static_assert(ROW_A % 128 == 0 && ROW_B % 128 == 0, "the swizzle permutes chunks within 128-byte lines");
static_assert((BM * BK / CHUNK) % NUM_THREADS == 0 && (BK * BN / CHUNK) % NUM_THREADS == 0,
              "every thread copies the same number of chunks");
static_assert(STAGES >= 2, "a pipeline needs at least two stages");
static_assert(COPY_STEPS >= 1 && COPY_STEPS <= KSTEPS, "copies go out in 1..KSTEPS parts");
static_assert(FRAG_SETS == 1 || (FRAG_SETS == 2 && KSTEPS % 2 == 0), "a K-tile starts with the first set");
// unroll<N>(f) calls f(I) for I = 0..N-1, I a compile-time constant (std::integral_constant).
template <int I> struct Int { static constexpr int value = I; };
template <int N, int I = 0, typename F>
__device__ __forceinline__ void unroll(F&& f) {
    if constexpr (I < N) {
        f(Int<I>{});
        unroll<N, I + 1>(f);
    }
}

// ANCHOR: swizzle
// The swizzle. A row of a tile is stored as 16-byte chunks, and chunk c of row r goes to chunk
// c ^ x(r) of the same 128-byte line (x < 8 flips only the low three bits of c). Each operand's
// x is chosen for how its fragments are read, so that the addresses one load instruction
// touches at the same time fall into different banks:
//  - ldmatrix reads one chunk from each of 8 consecutive rows: x(r) = r % 8 spreads them over
//    the 8 chunk positions of a line (A in every precision but FP64; B in FP16 and BF16).
//  - a 32-bit load of a TF32 B fragment reads 2 adjacent chunks (8 columns) of 4 consecutive
//    rows, and a 64-bit load of an FP64 fragment does the same per half-warp: x(r) = 2 * (r % 4)
//    moves each row by a pair of chunks, again 8 different positions.
// (no-swizzle.patch in notes/experiments/step08-mma-ldmatrix stores rows as they are: the
// experiment the book profiles, 8-way conflicts.)
__host__ __device__ constexpr int swizzle_a(int r) {
    return PREC == FP64 ? 2 * (r % 4) : r % 8;
}
__host__ __device__ constexpr int swizzle_b(int r) {
    return sizeof(elem_t) == 2 ? r % 8 : 2 * (r % 4);
}
// Byte offset of element `col` of row `r` in a tile with `row_bytes`-long rows, stored with
// chunks XORed by `x`.
__device__ __forceinline__ unsigned at(int r, int col, int row_bytes, int x) {
    const int byte = col * (int)sizeof(elem_t);
    return r * row_bytes + ((byte / 16) ^ x) * 16 + byte % 16;
}
// ANCHOR_END: swizzle

// Ordinary shared-memory stores and loads at a 32-bit shared address (a generic pointer would
// cost 64-bit address arithmetic and generic loads, see step 7).
__device__ __forceinline__ void sts(unsigned addr, unsigned short v) {
    asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(addr), "h"(v));
}
__device__ __forceinline__ void sts(unsigned addr, float v) { asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(addr), "f"(v)); }
__device__ __forceinline__ void sts(unsigned addr, double v) { asm volatile("st.shared.f64 [%0], %1;\n" ::"r"(addr), "d"(v)); }
__device__ __forceinline__ float lds_f32(unsigned addr) {
    float v;
    asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr));
    return v;
}
__device__ __forceinline__ double lds_f64(unsigned addr) {
    double v;
    asm volatile("ld.shared.f64 %0, [%1];\n" : "=d"(v) : "r"(addr));
    return v;
}

// ANCHOR: copy
// The copies of one operand, global -> shared, K-tile after K-tile: ROWS x COLS tiles of the
// row-major matrix G (rows_total x cols_total), stored swizzled as A or B, zeros outside G.
// VEC == 1 (rows of G are 16-byte aligned, so a chunk is all inside or all outside): a thread
// copies the same column of every STEP-th row, so it keeps one global pointer, moved along K
// from tile to tile, and constant strides (the swizzle repeats every STEP rows). VEC == 0:
// element by element, an ordinary load and a shared store each.
template <int ROWS, int COLS, bool IS_A>
struct TileCopy {
    static constexpr int ROW_BYTES = COLS * sizeof(elem_t), PER_ROW = COLS / CHUNK, STEP = NUM_THREADS / PER_ROW;
    static constexpr int x(int r) { return IS_A ? swizzle_a(r) : swizzle_b(r); }
    static_assert(NUM_THREADS % PER_ROW == 0 && x(STEP) == x(0), "a thread's chunks share their swizzle");
    const elem_t* G;
    int rows_total, cols_total;
    int row0, col0;     // the corner of the next tile in G
    const elem_t* g;    // this thread's first chunk of that tile
    int r, c;           // the chunk's row and column in the tile
    int stride;         // elements between this thread's chunks (STEP rows)
    int step;           // elements from one K-tile to the next
    __device__ TileCopy(const elem_t* G, int row0, int col0, int rows_total, int cols_total)
        : G(G), rows_total(rows_total), cols_total(cols_total), row0(row0), col0(col0),
          r(threadIdx.x / PER_ROW), c(threadIdx.x % PER_ROW * CHUNK), stride(STEP * cols_total),
          step(IS_A ? BK : BK * cols_total) {
        g = G + (row0 + r) * cols_total + col0 + c;
    }
    // Copies part PART of PARTS of the tile to the shared tile at S (a stage's copies can be
    // spread over several k-steps).
    template <int PART = 0, int PARTS = 1>
    __device__ __forceinline__ void copy(unsigned S) const {
#if VEC
#pragma unroll
        for (int i = PART; i < ROWS / STEP; i += PARTS) {
            const bool in = !EDGE || (row0 + r + i * STEP < rows_total && col0 + c < cols_total);
            copy16(S + at(r, c, ROW_BYTES, x(r)) + i * STEP * ROW_BYTES, in ? g + i * stride : G, in);
        }
#else
#pragma unroll 4
        for (int e = threadIdx.x + PART * NUM_THREADS; e < ROWS * COLS; e += PARTS * NUM_THREADS) {
            const int tr = e / COLS, tc = e % COLS;
            const bool in = row0 + tr < rows_total && col0 + tc < cols_total;
            const elem_t v = in ? G[(row0 + tr) * cols_total + col0 + tc] : elem_t(0);
            if constexpr (P::split && IS_A) {
                unsigned big, small;
                split_tf32(v, big, small);
                sts(S + at(tr, tc, ROW_BYTES, x(tr)), __uint_as_float(big));
                sts(S + A_SMALL + at(tr, tc, ROW_BYTES, x(tr)), __uint_as_float(small));
                continue;
            }
            sts(S + at(tr, tc, ROW_BYTES, x(tr)), v);
        }
#endif
    }
    // 3xTF32, A: splits this thread's own chunks of the tile at S in place (big) and into the
    // small tile, once its copies of them have landed (VEC; the element copies split on the way).
    __device__ __forceinline__ void split_own(unsigned S) const {
#if VEC
#pragma unroll
        for (int i = 0; i < ROWS / STEP; ++i) {
            const unsigned addr = S + at(r, c, ROW_BYTES, x(r)) + i * STEP * ROW_BYTES;
            unsigned v[4], big[4], small[4];
            asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                         : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]) : "r"(addr));
#pragma unroll
            for (int e = 0; e < 4; ++e) split_tf32(__uint_as_float(v[e]), big[e], small[e]);
            asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(big[0]), "r"(big[1]),
                         "r"(big[2]), "r"(big[3]));
            asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr + A_SMALL), "r"(small[0]),
                         "r"(small[1]), "r"(small[2]), "r"(small[3]));
        }
#endif
    }
    // On to the next K-tile: BK columns to the right (A) or BK rows down (B).
    __device__ __forceinline__ void next() {
        if (IS_A) col0 += BK;
        else row0 += BK;
        g += step;
    }
};
// ANCHOR_END: copy

// ANCHOR: fragments
// The operand registers of one mma, per lane: g = lane / 4 picks the row of C (and of A), t =
// lane % 4 the pair of columns (PTX ISA, "Matrix fragments for mma.m16n8k16"). Their members
// differ by precision, so the functions that use them are templates: in a template, `if
// constexpr` drops the other precisions' branches whole (outside one, they must still compile).
template <int> struct Frag {
    struct A { unsigned x[4]; };  // four 8x8 matrices (16-bit pairs) or four TF32 numbers
    struct B { unsigned x[2]; };
};
template <> struct Frag<FP64> {
    struct A { double x[8]; };  // A[g + 8 (v % 2)][t + 4 (v / 2)], v = 0..7
    struct B { double x[4]; };  // B[t + 4 v][g]
};
template <> struct Frag<TF32X3> {
    struct A { unsigned big[4], small[4]; };
    struct B { unsigned big[2], small[2]; };
};
typedef Frag<PREC>::A FragA;
typedef Frag<PREC>::B FragB;

// ldmatrix: each lane gives the address of one 16-byte row, 8 lanes per 8x8 matrix of 16-bit
// elements, and receives one 32-bit register per matrix: row lane / 4, elements 2 (lane % 4)
// and 2 (lane % 4) + 1. With .trans, the matrix is transposed on the way.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

// The A fragment of rows row0..row0+15, k0..k0+MMA_K-1 of the A tile at byte address As.
template <typename F>
__device__ __forceinline__ void load_a(F& f, unsigned As, int row0, int k0, int lane) {
    if constexpr (PREC == FP64) {
        const int g = lane / 4, t = lane % 4;
#pragma unroll
        for (int v = 0; v < 8; ++v) {
            const int r = row0 + g + 8 * (v % 2);
            f.x[v] = lds_f64(As + at(r, k0 + t + 4 * (v / 2), ROW_A, swizzle_a(r)));
        }
    } else {
        // Matrices 0..3: rows 0-7 and 8-15 of the first 16 bytes of k, then of the next 16 bytes.
        const int r = row0 + lane % 16, col = k0 + (lane / 16) * CHUNK;
        if constexpr (P::split) {
            // A is split in shared memory already: its big and its small tile.
            ldmatrix_x4(f.big, As + at(r, col, ROW_A, swizzle_a(r)));
            ldmatrix_x4(f.small, As + A_SMALL + at(r, col, ROW_A, swizzle_a(r)));
        } else {
            unsigned x[4];
            ldmatrix_x4(x, As + at(r, col, ROW_A, swizzle_a(r)));
#pragma unroll
            for (int i = 0; i < 4; ++i) f.x[i] = P::tf32 ? tf32_round(__uint_as_float(x[i])) : x[i];
        }
    }
}

// The B fragments of two neighbouring mma tiles: columns n0..n0+7 and n0+8..n0+15, rows
// k0..k0+MMA_K-1 of the B tile at byte address Bs.
template <typename F>
__device__ __forceinline__ void load_b(F& f0, F& f1, unsigned Bs, int k0, int n0, int lane) {
    const int g = lane / 4, t = lane % 4;
    if constexpr (sizeof(elem_t) == 2) {
        // B is stored k-major (row k holds n = 0..BN-1); the mma wants each lane's pair of values
        // along k, so ldmatrix transposes: matrices k 0-7 and 8-15 of columns n0.., then n0+8..
        const int r = k0 + lane % 8 + 8 * ((lane / 8) % 2), col = n0 + (lane / 16) * CHUNK;
        unsigned x[4];
        ldmatrix_x4_trans(x, Bs + at(r, col, ROW_B, swizzle_b(r)));
        f0.x[0] = x[0], f0.x[1] = x[1], f1.x[0] = x[2], f1.x[1] = x[3];
    } else {
        // 32- and 64-bit elements: ldmatrix's transpose moves 16-bit halves, so each lane loads its
        // own values: B[k0 + t + 4 v][n0 + g] (TF32: v = 0, 1; FP64: v = 0..3).
        // The rows k0 + t + 4 v all have the swizzle of row t (k0 % 4 == 0), so a lane's address is
        // that of its column in row t plus a constant.
        // (A static_assert is checked in every precision, even in a branch that is dropped.)
        static_assert(sizeof(elem_t) == 2 || (MMA_K % 4 == 0 && swizzle_b(4) == swizzle_b(0)),
                      "rows 4 apart share their swizzle");
        auto load = [&](F& f, int n) {
            const unsigned col = Bs + at(t, n + g, ROW_B, swizzle_b(t));
#pragma unroll
            for (int v = 0; v < MMA_K / 4; ++v) {
                const unsigned addr = col + (k0 + 4 * v) * ROW_B;
                if constexpr (PREC == FP64) f.x[v] = lds_f64(addr);
                else if constexpr (P::split) split_tf32(lds_f32(addr), f.big[v], f.small[v]);
                else f.x[v] = tf32_round(lds_f32(addr));
            }
        };
        load(f0, n0);
        load(f1, n0 + MMA_N);
    }
}
// ANCHOR_END: fragments

// ANCHOR: mma
// c += a * b for one 16x8 tile of C; c[0], c[1]: row g, columns 2t, 2t+1; c[2], c[3]: row g + 8.
// The instruction names its types, so each precision has its own asm statement.
__device__ __forceinline__ void mma16x8(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    if constexpr (P::tf32)
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else if constexpr (P::bf16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// (The type of c is a parameter too: an asm statement whose operands do not depend on one is
// checked against its constraints even in a branch that `if constexpr` drops.)
template <typename T, typename FA, typename FB>
__device__ __forceinline__ void mma(T (&c)[4], const FA& a, const FB& b) {
    if constexpr (PREC == FP64) {
#if __CUDA_ARCH__ >= 900
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
                     "{%4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, {%0, %1, %2, %3};\n"
                     : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
                     : "d"(a.x[0]), "d"(a.x[1]), "d"(a.x[2]), "d"(a.x[3]), "d"(a.x[4]), "d"(a.x[5]), "d"(a.x[6]),
                       "d"(a.x[7]), "d"(b.x[0]), "d"(b.x[1]), "d"(b.x[2]), "d"(b.x[3]));
#else
        // Before sm_90 the FP64 tensor cores take m8n8k4 only. The same registers make eight of
        // them: rows 8h..8h+7 of A and C, k 4q..4q+3 of A and B.
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int q = 0; q < 4; ++q)
                asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
                             : "+d"(c[2 * h]), "+d"(c[2 * h + 1])
                             : "d"(a.x[h + 2 * q]), "d"(b.x[q]));
#endif
    } else {
        mma16x8(c, a.x, b.x);
    }
}
// ANCHOR_END: mma

// ANCHOR: frags
// The fragments of one k-step of a warp: TM of A, TN of B (TM + TN loads feed TM * TN mma).
struct Frags {
    FragA a[TM];
    FragB b[TN];
};
__device__ __forceinline__ void load_frags(Frags& f, unsigned As, unsigned Bs, int kk, int warpRow, int warpCol,
                                           int lane) {
#pragma unroll
    for (int j = 0; j < TN; j += 2) load_b(f.b[j], f.b[j + 1], Bs, kk, warpCol + j * MMA_N, lane);
#pragma unroll
    for (int i = 0; i < TM; ++i) load_a(f.a[i], As, warpRow + i * MMA_M, kk, lane);
}
template <typename F>
__device__ __forceinline__ void mma_frags(acc_t (&c)[TM][TN][4], const F& f) {
    if constexpr (P::split) {
        // Three passes over the warp's tiles, the small products first (while c is smallest: they
        // carry the low bits). Each mma of a tile adds to the one before it; ptxas keeps asm
        // volatile in order, so the three of a tile issued in a row would each wait for the last.
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) mma16x8(c[i][j], f.a[i].small, f.b[j].big);
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) mma16x8(c[i][j], f.a[i].big, f.b[j].small);
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) mma16x8(c[i][j], f.a[i].big, f.b[j].big);
    } else {
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) mma(c[i][j], f.a[i], f.b[j]);
    }
}
// ANCHOR_END: frags

// ANCHOR: store
// C[r][c], C[r][c+1] = alpha*acc + beta*C for the elements inside C (C is not read when
// beta == 0); one 8- or 16-byte store when VEC says rows are aligned (c is even).
__device__ __forceinline__ void store_pair(acc_t* C, int r, int c, int M, int N, acc_t v0, acc_t v1, acc_t alpha,
                                           acc_t beta) {
    if (EDGE && r >= M) return;
    acc_t* p = &C[r * N + c];
#if VEC
    if (EDGE && c >= N) return;
    acc_t out[2] = {alpha * v0, alpha * v1};
    if (beta != acc_t(0)) out[0] += beta * p[0], out[1] += beta * p[1];
    if constexpr (sizeof(acc_t) == 4) *reinterpret_cast<float2*>(p) = make_float2(out[0], out[1]);
    else *reinterpret_cast<double2*>(p) = make_double2(out[0], out[1]);
#else
    if (c < N) p[0] = beta == acc_t(0) ? alpha * v0 : alpha * v0 + beta * p[0];
    if (c + 1 < N) p[1] = beta == acc_t(0) ? alpha * v1 : alpha * v1 + beta * p[1];
#endif
}
// ANCHOR_END: store

extern __shared__ __align__(1024) unsigned char smem_raw[];

// ANCHOR: kernel
extern "C" __global__ void __launch_bounds__(NUM_THREADS, MIN_BLOCKS)
    sgemm(int M, int N, int K, acc_t alpha, const elem_t* A, const elem_t* B, acc_t beta, acc_t* C) {
    const unsigned smem = static_cast<unsigned>(__cvta_generic_to_shared(smem_raw));
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int blockRow = blockIdx.y * BM, blockCol = blockIdx.x * BN;
    // This warp's WM x WN piece of the block tile.
    const int warpRow = (warp / (BN / WN)) * WM, warpCol = (warp % (BN / WN)) * WN;

    // ANCHOR: pipeline
    // K-tile t lives in stage t % STAGES (its A tile, then its B tile): `read` is the stage of
    // the tile being multiplied, `write` the one being filled. The copies of a stage go out in
    // COPY_STEPS parts, one in each of the first k-steps of the tile before.
    TileCopy<BM, BK, true> copy_a(A, blockRow, 0, M, K);
    TileCopy<BK, BN, false> copy_b(B, 0, blockCol, K, N);
    auto next_stage = [&](unsigned s) { return s == smem + (STAGES - 1) * STAGE_BYTES ? smem : s + STAGE_BYTES; };
    unsigned read = smem, write = smem;

    acc_t acc[TM][TN][4];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = acc_t(0);

    const int tiles = CEIL_DIV(K, BK);
    // Prologue: the first STAGES-1 K-tiles in flight, one commit group each (even if empty);
    // wait for the first, and load its first fragments.
#pragma unroll
    for (int t = 0; t < STAGES - 1; ++t) {
        if (t < tiles) copy_a.copy(write), copy_b.copy(write + A_BYTES);
        cp_async_commit();
        copy_a.next(), copy_b.next(), write = next_stage(write);
    }
    cp_async_wait<STAGES - 2>();
    if constexpr (P::split) {
        if (tiles > 0) copy_a.split_own(read);
    }
    __syncthreads();
    Frags f[FRAG_SETS];
    if (tiles > 0) load_frags(f[0], read, read + A_BYTES, 0, warpRow, warpCol, lane);

    for (int t = 0; t < tiles; ++t) {
        const unsigned As = read, Bs = As + A_BYTES;
        // 3xTF32 sums each K-tile's products in a fresh accumulator and adds it to acc in FP32,
        // rounding to nearest: the tensor cores' own additions truncate, and over all of K their
        // bias would grow to 10x the error of SGEMM (at K = 4096); over one tile it stays small.
        // The other precisions add to acc directly (part is then unused, and takes no registers).
        acc_t part[TM][TN][4];
        if constexpr (P::split) {
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
#pragma unroll
                    for (int e = 0; e < 4; ++e) part[i][j][e] = acc_t(0);
        }
        acc_t(&sum)[TM][TN][4] = P::split ? part : acc;
        unroll<KSTEPS>([&](auto step) {
            constexpr int s = decltype(step)::value;
            // Refill the stage tile t-1 used (everyone was done with it at the last barrier)
            // with tile t+STAGES-1, a part per step.
            if constexpr (s < COPY_STEPS) {
                if (t + STAGES - 1 < tiles) {
                    copy_a.template copy<s, COPY_STEPS>(write);
                    copy_b.template copy<s, COPY_STEPS>(write + A_BYTES);
                }
                if constexpr (s == COPY_STEPS - 1) {
                    cp_async_commit();
                    copy_a.next(), copy_b.next(), write = next_stage(write);
                    // 3xTF32: tile t+1 (in flight since the tile before) is now older than the last
                    // STAGES-2 groups: wait for my part of its A and split it, while this tile's
                    // mma run (the barrier at the end of the tile publishes it).
                    if constexpr (P::split) {
                        if (t + 1 < tiles) {
                            cp_async_wait<STAGES - 2>();
                            copy_a.split_own(next_stage(read));
                        }
                    }
                }
            }
            Frags& next = f[(s + 1) % FRAG_SETS];
            if constexpr (FRAG_SETS == 1) mma_frags(sum, f[0]);
            // The next step's fragments: of this tile, or (after the barrier) the next one's first.
            if constexpr (s + 1 < KSTEPS) {
                load_frags(next, As, Bs, (s + 1) * MMA_K, warpRow, warpCol, lane);
            } else {
                cp_async_wait<STAGES - 2>();  // my copies of K-tile t+1 have landed ...
                __syncthreads();               // ... and everyone's; and everyone is done with tile t
                // (After the last tile these read a stage nobody writes any more, and are unused.)
                read = next_stage(read);
                load_frags(next, read, read + A_BYTES, 0, warpRow, warpCol, lane);
            }
            if constexpr (FRAG_SETS == 2) mma_frags(sum, f[s % 2]);
        });
        if constexpr (P::split) {
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
#pragma unroll
                    for (int e = 0; e < 4; ++e) acc[i][j][e] += part[i][j][e];
        }
    }
    cp_async_wait<0>();
    // ANCHOR_END: pipeline

    // ANCHOR: epilogue
    // Each lane holds rows g and g + 8, columns 2t and 2t + 1 of every 16x8 tile: it writes
    // them straight from registers (four lanes fill one 32-byte sector of a row).
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int r = blockRow + warpRow + i * MMA_M + g, c = blockCol + warpCol + j * MMA_N + 2 * t;
            store_pair(C, r, c, M, N, acc[i][j][0], acc[i][j][1], alpha, beta);
            store_pair(C, r + 8, c, M, N, acc[i][j][2], acc[i][j][3], alpha, beta);
        }
    // ANCHOR_END: epilogue
}
// ANCHOR_END: kernel
