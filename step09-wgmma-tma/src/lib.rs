//! Step 9: the Tensor Memory Accelerator moves whole tiles of A and B into a ring of shared-memory
//! buffers (described by tensor maps, completing on mbarriers), and one warpgroup multiplies them
//! with `wgmma` straight from shared memory. FP16 and BF16; sm_90a only.

use common::harness::compile::Header;
use common::harness::hopper_host::{self, HopperTiles};
use common::{Launch, Precision, Shape, ceil_div};

// ANCHOR: tiles
/// One warpgroup's 64 x 256 tile per block (128 accumulators a thread, the most one wgmma
/// computes) and a ring of two buffers (chosen with `examples/tune.rs`, see notes/step09.md).
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

/// This step's epilogue, a warpgroup's accumulators to C, which steps 10 and 11 keep.
pub const ACCUMULATORS: Header = common::step_header!("accumulators.cuh");

common::precision_steps! {
    idea: "the TMA moves whole tiles into a ring of buffers; a warpgroup multiplies them with wgmma",
    hopper: hopper_host::run_tiles,
    headers: &[ACCUMULATORS],
    precisions: { FP16 = F16, BF16 = Bf16 },
}
