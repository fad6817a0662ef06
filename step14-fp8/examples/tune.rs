//! Step 14's launch beside one change at a time, verified and timed against cuBLASLt's FP8 with the
//! same scaling and C, at one shape (default 4096^3); with `--kernel` an experiment of
//! `notes/experiments/step14-fp8/` in the step's place, and `--unchecked` for the bounds whose
//! product is wrong by design.
//!
//!     cargo run --release -p step14-fp8 --example tune14 [-- MxNxK [fp8|fp8-c32|fp8-block|fp8-block-c32]]

use common::harness::hopper_host::HopperTiles;
use common::harness::launch::Tiles;
use common::tools::tune::Candidate;
use step14_fp8::{VARIANTS, launch_with, tiles};

/// The step's tiles first, then the order of the tiles (GROUP) and the cluster, one at a time. A
/// `--define` of a tile size moves the launch with it (e.g. `--define BN=128 --define STAGES=5`:
/// the block scales' loop with the per-tensor tile).
fn candidates(p: common::Precision) -> Vec<Candidate> {
    let base = tiles(p);
    [base, HopperTiles { group: 16, ..base }, HopperTiles { cluster: 1, ..base }]
        .into_iter()
        .map(|t| Candidate::following(t.to_string(), move |s, d| launch_with(s, p, t.following(d))))
        .collect()
}

fn main() -> std::process::ExitCode {
    common::tools::tune::main(&VARIANTS, candidates)
}
