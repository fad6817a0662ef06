//! Step 11: clusters and a persistent grid. Two blocks of a cluster share each B tile by TMA
//! multicast; one cluster per pair of SMs walks through C's tiles in groups that share rows of A
//! and columns of B in L2, cutting a last wave that would leave most clusters idle into halves.
//! FP16 and BF16; sm_90a only.

use common::harness::compile::Header;
use common::harness::hopper_host::{self, HopperTiles};
use common::{Launch, Precision, Shape};

// ANCHOR: tiles
/// Step 10's block, two blocks per cluster, groups of eight cluster rows (chosen with
/// `examples/tune.rs`, see notes/step11.md).
pub const fn tiles(_: Precision) -> HopperTiles {
    HopperTiles { bm: 128, bn: 256, stages: 4, cluster: 2, group: 8 }
}
// ANCHOR_END: tiles

// ANCHOR: launch
/// One cluster per job (CLUSTER vertically adjacent BM x BN tiles of C), laid out along x; the
/// host shrinks the grid to the clusters the GPU holds at once (`persistent_grid`).
pub fn launch_with(s: &Shape, p: Precision, t: HopperTiles) -> Launch {
    let threads = 128 * (t.bm / 64 + 1) as u32;
    t.launch(s, p, (t.jobs(s) * t.cluster, 1, 1), threads, 1, 0).define("HALVES", t.halves() as i64)
}
// ANCHOR_END: launch

/// This step's persistent schedule (jobs, waves, stream-K's partial sums), which steps 12 and 13
/// keep.
pub const SCHEDULE: Header = common::step_header!("schedule.cuh");

// ANCHOR: partials
// The two ideas of this step, each measured alone (`cargo xtask sweep --partials`).
common::precision_steps! {
    idea: "clusters share B tiles by TMA multicast; a persistent grid walks C in groups and evens out its last wave",
    hopper: hopper_host::run_persistent,
    headers: &[step09_wgmma_tma::ACCUMULATORS, step10_warp_specialized::WARPGROUPS, SCHEDULE],
    partials: {
        "no-multicast": "the persistent grid alone: clusters of one block, no B tile shared by multicast" =>
            |t| HopperTiles { cluster: 1, ..t },
        "row-by-row": "multicast and the persistent grid without its L2 groups: jobs row after row" =>
            |t| HopperTiles { group: 1, ..t },
    },
    precisions: { FP16 = F16, BF16 = Bf16 },
}
// ANCHOR_END: partials
