//! How step 12's tiles were chosen, one change at a time, verified and timed against cuBLAS in
//! the same precision (and C type), at one shape (default 4096^3).
//!
//!     cargo run --release -p step12-epilogue --example tune12 [-- MxNxK [fp16|bf16|fp16-c16|bf16-c16]]

use common::harness::hopper_host::HopperTiles;
use common::tools::tune::Candidate;
use step12_epilogue::{VARIANTS, launch_with, tiles};

/// The chosen tiles first, then one change at a time.
fn candidates(p: common::Precision) -> Vec<Candidate> {
    let base = tiles(p);
    [
        base,
        HopperTiles { stages: 3, ..base },
        HopperTiles { cluster: 1, ..base },
        HopperTiles { group: 16, ..base },
        HopperTiles { bn: 128, stages: 6, ..base },
    ]
    .into_iter()
    .map(|t| Candidate::new(t.to_string(), move |s| launch_with(s, p, t)))
    .collect()
}

fn main() -> std::process::ExitCode {
    common::tools::tune::main(&VARIANTS, candidates)
}
