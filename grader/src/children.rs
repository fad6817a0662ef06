//! The grader's child processes, each started by the parent with a token on stdin and a channel
//! on fd 3 ([`crate::protocol`]). Those that touch the submission confine themselves first
//! ([`crate::confine`]): the compiler (also with memory and CPU limits), the cases, the timing.
//! The reference's timing runs in a child that never loads the submission.

use crate::confine::{confine, limit_resources};
use crate::gpu::{Case, Plan, Timed, run_case, time_verified};
use crate::protocol::Reporter;
use common::compile::{KernelSource, compile};
use common::device::Gpu;
use common::reference::Cublas;
use common::runner::Runner;
use common::{Gemm, Shape, Step};
use serde_json::{Value, json};
use std::io::BufRead;
use std::path::PathBuf;

/// Address space a compile may use (NVRTC needs about 1 GiB for the largest kernel).
const COMPILE_MEMORY: u64 = 4 << 30;

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

impl ChildArgs {
    fn source(&self) -> Result<KernelSource, String> {
        let code = std::fs::read_to_string(self.scratch.join(&self.file)).map_err(|e| format!("{}: {e}", self.file))?;
        Ok(self.step.kernel.with_code(self.file.clone(), code))
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

fn setup_confined(args: &ChildArgs) -> Result<(Reporter, std::io::StdinLock<'static>, String), String> {
    let confinement = confine(&args.scratch)?;
    let (reporter, input) = Reporter::open()?;
    Ok((reporter, input, confinement.describe()))
}

/// The GPU and cuBLAS, opened before the child confines itself: the driver reads files of the
/// machine (`/proc`, `/sys`, device nodes) while it starts, and nothing of the submission has
/// run yet. Everything after (the compile, the kernel) runs confined.
fn open_then_confine(
    args: &ChildArgs,
) -> Result<(std::sync::Arc<Gpu>, Cublas, Reporter, std::io::StdinLock<'static>), String> {
    let e = |e: common::Error| e.to_string();
    let gpu = Gpu::shared().map_err(e)?;
    let cublas = Cublas::new(&gpu).map_err(e)?;
    let (reporter, input, _) = setup_confined(args)?;
    Ok((gpu, cublas, reporter, input))
}

/// `grade-compile`: every variant the step's launch picks for the shapes on stdin, for the
/// target on stdin; one message: `{ok, log, confinement}`.
pub fn compile_child(args: ChildArgs) -> Result<(), String> {
    let (mut reporter, mut input, confinement) = setup_confined(&args)?;
    let request = next_json(&mut input)?.ok_or("no request")?;
    let limit = request["cpu_seconds"].as_u64().unwrap_or(60);
    limit_resources(COMPILE_MEMORY, limit)?;
    let source = args.source()?;
    let target = request["target"].as_str().ok_or("no target")?.to_string();
    let mut seen = Vec::new();
    let mut failure = None;
    for s in request["shapes"].as_array().ok_or("no shapes")? {
        let dims: Vec<usize> = ["m", "n", "k"].iter().map(|d| s[d].as_u64().unwrap_or(1) as usize).collect();
        let shape = Shape::new(dims[0], dims[1], dims[2]);
        if shape.is_empty() {
            continue;
        }
        let defines = (args.step.launch)(&shape).defines;
        if seen.contains(&defines) {
            continue;
        }
        if let Err(e) = compile(&source, &defines, &target) {
            failure = Some(e.to_string());
            break;
        }
        seen.push(defines);
    }
    reporter.send(&json!({ "ok": failure.is_none(), "log": failure, "confinement": confinement }))
}

/// `grade-cases`: one case a line on stdin, one result a message. The GPU, cuBLAS and the
/// compiled kernel serve every case, which is what makes grading fast.
pub fn cases_child(args: ChildArgs) -> Result<(), String> {
    let (gpu, cublas, mut reporter, mut input) = open_then_confine(&args)?;
    let e = |e: common::Error| e.to_string();
    let mut runner = Runner::new(&gpu, args.step, Some(args.source()?)).map_err(e)?;
    while let Some(request) = next_json(&mut input)? {
        let result = Case::from_json(&request)
            .and_then(|case| run_case(&gpu, &cublas, &mut runner, &case))
            .unwrap_or_else(|why| json!({ "passed": false, "reason": why }));
        reporter.send(&result)?;
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
    let (gpu, cublas, mut reporter, mut input) = open_then_confine(&args)?;
    let e = |e: common::Error| e.to_string();
    let (gemm, plan) = perf_request(&mut input)?;
    let mut runner = Runner::new(&gpu, args.step, Some(args.source()?)).map_err(e)?;
    let p = args.step.precision;
    let result = match time_verified(&gpu, &cublas, Timed::Kernel(&mut runner), &gemm, p, plan, true) {
        Ok(t) => json!({ "ms": t.median_ms, "reps": t.reps, "untimed_seconds": [t.prepare_s, t.upload_s, t.check_s] }),
        Err(why) => json!({ "wrong": why }),
    };
    reporter.send(&result)
}

/// `grade-reference`: the step's own kernel and cuBLAS, timed the same way, in a process the
/// submission never touched.
pub fn reference_child(args: ChildArgs) -> Result<(), String> {
    let (mut reporter, mut input) = Reporter::open()?;
    let e = |e: common::Error| e.to_string();
    let (gemm, plan) = perf_request(&mut input)?;
    let gpu = Gpu::shared().map_err(e)?;
    let cublas = Cublas::new(&gpu).map_err(e)?;
    let mut runner = Runner::new(&gpu, args.step, None).map_err(e)?;
    let p = args.step.precision;
    let reference = time_verified(&gpu, &cublas, Timed::Kernel(&mut runner), &gemm, p, plan, false)?;
    let blas = time_verified(&gpu, &cublas, Timed::Cublas, &gemm, p, plan, false)?;
    reporter.send(&json!({ "reference_ms": reference.median_ms, "cublas_ms": blas.median_ms, "reps": reference.reps }))
}
