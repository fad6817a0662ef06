//! The grader's child processes, each started by the parent with a token on stdin and a channel
//! on fd 3 ([`crate::protocol`]). Those that touch the submission confine themselves first
//! ([`crate::confine`]): the compiler (also with memory and CPU limits), the cases, the timing.
//! The reference's timing runs in a child that never loads the submission. What fails before the
//! submission is touched (the GPU, cuBLAS, NVRTC, the confinement) is the machine's fault, and
//! is reported as such (`{machine}`): the parent then stops instead of scoring the student.

use crate::confine::{confine, limit_resources};
use crate::gpu::{Case, Plan, Timed, run_case, time_verified};
use crate::protocol::Reporter;
use common::harness::compile::{Compiled, KernelSource, compile_bytes};
use common::harness::cubin::machine_code;
use common::harness::device::Gpu;
use common::harness::hopper_host;
use common::harness::runner::Runner;
use common::verify::reference::Cublas;
use common::{Error, Gemm, Shape, Step};
use serde_json::{Value, json};
use std::io::BufRead;
use std::path::PathBuf;
use std::sync::Arc;

/// Address space a compile may use (NVRTC needs about 1 GiB for the largest kernel).
pub const COMPILE_MEMORY: u64 = 4 << 30;

/// The arguments every child gets: the step, the scratch folder and the submission in it.
#[derive(clap::Args, Clone, Debug)]
pub struct ChildArgs {
    #[arg(value_parser = crate::step_key)]
    pub step: &'static Step,
    pub scratch: PathBuf,
    /// The submission's file name inside `scratch` (empty for the reference's timing).
    #[arg(default_value = "")]
    pub file: String,
}

/// The submission as a child compiles it: its bytes, which go to NVRTC as they are, and the text
/// that names them (the same, read lossily where they are not UTF-8).
struct Submission {
    source: KernelSource,
    bytes: Option<Vec<u8>>,
}

impl Submission {
    fn read(args: &ChildArgs) -> Result<Submission, String> {
        let bytes = std::fs::read(args.scratch.join(&args.file)).map_err(|e| format!("{}: {e}", args.file))?;
        let (code, bytes) = match String::from_utf8(bytes) {
            Ok(text) => (text, None),
            Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), Some(e.into_bytes())),
        };
        Ok(Submission { source: args.step.kernel.with_code(args.file.clone(), code), bytes })
    }

    fn compile(&self, defines: &[(&str, i64)], arch: &str) -> common::Result<Arc<Compiled>> {
        let code = self.bytes.as_deref().unwrap_or(self.source.code.as_bytes());
        compile_bytes(&self.source, code, defines, arch)
    }

    /// Compiles the bytes for the variant `runner` launches at `shape`, so that the runner, which
    /// asks for the text, loads what NVRTC made of the bytes.
    fn prime(&self, runner: &Runner, shape: &Shape) -> Result<(), String> {
        if self.bytes.is_none() || shape.is_empty() {
            return Ok(());
        }
        let launch = runner.launch_for(shape).map_err(|e| e.to_string())?;
        self.compile(&launch.defines, &runner.step.target(runner.gpu.cc)).map(drop).map_err(|e| e.to_string())
    }
}

/// Reads the next JSON line of stdin.
fn next_json(input: &mut impl BufRead) -> Result<Option<Value>, String> {
    let mut line = String::new();
    if input.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
        return Ok(None);
    }
    serde_json::from_str(line.trim()).map(Some).map_err(|_| format!("bad request {line:?}"))
}

/// The GPU, cuBLAS and the runner, opened before the child confines itself: the driver reads files
/// of the machine (`/proc`, `/sys`, device nodes) while it starts, and nothing of the submission
/// has run yet. Everything after (the compile, the kernel) runs confined.
fn open_then_confine(args: &ChildArgs, kernel: Option<KernelSource>) -> Result<(Arc<Gpu>, Cublas, Runner), String> {
    let e = |e: Error| e.to_string();
    let gpu = Gpu::shared().map_err(e)?;
    let cublas = Cublas::new(&gpu).map_err(e)?;
    let runner = runner(&gpu, args.step, kernel).map_err(e)?;
    confine(&args.scratch)?;
    Ok((gpu, cublas, runner))
}

/// The step's runner for `kernel` (the step's own where `None`), never as a programmatic dependent
/// launch (`PDL=1` in a rule, which the host turns into one): that may start before the launch
/// ahead of it has finished, so a submission that touched memory before its `griddepcontrol.wait`,
/// or had none, would overlap what it follows. The grader times one run at a time, where such a
/// launch gains nothing, and the reference the same way as the submission.
fn runner(gpu: &Arc<Gpu>, step: &'static Step, kernel: Option<KernelSource>) -> common::Result<Runner> {
    let launch = step.launch;
    Ok(Runner::new(gpu, step, kernel)?.with_launch(move |s| launch(s).without(hopper_host::PDL)))
}

/// Whether a CUBIN has the kernel the grader launches; the reason where it does not.
fn defines_sgemm(cubin: &[u8], file: &str) -> Result<(), String> {
    let sections = machine_code(cubin)?;
    if sections.iter().any(|s| s.name == ".text.sgemm") {
        return Ok(());
    }
    let mangled = sections.iter().any(|s| s.name.starts_with(".text._Z5sgemm"));
    Err(format!(
        "{file} compiles, but defines no kernel `sgemm`: the grader launches `extern \"C\" __global__ void \
         sgemm(...)` with the step's signature (the skeleton's){}",
        if mangled { "; this `sgemm` lacks `extern \"C\"`, so C++ renamed it" } else { "" }
    ))
}

/// `grade-compile`: every variant the step's launch picks for the shapes on stdin (public ones
/// first: a variant that only hidden cases pick compiles last and says so), for the target on
/// stdin; one message: `{ok, log, hidden_only, confinement, nvrtc}`, or `{machine}`.
pub fn compile_child(args: ChildArgs) -> Result<(), String> {
    let (mut reporter, mut input) = Reporter::open()?;
    let confinement = match confine(&args.scratch) {
        Ok(c) => c.describe(),
        Err(why) => return reporter.machine(why),
    };
    let request = next_json(&mut input)?.ok_or("no request")?;
    if let Err(why) = limit_resources(COMPILE_MEMORY, request["cpu_seconds"].as_u64().unwrap_or(60)) {
        return reporter.machine(why);
    }
    let submission = Submission::read(&args)?;
    let target = request["target"].as_str().ok_or("no target")?.to_string();
    let mut shapes: Vec<(Shape, bool)> = Vec::new();
    for s in request["shapes"].as_array().ok_or("no shapes")? {
        let dims: Vec<usize> = ["m", "n", "k"].iter().map(|d| s[d].as_u64().unwrap_or(1) as usize).collect();
        shapes.push((Shape::new(dims[0], dims[1], dims[2]), s["hidden"] == true));
    }
    shapes.sort_by_key(|&(_, hidden)| hidden);
    let (mut seen, mut failure, mut hidden_only) = (Vec::new(), None, false);
    for (shape, hidden) in shapes.into_iter().filter(|(s, _)| !s.is_empty()) {
        let defines = (args.step.launch)(&shape).defines;
        if seen.contains(&defines) {
            continue;
        }
        let checked = match submission.compile(&defines, &target) {
            Err(Error::NoNvrtc) => return reporter.machine(Error::NoNvrtc),
            Err(e) => Err(e.to_string()),
            Ok(c) if seen.is_empty() => defines_sgemm(&c.cubin, &args.file),
            Ok(_) => Ok(()),
        };
        if let Err(why) = checked {
            (failure, hidden_only) = (Some(why), hidden);
            break;
        }
        seen.push(defines);
    }
    let nvrtc = common::harness::compile::nvrtc_version().map_or_else(|e| e.to_string(), |(a, b)| format!("{a}.{b}"));
    let from = common::harness::toolkit::nvrtc_dir().map_or(String::new(), |d| d.display().to_string());
    reporter.send(&json!({ "ok": failure.is_none(), "log": failure, "hidden_only": hidden_only,
                           "confinement": confinement, "nvrtc": nvrtc, "nvrtc_dir": from }))
}

/// `grade-cases`: one case a line on stdin, one result a message. The GPU, cuBLAS and the
/// compiled kernel serve every case, which is what makes grading fast. A case that ends in an
/// error of the CUDA driver (a fault of the kernel) is the child's last: the context it leaves
/// may be broken, and the next case gets a fresh process.
pub fn cases_child(args: ChildArgs) -> Result<(), String> {
    let (mut reporter, mut input) = Reporter::open()?;
    let submission = Submission::read(&args)?;
    let (gpu, cublas, mut runner) = match open_then_confine(&args, Some(submission.source.clone())) {
        Ok(opened) => opened,
        Err(why) => return reporter.machine(why),
    };
    while let Some(request) = next_json(&mut input)? {
        let result = Case::from_json(&request)
            .and_then(|case| {
                submission.prime(&runner, &case.gemm.shape)?;
                run_case(&gpu, &cublas, &mut runner, &case)
            })
            .unwrap_or_else(|why| json!({ "passed": false, "fault": why.contains("CUDA error"), "reason": why }));
        reporter.send(&result)?;
        if result["fault"] == true {
            break;
        }
    }
    Ok(())
}

fn perf_request(input: &mut impl BufRead) -> Result<(Gemm, Plan), String> {
    let r = next_json(input)?.ok_or("no request")?;
    let case = Case::from_json(&r)?;
    let plan = Plan { seconds: r["seconds"].as_f64().unwrap_or(Plan::default().seconds), ..Plan::default() };
    Ok((case.gemm, plan))
}

/// `grade-perf`: the submission timed on verified runs; `{ms, reps}` or `{wrong}`.
pub fn perf_child(args: ChildArgs) -> Result<(), String> {
    let (mut reporter, mut input) = Reporter::open()?;
    let submission = Submission::read(&args)?;
    let (gpu, cublas, mut runner) = match open_then_confine(&args, Some(submission.source.clone())) {
        Ok(opened) => opened,
        Err(why) => return reporter.machine(why),
    };
    let (gemm, plan) = perf_request(&mut input)?;
    let p = args.step.precision;
    let timed = submission
        .prime(&runner, &gemm.shape)
        .and_then(|()| time_verified(&gpu, &cublas, Timed::Kernel(&mut runner), &gemm, p, plan, true));
    let result = match timed {
        Ok(t) => json!({ "ms": t.median_ms, "reps": t.reps, "untimed_seconds": [t.prepare_s, t.upload_s, t.check_s] }),
        Err(why) => json!({ "wrong": why }),
    };
    reporter.send(&result)
}

/// `grade-reference`: the step's own kernel and cuBLAS, timed the same way, in a process the
/// submission never touched.
pub fn reference_child(args: ChildArgs) -> Result<(), String> {
    let (mut reporter, mut input) = Reporter::open()?;
    let e = |e: Error| e.to_string();
    let (gemm, plan) = perf_request(&mut input)?;
    let opened = Gpu::shared().and_then(|gpu| Ok((Cublas::new(&gpu)?, runner(&gpu, args.step, None)?, gpu)));
    let (cublas, mut runner, gpu) = match opened {
        Ok(o) => o,
        Err(why) => return reporter.machine(e(why)),
    };
    let p = args.step.precision;
    let reference = time_verified(&gpu, &cublas, Timed::Kernel(&mut runner), &gemm, p, plan, false)?;
    let blas = time_verified(&gpu, &cublas, Timed::Cublas, &gemm, p, plan, false)?;
    reporter.send(&json!({ "reference_ms": reference.median_ms, "cublas_ms": blas.median_ms, "reps": reference.reps }))
}
