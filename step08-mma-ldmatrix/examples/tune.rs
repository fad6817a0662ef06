//! How step 8's tiles were chosen: candidate tilings of each precision, verified and timed
//! against cuBLAS in the same precision, at one shape (default 4096^3); and the kernel without
//! its swizzle (SWIZZLE=0), the experiment behind the bank-conflict counts in the book.
//!
//!     cargo run --release -p step08-mma-ldmatrix --example tune08 [-- MxNxK [fp16|bf16|tf32|fp64|3xtf32]]

use common::cli::with_defines;
use common::tune::Candidate;
use common::{Precision, Shape};
use step08_mma_ldmatrix::{Tiles, VARIANTS, launch_with, tiles};

/// Candidates per precision: the chosen tiles first, then one change at a time.
fn candidates(p: Precision) -> Vec<Candidate> {
    let base = tiles(p);
    let mut v = vec![base, Tiles { stages: base.stages + 1, ..base }];
    if base.stages > 2 {
        v.push(Tiles { stages: base.stages - 1, ..base });
    }
    match p {
        Precision::F16 | Precision::Bf16 => {
            v.push(Tiles { bm: 256, bn: 128, ..base });
            v.push(Tiles { bm: 128, bn: 128, stages: 3, min_blocks: 2, ..base });
            v.push(Tiles { bm: 128, bn: 128, stages: 2, min_blocks: 2, ..base });
            v.push(Tiles { wm: 128, wn: 32, ..base });
        }
        Precision::Tf32 => {
            v.push(Tiles { bn: 256, min_blocks: 1, ..base });
            v.push(Tiles { bm: 256, min_blocks: 1, ..base });
            v.push(Tiles { bn: 256, stages: 2, min_blocks: 1, ..base });
        }
        Precision::Tf32x3 => {
            v.push(Tiles { bm: 128, bn: 128, wm: 64, wn: 32, ..base });
            v.push(Tiles { bm: 128, bn: 64, wm: 64, wn: 16, ..base });
            v.push(Tiles { bm: 128, ..base });
        }
        _ => {
            v.push(Tiles { bn: 64, wn: 32, min_blocks: 2, ..base });
            v.push(Tiles { wm: 32, wn: 64, ..base });
        }
    }
    let mut out: Vec<Candidate> = v
        .into_iter()
        .map(|t| {
            let label = format!(
                "{}x{}x{}, warp {}x{}, {} stages, {} blocks",
                t.bm, t.bn, t.bk, t.wm, t.wn, t.stages, t.min_blocks
            );
            Candidate::new(label, move |s| launch_with(s, p, t))
        })
        .collect();
    out.push(Candidate::new("chosen tiles, SWIZZLE=0 (rows as they are)", move |s| {
        with_defines(launch_with(s, p, base), &[("SWIZZLE", 0)])
    }));
    out
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
}

fn main() -> std::process::ExitCode {
    let args: Args = clap::Parser::parse();
    let only = args.precision.as_deref().and_then(Precision::parse);
    common::cli::tool_main(|| common::tune::run(&VARIANTS, args.shape, only, candidates))
}
