//! The step binaries: `cargo run --release -p stepNN-... -- --m M --n N --k K --alpha a
//! --beta b [--kernel FILE.cu]` verifies one GEMM against cuBLAS and the CPU, times it
//! against cuBLAS, and prints one table row.

use crate::harness::compile::{KernelSource, nvrtc_version};
use crate::harness::device::Gpu;
use crate::harness::runner::Runner;
use crate::harness::step::Step;
use crate::timing::lt::{CublasLt, compare};
use crate::timing::roofline::Floors;
use crate::timing::runs::TimingPlan;
use crate::verify::check::Prepared;
use crate::verify::reference::{CUBLAS_MATH, Cublas};
use crate::{Error, Gemm, Precision, Result, Shape, harness::data};
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
    /// For steps with several precisions (steps 7-9): which one; the first when not given.
    pub precision: Option<Precision>,
    /// Compile-time defines to add or replace (`STAGES=4`, `BM=64`): experiments with the
    /// step's own kernel.
    pub defines: Vec<(&'static str, i64)>,
    /// Only compile, with NVRTC, no GPU: for this architecture, or (empty) for the default ones.
    pub compile_only: Option<String>,
}

/// The flags as clap parses them; [`Options`] is what they mean.
#[derive(clap::Parser, Debug)]
#[command(
    version,
    about = "Verifies C = alpha*A*B + beta*C against cuBLAS and a float64 CPU reference, then times it against cuBLAS and verifies it again.",
    after_help = "Prints one table row: time, GFLOP/s, cuBLAS GFLOP/s in the same process, % of cuBLAS, then the GPU's clock over the timing.\n\
                  Exit status: 0 verified, 1 wrong result or no usable GPU, 2 usage error."
)]
struct Args {
    /// Rows of A and C
    #[arg(long, default_value_t = 4096, allow_negative_numbers = true, value_parser = dimension)]
    m: usize,
    /// Columns of B and C
    #[arg(long, default_value_t = 4096, allow_negative_numbers = true, value_parser = dimension)]
    n: usize,
    /// Columns of A, rows of B (the depth of each dot product)
    #[arg(long, default_value_t = 4096, allow_negative_numbers = true, value_parser = dimension)]
    k: usize,
    /// MxNxK, or S for SxSxS, instead of --m, --n and --k
    #[arg(long, value_name = "MxNxK", value_parser = parse_shape, conflicts_with_all = ["m", "n", "k"])]
    shape: Option<Shape>,
    /// The scalar of A*B in C = alpha*A*B + beta*C (any finite number)
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true, value_parser = finite)]
    alpha: f32,
    /// The scalar of C's old value (0: C is not read, so it starts as NaN to catch a kernel that reads it)
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true, value_parser = finite)]
    beta: f32,
    /// Run this .cu file (or an experiment's .patch, applied to the step's kernel) with the step's launch geometry
    #[arg(long, value_name = "FILE.cu")]
    kernel: Option<PathBuf>,
    /// Seed of the random inputs, an integer from 0 to 2^64-1 (default: fresh each run, printed so a failure can be replayed)
    #[arg(long, allow_negative_numbers = true, value_parser = seed)]
    seed: Option<u64>,
    /// Verify only, do not time (for compute-sanitizer and Nsight Compute)
    #[arg(long)]
    verify_only: bool,
    /// The precision to compute in, for steps with several (default: the first)
    #[arg(long)]
    precision: Option<String>,
    /// Add or replace a compile-time define of the kernel (repeatable), e.g. --define STAGES=4; where the step's launch follows tile defines (step 14's), BM, BN, STAGES, CLUSTER and GROUP size the launch too
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_define)]
    define: Vec<(String, i64)>,
    /// Only compile the kernel with NVRTC and show its log, no GPU needed: the variant the shape picks, for ARCH (default: sm_80 and sm_90, or the step's own)
    #[arg(long, value_name = "ARCH", num_args = 0..=1, default_missing_value = "", value_parser = parse_arch)]
    compile_only: Option<String>,
}

/// A clap value parser for a GPU architecture: `sm_XY` or `sm_XYa` (empty: the default).
fn parse_arch(text: &str) -> std::result::Result<String, String> {
    let digits = text.strip_prefix("sm_").map(|d| d.strip_suffix('a').unwrap_or(d));
    match digits {
        _ if text.is_empty() => Ok(String::new()),
        Some(d) if !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()) => Ok(text.to_string()),
        _ => Err(format!("{text:?} is not an architecture: write sm_XY, e.g. sm_80, sm_90 or sm_90a")),
    }
}

/// `--define` values as launch defines, whose names are `'static`: these few live as long as
/// the program.
pub fn static_defines(defines: impl IntoIterator<Item = (String, i64)>) -> Vec<(&'static str, i64)> {
    defines.into_iter().map(|(n, v)| (&*Box::leak(n.into_boxed_str()), v)).collect()
}

/// A clap value parser for `--define NAME=VALUE`.
pub fn parse_define(text: &str) -> std::result::Result<(String, i64), String> {
    let (name, value) = text.split_once('=').ok_or("write NAME=VALUE")?;
    let ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let value = value.trim().parse::<i64>().map_err(|_| format!("{value:?} is not an integer"))?;
    if ok { Ok((name.to_string(), value)) } else { Err(format!("{name:?} is not a macro name")) }
}

/// A clap value parser for shapes: `MxNxK`, or `S` for SxSxS.
pub fn parse_shape(text: &str) -> std::result::Result<Shape, String> {
    Shape::parse(text).map_err(|e| e.to_string())
}

/// A clap value parser for a matrix dimension: a non-negative integer.
pub fn dimension(text: &str) -> std::result::Result<usize, String> {
    text.trim()
        .parse::<usize>()
        .map_err(|_| format!("{text:?} is not a dimension: write a non-negative integer, e.g. 1024"))
}

/// A clap value parser for a seed: a non-negative integer below 2^64.
pub fn seed(text: &str) -> std::result::Result<u64, String> {
    text.trim()
        .parse::<u64>()
        .map_err(|_| format!("{text:?} is not a seed: write an integer from 0 to 18446744073709551615"))
}

fn finite(text: &str) -> std::result::Result<f32, String> {
    match text.parse::<f32>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err("must be finite".into()),
        Err(_) => Err(format!("{text:?} is not a number")),
    }
}

impl Options {
    /// Parses a step binary's arguments (`args` without the program name) for a step with
    /// these precisions; `program` names it in the usage line. Help, version and usage errors
    /// come back as clap errors, which print themselves and exit with 0 or 2.
    pub fn parse(
        program: &'static str,
        precisions: &[Precision],
        args: impl IntoIterator<Item = String>,
    ) -> std::result::Result<Options, clap::Error> {
        use clap::{CommandFactory, FromArgMatches};
        let labels: Vec<&'static str> = precisions.iter().map(|p| p.label()).collect();
        let mut cmd = Args::command()
            .name(program)
            .bin_name(program)
            .mut_arg("precision", |a| a.value_parser(clap::builder::PossibleValuesParser::new(labels.clone())));
        if labels.len() < 2 {
            cmd = cmd.mut_arg("precision", |a| a.hide(true));
        }
        let matches = cmd.try_get_matches_from_mut(std::iter::once(program.to_string()).chain(args))?;
        let a = Args::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))?;
        let shape = a.shape.unwrap_or(Shape::new(a.m, a.n, a.k));
        if let Err(e) = shape.check_32bit() {
            return Err(cmd.error(clap::error::ErrorKind::ValueValidation, e.to_string()));
        }
        Ok(Options {
            gemm: Gemm::new(shape, a.alpha, a.beta),
            kernel: a.kernel,
            seed: a.seed,
            verify_only: a.verify_only,
            precision: a.precision.as_deref().and_then(Precision::parse),
            defines: static_defines(a.define),
            compile_only: a.compile_only,
        })
    }
}

/// The header of the result table every tool prints.
pub const TABLE_HEADER: &str = "| kernel | shape | alpha | beta | time (ms) | GFLOP/s | cuBLAS GFLOP/s | % of cuBLAS | check |\n|---|---|---:|---:|---:|---:|---:|---:|---|";

/// Main of a tool (the examples): the compute cache off, errors as one line and exit 1.
pub fn tool_main(run: impl FnOnce() -> crate::Result<()>) -> ExitCode {
    program_start();
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// First thing in the `main` of every program of the harness, while it has one thread: every
/// compile reports its resources (`compile::disable_compute_cache`), and output into a closed
/// pipe (`... | head`) ends the program quietly. Rust ignores SIGPIPE, so `println!` into a
/// closed pipe panics with a backtrace; the default action is what `cat` or `grep` do.
pub fn program_start() {
    crate::harness::compile::disable_compute_cache();
    #[cfg(unix)]
    // SAFETY: sets a signal's action to its default, before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Main of every step binary: prints errors as one line and exits 1, never panics.
pub fn main(step: &Step) -> ExitCode {
    main_variants(std::slice::from_ref(step))
}

/// Main of a step binary with one `Step` per precision (step 7): `--precision` picks one.
pub fn main_variants(variants: &[Step]) -> ExitCode {
    program_start();
    let precisions: Vec<Precision> = variants.iter().map(|s| s.precision).collect();
    let opts = match Options::parse(variants[0].name, &precisions, std::env::args().skip(1)) {
        Ok(o) => o,
        // --help and --version exit 0, usage errors 2.
        Err(e) => e.exit(),
    };
    let step = match opts.precision {
        None => &variants[0],
        Some(p) => variants.iter().find(|s| s.precision == p).expect("clap accepts only the step's precisions"),
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

/// The targets a kernel is compiled for without a GPU: the step's own architecture (sm_90a for
/// steps 9-13), or Ampere and Hopper.
pub fn default_targets(step: &Step) -> Vec<&'static str> {
    step.arch.map_or(vec!["sm_80", "sm_90"], |a| vec![a])
}

/// `--compile-only`: the kernel through NVRTC in the variant the step's launch picks for `shape`
/// (with the `--define`s), for `arch` or (empty) [`default_targets`]; one line per compile, and
/// the log's warnings. A compile error is the error, with NVRTC's log.
fn compile_only(
    step: &Step,
    kernel: &KernelSource,
    shape: &Shape,
    defines: &[(&'static str, i64)],
    arch: &str,
) -> Result<bool> {
    let targets: Vec<&str> = if arch.is_empty() { default_targets(step) } else { vec![arch] };
    let launch = crate::harness::launch::with_defines((step.launch)(shape), defines);
    let with: Vec<String> = launch.defines.iter().map(|(n, v)| format!("{n}={v}")).collect();
    for arch in targets {
        let c = crate::harness::compile::compile(kernel, &launch.defines, arch)?;
        let r = c.resources;
        println!(
            "{} compiles for {arch} at {shape} ({}): {} registers, {} B shared memory, {} B stack, {} B spilled",
            kernel.name,
            if with.is_empty() { "no defines".to_string() } else { with.join(" ") },
            r.registers,
            r.smem_bytes,
            r.stack_bytes,
            r.spills()
        );
        for line in c.log.lines().filter(|l| l.contains("warning")) {
            println!("    {line}");
        }
    }
    Ok(true)
}

/// Verifies and times one GEMM; Ok(false) when the kernel computed a wrong answer.
pub fn run(step: &Step, opts: &Options) -> Result<bool> {
    // The kernel file first: a missing file is the problem to report, whatever the machine has.
    let kernel = opts.kernel.as_deref().map(|k| KernelSource::from_file_over(k, &step.kernel)).transpose()?;
    if let Some(arch) = &opts.compile_only {
        let kernel = kernel.as_ref().unwrap_or(&step.kernel);
        return compile_only(step, kernel, &opts.gemm.shape, &opts.defines, arch);
    }
    let gpu = Gpu::shared().map_err(|e| match &opts.kernel {
        Some(_) if e.is_missing_gpu() => {
            Error::BadInput(format!("{e}\n(without a GPU, add `--compile-only` to see NVRTC's log for the kernel)"))
        }
        _ => e,
    })?;
    let mut runner = Runner::new(&gpu, step, kernel)?.with_defines(&opts.defines);
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
    if let Some(grid) = runner.launched_grid().filter(|g| *g != launch.grid) {
        println!(
            "persistent: launched as grid {grid:?}, no more blocks than the GPU runs at once, which share out the {} tiles of the grid above",
            launch.grid.0
        );
    }
    println!("{}", verified.report(&runner.kernel.name));
    // The table's row of a kernel that computed a wrong C.
    let failed = |why: &str| {
        println!(
            "{TABLE_HEADER}\n| {} | {} | {} | {} | - | - | - | - | {why} |",
            step.id(),
            gemm.shape,
            gemm.alpha,
            gemm.beta
        );
        Ok(false)
    };
    if !verified.passed() {
        return failed("FAILED");
    }
    if opts.verify_only {
        return Ok(true);
    }
    if gemm.shape.is_empty() || gemm.shape.k == 0 {
        println!("nothing to time: the product has no FLOPs");
        return Ok(true);
    }
    // The kernel, cuBLAS and (tensor-core precisions) every other cuBLAS configuration, in turn.
    let plan = TimingPlan::default();
    let mut lt = CublasLt::new(&gpu)?;
    let watch = crate::timing::clocks::Watch::start(&gpu);
    let (cmp, configs) = compare(&mut runner, &cublas, &mut lt, &prepared, plan, true, &mut Vec::new())?;
    let clocks = watch.stop();
    // Verified again after the timed runs: a kernel that leaves state in global memory for its
    // next launch (flags, partial sums) can be right at its first launch and wrong later.
    let after = prepared.check(&mut runner)?;
    if !after.passed() {
        println!("after the timed runs: {}", after.report(&runner.kernel.name));
        return failed("FAILED after the timed runs");
    }
    if configs.len() > 1 {
        let all: Vec<String> = configs
            .iter()
            .map(|(c, t)| {
                format!(
                    "{} {:.0} GFLOP/s ({:.1}%)",
                    c.label(),
                    t.gflops(&gemm),
                    100.0 * t.median_ms / cmp.kernel.median_ms
                )
            })
            .collect();
        println!("cuBLAS configurations (kernel as % of each): {}", all.join(", "));
    }
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
    println!("{}", crate::timing::clocks::report(&clocks, "the timing"));
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: [Precision; 2] = [Precision::F16, Precision::Tf32];

    fn parse(args: &[&str]) -> std::result::Result<Options, clap::Error> {
        Options::parse("step07-wmma", &TWO, args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn parses_flags_in_both_spellings() {
        let o = parse(&["--m", "17", "--n=4096", "--k", "3", "--alpha", "-1.5", "--beta=-0.5"]).unwrap();
        assert_eq!(o.gemm, Gemm::new(Shape::new(17, 4096, 3), -1.5, -0.5));
        assert_eq!(parse(&["--alpha=-2"]).unwrap().gemm.alpha, -2.0);
        assert_eq!(parse(&[]).unwrap().gemm, Gemm::new(Shape::cube(4096), 1.0, 0.0));
        assert_eq!(parse(&["--shape", "3x4x5"]).unwrap().gemm.shape, Shape::new(3, 4, 5));
        assert_eq!(parse(&["--kernel", "x.cu"]).unwrap().kernel, Some(PathBuf::from("x.cu")));
        assert!(parse(&["--verify-only", "--m", "3"]).unwrap().verify_only);
        assert_eq!(parse(&["--precision", "tf32"]).unwrap().precision, Some(Precision::Tf32));
        let o = parse(&["--define", "BM=64", "--define=STAGES=4"]).unwrap();
        assert_eq!(o.defines, vec![("BM", 64), ("STAGES", 4)]);
        assert_eq!(parse(&[]).unwrap().compile_only, None);
        assert_eq!(parse(&["--compile-only", "--kernel", "x.cu"]).unwrap().compile_only, Some(String::new()));
        assert_eq!(parse(&["--compile-only", "sm_90a"]).unwrap().compile_only, Some("sm_90a".into()));
        assert_eq!(parse(&["--compile-only=sm_80"]).unwrap().compile_only, Some("sm_80".into()));
    }

    #[test]
    fn every_flag_has_help_text() {
        use clap::CommandFactory;
        for arg in Args::command().get_arguments() {
            assert!(arg.get_help().is_some(), "--{} has no help text", arg.get_id());
        }
    }

    #[test]
    fn a_missing_kernel_file_is_named_before_the_gpu() {
        let o = parse(&["--kernel", "/no/such/kernel.cu", "--m", "8"]).unwrap();
        let e = run(&crate::Step { ..fake_step() }, &o).unwrap_err().to_string();
        assert!(e.contains("cannot read kernel file /no/such/kernel.cu"), "{e}");
    }

    /// `--compile-only` never opens the GPU: a kernel that does not compile gets NVRTC's log with
    /// its file and line (or, without NVRTC, the line that says how to install it).
    #[test]
    fn compile_only_shows_the_log_without_a_gpu() {
        let dir = std::env::temp_dir().join(format!("compile-only-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("broken.cu");
        std::fs::write(&file, "extern \"C\" __global__ void sgemm() {\n    undeclared = 1;\n}\n").unwrap();
        let o = parse(&["--kernel", file.to_str().unwrap(), "--compile-only", "sm_80"]).unwrap();
        let e = run(&fake_step(), &o).unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        match &e {
            Error::Compile { .. } => assert!(e.to_string().contains("broken.cu(2)"), "{e}"),
            Error::NoNvrtc => {}
            other => panic!("{other}"),
        }
    }

    fn fake_step() -> crate::Step {
        crate::Step {
            name: "step00-test",
            idea: "",
            kernel: crate::KernelSource { name: "k.cu".into(), code: "".into(), headers: &[] },
            launch: |_| crate::Launch::new((1, 1, 1), (1, 1, 1)),
            min_cc: (7, 5),
            precision: Precision::F32,
            arch: None,
            host: None,
            partials: &[],
            follow: None,
        }
    }

    #[test]
    fn help_and_version_name_the_program() {
        use clap::error::ErrorKind;
        let help = parse(&["-h"]).unwrap_err();
        assert_eq!(help.kind(), ErrorKind::DisplayHelp);
        assert!(help.to_string().contains("Usage: step07-wmma [OPTIONS]"), "{help}");
        assert_eq!(help.exit_code(), 0);
        let version = parse(&["--version"]).unwrap_err();
        assert_eq!(version.kind(), ErrorKind::DisplayVersion);
        assert!(version.to_string().contains(env!("CARGO_PKG_VERSION")));
    }

    #[test]
    fn rejects_bad_input_with_a_message_and_status_2() {
        let err = |a: &[&str]| {
            let e = parse(a).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{e}");
            e.to_string()
        };
        assert!(err(&["--m", "-3"]).contains("invalid value '-3' for '--m <M>'"));
        assert!(err(&["--m", "-5"]).contains("not a dimension: write a non-negative integer"));
        assert!(err(&["--seed", "-1"]).contains("not a seed: write an integer from 0"));
        assert!(err(&["--seed", "x"]).contains("not a seed"));
        assert_eq!(parse(&["--seed", "18446744073709551615"]).unwrap().seed, Some(u64::MAX));
        assert!(err(&["--m"]).contains("a value is required"));
        assert!(err(&["--alpah", "1"]).contains("tip: a similar argument exists: '--alpha'"));
        assert!(err(&["--m", "100000", "--n", "100000"]).contains("too large"));
        assert!(err(&["--alpha", "nan"]).contains("finite"));
        assert!(err(&["--precision", "fp8"]).contains("possible values: fp16, tf32"));
        assert!(err(&["--shape", "4", "--m", "3"]).contains("cannot be used with"));
        assert!(err(&["--define", "STAGES"]).contains("NAME=VALUE"));
        assert!(err(&["--define", "A-B=1"]).contains("not a macro name"));
        assert!(err(&["--compile-only", "mine.cu"]).contains("not an architecture"));
    }
}
