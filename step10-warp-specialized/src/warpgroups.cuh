// Step 10's block, which steps 11, 12, 14 and 15 keep: a producer warpgroup, BM / 64 consumer
// warpgroups, and the ring of (A tile, B tile) buffers between them (included as "warpgroups.cuh";
// FP16 and BF16, or FP8, Prec<PREC>).
#pragma once
#include "precision.cuh"

// ANCHOR: config
typedef Prec<PREC> P;
static_assert(sizeof(P::in_t) == 2 || P::mma_k == 32, "FP16 or BF16 (steps 9-12), or FP8 (step 14)");
// BM x BN of C per block: BM / 64 consumer warpgroups, each one 64 x BN wgmma tile. BK is one
// 128-byte row of K (64 halves): the TMA's widest swizzle.
constexpr int CONSUMERS = BM / 64;
#define NUM_THREADS (128 * (CONSUMERS + 1))
constexpr int ROW = 128;          // bytes of a tile row in shared memory
constexpr int A_BYTES = BM * ROW;  // A tile: BM rows of BK elements
constexpr int B_BYTES = BN * ROW;  // B tile: BK rows of BN elements, in boxes of 64 columns
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int BOX_BYTES = 64 * ROW;  // a TMA box of B: 64 columns of C by BK
static_assert(BK * sizeof(P::in_t) == ROW, "a tile row is one 128-byte swizzle row");
static_assert(BM % 64 == 0 && BN % 8 == 0 && BN <= 256, "64 x BN wgmma tiles, BN a multiple of 8 up to 256");
static_assert(A_BYTES % 1024 == 0 && B_BYTES % 1024 == 0, "tiles start on the swizzle's 1024-byte period");
// ANCHOR_END: config
