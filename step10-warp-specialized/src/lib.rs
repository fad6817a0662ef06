//! Step 10: warp specialization. A producer warpgroup keeps the ring of tiles full while two
//! consumer warpgroups multiply them with `wgmma`; `setmaxnreg` moves the producer's registers to
//! the consumers. FP16 and BF16; sm_90a only.

use common::harness::compile::Header;
use common::harness::hopper_host::{self, HopperTiles};
use common::{Launch, Precision, Shape, ceil_div};

// ANCHOR: tiles
/// Two consumers of 64 x 256 per block (128 x 256 of C for one copy of each B tile) and a ring of
/// four buffers of 48 KiB (chosen with `examples/tune.rs`, see notes/step10.md).
pub const fn tiles(_: Precision) -> HopperTiles {
    HopperTiles { bm: 128, bn: 256, stages: 4, cluster: 1, group: 1 }
}
// ANCHOR_END: tiles

// ANCHOR: launch
/// One block per BM x BN tile of C: the producer's 128 threads and 128 per consumer warpgroup.
pub fn launch_with(s: &Shape, p: Precision, t: HopperTiles) -> Launch {
    let threads = 128 * (t.bm / 64 + 1) as u32;
    t.launch(s, p, (ceil_div(s.n, t.bn), ceil_div(s.m, t.bm), 1), threads, 1, 0)
}
// ANCHOR_END: launch

/// This step's block (its warpgroups and their ring of buffers), which steps 11 and 12 keep.
pub const WARPGROUPS: Header = common::step_header!("warpgroups.cuh");

common::precision_steps! {
    idea: "a producer warpgroup copies, two consumer warpgroups multiply; setmaxnreg",
    hopper: hopper_host::run_tiles,
    headers: &[step09_wgmma_tma::ACCUMULATORS, WARPGROUPS],
    precisions: { FP16 = F16, BF16 = Bf16 },
}
