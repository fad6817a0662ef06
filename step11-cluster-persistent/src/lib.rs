//! Step 11: clusters and a persistent grid. Two blocks of a cluster share each B tile by TMA
//! multicast; one cluster per pair of SMs walks through C's tiles in groups that share rows of A
//! and columns of B in L2, cutting a last turn that would leave most clusters idle into halves.
//! FP16 and BF16; sm_90a only.

use common::rungs::{self, HopperTiles};
use common::{Launch, Precision, Shape, Step, kernel_source};

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

const fn variant(precision: Precision, launch: fn(&Shape) -> Launch) -> Step {
    Step {
        name: "step11-cluster-persistent",
        idea: "clusters share B tiles by TMA multicast; a persistent grid walks C in groups and evens out its last turn",
        kernel: kernel_source!("src/kernel.cu"),
        launch,
        min_cc: (9, 0),
        precision,
        arch: Some("sm_90a"),
        host: Some(rungs::run_persistent),
    }
}

common::precision_steps! {
    FP16 = F16,
    BF16 = Bf16,
}

/// The precisions of this step, FP16 first (the binary's default).
pub const VARIANTS: [Step; 2] = [FP16, BF16];
