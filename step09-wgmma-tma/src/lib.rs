//! Step 9: the Tensor Memory Accelerator moves whole tiles of A and B into a ring of shared-memory
//! buffers (described by tensor maps, completing on mbarriers), and one warpgroup multiplies them
//! with `wgmma` straight from shared memory. FP16 and BF16; sm_90a only.

use common::rungs::{self, HopperTiles};
use common::{Launch, Precision, Shape, Step, ceil_div, kernel_source};

// ANCHOR: tiles
/// One warpgroup's 64 x 256 tile per block (128 accumulators a thread, the most one wgmma
/// computes) and a ring of four buffers (chosen with `examples/tune.rs`, see notes/step09.md).
pub const fn tiles(_: Precision) -> HopperTiles {
    HopperTiles { bm: 64, bn: 256, stages: 2, cluster: 1, group: 1 }
}
// ANCHOR_END: tiles

// ANCHOR: launch
/// One block of one warpgroup (128 threads) per BM x BN tile of C.
pub fn launch_with(s: &Shape, p: Precision, t: HopperTiles) -> Launch {
    t.launch(s, p, (ceil_div(s.n, t.bn), ceil_div(s.m, t.bm), 1), 128, 1, 0)
}
// ANCHOR_END: launch

const fn variant(precision: Precision, launch: fn(&Shape) -> Launch) -> Step {
    Step {
        name: "step09-wgmma-tma",
        idea: "the TMA moves whole tiles into a ring of buffers; a warpgroup multiplies them with wgmma",
        kernel: kernel_source!("src/kernel.cu"),
        launch,
        min_cc: (9, 0),
        precision,
        arch: Some("sm_90a"),
        host: Some(rungs::run_tiles),
    }
}

common::precision_steps! {
    FP16 = F16,
    BF16 = Bf16,
}

/// The precisions of this step, FP16 first (the binary's default).
pub const VARIANTS: [Step; 2] = [FP16, BF16];
