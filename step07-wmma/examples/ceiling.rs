//! The tensor-core ceiling of each precision: the FLOP rate of one matrix instruction issued
//! back to back from registers (`ceiling.cu`), through WMMA and through raw PTX `mma.sync`,
//! next to cuBLAS and step 7 at one shape (default 4096^3), all in one process.
//!
//!     cargo run --release -p step07-wmma --example ceiling [-- MxNxK] [--out FILE.md]
//!     cargo run --release -p step07-wmma --example ceiling -- --compile-only sm_80,sm_90
//!
//! The table says how far step 7 is from the roof of the instruction it uses, and how high
//! that roof is next to cuBLAS, which on the H100 uses other instructions (`wgmma`).

use common::harness::compile::{KernelSource, compile};
use common::harness::device::Gpu;
use common::harness::runner::Runner;
use common::timing::runs::{TimingPlan, compare_prepared, time_runs};
use common::verify::check::Prepared;
use common::verify::reference::Cublas;
use common::{Error, Gemm, Precision, Result, Shape, harness::data};
use cudarc::driver::{LaunchConfig, PushKernelArg};
use std::collections::HashMap;

/// One matrix instruction of `ceiling.cu`.
struct Variant {
    id: i64,
    precision: Precision,
    api: &'static str,
    shape: &'static str,
    /// FLOPs of one warp-wide instruction (2 * m * n * k).
    flops: f64,
    min_cc: (i32, i32),
}

const fn v(id: i64, precision: Precision, api: &'static str, shape: &'static str, mnk: [usize; 3]) -> Variant {
    // WMMA FP16 came with sm_70; TF32, FP64 and the PTX m16n8k16 FP16 shape with sm_80.
    let min_cc = match (id, precision) {
        (7, _) => (9, 0),
        (1, Precision::F16) => (7, 0),
        _ => (8, 0),
    };
    Variant { id, precision, api, shape, flops: (2 * mnk[0] * mnk[1] * mnk[2]) as f64, min_cc }
}

const VARIANTS: [Variant; 7] = [
    v(1, Precision::F16, "WMMA", "m16n16k16", [16, 16, 16]),
    v(2, Precision::F16, "PTX mma.sync", "m16n8k16", [16, 8, 16]),
    v(3, Precision::Tf32, "WMMA", "m16n16k8", [16, 16, 8]),
    v(4, Precision::Tf32, "PTX mma.sync", "m16n8k8", [16, 8, 8]),
    v(5, Precision::F64, "WMMA", "m8n8k4", [8, 8, 4]),
    v(6, Precision::F64, "PTX mma.sync", "m8n8k4", [8, 8, 4]),
    v(7, Precision::F64, "PTX mma.sync", "m16n8k16", [16, 8, 16]),
];

/// Iterations per warp.
const ITERS: i32 = 20_000;

/// How the instructions are issued: independent accumulators per warp, warps per block, blocks
/// per SM. The defaults fill the SM with 32 warps; a kernel's own occupancy (step 8: one block
/// of 8 warps per SM) shows what that many warps can reach.
#[derive(clap::Args, Clone, Copy)]
struct Issue {
    /// Independent accumulators per warp
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(i64).range(1..=16))]
    acc: i64,
    /// Warps per block
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=32))]
    warps: u32,
    /// Blocks per SM
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=32))]
    blocks_per_sm: u32,
    /// Random operands, different for every instruction (PTX FP16 and TF32): the multipliers
    /// switch as in a real GEMM, which costs power and so clock speed
    #[arg(long)]
    random_operands: bool,
}

/// The defines of one variant's ceiling kernel.
fn defines(var: &Variant, issue: Issue) -> [(&'static str, i64); 3] {
    [("VARIANT", var.id), ("ACC", issue.acc), ("RANDOM", issue.random_operands as i64)]
}

fn source() -> KernelSource {
    KernelSource {
        name: "step07-wmma/examples/ceiling.cu".into(),
        code: include_str!("ceiling.cu").into(),
        headers: &[],
    }
}

/// The roof of each tensor-core instruction, then cuBLAS and step 7, in the same process.
#[derive(clap::Parser)]
#[command(name = "ceiling", version)]
struct Args {
    /// The shape cuBLAS and step 7 are timed at, MxNxK or S
    #[arg(value_parser = common::tools::cli::parse_shape, default_value = "4096")]
    shape: Shape,
    /// Only compile the ceiling kernels for these architectures (e.g. sm_80,sm_90); no GPU needed
    #[arg(long, value_name = "ARCHS")]
    compile_only: Option<String>,
    /// With --compile-only: also write each CUBIN here, for cuobjdump -sass
    #[arg(long, value_name = "DIR", requires = "compile_only")]
    cubin_dir: Option<String>,
    /// Also write the table to this file
    #[arg(long, value_name = "FILE.md")]
    out: Option<String>,
    #[command(flatten)]
    issue: Issue,
}

fn main() -> std::process::ExitCode {
    let args: Args = clap::Parser::parse();
    common::tools::cli::tool_main(|| match &args.compile_only {
        Some(archs) => compile_only(archs, args.cubin_dir.clone(), args.issue),
        None => run(args.shape, args.out.as_deref(), args.issue),
    })
}

fn run(shape: Shape, save: Option<&str>, issue: Issue) -> Result<()> {
    let Issue { acc, warps, blocks_per_sm, random_operands } = issue;
    let gpu = Gpu::shared()?;
    let cublas = Cublas::new(&gpu)?;
    let mut out = format!("Tensor-core ceilings and step 7 on {} at {shape}\n\n", gpu.describe());
    out.push_str(&format!(
        "Ceiling kernels: {blocks_per_sm} block(s) of {warps} warps per SM, {acc} independent accumulators per warp, {} operands.\n\n",
        if random_operands { "random" } else { "constant" }
    ));
    out.push_str("| precision | instruction | ceiling TFLOP/s | cuBLAS TFLOP/s | ceiling / cuBLAS | step 7 TFLOP/s | step 7 / ceiling |\n");
    out.push_str("|---|---|---:|---:|---:|---:|---:|\n");

    // cuBLAS and step 7 once per precision (verified first), at the shape.
    let gemm = Gemm::new(shape, 1.0, 0.0);
    let mut at_shape: HashMap<Precision, (f64, f64)> = HashMap::new();
    for step in step07_wmma::VARIANTS {
        let prepared = Prepared::new(&gpu, &cublas, &gemm, step.precision, data::fresh_seed())?;
        let mut runner = Runner::new(&gpu, &step, None)?;
        prepared.require(&mut runner)?;
        let cmp = compare_prepared(&mut runner, &cublas, &prepared, TimingPlan::default())?;
        at_shape.insert(step.precision, (cmp.cublas.gflops(&gemm) / 1e3, cmp.kernel.gflops(&gemm) / 1e3));
    }

    let blocks = gpu.sms * blocks_per_sm;
    let threads = warps * 32;
    let mut sums = gpu.stream.alloc_zeros::<f64>((blocks * threads) as usize)?;
    for var in VARIANTS.iter().filter(|var| gpu.cc >= var.min_cc) {
        let compiled = compile(&source(), &defines(var, issue), &gpu.arch())?;
        let module = gpu.ctx.load_module(cudarc::nvrtc::Ptx::from_binary(compiled.cubin.clone()))?;
        let function = module.load_function("ceiling")?;
        let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 };
        let timing = time_runs(&gpu, TimingPlan::default(), || {
            let mut launch = gpu.stream.launch_builder(&function);
            launch.arg(&ITERS).arg(&mut sums);
            // SAFETY: the kernel takes (int, double*) and writes one double per thread.
            unsafe { launch.launch(cfg) }?;
            Ok(())
        })?;
        let flops = var.flops * (ITERS as f64) * (acc as f64) * (blocks * warps) as f64;
        let ceiling = flops / (timing.median_ms * 1e-3) / 1e12;
        let (cublas_tf, step_tf) = at_shape[&var.precision];
        // Step 7 uses the WMMA instruction of its precision: compare it with that roof only.
        let step_cols = if var.api == "WMMA" {
            format!("{step_tf:.1} | {:.0}%", 100.0 * step_tf / ceiling)
        } else {
            "| ".to_string()
        };
        out.push_str(&format!(
            "| {} | {} {} | {ceiling:.1} | {cublas_tf:.1} | {:.0}% | {step_cols} |\n",
            var.precision,
            var.api,
            var.shape,
            100.0 * ceiling / cublas_tf
        ));
    }
    print!("{out}");
    if let Some(path) = save {
        std::fs::write(path, &out).map_err(|e| Error::Io(format!("cannot write {path}: {e}")))?;
    }
    Ok(())
}

/// Compiles every variant for each architecture (no GPU needed) and prints the registers;
/// `--cubin-dir DIR` also keeps the CUBINs, for `cuobjdump -sass`.
fn compile_only(archs: &str, cubin_dir: Option<String>, issue: Issue) -> Result<()> {
    for arch in archs.split(',') {
        let sm: i32 = arch
            .trim_start_matches("sm_")
            .parse()
            .map_err(|_| Error::BadInput(format!("bad architecture {arch:?}: write sm_XY, e.g. sm_90")))?;
        let cc = (sm / 10, sm % 10);
        for var in VARIANTS.iter().filter(|var| cc >= var.min_cc) {
            let compiled = compile(&source(), &defines(var, issue), arch)?;
            println!("{arch} {} {} {}: {} registers", var.precision, var.api, var.shape, compiled.resources.registers);
            if let Some(dir) = &cubin_dir {
                let path = format!("{dir}/ceiling-{arch}-{}.cubin", var.id);
                std::fs::write(&path, &compiled.cubin).map_err(|e| Error::Io(format!("cannot write {path}: {e}")))?;
            }
        }
    }
    Ok(())
}
