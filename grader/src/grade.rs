//! `grade`: one submission, end to end, in the parent process, which never runs the submission's
//! code. The submission's text is checked ([`crate::policy`]), then it is copied alone into a
//! fresh folder and compiled by a confined child; its cases, a compute-sanitizer pass and its
//! timing run in confined children; the reference solution and cuBLAS are timed in a child of
//! their own. A budget bounds the whole; the report is written whatever happens.

use crate::children::ChildArgs;
use crate::gpu::Case;
use crate::handout::refuse_inside_handout;
use crate::policy::{check_includes, filter_log};
use crate::protocol::{ChildProc, Ended, OUTPUT_CAP, new_token};
use crate::report::{Card, FULL_SPEED, PERFORMANCE_POINTS, write_atomically};
use common::device::Gpu;
use common::testing::{cases, probes_for};
use common::{Gemm, Shape, Step, data};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The largest submission accepted (a kernel of the ladder is a few kilobytes).
const MAX_SOURCE: u64 = 1 << 20;

/// The longest a compile may take (and the CPU seconds it may use).
const COMPILE_SECONDS: u64 = 60;

/// The cases of the compute-sanitizer pass: small, not tile multiples, both beta paths.
const MEMCHECK_CASES: [(Shape, f32, f32); 2] =
    [(Shape::new(33, 31, 32), 1.0, 0.0), (Shape::new(127, 129, 128), -1.5, 0.75)];

#[derive(clap::Args, Debug)]
pub struct GradeArgs {
    /// The step: id, crate name or number (e.g. 05, or step07-wmma-tf32 for one precision)
    #[arg(value_parser = crate::step_key)]
    pub step: &'static Step,
    /// The submitted kernel
    #[arg(value_name = "FILE.cu")]
    pub file: PathBuf,
    /// Hidden cases, one `M N K alpha beta` per line (`#` starts a comment)
    #[arg(long, value_name = "FILE")]
    pub hidden: Option<PathBuf>,
    /// Also write the card as Gradescope's results.json (always written, atomically)
    #[arg(long, value_name = "OUT")]
    pub json: Option<PathBuf>,
    /// Time limit of each case, in seconds (the timing gets four times as long)
    #[arg(long, value_name = "SECS", default_value_t = 30, allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,
    /// Time limit of the whole grading, in seconds: past it the card ends with what passed
    #[arg(long, value_name = "SECS", default_value_t = 120, allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub budget: u64,
    /// The shape the speed is measured at
    #[arg(long, value_name = "MxNxK", value_parser = crate::shape, default_value = "4096")]
    pub perf_shape: Shape,
    /// Only the checks that need no GPU: the include policy and a confined compile of every variant
    #[arg(long)]
    pub no_gpu: bool,
    /// The architecture to compile for with --no-gpu (steps built for one architecture use theirs)
    #[arg(long, value_name = "sm_XY", default_value = "sm_90", requires = "no_gpu")]
    pub arch: String,
}

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
        let num = |s: &str| s.parse::<f32>().ok().filter(|v| v.is_finite()).ok_or_else(bad);
        let shape = Shape::new(dim(f[0])?, dim(f[1])?, dim(f[2])?);
        shape.check_32bit().map_err(|e| format!("hidden cases, line {}: {e}", i + 1))?;
        out.push(Gemm::new(shape, num(f[3])?, num(f[4])?));
    }
    Ok(out)
}

/// The whole grading's clock.
#[derive(Clone, Copy)]
pub struct Budget {
    deadline: Instant,
}

impl Budget {
    pub fn new(seconds: u64) -> Budget {
        Budget { deadline: Instant::now() + Duration::from_secs(seconds) }
    }

    pub fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// How long the next wait may be: `limit`, or what is left of the budget.
    pub fn wait(&self, limit: Duration) -> Duration {
        limit.min(self.left())
    }

    pub fn spent(&self) -> bool {
        self.left().is_zero()
    }
}

pub const BUDGET_SPENT: &str = "grading budget exhausted";

/// The submission copied alone into a fresh private folder, removed when dropped.
pub struct Scratch {
    pub dir: PathBuf,
    pub file: String,
}

impl Scratch {
    fn new(source: &str, original: &Path) -> Result<Scratch, String> {
        let dir = std::env::temp_dir().join(format!("grader-{}-{}", std::process::id(), &new_token()?[..12]));
        std::fs::create_dir(&dir).map_err(|e| format!("cannot make a scratch folder: {e}"))?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).map_err(|e| e.to_string())?;
        // The name compile errors show: the student's own, if it is a plain file name.
        let name = original.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let plain = !name.is_empty()
            && name.ends_with(".cu")
            && name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
        let file = if plain { name } else { "submission.cu".to_string() };
        std::fs::write(dir.join(&file), source).map_err(|e| e.to_string())?;
        std::fs::create_dir(dir.join("cubins")).map_err(|e| e.to_string())?;
        Ok(Scratch { dir, file })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Reads the submission, refusing what is not a plain, small text file.
fn read_submission(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read the submission {}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("the submission {} is not a file", path.display()));
    }
    if meta.len() > MAX_SOURCE {
        return Err(format!("the submission {} is {} bytes; the limit is {MAX_SOURCE}", path.display(), meta.len()));
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read the submission {}: {e}", path.display()))
}

/// Starts the child `subcommand` of this program on the submission.
fn spawn(
    subcommand: &str,
    args: &ChildArgs,
    program: Option<(&Path, Vec<String>)>,
) -> Result<(ChildProc, String), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let ours = vec![subcommand.to_string(), args.step.id(), args.scratch.display().to_string(), args.file.clone()];
    let (program, argv) = match program {
        // A wrapper (compute-sanitizer) runs this program with its own arguments first.
        Some((wrapper, mut pre)) => {
            pre.push(exe.display().to_string());
            pre.extend(ours);
            (wrapper.to_path_buf(), pre)
        }
        None => (exe, ours),
    };
    let token = new_token()?;
    let scratch = args.scratch.display().to_string();
    // The compile child keeps the kernels it compiled in the scratch folder; the others load them.
    let cubins = args.scratch.join("cubins").display().to_string();
    let env = [
        ("HOME", scratch.clone()),
        ("TMPDIR", scratch),
        ("CUDA_CACHE_DISABLE", "1".to_string()),
        (common::compile::CUBIN_CACHE_ENV, cubins),
    ];
    let child = ChildProc::spawn(&program, &argv, &env, &args.scratch, &token)?;
    Ok((child, token))
}

/// Why a child's wait ended, for the card.
fn ended(why: Ended, limit: Duration, budget: &Budget) -> String {
    match why {
        Ended::TimedOut if budget.spent() => BUDGET_SPENT.to_string(),
        Ended::TimedOut => format!("timed out after {} s (an endless loop, or far too slow)", limit.as_secs()),
        Ended::Exited(how) => format!("crashed ({how})"),
        Ended::Forged(why) => why,
    }
}

/// Appends a child's output (the submission's printf) to what the card shows, capped.
fn keep_output(card: &mut Card, child: &ChildProc) {
    let out = child.output();
    if !out.is_empty() && card.submission_output.len() < OUTPUT_CAP {
        let room = OUTPUT_CAP - card.submission_output.len();
        card.submission_output.extend(out.chars().scan(0, |n, c| {
            *n += c.len_utf8();
            (*n <= room).then_some(c)
        }));
    }
}

/// compute-sanitizer, where the CUDA toolkit has it.
fn sanitizer() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        dirs.extend(std::env::var_os(var).map(|h| PathBuf::from(h).join("bin")));
    }
    dirs.push(PathBuf::from("/usr/local/cuda/bin"));
    dirs.into_iter().map(|d| d.join("compute-sanitizer")).find(|p| p.is_file())
}

/// Every case the submission is checked on, named for the card; scored ones carry points.
fn all_cases(step: &Step, hidden: &[Gemm]) -> Vec<(String, Case, bool)> {
    let mut out: Vec<(String, Case, bool)> = cases()
        .into_iter()
        .map(|g| (format!("public {g}"), Case { gemm: g, seed: data::fresh_seed(), probe: None }, !g.shape.is_empty()))
        .collect();
    let all_probes = common::probe::probes();
    for probe in probes_for(step.precision) {
        let index = all_probes.iter().position(|p| *p == probe);
        out.push((format!("probe {probe}"), Case { gemm: probe.gemm, seed: data::fresh_seed(), probe: index }, true));
    }
    for (i, g) in hidden.iter().enumerate() {
        out.push((
            format!("hidden case {}", i + 1),
            Case { gemm: *g, seed: data::fresh_seed(), probe: None },
            !g.shape.is_empty(),
        ));
    }
    out
}

/// The compile stage: a confined child compiles every variant the graded shapes pick.
fn compile_stage(card: &mut Card, args: &ChildArgs, target: &str, shapes: &[Shape], budget: &Budget) -> bool {
    let limit = budget.wait(Duration::from_secs(COMPILE_SECONDS));
    let result = spawn("grade-compile", args, None).and_then(|(mut child, _)| {
        let shapes: Vec<Value> = shapes.iter().map(|s| json!({"m": s.m, "n": s.n, "k": s.k})).collect();
        child
            .send(&json!({ "target": target, "shapes": shapes, "cpu_seconds": limit.as_secs().max(1) }).to_string())?;
        let answer = child.receive(limit);
        keep_output(card, &child);
        answer.map_err(|why| match why {
            Ended::Exited(how) => format!(
                "the compiler stopped ({how}): a compile may use {} GiB and {} s",
                (4u64 << 30) >> 30,
                limit.as_secs()
            ),
            other => ended(other, limit, budget),
        })
    });
    match result {
        Ok(v) if v["ok"] == true => {
            card.confinement = v["confinement"].as_str().unwrap_or_default().to_string();
            card.push("compile", true, false, format!("compiles for {target}"));
            true
        }
        Ok(v) => {
            card.confinement = v["confinement"].as_str().unwrap_or_default().to_string();
            let log = filter_log(&args.file, v["log"].as_str().unwrap_or("no log"));
            card.push("compile", false, true, log);
            false
        }
        Err(why) => {
            if why == BUDGET_SPENT {
                card.stopped = Some(BUDGET_SPENT.into());
            }
            card.push("compile", false, true, why);
            false
        }
    }
}

/// The cases, in one child; a fresh one after a crash; none after a time-out.
fn case_stage(card: &mut Card, args: &ChildArgs, all: &[(String, Case, bool)], timeout: Duration, budget: &Budget) {
    let mut worker: Option<ChildProc> = None;
    let mut stop: Option<String> = None;
    for (name, case, scored) in all {
        let hidden = name.starts_with("hidden");
        if let Some(why) = &stop {
            card.push(name.clone(), false, *scored, format!("not run: {why}"));
            continue;
        }
        if budget.spent() {
            stop = Some(BUDGET_SPENT.into());
            card.stopped = stop.clone();
            card.push(name.clone(), false, *scored, format!("not run: {BUDGET_SPENT}"));
            continue;
        }
        let limit = budget.wait(timeout);
        let result = match worker.take().map_or_else(|| spawn("grade-cases", args, None).map(|(c, _)| c), Ok) {
            Err(e) => Err(e),
            Ok(mut child) => {
                let answer = child.send(&case.to_json().to_string()).and_then(|()| {
                    child.receive(limit).map_err(|why| {
                        let timed_out = matches!(why, Ended::TimedOut);
                        let text = ended(why, limit, budget);
                        if timed_out {
                            stop = Some(if text == BUDGET_SPENT {
                                text.clone()
                            } else {
                                "an earlier case timed out".into()
                            });
                            if text == BUDGET_SPENT {
                                card.stopped = Some(BUDGET_SPENT.into());
                            }
                        }
                        text
                    })
                });
                keep_output(card, &child);
                if answer.is_ok() {
                    worker = Some(child);
                }
                answer
            }
        };
        let (ok, output) = match result {
            Ok(v) if v["passed"] == true => {
                (true, format!("ok (error {:.1e})", v["rel_err_vs_cpu"].as_f64().unwrap_or(0.0)))
            }
            Ok(v) => (false, v["reason"].as_str().unwrap_or("wrong result").to_string()),
            Err(why) => (false, why),
        };
        // Hidden cases say only whether they passed: their shapes are the staff's.
        let shown = if hidden { (if ok { "ok" } else { "failed" }).to_string() } else { output };
        card.push(name.clone(), ok, *scored, shown);
    }
}

/// compute-sanitizer's memcheck on small cases, its report kept in a file the submission
/// cannot write (the verdict is its exit code, never the process's output).
fn memcheck_stage(card: &mut Card, args: &ChildArgs, timeout: Duration, budget: &Budget) {
    let Some(tool) = sanitizer() else {
        card.push("memcheck", true, false, "not run: compute-sanitizer not found (CUDA_HOME/bin or PATH)");
        return;
    };
    if budget.spent() {
        card.stopped = Some(BUDGET_SPENT.into());
        card.push("memcheck", false, true, format!("not run: {BUDGET_SPENT}"));
        return;
    }
    let log = args.scratch.join("memcheck.log");
    let pre = vec![
        "--tool".into(),
        "memcheck".into(),
        "--error-exitcode".into(),
        "86".into(),
        "--print-limit".into(),
        "10".into(),
        "--log-file".into(),
        log.display().to_string(),
    ];
    let limit = budget.wait(timeout * 4);
    let started = Instant::now();
    let outcome = spawn("grade-cases", args, Some((&tool, pre))).and_then(|(mut child, _)| {
        for (shape, alpha, beta) in MEMCHECK_CASES {
            let case = Case { gemm: Gemm::new(shape, alpha, beta), seed: data::fresh_seed(), probe: None };
            child.send(&case.to_json().to_string())?;
            let left = limit.saturating_sub(started.elapsed());
            child.receive(left).map_err(|why| ended(why, limit, budget))?;
        }
        child.close_input();
        let code = child.wait(limit.saturating_sub(started.elapsed()));
        keep_output(card, &child);
        Ok(code)
    });
    match outcome {
        Ok(Some(0)) => {
            card.push("memcheck", true, true, "no memory errors (compute-sanitizer, 33x31x32 and 127x129x128)")
        }
        Ok(Some(86)) => {
            let report = std::fs::read_to_string(&log).unwrap_or_default();
            let first: Vec<&str> = report.lines().filter(|l| !l.trim_matches('=').trim().is_empty()).take(12).collect();
            card.push("memcheck", false, true, format!("compute-sanitizer found memory errors:\n{}", first.join("\n")));
        }
        Ok(code) => card.push("memcheck", false, true, format!("the memcheck run ended with {code:?}")),
        Err(why) => card.push("memcheck", false, true, why),
    }
}

/// The speed: the submission's timed runs (verified) against the reference's and cuBLAS's.
fn speed_stage(card: &mut Card, args: &ChildArgs, shape: Shape, timeout: Duration, budget: &Budget) {
    let case = Case { gemm: Gemm::new(shape, 1.0, 0.0), seed: 0, probe: None };
    let mut request = case.to_json();
    request["seconds"] = json!(2.0);
    let run = |subcommand: &str, card: &mut Card| -> Result<Value, String> {
        let limit = budget.wait(timeout * 4);
        let (mut child, _) = spawn(subcommand, args, None)?;
        child.send(&request.to_string())?;
        let answer = child.receive(limit).map_err(|why| ended(why, limit, budget));
        if subcommand == "grade-perf" {
            keep_output(card, &child);
        }
        answer
    };
    let submission = match run("grade-perf", card) {
        Ok(v) if v["ms"].is_number() => v,
        Ok(v) => {
            card.speed_note = v["wrong"].as_str().unwrap_or("the timed runs failed").to_string();
            card.push(format!("timed runs at {shape}"), false, true, card.speed_note.clone());
            return;
        }
        Err(why) => {
            card.speed_note = why;
            return;
        }
    };
    let reference = match run("grade-reference", card) {
        Ok(v) => v,
        Err(why) => {
            card.speed_note = format!("the reference could not be timed: {why}");
            return;
        }
    };
    let sub = submission["ms"].as_f64().unwrap_or(f64::INFINITY);
    let (r, c) = (reference["reference_ms"].as_f64().unwrap_or(0.0), reference["cublas_ms"].as_f64().unwrap_or(0.0));
    card.speed = Some(PERFORMANCE_POINTS * (r / sub / FULL_SPEED).min(1.0));
    card.speed_note = format!(
        "{sub:.3} ms at {shape}: {:.0}% of the reference solution's speed ({r:.3} ms), {:.1}% of cuBLAS's ({c:.3} ms)",
        100.0 * r / sub,
        100.0 * c / sub
    );
    println!("speed: {}", card.speed_note);
    card.performance = json!({
        "submission_ms": sub, "reference_ms": r, "cublas_ms": c, "reps": submission["reps"],
        "untimed_seconds": submission["untimed_seconds"],
    });
}

pub fn grade(a: GradeArgs) -> Result<(), String> {
    refuse_inside_handout()?;
    let budget = Budget::new(a.budget);
    // Everything the staff gave is read before anything of the submission runs.
    let hidden = match &a.hidden {
        Some(path) => parse_hidden(&std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?)?,
        None => Vec::new(),
    };
    let source = read_submission(&a.file)?;
    // A machine without NVRTC cannot grade: an error for the staff, not a zero for the student.
    if !common::device::nvrtc_present() {
        return Err(common::Error::NoNvrtc.to_string());
    }
    let mode = if a.no_gpu { "no-gpu" } else { "gpu" };
    let mut card = Card::new(a.step.name, &a.file.display().to_string(), mode);
    let finish = |card: &mut Card| -> Result<(), String> {
        card.print();
        if let Some(path) = &a.json {
            write_atomically(path, &card.to_json())?;
        }
        Ok(())
    };
    let scratch = Scratch::new(&source, &a.file)?;
    if let Err(why) = check_includes(a.step, &scratch.file, &source) {
        card.push("include policy", false, true, why);
        return finish(&mut card);
    }
    let target = if a.no_gpu {
        a.step.arch.map_or(a.arch.clone(), str::to_string)
    } else {
        let gpu = Gpu::shared().map_err(|e| e.to_string())?;
        a.step.target(gpu.cc)
    };
    let args = ChildArgs { step: a.step, scratch: scratch.dir.clone(), file: scratch.file.clone() };
    let all = all_cases(a.step, &hidden);
    let mut shapes: Vec<Shape> = all.iter().map(|(_, c, _)| c.gemm.shape).collect();
    shapes.push(a.perf_shape);
    shapes.extend(MEMCHECK_CASES.map(|c| c.0));
    let compiled = card.timed("compile", |card| compile_stage(card, &args, &target, &shapes, &budget));
    if !compiled {
        return finish(&mut card);
    }
    if a.no_gpu {
        card.push("cases, memcheck and speed", false, false, "not run: no GPU (--no-gpu)");
        return finish(&mut card);
    }
    let timeout = Duration::from_secs(a.timeout);
    card.timed("cases", |card| case_stage(card, &args, &all, timeout, &budget));
    if card.stopped.is_none() && card.all_passed() {
        card.timed("memcheck", |card| memcheck_stage(card, &args, timeout, &budget));
    }
    // Speed counts only for a fully correct kernel: a fast wrong answer is worth nothing.
    if card.stopped.is_none() && card.all_passed() {
        card.timed("speed", |card| speed_stage(card, &args, a.perf_shape, timeout, &budget));
    } else if card.speed_note.is_empty() {
        card.speed_note = "not timed: not every case passed".into();
    }
    if budget.spent() && card.stopped.is_none() {
        card.stopped = Some(BUDGET_SPENT.into());
    }
    finish(&mut card)
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
        assert!(parse_hidden("1 1 1 inf 0").is_err());
    }

    #[test]
    fn the_budget_bounds_every_wait() {
        let b = Budget::new(2);
        assert!(b.wait(Duration::from_secs(30)) <= Duration::from_secs(2));
        assert_eq!(b.wait(Duration::from_millis(5)), Duration::from_millis(5));
        assert!(!b.spent());
        let gone = Budget { deadline: Instant::now() };
        assert!(gone.spent() && gone.wait(Duration::from_secs(9)).is_zero());
    }

    #[test]
    fn every_case_is_named_and_probes_only_for_fp32_accurate_steps() {
        let fp32 = all_cases(&step_like(common::Precision::F32), &[Gemm::new(Shape::cube(5), 1.0, 0.0)]);
        assert!(fp32.iter().any(|(n, c, _)| n.starts_with("probe") && c.probe.is_some()));
        assert_eq!(fp32.last().unwrap().0, "hidden case 1");
        let fp16 = all_cases(&step_like(common::Precision::F16), &[]);
        assert!(!fp16.iter().any(|(n, _, _)| n.starts_with("probe")));
        // Empty C launches nothing: reported, not scored.
        assert!(fp32.iter().any(|(_, c, scored)| c.gemm.shape.is_empty() && !scored));
    }

    fn step_like(p: common::Precision) -> Step {
        Step { precision: p, ..steps::ALL[0].clone() }
    }
}
