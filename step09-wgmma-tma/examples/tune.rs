//! How step 9's tiles were chosen: the tile width and the depth of the ring, verified and timed
//! against cuBLAS in the same precision, at one shape (default 4096^3).
//!
//!     cargo run --release -p step09-wgmma-tma --example tune09 [-- MxNxK [fp16|bf16]]

use common::harness::hopper_host::HopperTiles;
use common::tools::tune::Candidate;
use step09_wgmma_tma::{VARIANTS, launch_with, tiles};

/// The chosen tiles first, then one change at a time.
fn candidates(p: common::Precision) -> Vec<Candidate> {
    let base = tiles(p);
    [
        base,
        HopperTiles { stages: 3, ..base },
        HopperTiles { stages: 2, ..base },
        HopperTiles { bn: 128, ..base },
        HopperTiles { bn: 128, stages: 6, ..base },
    ]
    .into_iter()
    .map(|t| Candidate::new(t.to_string(), move |s| launch_with(s, p, t)))
    .collect()
}

fn main() -> std::process::ExitCode {
    common::tools::tune::main(&VARIANTS, candidates)
}
