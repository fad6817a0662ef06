//! The step binaries: `cargo run --release -p stepNN-... -- --m M --n N --k K --alpha a
//! --beta b [--kernel FILE.cu]` verifies one GEMM against cuBLAS and the CPU, times it
//! against cuBLAS, and prints one table row.

use crate::compile::{KernelSource, nvrtc_version};
use crate::device::Gpu;
use crate::measure::{Prepared, TimingPlan, compare_prepared};
use crate::reference::{CUBLAS_MATH, Cublas};
use crate::roofline::Floors;
use crate::step::{Runner, Step};
use crate::{Error, Gemm, Precision, Result, Shape, data};
use std::path::PathBuf;
use std::process::ExitCode;

/// Command-line options shared by every step binary.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    pub gemm: Gemm,
    pub kernel: Option<PathBuf>,
    pub seed: Option<u64>,
    /// Verify only, do not time (for compute-sanitizer and Nsight Compute runs).
    pub verify_only: bool,
    /// For steps with several precisions (step 7): which one; the first when not given.
    pub precision: Option<Precision>,
}

pub const USAGE: &str = "usage: [--m M] [--n N] [--k K] [--shape MxNxK] [--alpha A] [--beta B] [--kernel FILE.cu] [--seed S] [--verify-only] [--precision fp16|tf32|fp64]
  Verifies C = alpha*A*B + beta*C against cuBLAS and a float64 CPU reference, then times it
  against cuBLAS. Defaults: 4096x4096x4096, alpha 1, beta 0. --kernel runs another .cu file
  with this step's launch geometry (the lab mode). --precision picks step 7's precision
  (default fp16); cuBLAS then runs in the same precision.";

impl Options {
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Options> {
        let mut shape = Shape::cube(4096);
        let (mut alpha, mut beta) = (1.0f32, 0.0f32);
        let (mut kernel, mut seed, mut verify_only, mut precision) = (None, None, false, None);
        let mut args = args.into_iter();
        while let Some(flag) = args.next() {
            if flag == "--help" || flag == "-h" {
                return Err(Error::BadInput(USAGE.to_string()));
            }
            if flag == "--verify-only" {
                verify_only = true;
                continue;
            }
            let value = args.next().ok_or_else(|| Error::BadInput(format!("{flag} needs a value\n{USAGE}")))?;
            let number = |what: &str| -> Result<f64> {
                value.parse::<f64>().map_err(|_| Error::BadInput(format!("{what} must be a number, got {value:?}")))
            };
            let dim = |what: &str| -> Result<usize> {
                value
                    .parse::<usize>()
                    .map_err(|_| Error::BadInput(format!("{what} must be a whole number >= 0, got {value:?}")))
            };
            match flag.as_str() {
                "--m" => shape.m = dim("--m")?,
                "--n" => shape.n = dim("--n")?,
                "--k" => shape.k = dim("--k")?,
                "--shape" => shape = Shape::parse(&value)?,
                "--alpha" => alpha = number("--alpha")? as f32,
                "--beta" => beta = number("--beta")? as f32,
                "--kernel" => kernel = Some(PathBuf::from(value)),
                "--seed" => seed = Some(dim("--seed")? as u64),
                "--precision" => {
                    precision = Some(Precision::parse(&value).ok_or_else(|| {
                        Error::BadInput(format!("--precision must be fp32, tf32, fp16 or fp64, got {value:?}"))
                    })?)
                }
                _ => return Err(Error::BadInput(format!("unknown option {flag}\n{USAGE}"))),
            }
        }
        if !alpha.is_finite() || !beta.is_finite() {
            return Err(Error::BadInput("alpha and beta must be finite".into()));
        }
        shape.check_32bit()?;
        Ok(Options { gemm: Gemm::new(shape, alpha, beta), kernel, seed, verify_only, precision })
    }
}

/// The header of the result table every tool prints.
pub const TABLE_HEADER: &str = "| kernel | shape | alpha | beta | time (ms) | GFLOP/s | cuBLAS GFLOP/s | % of cuBLAS | check |\n|---|---|---:|---:|---:|---:|---:|---:|---|";

/// Main of a tool (the examples): the compute cache off, errors as one line and exit 1.
pub fn tool_main(run: impl FnOnce() -> crate::Result<()>) -> ExitCode {
    crate::compile::disable_compute_cache();
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Main of every step binary: prints errors as one line and exits 1, never panics.
pub fn main(step: &Step) -> ExitCode {
    main_variants(std::slice::from_ref(step))
}

/// Main of a step binary with one `Step` per precision (step 7): `--precision` picks one.
pub fn main_variants(variants: &[Step]) -> ExitCode {
    crate::compile::disable_compute_cache();
    let opts = match Options::parse(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let step = match opts.precision {
        None => variants.first(),
        Some(p) => variants.iter().find(|s| s.precision == p),
    };
    let Some(step) = step else {
        let have: Vec<&str> = variants.iter().map(|s| s.precision.label()).collect();
        eprintln!(
            "this step computes in {}; --precision {} is not one of them",
            have.join(", "),
            opts.precision.map_or("", |p| p.label())
        );
        return ExitCode::from(2);
    };
    match run(step, &opts) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Verifies and times one GEMM; Ok(false) when the kernel computed a wrong answer.
pub fn run(step: &Step, opts: &Options) -> Result<bool> {
    let gpu = Gpu::shared()?;
    let kernel = opts.kernel.as_deref().map(KernelSource::from_file).transpose()?;
    let mut runner = Runner::new(&gpu, step, kernel)?;
    let cublas = Cublas::new(&gpu)?;
    let gemm = opts.gemm;
    let (nv_major, nv_minor) = nvrtc_version()?;
    println!("GPU: {} · NVRTC {nv_major}.{nv_minor} · cuBLAS {} ({CUBLAS_MATH})", gpu.describe(), cublas.version);

    let launch = runner.launch_for(&gemm.shape)?;
    if !gemm.shape.is_empty() {
        let loaded = runner.load(&launch)?;
        if std::env::var_os("SGEMM_VERBOSE").is_some() {
            println!("NVRTC log:\n{}", loaded.log.trim_end());
        }
        let r = loaded.resources;
        println!(
            "kernel: {} · grid {:?} · block {:?} · {} registers, {} B static + {} B dynamic shared memory, {} B spilled",
            runner.kernel.name,
            launch.grid,
            launch.block,
            r.registers,
            r.smem_bytes,
            launch.dynamic_smem_bytes,
            r.spills()
        );
    }
    let seed = opts.seed.unwrap_or_else(data::fresh_seed);
    let prepared = Prepared::new(&gpu, &cublas, &gemm, step.precision, seed)?;
    let verified = prepared.check(&mut runner)?;
    println!("{}", verified.report(&runner.kernel.name));
    if !verified.passed() {
        println!(
            "{TABLE_HEADER}\n| {} | {} | {} | {} | - | - | - | - | FAILED |",
            step.id(),
            gemm.shape,
            gemm.alpha,
            gemm.beta
        );
        return Ok(false);
    }
    if opts.verify_only {
        return Ok(true);
    }
    if gemm.shape.is_empty() || gemm.shape.k == 0 {
        println!("nothing to time: the product has no FLOPs");
        return Ok(true);
    }
    let cmp = compare_prepared(&mut runner, &cublas, &prepared, TimingPlan::default())?;
    if step.precision == Precision::F32 {
        let floors = Floors::for_gpu(&gemm, &gpu);
        println!(
            "roofline: {} FLOPs, {:.1} MB minimal traffic: compute floor {:.3} ms, memory floor {:.3} ms ({}-bound at the datasheet rates)",
            gemm.shape.flops(),
            gemm.min_bytes(4) / 1e6,
            floors.compute_ms,
            floors.memory_ms,
            floors.bound()
        );
    } else {
        // The driver reports no tensor-core peak; the book has the measured ceilings.
        println!(
            "{} FLOPs, {:.1} MB minimal traffic in {}",
            gemm.shape.flops(),
            gemm.min_bytes_in(step.precision) / 1e6,
            step.precision
        );
    }
    println!("{TABLE_HEADER}");
    println!(
        "| {} | {} | {} | {} | {:.3} | {:.0} | {:.0} | {:.1}% | pass |",
        step.id(),
        gemm.shape,
        gemm.alpha,
        gemm.beta,
        cmp.kernel.median_ms,
        cmp.kernel.gflops(&gemm),
        cmp.cublas.gflops(&gemm),
        100.0 * cmp.ratio()
    );
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options> {
        Options::parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn parses_flags() {
        let o = parse(&["--m", "17", "--n", "4096", "--k", "3", "--alpha", "-1.5", "--beta", "0.5"]).unwrap();
        assert_eq!(o.gemm, Gemm::new(Shape::new(17, 4096, 3), -1.5, 0.5));
        assert_eq!(parse(&[]).unwrap().gemm, Gemm::new(Shape::cube(4096), 1.0, 0.0));
        assert_eq!(parse(&["--kernel", "x.cu"]).unwrap().kernel, Some(PathBuf::from("x.cu")));
        assert!(parse(&["--verify-only", "--m", "3"]).unwrap().verify_only);
        assert_eq!(parse(&["--precision", "tf32"]).unwrap().precision, Some(Precision::Tf32));
    }

    #[test]
    fn rejects_bad_input_with_a_message() {
        let err = |a: &[&str]| parse(a).unwrap_err().to_string();
        assert!(err(&["--m", "-3"]).contains("--m must be a whole number"));
        assert!(err(&["--m"]).contains("needs a value"));
        assert!(err(&["--bogus", "1"]).contains("unknown option"));
        assert!(err(&["--m", "100000", "--n", "100000"]).contains("too large"));
        assert!(err(&["--alpha", "nan"]).contains("finite"));
        assert!(err(&["--precision", "fp8"]).contains("--precision must be"));
    }
}
