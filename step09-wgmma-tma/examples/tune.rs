//! How step 9's tiles were chosen: candidate block tiles, pipeline depths and cluster sizes of
//! each precision, verified and timed against cuBLAS in the same precision, at one shape
//! (default 4096^3).
//!
//!     cargo run --release -p step09-wgmma-tma --example tune09 [-- MxNxK [fp16|bf16|tf32|3xtf32]]

use common::tune::Candidate;
use common::{Precision, Shape};
use step09_wgmma_tma::{ClusterTiles, VARIANTS, launch_with, tiles};

/// Candidates per precision: the chosen tiles first, then one change at a time.
fn candidates(p: Precision) -> Vec<Candidate> {
    let base = tiles(p);
    let mut v = vec![
        base,
        ClusterTiles { halves: false, ..base },
        ClusterTiles { persistent: false, ..base },
        ClusterTiles { persistent: false, group: 1, ..base },
        ClusterTiles { group: 1, ..base },
        ClusterTiles { group: 4, ..base },
        ClusterTiles { group: 16, ..base },
        ClusterTiles { cluster: 1, ..base },
        ClusterTiles { stages: base.stages - 1, ..base },
    ];
    if p != Precision::Tf32x3 {
        v.push(ClusterTiles { bn: 128, stages: 6, ..base });
    }
    v.into_iter()
        .map(|t| {
            let label = format!(
                "{}x{}, {} stages, cluster {}, group {}, {}",
                t.bm,
                t.bn,
                t.stages,
                t.cluster,
                t.group,
                match (t.persistent, step09_wgmma_tma::halves(p, t)) {
                    (false, _) => "a cluster per job",
                    (true, false) => "persistent",
                    (true, true) => "persistent, halves",
                }
            );
            Candidate::new(label, move |s| launch_with(s, p, t))
        })
        .collect()
}

/// Step 9's tile candidates, each verified and timed against cuBLAS in the same precision.
#[derive(clap::Parser)]
#[command(name = "tune", version)]
struct Args {
    /// The shape, MxNxK or S
    #[arg(value_parser = common::cli::parse_shape, default_value = "4096")]
    shape: Shape,
    /// Only this precision
    #[arg(value_parser = ["fp16", "bf16", "tf32", "3xtf32"])]
    precision: Option<String>,
    #[command(flatten)]
    experiment: common::tune::Experiment,
}

fn main() -> std::process::ExitCode {
    let args: Args = clap::Parser::parse();
    let only = args.precision.as_deref().and_then(Precision::parse);
    common::cli::tool_main(|| common::tune::run(&VARIANTS, args.shape, only, &args.experiment, candidates))
}
