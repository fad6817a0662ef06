//! Step 10: warp specialization. A producer warpgroup keeps the ring of tiles full while two
//! consumer warpgroups multiply them with `wgmma`; `setmaxnreg` moves the producer's registers to
//! the consumers. FP16 and BF16; sm_90a only.

use common::rungs::{self, HopperTiles};
use common::{Launch, Precision, Shape, Step, ceil_div, kernel_source};

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

const fn variant(precision: Precision, launch: fn(&Shape) -> Launch) -> Step {
    Step {
        name: "step10-warp-specialized",
        idea: "a producer warpgroup copies, two consumer warpgroups multiply; setmaxnreg",
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
