//! How step 8's tiles were chosen: candidate tilings of each precision, verified and timed
//! against cuBLAS in the same precision, at one shape (default 4096^3): the chosen tiles, then
//! one change at a time (stages, tile shape, the pipeline's knobs COPY_STEPS and FRAG_SETS);
//! and the kernel without its swizzle (SWIZZLE=0), the experiment behind the bank-conflict
//! counts in the book. `--kernel FILE.cu` runs the same candidates with an experiment kernel,
//! `--define NAME=VALUE` adds a define to every candidate. `--define PERSIST=N` (with a kernel
//! that takes any grid, the experiment `persistent.cu`) launches every candidate with N blocks
//! that loop over the tiles.
//!
//!     cargo run --release -p step08-mma-ldmatrix --example tune08 [-- MxNxK [fp16|bf16|tf32|fp64|3xtf32]]

use common::launch::with_defines;
use common::tune::Candidate;
use common::{Precision, Shape};
use step08_mma_ldmatrix::{VARIANTS, WarpTiles, launch_with, tiles};

/// Candidates per precision: the chosen tiles first, then one change at a time.
fn candidates(p: Precision) -> Vec<Candidate> {
    let base = tiles(p);
    let t = |t: WarpTiles| (t, vec![]);
    let mut v: Vec<(WarpTiles, Vec<(&'static str, i64)>)> = vec![t(base)];
    // A candidate that needs more shared memory than the GPU has gets a row saying so.
    for stages in [base.stages - 1, base.stages + 1].into_iter().filter(|&s| s >= 2) {
        v.push(t(WarpTiles { stages, ..base }));
    }
    match p {
        Precision::F16 | Precision::Bf16 => {
            v.push(t(WarpTiles { bm: 128, bn: 256, ..base }));
            // Half as many barriers: K-tiles of 128 in two stages (192 KiB).
            v.push(t(WarpTiles { bk: 128, stages: 2, ..base }));
        }
        Precision::Tf32 => v.push(t(WarpTiles { bk: 64, stages: 2, ..base })),
        Precision::Tf32x3 => {
            // The other warp tile as large (32 x 64), step 8's first 32 x 32 (alone and two blocks
            // per SM), and deeper K-tiles (fewer barriers and sums of the K-tile accumulator).
            v.push(t(WarpTiles { bm: 64, bn: 256, wm: 32, wn: 64, ..base }));
            v.push(t(WarpTiles { bm: 64, wm: 32, ..base }));
            v.push(t(WarpTiles { bm: 64, wm: 32, min_blocks: 2, ..base }));
            v.push(t(WarpTiles { bk: 64, ..base }));
        }
        _ => {
            v.push(t(WarpTiles { bm: 128, bn: 128, bk: 16, wm: 64, wn: 32, stages: 2, ..base }));
            v.push(t(WarpTiles { bm: 128, bn: 128, bk: 16, wm: 64, wn: 32, ..base }));
        }
    }
    if matches!(p, Precision::F16 | Precision::Bf16 | Precision::Tf32) {
        // More warps to hide latency: four per scheduler (16 warps of 64 x 32 in a 256 x 128 block;
        // 128 registers, so one fragment set), or two 128 x 128 blocks per SM (a barrier stops
        // only half the warps).
        let more_warps = WarpTiles { bm: 256, bn: 128, wn: 32, ..base };
        v.push((more_warps, vec![("FRAG_SETS", 1)]));
        if p != Precision::Tf32 {
            v.push((WarpTiles { stages: 4, ..more_warps }, vec![("FRAG_SETS", 1)]));
        }
        v.push(t(WarpTiles { bm: 128, bn: 128, min_blocks: 2, ..base }));
    }
    // The pipeline's knobs, one at a time (kernel.cu: COPY_STEPS, FRAG_SETS).
    // COPY_STEPS: one part instead of one per k-step but the last (3xTF32 the other way round:
    // one part is its default; its k-steps are 8 deep).
    v.push((base, vec![("COPY_STEPS", if p == Precision::Tf32x3 { base.bk as i64 / 8 - 1 } else { 1 })]));
    match p {
        Precision::F64 => {}
        Precision::Tf32x3 => v.push((base, vec![("FRAG_SETS", 2)])),
        _ => v.push((base, vec![("FRAG_SETS", 1)])),
    }
    let mut out: Vec<Candidate> = v
        .into_iter()
        .map(|(t, defs)| {
            let knobs: Vec<String> = defs.iter().map(|(n, v)| format!(", {n}={v}")).collect();
            let blocks = if t.min_blocks > 1 { format!(", {} blocks/SM", t.min_blocks) } else { String::new() };
            let label = format!(
                "{}x{}x{}, warp {}x{}, {} stages{blocks}{}",
                t.bm,
                t.bn,
                t.bk,
                t.wm,
                t.wn,
                t.stages,
                knobs.concat()
            );
            Candidate::new(label, move |s| with_defines(launch_with(s, p, t), &defs))
        })
        .collect();
    out.push(Candidate::new("chosen tiles, SWIZZLE=0 (rows as they are)", move |s| {
        with_defines(launch_with(s, p, base), &[("SWIZZLE", 0)])
    }));
    out
}

/// The candidate with at most `blocks` blocks, in a one-dimensional grid (`PERSIST`).
fn persistent(c: Candidate, blocks: u32) -> Candidate {
    let Candidate { label, launch } = c;
    Candidate::new(label, move |s| {
        let mut l = launch(s);
        l.grid = (l.grid.0.saturating_mul(l.grid.1).min(blocks), 1, 1);
        l
    })
}

/// Step 8's tile candidates, each verified and timed against cuBLAS in the same precision.
#[derive(clap::Parser)]
#[command(name = "tune", version)]
struct Args {
    /// The shape, MxNxK or S
    #[arg(value_parser = common::cli::parse_shape, default_value = "4096")]
    shape: Shape,
    /// Only this precision
    #[arg(value_parser = ["fp16", "bf16", "tf32", "fp64", "3xtf32"])]
    precision: Option<String>,
    #[command(flatten)]
    experiment: common::tune::Experiment,
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
    common::cli::tool_main(|| common::tune::run(&VARIANTS, args.shape, only, &args.experiment, candidates))
}
