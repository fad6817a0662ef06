//! How step 13's tiles were chosen, one change at a time, verified and timed against cuBLAS
//! (TF32: cuBLAS TF32; 3xTF32: cuBLAS SGEMM), at one shape (default 4096^3).
//!
//!     cargo run --release -p step13-3xtf32 --example tune13 [-- MxNxK [tf32|3xtf32]]

use common::harness::hopper_host::HopperTiles;
use common::tools::tune::Candidate;
use step13_3xtf32::{VARIANTS, launch_with, tiles};

/// The chosen tiles first, then one change at a time.
fn candidates(p: common::Precision) -> Vec<Candidate> {
    let base = tiles(p);
    [base, HopperTiles { stages: 3, ..base }, HopperTiles { cluster: 1, ..base }, HopperTiles { group: 16, ..base }]
        .into_iter()
        .map(|t| Candidate::new(t.to_string(), move |s| launch_with(s, p, t)))
        .collect()
}

fn main() -> std::process::ExitCode {
    common::tools::tune::main(&VARIANTS, candidates)
}
