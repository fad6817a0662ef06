//! How step 8's tiles were chosen: candidate tilings of each precision, verified and timed
//! against cuBLAS in the same precision, at one shape (default 4096^3): the chosen tiles, then
//! one change at a time (stages, tile shape). `--kernel FILE` runs the same candidates with an
//! experiment kernel or patch: the pipeline's other shapes (`notes/experiments/step08-mma-ldmatrix/
//! copy-parts.patch`, `frag-sets.patch`, which the candidates of 16 warps need to fit their
//! registers), the kernel without its swizzle (`no-swizzle.patch`, behind the bank-conflict counts
//! in the book). `--define NAME=VALUE` adds a define to every candidate. `--define PERSIST=N` (with
//! a kernel that takes any grid, the experiment `persistent.patch`) launches every candidate with N
//! blocks that loop over the tiles.
//!
//!     cargo run --release -p step08-mma-ldmatrix --example tune08 [-- MxNxK [fp16|bf16|tf32|fp64|3xtf32]]

use common::tools::cli;
use common::tools::tune::{self, Candidate};
use common::{Precision, Shape};
use step08_mma_ldmatrix::{VARIANTS, WarpTiles, launch_with, tiles};

/// Candidates per precision: the chosen tiles first, then one change at a time.
fn candidates(p: Precision) -> Vec<Candidate> {
    let base = tiles(p);
    let mut v: Vec<WarpTiles> = vec![base];
    // A candidate that needs more shared memory than the GPU has gets a row saying so.
    for stages in [base.stages - 1, base.stages + 1].into_iter().filter(|&s| s >= 2) {
        v.push(WarpTiles { stages, ..base });
    }
    match p {
        Precision::F16 | Precision::Bf16 => {
            v.push(WarpTiles { bm: 128, bn: 256, ..base });
            // Half as many barriers: K-tiles of 128 in two stages (192 KiB).
            v.push(WarpTiles { bk: 128, stages: 2, ..base });
        }
        Precision::Tf32 => v.push(WarpTiles { bk: 64, stages: 2, ..base }),
        Precision::Tf32x3 => {
            // The other warp tile as large (32 x 64), step 8's first 32 x 32 (alone and two blocks
            // per SM), and deeper K-tiles (fewer barriers and sums of the K-tile accumulator).
            v.push(WarpTiles { bm: 64, bn: 256, wm: 32, wn: 64, ..base });
            v.push(WarpTiles { bm: 64, wm: 32, ..base });
            v.push(WarpTiles { bm: 64, wm: 32, min_blocks: 2, ..base });
            v.push(WarpTiles { bk: 64, ..base });
        }
        _ => {
            v.push(WarpTiles { bm: 128, bn: 128, bk: 16, wm: 64, wn: 32, stages: 2, ..base });
            v.push(WarpTiles { bm: 128, bn: 128, bk: 16, wm: 64, wn: 32, ..base });
        }
    }
    if matches!(p, Precision::F16 | Precision::Bf16 | Precision::Tf32) {
        // More warps to hide latency: four per scheduler (16 warps of 64 x 32 in a 256 x 128 block;
        // 128 registers, so one fragment set: `--kernel frag-sets.patch`), or two 128 x 128 blocks
        // per SM (a barrier stops only half the warps).
        let more_warps = WarpTiles { bm: 256, bn: 128, wn: 32, ..base };
        v.push(more_warps);
        if p != Precision::Tf32 {
            v.push(WarpTiles { stages: 4, ..more_warps });
        }
        v.push(WarpTiles { bm: 128, bn: 128, min_blocks: 2, ..base });
    }
    v.into_iter()
        .map(|t| {
            let blocks = if t.min_blocks > 1 { format!(", {} blocks/SM", t.min_blocks) } else { String::new() };
            let label = format!("{}x{}x{}, warp {}x{}, {} stages{blocks}", t.bm, t.bn, t.bk, t.wm, t.wn, t.stages);
            Candidate::new(label, move |s| launch_with(s, p, t))
        })
        .collect()
}

/// The candidate with at most `blocks` blocks, in a one-dimensional grid (`PERSIST`).
fn persistent(c: Candidate, blocks: u32) -> Candidate {
    let Candidate { label, launch } = c;
    Candidate::following(label, move |s, d| {
        let mut l = launch(s, d);
        l.grid = (l.grid.0.saturating_mul(l.grid.1).min(blocks), 1, 1);
        l
    })
}

/// Step 8's tile candidates, each verified and timed against cuBLAS in the same precision.
#[derive(clap::Parser)]
#[command(name = "tune", version)]
struct Args {
    /// The shape, MxNxK or S
    #[arg(value_parser = cli::parse_shape, default_value = "4096")]
    shape: Shape,
    /// Only this precision
    #[arg(value_parser = ["fp16", "bf16", "tf32", "fp64", "3xtf32"])]
    precision: Option<String>,
    #[command(flatten)]
    experiment: tune::Experiment,
}

fn main() -> std::process::ExitCode {
    let args: Args = clap::Parser::parse();
    let only = args.precision.as_deref().and_then(Precision::parse);
    // At least one block; a value beyond u32 saturates (the grid never exceeds the tiles anyway).
    let persist =
        args.experiment.define.iter().find(|(n, _)| n == "PERSIST").map(|&(_, v)| v.clamp(1, u32::MAX.into()) as u32);
    let candidates = |p| match persist {
        Some(blocks) => candidates(p).into_iter().map(|c| persistent(c, blocks)).collect(),
        None => candidates(p),
    };
    cli::tool_main(|| tune::run(&VARIANTS, args.shape, only, &args.experiment, candidates))
}
