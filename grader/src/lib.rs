//! The lab grader of the ladder, and the handout that makes a student copy. A submission is
//! hostile code: it is compiled and run in child processes, never in the grader's own.
//!
//! - `handout STEP --out DIR [--keep-later-steps]`: a student copy of the workspace in which the
//!   step's kernel (and, unless told otherwise, every later step's, since they contain its
//!   solution) is a skeleton with TODOs that compiles and fails correctness.
//! - `grade STEP FILE.cu [--hidden FILE] [--json OUT] [--timeout SECS] [--perf-shape S]`: compiles a
//!   submission, checks it on the public shape suite and the instructor's hidden cases (fresh
//!   seeds), each in a child process with a time limit and guard zones around every buffer, times
//!   it against cuBLAS and the reference solution, and prints a score card.

use common::compile::{KernelSource, compile};
use common::device::Gpu;
use common::measure::{Prepared, TimingPlan, sync, time_runs};
use common::reference::Cublas;
use common::step::{DeviceMatrix, Runner};
use common::testing::cases;
use common::{Gemm, Shape, Step, data};
use serde_json::{Value, json};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

/// Guard elements on each side of every device buffer a graded kernel gets.
const GUARD: usize = 1024;

/// Points for correctness and for speed; the card's total is out of their sum.
const CORRECTNESS_POINTS: f64 = 70.0;
const PERFORMANCE_POINTS: f64 = 30.0;

// ---------------------------------------------------------------- command line

/// The grader's commands, flattened into `cargo xtask` and the `grader` binary alike.
#[derive(clap::Subcommand)]
pub enum Command {
    /// A student copy of the repository with a step's kernel as a skeleton
    Handout(HandoutArgs),
    /// Grade a submitted kernel: the cases in a child process, each with a time limit
    Grade(GradeArgs),
    /// The grader's child process: the cases, one a line on stdin
    #[command(hide = true)]
    GradeCases(CasesArgs),
    /// The grader's child process: the timing
    #[command(hide = true)]
    GradePerf(CaseArgs),
}

/// Runs one of the grader's commands.
pub fn run(command: Command) -> Result<(), String> {
    match command {
        Command::Handout(args) => handout(args),
        Command::Grade(args) => grade(args),
        Command::GradeCases(args) => grade_cases(args),
        Command::GradePerf(args) => grade_perf(args),
    }
}

/// A step of the registry by id (`step07-wmma-tf32`), crate name or number (`5`, `05`).
pub fn step_key(key: &str) -> Result<&'static Step, String> {
    steps::find(key).ok_or_else(|| {
        let ids: Vec<String> = steps::ALL.iter().map(Step::id).collect();
        format!("no step {key:?}; the steps are {}", ids.join(", "))
    })
}

/// `MxNxK`, or `S` for SxSxS.
pub fn shape(text: &str) -> Result<Shape, String> {
    Shape::parse(text).map_err(|e| e.to_string())
}

/// The workspace root (this crate lives one level below it).
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("grader is inside the workspace").to_path_buf()
}

// ---------------------------------------------------------------- handout

/// The skeleton that replaces a kernel: its signature, then TODOs and an empty body. Anchors
/// inside the original kernel stay, empty, so that the book still builds in the handout.
pub fn skeleton(step: &Step, source: &str) -> Result<String, String> {
    let (start_tag, end_tag) = ("// ANCHOR: kernel\n", "// ANCHOR_END: kernel");
    let start = source.find(start_tag).ok_or(format!("{} has no `ANCHOR: kernel`", step.name))? + start_tag.len();
    let end = start + source[start..].find(end_tag).ok_or(format!("{} has no `ANCHOR_END: kernel`", step.name))?;
    let region = &source[start..end];
    let body_start = region.find('{').ok_or(format!("{}: no kernel body", step.name))? + 1;
    let signature = &region[..body_start];
    let inner: Vec<&str> =
        region.lines().filter_map(|l| l.trim().strip_prefix("// ANCHOR: ")).filter(|name| !name.is_empty()).collect();
    let mut body = format!(
        "\n    // TODO({}): {}.\n    // The book's chapter on this step explains the idea; its exercises are the assignment.\n\
         \n    // Placeholder, to delete: every element of C becomes NaN, so every correctness check fails.\n    \
         const long long threads = (long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z;\n    \
         const long long block = blockIdx.x + (long long)gridDim.x * (blockIdx.y + (long long)gridDim.y * blockIdx.z);\n    \
         const long long thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);\n    \
         for (long long i = block * blockDim.x * blockDim.y * blockDim.z + thread; i < (long long)M * N; i += threads) {{\n        \
         C[i] = __int_as_float(0x7fc00000);\n    }}\n",
        step.name, step.idea
    );
    for name in inner {
        body += &format!("    // ANCHOR: {name}\n    // (your code)\n    // ANCHOR_END: {name}\n");
    }
    Ok(format!("{}{signature}{body}}}\n{}", &source[..start], &source[end..]))
}

fn git_files(root: &Path) -> Result<Vec<PathBuf>, String> {
    let out = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        return Err("`git ls-files` failed: the handout is made from a git checkout".into());
    }
    Ok(out
        .stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
        .collect())
}

#[derive(clap::Args)]
pub struct HandoutArgs {
    /// The step: id, crate name or number (e.g. 05)
    #[arg(value_parser = crate::step_key)]
    step: &'static Step,
    /// A new folder for the student copy
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Keep the solutions of later steps (by default they become skeletons too)
    #[arg(long)]
    keep_later_steps: bool,
}

pub fn handout(HandoutArgs { step, out, keep_later_steps: keep_later }: HandoutArgs) -> Result<(), String> {
    if out.exists() {
        return Err(format!("{} exists; choose a new folder", out.display()));
    }
    let root = workspace_root();
    let index = steps::ALL.iter().position(|s| s.name == step.name).unwrap_or(0);
    let replaced: Vec<&Step> = steps::ALL.iter().skip(index).take(if keep_later { 1 } else { usize::MAX }).collect();
    let mut copied = 0;
    for rel in git_files(&root)? {
        // The notes hold the solutions' experiments and measurements.
        if rel.starts_with("notes") {
            continue;
        }
        let dest = out.join(&rel);
        std::fs::create_dir_all(dest.parent().unwrap_or(&out)).map_err(|e| e.to_string())?;
        let kernel_of = replaced.iter().find(|s| rel == Path::new(s.name).join("src/kernel.cu"));
        match kernel_of {
            Some(s) => std::fs::write(&dest, skeleton(s, &s.kernel.code)?).map_err(|e| e.to_string())?,
            None => {
                std::fs::copy(root.join(&rel), &dest).map_err(|e| format!("{}: {e}", rel.display()))?;
            }
        }
        copied += 1;
    }
    let mut names: Vec<&str> = replaced.iter().map(|s| s.name).collect();
    names.dedup();
    let lab = format!(
        "# Lab: {name}\n\nImplement `{name}/src/kernel.cu`: {idea}. The book's chapter on this step \
         (`mdbook serve book`) explains the idea; its exercises are the assignment.\n\n\
         Skeletons (they compile and fail every correctness check): {all}.\n\n\
         - Test: `cargo test -p {name}` (on a machine with an NVIDIA GPU).\n\
         - Time against cuBLAS: `cargo bench -p {name}`.\n\
         - Try a file without touching the crate: `cargo run --release -p {name} -- --kernel mine.cu`.\n\n\
         Submit `{name}/src/kernel.cu`; it is graded on the public shape suite, on hidden shapes, \
         and on its speed against cuBLAS and the reference solution.\n",
        name = step.name,
        idea = step.idea,
        all = names.join(", ")
    );
    std::fs::write(out.join("LAB.md"), lab).map_err(|e| e.to_string())?;
    println!("handout for {}: {copied} files in {}, skeletons in {}", step.name, out.display(), names.join(", "));
    Ok(())
}

// ---------------------------------------------------------------- grading: the cases in a child

/// The grader's child process that runs cases: the step and the submitted file.
#[derive(clap::Args)]
pub struct CasesArgs {
    #[arg(value_parser = crate::step_key)]
    step: &'static Step,
    file: PathBuf,
}

/// The arguments of the grader's timing child.
#[derive(clap::Args)]
pub struct CaseArgs {
    #[arg(value_parser = crate::step_key)]
    step: &'static Step,
    file: PathBuf,
    #[arg(long, value_parser = crate::shape, default_value = "64")]
    shape: Shape,
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub alpha: f32,
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub beta: f32,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

impl CaseArgs {
    fn parts(self) -> (&'static Step, PathBuf, Gemm, u64) {
        (self.step, self.file, Gemm::new(self.shape, self.alpha, self.beta), self.seed)
    }
}

/// The graded cases, run in this (child) process: one `M N K alpha beta seed` line from stdin
/// per case, one JSON line to stdout per case. The GPU context, the cuBLAS handle and the
/// compiled kernel are made once and serve every case, which is what makes grading fast; the
/// parent restarts a child after a crash and kills it on a time-out.
pub fn grade_cases(CasesArgs { step, file }: CasesArgs) -> Result<(), String> {
    use std::io::{BufRead, Write};
    let e = |e: common::Error| e.to_string();
    let gpu = Gpu::shared().map_err(e)?;
    let cublas = Cublas::new(&gpu).map_err(e)?;
    let source = KernelSource::from_file(&file).map_err(e)?;
    let mut runner = Runner::new(&gpu, step, Some(source)).map_err(e)?;
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| e.to_string())?;
        let f: Vec<&str> = line.split_whitespace().collect();
        let [m, n, k, alpha, beta, seed] = f[..] else { return Err(format!("bad case line {line:?}")) };
        let num = |s: &str| s.parse::<f64>().map_err(|_| format!("bad case line {line:?}"));
        let shape = Shape::new(num(m)? as usize, num(n)? as usize, num(k)? as usize);
        let gemm = Gemm::new(shape, num(alpha)? as f32, num(beta)? as f32);
        let seed = seed.parse().map_err(|_| format!("bad seed in {line:?}"))?;
        let result = run_case(&gpu, &cublas, &mut runner, &gemm, seed)
            .unwrap_or_else(|e| json!({ "passed": false, "reason": e }));
        let mut out = std::io::stdout().lock();
        writeln!(out, "{result}").and_then(|_| out.flush()).map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn run_case(gpu: &Arc<Gpu>, cublas: &Cublas, runner: &mut Runner, gemm: &Gemm, seed: u64) -> Result<Value, String> {
    let (gpu, step) = (gpu.clone(), runner.step.clone());
    let e = |e: common::Error| e.to_string();
    let p = step.precision;
    let prepared = Prepared::new(&gpu, cublas, gemm, p, seed).map_err(e)?;
    // The submission gets guarded copies of A, B and C.
    let a = DeviceMatrix::guarded(&gpu, &prepared.inputs.a, p.input(), GUARD).map_err(e)?;
    let b = DeviceMatrix::guarded(&gpu, &prepared.inputs.b, p.input(), GUARD).map_err(e)?;
    let mut c = prepared.fresh_c(&gpu, GUARD).map_err(e)?;
    runner.run(gemm, &a, &b, &mut c).map_err(e)?;
    sync(&gpu, &runner.kernel.name).map_err(e)?;
    let got = c.download(&gpu).map_err(e)?;
    let check = prepared.check_result(&got);
    let mut problems = Vec::new();
    for (name, m) in [("A", &a), ("B", &b), ("C", &c)] {
        let (before, after) = m.guard_damage(&gpu).map_err(e)?;
        if before + after > 0 {
            problems
                .push(format!("wrote outside {name}: {before} guard elements before it and {after} after it changed"));
        }
    }
    let stored = |x: &[f32]| x.iter().map(|&v| p.input().store(v)).collect::<Vec<f64>>();
    if a.download(&gpu).map_err(e)? != stored(&prepared.inputs.a)
        || b.download(&gpu).map_err(e)? != stored(&prepared.inputs.b)
    {
        problems.push("modified its inputs A or B".to_string());
    }
    let passed = check.passed() && problems.is_empty();
    let reason = if passed {
        String::new()
    } else if problems.is_empty() {
        check.report(&runner.kernel.name)
    } else {
        problems.join("; ")
    };
    Ok(json!({
        "passed": passed,
        "reason": reason,
        "rel_err_vs_cpu": check.vs_cpu.rel_frobenius,
        "rel_err_vs_cublas": check.vs_cublas.rel_frobenius,
    }))
}

/// Times the submission, the reference solution and cuBLAS at one shape (a child process).
pub fn grade_perf(args: CaseArgs) -> Result<(), String> {
    let (step, file, gemm, seed) = args.parts();
    let e = |e: common::Error| e.to_string();
    let gpu = Gpu::shared().map_err(e)?;
    let cublas = Cublas::new(&gpu).map_err(e)?;
    let prepared = Prepared::new(&gpu, &cublas, &gemm, step.precision, seed).map_err(e)?;
    let plan = TimingPlan::default();
    let mut c = prepared.fresh_c(&gpu, 0).map_err(e)?;
    let mut time = |kernel: Option<KernelSource>| -> Result<f64, String> {
        let mut runner = Runner::new(&gpu, step, kernel).map_err(e)?;
        Ok(time_runs(&gpu, plan, || runner.run(&gemm, &prepared.a, &prepared.b, &mut c)).map_err(e)?.median_ms)
    };
    let submission = time(Some(KernelSource::from_file(&file).map_err(e)?))?;
    let reference = time(None)?;
    let (ca, cb) = prepared.cublas_inputs();
    let cublas_ms =
        time_runs(&gpu, plan, || cublas.gemm(&gpu, step.precision, &gemm, ca, cb, &mut c)).map_err(e)?.median_ms;
    println!("{}", json!({ "submission_ms": submission, "reference_ms": reference, "cublas_ms": cublas_ms }));
    Ok(())
}

// ---------------------------------------------------------------- grading: the parent

/// Hidden cases: one `M N K alpha beta` per line; `#` starts a comment.
pub fn parse_hidden(text: &str) -> Result<Vec<Gemm>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let bad = || format!("hidden cases, line {}: expected `M N K alpha beta`, got {line:?}", i + 1);
        if f.len() != 5 {
            return Err(bad());
        }
        let dim = |s: &str| s.parse::<usize>().map_err(|_| bad());
        let num = |s: &str| s.parse::<f32>().map_err(|_| bad());
        let shape = Shape::new(dim(f[0])?, dim(f[1])?, dim(f[2])?);
        shape.check_32bit().map_err(|e| e.to_string())?;
        out.push(Gemm::new(shape, num(f[3])?, num(f[4])?));
    }
    Ok(out)
}

/// A child process that runs graded cases one at a time (`grade-cases`), each with a time limit.
struct CaseChild {
    proc: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
    stderr: std::thread::JoinHandle<String>,
}

impl CaseChild {
    fn start(step: &Step, file: &Path) -> Result<CaseChild, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut proc = std::process::Command::new(exe)
            .args(["grade-cases".into(), step.id(), file.display().to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start the grading process: {e}"))?;
        let (stdin, stdout, mut err) =
            (proc.stdin.take().unwrap(), proc.stdout.take().unwrap(), proc.stderr.take().unwrap());
        // Lines arrive on a channel, so that the parent can wait for one with a time limit.
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        Ok(CaseChild { proc, stdin, lines, stderr })
    }

    /// Runs one case; on a time-out or a crash the child is gone (`Err`, and `None` back).
    fn run(mut self, gemm: &Gemm, seed: u64, timeout: Duration) -> (Result<Value, String>, Option<CaseChild>) {
        use std::io::Write;
        let s = gemm.shape;
        let sent = writeln!(self.stdin, "{} {} {} {} {} {seed}", s.m, s.n, s.k, gemm.alpha, gemm.beta)
            .and_then(|_| self.stdin.flush());
        let answer = if sent.is_ok() { self.lines.recv_timeout(timeout) } else { Err(RecvTimeoutError::Disconnected) };
        match answer {
            Ok(line) => match serde_json::from_str::<Value>(&line) {
                Ok(v) => (Ok(v), Some(self)),
                Err(_) => (Err(format!("unexpected output: {line}")), self.end()),
            },
            Err(RecvTimeoutError::Timeout) => {
                let _ = self.proc.kill();
                self.end();
                (Err(format!("timed out after {} s (an endless loop, or far too slow)", timeout.as_secs())), None)
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.proc.wait().map(|s| s.to_string()).unwrap_or_default();
                let err = self.stderr.join().unwrap_or_default();
                let why = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no output");
                (Err(format!("crashed ({status}): {why}")), None)
            }
        }
    }

    fn end(mut self) -> Option<CaseChild> {
        let _ = self.proc.kill();
        let _ = self.proc.wait();
        None
    }
}

/// Runs this program again as `subcommand` with a time limit; returns its JSON line or why not.
fn child(subcommand: &str, args: &[String], timeout: Duration) -> Result<Value, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut proc = std::process::Command::new(exe)
        .arg(subcommand)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the grading process: {e}"))?;
    let started = Instant::now();
    let status = loop {
        if let Some(status) = proc.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if started.elapsed() > timeout {
            let _ = proc.kill();
            let _ = proc.wait();
            return Err(format!("timed out after {} s (an endless loop, or far too slow)", timeout.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (mut out, mut err) = (String::new(), String::new());
    proc.stdout.take().map(|mut s| s.read_to_string(&mut out));
    proc.stderr.take().map(|mut s| s.read_to_string(&mut err));
    let last = out.lines().rev().find_map(|l| serde_json::from_str::<Value>(l).ok());
    match (status.success(), last) {
        (true, Some(v)) => Ok(v),
        _ => {
            let why = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no output");
            Err(format!("crashed ({status}): {why}"))
        }
    }
}

#[derive(clap::Args)]
pub struct GradeArgs {
    /// The step: id, crate name or number (e.g. 05, or step07-wmma-tf32 for one precision)
    #[arg(value_parser = crate::step_key)]
    step: &'static Step,
    /// The submitted kernel
    #[arg(value_name = "FILE.cu")]
    file: PathBuf,
    /// Hidden cases, one `M N K alpha beta` per line (`#` starts a comment)
    #[arg(long, value_name = "FILE")]
    hidden: Option<PathBuf>,
    /// Also write the score as Gradescope's results.json
    #[arg(long, value_name = "OUT")]
    json: Option<PathBuf>,
    /// Time limit of each case, in seconds (the timing gets four times as long)
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    timeout: u64,
    /// The shape the speed is measured at
    #[arg(long, value_name = "MxNxK", value_parser = crate::shape, default_value = "4096")]
    perf_shape: Shape,
}

pub fn grade(GradeArgs { step, file, hidden, json: json_out, timeout, perf_shape }: GradeArgs) -> Result<(), String> {
    let hidden = match hidden {
        Some(path) => parse_hidden(&std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?)?,
        None => Vec::new(),
    };
    let source = KernelSource::from_file(&file).map_err(|e| e.to_string())?;
    let gpu = Gpu::shared().map_err(|e| e.to_string())?;
    let mut tests = Vec::new();
    // Compile every variant the step's launch picks for the graded shapes: errors name the
    // student's file and line.
    let all: Vec<(String, Gemm)> = cases()
        .into_iter()
        .map(|g| ("public".to_string(), g))
        .chain(hidden.iter().map(|g| ("hidden".to_string(), *g)))
        .collect();
    let mut compile_error = None;
    for (_, g) in &all {
        if let Err(e) = compile(&source, &(step.launch)(&g.shape).defines, &step.target(gpu.cc)) {
            compile_error = Some(e.to_string());
            break;
        }
    }
    let timeout = Duration::from_secs(timeout);
    let (mut passed, mut scored_cases) = (0, 0);
    // After a time-out the kernel is assumed to hang everywhere: the remaining cases are not run.
    let mut hung = false;
    if let Some(e) = &compile_error {
        tests.push(json!({ "name": "compile", "score": 0.0, "max_score": CORRECTNESS_POINTS + PERFORMANCE_POINTS, "output": e }));
    } else {
        // One child runs the cases in turn; after a crash the next case gets a fresh one.
        let mut worker: Option<CaseChild> = None;
        for (set, g) in &all {
            let seed = data::fresh_seed();
            let (ok, output) = if hung {
                (false, "not run: an earlier case timed out".to_string())
            } else {
                let result = match worker.take().map_or_else(|| CaseChild::start(step, &file), Ok) {
                    Ok(w) => {
                        let (result, alive) = w.run(g, seed, timeout);
                        worker = alive;
                        result
                    }
                    Err(e) => Err(e),
                };
                match result {
                    Ok(v) if v["passed"] == true => {
                        (true, format!("ok (error {:.1e})", v["rel_err_vs_cpu"].as_f64().unwrap_or(0.0)))
                    }
                    Ok(v) => (false, v["reason"].as_str().unwrap_or("wrong result").to_string()),
                    Err(why) => {
                        hung = why.starts_with("timed out");
                        (false, why)
                    }
                }
            };
            // An empty C launches nothing: such cases check the harness, not the kernel, so they
            // are reported but carry no points.
            let scored = !g.shape.is_empty();
            scored_cases += usize::from(scored);
            passed += usize::from(ok && scored);
            let name =
                if *set == "public" { format!("{} {g}", set) } else { format!("hidden case {}", tests.len() + 1) };
            let shown = if *set == "public" {
                output.clone()
            } else if ok {
                "ok".into()
            } else {
                "failed".into()
            };
            println!("{} {name}: {shown}", if ok { "pass" } else { "FAIL" });
            let max = if scored { 1.0 } else { 0.0 };
            tests.push(json!({ "name": name, "score": if ok { max } else { 0.0 }, "max_score": max, "output": shown, "seed": seed }));
        }
    }
    let correctness =
        if compile_error.is_some() { 0.0 } else { CORRECTNESS_POINTS * passed as f64 / scored_cases.max(1) as f64 };
    // Speed counts only for a fully correct kernel: a fast wrong answer is worth nothing.
    let mut performance = 0.0;
    let mut perf = Value::Null;
    if compile_error.is_none() && passed == scored_cases {
        let perf_args = vec![step.id(), file.display().to_string(), "--shape".into(), perf_shape.to_string()];
        match child("grade-perf", &perf_args, timeout * 4) {
            Ok(v) => {
                let (sub, reference, cublas) = (
                    v["submission_ms"].as_f64().unwrap_or(f64::INFINITY),
                    v["reference_ms"].as_f64().unwrap_or(1.0),
                    v["cublas_ms"].as_f64().unwrap_or(1.0),
                );
                performance = PERFORMANCE_POINTS * (reference / sub).min(1.0);
                println!(
                    "speed at {perf_shape}: {sub:.3} ms; reference solution {reference:.3} ms ({:.0}% of it); cuBLAS {cublas:.3} ms ({:.1}% of it)",
                    100.0 * reference / sub,
                    100.0 * cublas / sub
                );
                perf = v;
            }
            Err(why) => println!("speed: {why}"),
        }
    }
    let score = correctness + performance;
    println!(
        "\nscore card, {} ({}):\n  correctness {passed}/{} scored cases: {correctness:.1} / {CORRECTNESS_POINTS}\n  speed vs the reference solution: {performance:.1} / {PERFORMANCE_POINTS}\n  total: {score:.1} / {}",
        step.name,
        file.display(),
        scored_cases,
        CORRECTNESS_POINTS + PERFORMANCE_POINTS
    );
    if let Some(path) = json_out {
        // Gradescope's results.json format.
        let report = json!({
            "score": score,
            "max_score": CORRECTNESS_POINTS + PERFORMANCE_POINTS,
            "output": format!("{} correctness {passed}/{scored_cases} scored cases, speed {performance:.1}/{PERFORMANCE_POINTS}", step.name),
            "tests": tests,
            "performance": perf,
        });
        std::fs::write(&path, serde_json::to_string_pretty(&report).map_err(|e| e.to_string())? + "\n")
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_cases_parse_and_reject() {
        let g = parse_hidden("# shapes\n33 31 7  1.5 0\n\n1 1 1 -1 2 # tiny\n").unwrap();
        assert_eq!(g, vec![Gemm::new(Shape::new(33, 31, 7), 1.5, 0.0), Gemm::new(Shape::cube(1), -1.0, 2.0)]);
        assert!(parse_hidden("1 2 3").unwrap_err().contains("line 1"));
        assert!(parse_hidden("100000 100000 1 1 0").is_err());
    }

    #[test]
    fn skeletons_keep_signature_and_anchors() {
        for step in steps::ALL {
            let s = skeleton(step, &step.kernel.code).unwrap();
            assert!(s.contains("void sgemm(") || s.contains("sgemm(int M"), "{}", step.name);
            assert!(s.contains("TODO("), "{}", step.name);
            assert!(!s.contains("store_c(C, cRow") && !s.contains("acc[i][j] +="), "{} keeps its solution", step.name);
            for line in step.kernel.code.lines() {
                if let Some(name) = line.trim().strip_prefix("// ANCHOR: ") {
                    assert!(s.contains(&format!("// ANCHOR: {name}")), "{} lost anchor {name}", step.name);
                }
            }
        }
    }
}
