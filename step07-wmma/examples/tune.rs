//! How step 7's tiles were chosen: every candidate tiling of each precision, verified and
//! timed against cuBLAS in the same precision, at one shape (default 4096^3).
//!
//!     cargo run --release -p step07-wmma --example tune [-- MxNxK [fp16|tf32|fp64]]

use common::device::Gpu;
use common::measure::{Prepared, TimingPlan, compare_prepared};
use common::reference::Cublas;
use common::step::Runner;
use common::{Gemm, Precision, Result, Shape, data};
use step07_wmma::{Tiles, VARIANTS, launch_with, tiles};

/// Candidates per precision: the chosen tiles first, then one change at a time.
fn candidates(p: Precision) -> Vec<Tiles> {
    let base = tiles(p);
    let mut v = vec![base];
    v.push(Tiles { stages: base.stages + 1, ..base });
    v.push(Tiles { stages: base.stages + 2, ..base });
    v.push(Tiles { bk: base.bk * 2, ..base });
    v.push(Tiles { bk: base.bk * 2, stages: 2, ..base });
    v.push(Tiles { min_blocks: 1, ..base });
    v.push(Tiles { min_blocks: 3, ..base });
    match p {
        Precision::F64 => {
            v.push(Tiles { bm: 128, bn: 64, ..base });
            v.push(Tiles { bm: 128, bn: 128, wm: 64, wn: 32, ..base });
            v.push(Tiles { bm: 64, bn: 128, wm: 32, wn: 64, ..base });
            v.push(Tiles { bm: 128, bn: 128, wm: 32, wn: 64, min_blocks: 1, ..base });
        }
        _ => {
            v.push(Tiles { bm: 128, bn: 256, ..base });
            v.push(Tiles { bm: 256, bn: 128, ..base });
            v.push(Tiles { bm: 128, bn: 256, min_blocks: 1, ..base });
            v.push(Tiles { wm: 32, wn: 64, ..base });
            v.push(Tiles { bm: 128, bn: 256, wm: 64, wn: 64, stages: 4, min_blocks: 1, ..base });
        }
    }
    v
}

/// Step 7's tile candidates, each verified and timed against cuBLAS in the same precision.
#[derive(clap::Parser)]
#[command(name = "tune", version)]
struct Args {
    /// The shape, MxNxK or S
    #[arg(value_parser = common::cli::parse_shape, default_value = "4096")]
    shape: Shape,
    /// Only this precision
    #[arg(value_parser = ["fp16", "tf32", "fp64"])]
    precision: Option<String>,
}

fn main() -> std::process::ExitCode {
    let args: Args = clap::Parser::parse();
    common::cli::tool_main(|| run(args.shape, args.precision.as_deref().and_then(Precision::parse)))
}

fn run(shape: Shape, only: Option<Precision>) -> Result<()> {
    let gpu = Gpu::shared()?;
    let cublas = Cublas::new(&gpu)?;
    println!("step07 tiles on {} at {shape}", gpu.describe());
    println!("| precision | BMxBNxBK | warp | stages | min blocks | regs | smem (B) | GFLOP/s | % of cuBLAS | check |");
    println!("|---|---|---|---:|---:|---:|---:|---:|---:|---|");
    let gemm = Gemm::new(shape, 1.0, 0.0);
    for step in VARIANTS.iter().filter(|s| only.is_none_or(|p| p == s.precision)) {
        let p = step.precision;
        let prepared = Prepared::new(&gpu, &cublas, &gemm, p, data::fresh_seed())?;
        for t in candidates(p) {
            let launch = launch_with(&shape, p, t);
            let mut runner = Runner::new(&gpu, step, None)?.with_launch(move |s| launch_with(s, p, t));
            let row =
                format!("| {p} | {}x{}x{} | {}x{} | {} | {} |", t.bm, t.bn, t.bk, t.wm, t.wn, t.stages, t.min_blocks);
            let loaded = match runner.load(&launch) {
                Ok(l) => l.resources,
                Err(e) => {
                    println!("{row} - | - | - | - | {} |", e.to_string().lines().next().unwrap_or(""));
                    continue;
                }
            };
            let verified = prepared.check(&mut runner)?;
            if !verified.passed() {
                println!("{row} {} | {} | - | - | FAILED |", loaded.registers, launch.dynamic_smem_bytes);
                continue;
            }
            let cmp = compare_prepared(&mut runner, &cublas, &prepared, TimingPlan::default())?;
            println!(
                "{row} {} | {} | {:.0} | {:.1}% | ok ({} B spilled) |",
                loaded.registers,
                launch.dynamic_smem_bytes,
                cmp.kernel.gflops(&gemm),
                100.0 * cmp.ratio(),
                loaded.spills()
            );
        }
    }
    Ok(())
}
