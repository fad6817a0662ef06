//! Step 8: the tensor cores through PTX `mma.sync`, operands gathered by `ldmatrix` from an
//! XOR-swizzled shared-memory layout. One kernel source, built per precision: FP16, BF16,
//! TF32, FP64 and 3xTF32 (an FP32-accurate SGEMM from three TF32 products per term).

use common::{Launch, Precision, Shape, ceil_div};

pub use common::harness::launch::WarpTiles;

// ANCHOR: tiles
/// The tiles per precision (chosen with `examples/tune.rs`, see notes/step08.md). Every row of
/// a shared tile is a multiple of 128 bytes (the swizzle permutes the chunks of a 128-byte line):
/// BK is 64 for 16-bit inputs and 32 for 4- and 8-byte ones.
pub const fn tiles(p: Precision) -> WarpTiles {
    match p.arithmetic() {
        Precision::F16 | Precision::Bf16 => {
            WarpTiles { bm: 256, bn: 128, bk: 64, wm: 64, wn: 64, stages: 3, min_blocks: 1 }
        }
        Precision::Tf32 => WarpTiles { bm: 128, bn: 256, bk: 32, wm: 64, wn: 64, stages: 3, min_blocks: 1 },
        // Twice the fragments (big and small parts) and two accumulators (a K-tile's products, and
        // the FP32 sum of the tiles) in registers: 64 x 32 warp tiles (fewer elements split per
        // mma than 32 x 32), the largest that fit without spilling on sm_80 and sm_90.
        Precision::Tf32x3 => WarpTiles { bm: 128, bn: 128, bk: 32, wm: 64, wn: 32, stages: 3, min_blocks: 1 },
        // Fragments of 8-byte numbers: 32 x 32 warp tiles keep a K-tile of 32 within the registers.
        _ => WarpTiles { bm: 64, bn: 128, bk: 32, wm: 32, wn: 32, stages: 3, min_blocks: 1 },
    }
}
// ANCHOR_END: tiles

// ANCHOR: launch
/// One block per BM x BN tile of C. The 16-byte copies (VEC) need every row of A and B to
/// start 16-byte aligned: K and N multiples of 16 bytes' worth of elements. EDGE = 0 when the
/// tiles divide M, N and K. Shared memory: STAGES (A tile, B tile) pairs, unpadded (3xTF32: A's
/// big and small parts, and B).
pub fn launch_with(s: &Shape, p: Precision, t: WarpTiles) -> Launch {
    let elem = p.input().bytes();
    let chunk = 16 / elem;
    let vec = s.k % chunk == 0 && s.n % chunk == 0;
    let edge = !(vec && s.m % t.bm == 0 && s.n % t.bn == 0 && s.k % t.bk == 0);
    let warps = (t.bm / t.wm) * (t.bn / t.wn);
    let mut launch = Launch::new((ceil_div(s.n, t.bn), ceil_div(s.m, t.bm), 1), (32 * warps as u32, 1, 1))
        .define("PREC", p.code())
        .define("BM", t.bm as i64)
        .define("BN", t.bn as i64)
        .define("BK", t.bk as i64)
        .define("WM", t.wm as i64)
        .define("WN", t.wn as i64)
        .define("STAGES", t.stages as i64)
        .define("MIN_BLOCKS", t.min_blocks as i64)
        .define("VEC", vec as i64)
        .define("EDGE", edge as i64);
    // 3xTF32 keeps A's small parts in a third tile per stage.
    let a_tiles = if p == Precision::Tf32x3 { 2 } else { 1 };
    launch.dynamic_smem_bytes = (t.stages * (a_tiles * t.bm * t.bk + t.bk * t.bn) * elem) as u32;
    launch
}
// ANCHOR_END: launch

common::precision_steps! {
    idea: "warps issue PTX mma.sync themselves, operands gathered by ldmatrix from a swizzled shared layout",
    // mma.sync m16n8k16 with FP16 and BF16, cp.async: Ampere (FP64 m16n8k16 needs sm_90; the
    // kernel falls back to m8n8k4 before it).
    min_cc: (8, 0),
    precisions: { FP16 = F16, BF16 = Bf16, TF32 = Tf32, FP64 = F64, TF32X3 = Tf32x3 },
}
