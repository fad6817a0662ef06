//! How step 11's cluster and tile order were chosen, one change at a time, verified and timed
//! against cuBLAS in the same precision, at one shape (default 4096^3).
//!
//!     cargo run --release -p step11-cluster-persistent --example tune11 [-- MxNxK [fp16|bf16]]

use common::harness::hopper_host::HopperTiles;
use common::tools::tune::Candidate;
use step11_cluster_persistent::{VARIANTS, launch_with, tiles};

/// The chosen tiles first, then one change at a time (and the chosen ones without half jobs).
fn candidates(p: common::Precision) -> Vec<Candidate> {
    let base = tiles(p);
    let mut v: Vec<Candidate> = [
        base,
        HopperTiles { cluster: 1, ..base },
        HopperTiles { group: 1, ..base },
        HopperTiles { group: 4, ..base },
        HopperTiles { group: 16, ..base },
        HopperTiles { stages: 3, ..base },
    ]
    .into_iter()
    .map(|t| Candidate::new(t.to_string(), move |s| launch_with(s, p, t)))
    .collect();
    v.push(Candidate::new(format!("{base}, no half jobs"), move |s| {
        common::harness::launch::with_defines(launch_with(s, p, base), &[("HALVES", 0)])
    }));
    v
}

fn main() -> std::process::ExitCode {
    common::tools::tune::main(&VARIANTS, candidates)
}
