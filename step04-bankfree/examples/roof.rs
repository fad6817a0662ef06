//! The roof of steps 3 and 4: each step's inner loop alone (`roof.cu`: the tiles filled once,
//! then only the shared-memory reads and FMAs of every K-tile), timed next to the steps
//! themselves and cuBLAS SGEMM in the same process, at one shape (default 4096^3).
//!
//!     cargo run --release -p step04-bankfree --example roof [-- MxNxK]   (--help for more)
//!
//! No kernel with a step's inner loop can beat that loop alone: the roof bounds what any
//! variant of the step (better global loads, fewer barriers) could reach.

use common::harness::device::Gpu;
use common::harness::runner::Runner;
use common::timing::runs::{TimingPlan, compare_prepared};
use common::verify::check::Prepared;
use common::verify::reference::Cublas;
use common::{Gemm, KernelSource, Precision, Result, Shape, harness::data};

fn roof_source() -> KernelSource {
    KernelSource { name: "step04-bankfree/examples/roof.cu".into(), code: include_str!("roof.cu").into(), headers: &[] }
}

/// Steps 3 and 4 and their inner loops alone, next to cuBLAS SGEMM.
#[derive(clap::Parser)]
#[command(name = "roof", version)]
struct Args {
    /// The shape, MxNxK or S
    #[arg(value_parser = common::tools::cli::parse_shape, default_value = "4096")]
    shape: Shape,
}

fn main() -> std::process::ExitCode {
    let Args { shape } = clap::Parser::parse();
    common::tools::cli::tool_main(|| run(shape))
}

fn run(shape: Shape) -> Result<()> {
    let gpu = Gpu::shared()?;
    let cublas = Cublas::new(&gpu)?;
    let gemm = Gemm::new(shape, 1.0, 0.0);
    let prepared = Prepared::new(&gpu, &cublas, &gemm, Precision::F32, data::fresh_seed())?;
    println!("Steps 3 and 4 and their inner loops alone on {} at {shape}\n", gpu.describe());
    println!("| kernel | time (ms) | GFLOP/s | cuBLAS GFLOP/s | % of cuBLAS |");
    println!("|---|---:|---:|---:|---:|");
    let rows = [
        ("step 3", step03_smem::STEP, None),
        ("step 3's inner loop alone", step03_smem::STEP, Some(0)),
        ("step 4", step04_bankfree::STEP, None),
        ("step 4's inner loop alone", step04_bankfree::STEP, Some(1)),
    ];
    for (label, step, pad) in rows {
        let mut runner = match pad {
            // The steps themselves: verified before they are timed.
            None => {
                let mut runner = Runner::new(&gpu, &step, None)?;
                prepared.require(&mut runner)?;
                runner
            }
            // The roofs compute something else on purpose: timed only.
            Some(pad) => {
                let launch = step.launch;
                Runner::new(&gpu, &step, Some(roof_source()))?.with_launch(move |s| launch(s).define("PAD", pad))
            }
        };
        let cmp = compare_prepared(&mut runner, &cublas, &prepared, TimingPlan::default())?;
        println!(
            "| {label} | {:.2} | {:.0} | {:.0} | {:.1}% |",
            cmp.kernel.median_ms,
            cmp.kernel.gflops(&gemm),
            cmp.cublas.gflops(&gemm),
            100.0 * cmp.ratio()
        );
    }
    Ok(())
}
