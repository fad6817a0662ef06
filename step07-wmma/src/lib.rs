//! Step 7: tensor cores through WMMA. One kernel source, built per precision: FP16 inputs
//! with FP32 accumulation, FP32 inputs rounded to TF32, and FP64 (DGEMM).

use common::{Launch, Precision, Shape, ceil_div};

pub use common::harness::launch::WarpTiles;

// ANCHOR: tiles
/// The tiles per precision (chosen with `examples/tune.rs`, see notes/step07.md). FP16 and
/// TF32: 128x128 per block, four warps of 64x64 (16 fragments each, so every fragment
/// loaded from shared memory feeds four products), 32 elements of K per stage. FP64: the
/// tensor cores are 16x slower, so a 64x64 block of four 32x32 warps already keeps them busy.
pub const fn tiles(p: Precision) -> WarpTiles {
    match p.arithmetic() {
        Precision::F16 | Precision::Bf16 => {
            WarpTiles { bm: 128, bn: 128, bk: 32, wm: 64, wn: 64, stages: 5, min_blocks: 2 }
        }
        Precision::Tf32 | Precision::Tf32x3 => {
            WarpTiles { bm: 128, bn: 128, bk: 32, wm: 64, wn: 64, stages: 3, min_blocks: 2 }
        }
        _ => WarpTiles { bm: 64, bn: 64, bk: 32, wm: 32, wn: 32, stages: 2, min_blocks: 2 },
    }
}
// ANCHOR_END: tiles

// ANCHOR: launch
/// One block per BM x BN tile of C. The 16-byte copies (VEC) need every row of A and B to
/// start 16-byte aligned: K and N multiples of 16 bytes' worth of elements. EDGE = 0 when
/// the tiles divide M, N and K. Shared memory: STAGES (A tile, B tile) pairs with padded
/// rows, or the epilogue's staging of C, whichever is larger.
pub fn launch_with(s: &Shape, p: Precision, t: WarpTiles) -> Launch {
    let (elem, out) = (p.input().bytes(), p.output().bytes());
    let chunk = 16 / elem;
    let vec = s.k % chunk == 0 && s.n % chunk == 0;
    let edge = !(vec && s.m % t.bm == 0 && s.n % t.bn == 0 && s.k % t.bk == 0);
    let warps = (t.bm / t.wm) * (t.bn / t.wn);
    // Padding: 16 bytes per row; TF32's B tile 32, so that LDB % 32 == 8 floats: the four k
    // rows one fragment load reads down a column then fall into four different bank octets.
    let (pad_a, pad_b) = (chunk, if p == Precision::Tf32 { 2 * chunk } else { chunk });
    let pipeline = t.stages * (t.bm * (t.bk + pad_a) + t.bk * (t.bn + pad_b)) * elem;
    let fragment_rows = if p == Precision::F64 { 8 } else { 16 };
    let epilogue = warps * fragment_rows * (t.wn + 16 / out) * out;
    let mut launch = Launch::new((ceil_div(s.n, t.bn), ceil_div(s.m, t.bm), 1), (32 * warps as u32, 1, 1))
        .define("PREC", p.code())
        .define("BM", t.bm as i64)
        .define("BN", t.bn as i64)
        .define("BK", t.bk as i64)
        .define("WM", t.wm as i64)
        .define("WN", t.wn as i64)
        .define("STAGES", t.stages as i64)
        .define("PAD_A", pad_a as i64)
        .define("PAD_B", pad_b as i64)
        .define("MIN_BLOCKS", t.min_blocks as i64)
        .define("VEC", vec as i64)
        .define("EDGE", edge as i64);
    launch.dynamic_smem_bytes = pipeline.max(epilogue) as u32;
    launch
}
// ANCHOR_END: launch

common::precision_steps! {
    idea: "warps multiply 16x16 fragments on the tensor cores (WMMA), fed by a cp.async pipeline",
    precisions: { FP16 = F16, TF32 = Tf32, FP64 = F64 },
}
