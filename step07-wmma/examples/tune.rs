//! How step 7's tiles were chosen: every candidate tiling of each precision, verified and
//! timed against cuBLAS in the same precision, at one shape (default 4096^3).
//!
//!     cargo run --release -p step07-wmma --example tune07 [-- MxNxK [fp16|tf32|fp64]]

use common::tools::cli;
use common::tools::tune::{self, Candidate};
use common::{Precision, Shape};
use step07_wmma::{VARIANTS, WarpTiles, launch_with, tiles};

/// Candidates per precision: the chosen tiles first, then one change at a time.
fn candidates(p: Precision) -> Vec<Candidate> {
    let base = tiles(p);
    let mut v = vec![base];
    v.push(WarpTiles { stages: base.stages + 1, ..base });
    v.push(WarpTiles { stages: base.stages + 2, ..base });
    v.push(WarpTiles { bk: base.bk * 2, ..base });
    v.push(WarpTiles { bk: base.bk * 2, stages: 2, ..base });
    v.push(WarpTiles { min_blocks: 1, ..base });
    v.push(WarpTiles { min_blocks: 3, ..base });
    match p {
        Precision::F64 => {
            v.push(WarpTiles { bm: 128, bn: 64, ..base });
            v.push(WarpTiles { bm: 128, bn: 128, wm: 64, wn: 32, ..base });
            v.push(WarpTiles { bm: 64, bn: 128, wm: 32, wn: 64, ..base });
            v.push(WarpTiles { bm: 128, bn: 128, wm: 32, wn: 64, min_blocks: 1, ..base });
        }
        _ => {
            v.push(WarpTiles { bm: 128, bn: 256, ..base });
            v.push(WarpTiles { bm: 256, bn: 128, ..base });
            v.push(WarpTiles { bm: 128, bn: 256, min_blocks: 1, ..base });
            v.push(WarpTiles { wm: 32, wn: 64, ..base });
            v.push(WarpTiles { bm: 128, bn: 256, wm: 64, wn: 64, stages: 4, min_blocks: 1, ..base });
        }
    }
    v.into_iter()
        .map(|t| {
            let label = format!(
                "{}x{}x{}, warp {}x{}, {} stages, {} blocks",
                t.bm, t.bn, t.bk, t.wm, t.wn, t.stages, t.min_blocks
            );
            Candidate::new(label, move |s| launch_with(s, p, t))
        })
        .collect()
}

/// Step 7's tile candidates, each verified and timed against cuBLAS in the same precision.
#[derive(clap::Parser)]
#[command(name = "tune", version)]
struct Args {
    /// The shape, MxNxK or S
    #[arg(value_parser = cli::parse_shape, default_value = "4096")]
    shape: Shape,
    /// Only this precision
    #[arg(value_parser = ["fp16", "tf32", "fp64"])]
    precision: Option<String>,
    #[command(flatten)]
    experiment: tune::Experiment,
}

fn main() -> std::process::ExitCode {
    let args: Args = clap::Parser::parse();
    let only = args.precision.as_deref().and_then(Precision::parse);
    cli::tool_main(|| tune::run(&VARIANTS, args.shape, only, &args.experiment, candidates))
}
