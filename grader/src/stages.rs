//! The stages of a grading that run the submission's children, besides the cases
//! ([`crate::cases`]): the compile, compute-sanitizer's memcheck and the timing; and what they
//! share: starting a child, naming why it ended, and routing what it printed.

use crate::children::{COMPILE_MEMORY, ChildArgs};
use crate::gpu::Case;
use crate::policy::filter_log;
use crate::protocol::{ChildProc, Ended, new_token};
use crate::report::{Card, FULL_SPEED, PERFORMANCE_POINTS};
use common::{Gemm, Shape, harness::data};
use serde_json::{Value, json};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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

/// The longest a compile may take (and the CPU seconds it may use).
const COMPILE_SECONDS: u64 = 60;

/// The cases of the compute-sanitizer pass: small, not tile multiples, both beta paths.
pub const MEMCHECK_CASES: [(Shape, f32, f32); 2] =
    [(Shape::new(33, 31, 32), 1.0, 0.0), (Shape::new(127, 129, 128), -1.5, 0.75)];

/// A fault of the grading machine (no NVRTC, no GPU, a child that cannot confine itself), not of
/// the submission: the grading stops without a card, and the student is graded again later.
#[derive(Debug)]
pub struct MachineFault(pub String);

/// What a child reported, or why it reported nothing; a fault of the machine stops everything.
pub fn answer(received: Result<Value, String>) -> Result<Result<Value, String>, MachineFault> {
    match received {
        Ok(v) if v["machine"].is_string() => Err(MachineFault(v["machine"].as_str().unwrap_or_default().to_string())),
        other => Ok(other),
    }
}

/// What every child gets besides the variables it keeps: its scratch folder as home, the kernels
/// the compile child compiled, and the NVRTC and CUDA headers this process found, wherever it
/// found them (a pip install in an active virtual environment or the user's home is found through
/// variables a child does not keep).
fn child_env(scratch: &Path) -> Vec<(&'static str, OsString)> {
    let mut env = vec![
        ("HOME", scratch.as_os_str().to_owned()),
        ("TMPDIR", scratch.as_os_str().to_owned()),
        ("CUDA_CACHE_DISABLE", "1".into()),
        (common::harness::compile::CUBIN_CACHE_ENV, scratch.join("cubins").into_os_string()),
    ];
    if let Some(dir) = common::harness::toolkit::nvrtc_dir() {
        let rest = std::env::var_os("LD_LIBRARY_PATH").map(|p| std::env::split_paths(&p).collect::<Vec<_>>());
        let path = std::env::join_paths(std::iter::once(dir).chain(rest.into_iter().flatten()));
        env.extend(path.ok().map(|p| ("LD_LIBRARY_PATH", p)));
    }
    if std::env::var_os(common::harness::compile::INCLUDE_ENV).is_none() {
        let include = common::harness::compile::cuda_include_dirs().into_iter().next();
        env.extend(include.map(|d| (common::harness::compile::INCLUDE_ENV, d.into_os_string())));
    }
    env
}

/// Starts the child `subcommand` of this program on the submission, `wrapper` (compute-sanitizer
/// and its arguments) around it. Its own arguments follow `--`: a file name is never an option.
pub fn spawn(subcommand: &str, args: &ChildArgs, wrapper: Option<(&Path, Vec<String>)>) -> Result<ChildProc, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let ours: Vec<String> =
        vec![subcommand.into(), "--".into(), args.step.id(), args.scratch.display().to_string(), args.file.clone()];
    let (program, argv) = match wrapper {
        Some((wrapper, mut pre)) => {
            pre.push(exe.display().to_string());
            pre.extend(ours);
            (wrapper.to_path_buf(), pre)
        }
        None => (exe, ours),
    };
    ChildProc::spawn(&program, &argv, &child_env(&args.scratch), &args.scratch, &new_token()?)
}

/// CUDA's errors for a kernel's faults, in words for the card.
const FAULTS: &[(&str, &str)] = &[
    ("CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access"),
    ("CUDA_ERROR_MISALIGNED_ADDRESS", "a misaligned memory access"),
    ("CUDA_ERROR_ILLEGAL_INSTRUCTION", "the kernel trapped (an illegal instruction, or __trap())"),
    ("CUDA_ERROR_ASSERT", "a device-side assert failed"),
    ("CUDA_ERROR_LAUNCH_FAILED", "the kernel faulted (an unspecified launch failure, or __trap())"),
    ("CUDA_ERROR_HARDWARE_STACK_ERROR", "the kernel overflowed its stack"),
    ("CUDA_ERROR_INVALID_PC", "the kernel jumped to an invalid address"),
    (
        "CUDA_ERROR_OUT_OF_MEMORY",
        "out of GPU memory (at a launch: local arrays take memory for every thread the GPU holds)",
    ),
    ("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources asked for the launch (registers or local memory)"),
    ("CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out"),
    ("CUDA_ERROR_INVALID_VALUE", "the driver refused the launch (shared or local memory beyond the GPU's limits)"),
];

/// A reason with the kernel's fault named first, where CUDA's error is one (an error of CUDA's
/// that this list does not know is named as CUDA's).
pub fn named(reason: &str) -> String {
    match FAULTS.iter().find(|(code, _)| reason.contains(code)) {
        Some((_, words)) => format!("a fault: {words}; {reason}"),
        None if reason.contains("CUDA_ERROR_") => format!("a fault: CUDA reported an error; {reason}"),
        None => reason.to_string(),
    }
}

/// Why a child's wait ended, for the card.
pub fn ended(why: Ended, limit: Duration, budget: &Budget) -> String {
    match why {
        Ended::TimedOut if budget.spent() => BUDGET_SPENT.to_string(),
        Ended::TimedOut => format!("timed out after {} s (an endless loop, or far too slow)", limit.as_secs()),
        Ended::Exited(how) => named(&format!("crashed ({how})")),
        Ended::Forged(why) => why,
    }
}

/// Moves what a child printed since the last read to the card (`hidden`: the staff's alone).
pub fn keep_output(card: &mut Card, child: &ChildProc, what: &str, hidden: bool) {
    card.output(what, &child.take_output(), hidden);
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

/// The compile stage: a confined child compiles every variant the graded shapes pick (`hidden`:
/// a shape only a hidden case uses), public ones first. Whether it compiled.
pub fn compile_stage(
    card: &mut Card,
    args: &ChildArgs,
    target: &str,
    shapes: &[(Shape, bool)],
    budget: &Budget,
) -> Result<bool, MachineFault> {
    let limit = budget.wait(Duration::from_secs(COMPILE_SECONDS));
    let received = spawn("grade-compile", args, None).and_then(|mut child| {
        let shapes: Vec<Value> =
            shapes.iter().map(|(s, h)| json!({"m": s.m, "n": s.n, "k": s.k, "hidden": h})).collect();
        child
            .send(&json!({ "target": target, "shapes": shapes, "cpu_seconds": limit.as_secs().max(1) }).to_string())?;
        let answer = child.receive(limit);
        keep_output(card, &child, "the compile", false);
        answer.map_err(|why| match why {
            Ended::Exited(how) => format!(
                "the compiler stopped ({how}): a compile may use {} GiB and {} s",
                COMPILE_MEMORY >> 30,
                limit.as_secs()
            ),
            other => ended(other, limit, budget),
        })
    });
    match answer(received)? {
        Ok(v) => {
            card.confinement = v["confinement"].as_str().unwrap_or_default().to_string();
            let text = |k: &str| v[k].as_str().unwrap_or("?").to_string();
            card.staff_note(format!("compiled by NVRTC {} from {}", text("nvrtc"), text("nvrtc_dir")));
            if v["ok"] == true {
                card.push("compile", true, false, format!("compiles for {target}"));
                return Ok(true);
            }
            let log = v["log"].as_str().unwrap_or("no log");
            card.staff_note(format!("the compiler's whole log:\n{log}"));
            let shown = if v["hidden_only"] == true {
                format!(
                    "{} does not compile in a variant that only hidden cases use (the compiler's log is kept for \
                     the course staff)",
                    args.file
                )
            } else {
                filter_log(&args.file, log)
            };
            card.push("compile", false, true, shown);
        }
        Err(why) => {
            if why == BUDGET_SPENT {
                card.stopped = Some(BUDGET_SPENT.into());
            }
            card.push("compile", false, true, why);
        }
    }
    Ok(false)
}

/// compute-sanitizer's memcheck on small cases, its report kept in a file the submission
/// cannot write (the verdict is its exit code, never the process's output).
pub fn memcheck_stage(
    card: &mut Card,
    args: &ChildArgs,
    timeout: Duration,
    budget: &Budget,
) -> Result<(), MachineFault> {
    let Some(tool) = sanitizer() else {
        card.push("memcheck", true, false, "not run: compute-sanitizer not found (CUDA_HOME/bin or PATH)");
        return Ok(());
    };
    if budget.spent() {
        card.stopped = Some(BUDGET_SPENT.into());
        card.push("memcheck", false, true, format!("not run: {BUDGET_SPENT}"));
        return Ok(());
    }
    let log = args.scratch.join("memcheck.log");
    let pre = ["--tool", "memcheck", "--error-exitcode", "86", "--print-limit", "10", "--log-file"];
    let mut pre: Vec<String> = pre.iter().map(|s| s.to_string()).collect();
    pre.push(log.display().to_string());
    let limit = budget.wait(timeout * 4);
    let started = Instant::now();
    let mut outcome = Ok(None);
    match spawn("grade-cases", args, Some((&tool, pre))) {
        Err(why) => outcome = Err(why),
        Ok(mut child) => {
            for (shape, alpha, beta) in MEMCHECK_CASES {
                let case = Case { gemm: Gemm::new(shape, alpha, beta), seed: data::fresh_seed(), probe: None };
                let left = limit.saturating_sub(started.elapsed());
                let received = child
                    .send(&case.to_json().to_string())
                    .and_then(|()| child.receive(left).map_err(|why| ended(why, limit, budget)));
                match answer(received)? {
                    Ok(v) if v["fault"] != true => {}
                    // A fault ends the child: compute-sanitizer's exit says what it found.
                    Ok(_) => break,
                    Err(why) => {
                        outcome = Err(why);
                        break;
                    }
                }
            }
            if outcome.is_ok() {
                outcome = Ok(child.finish(limit.saturating_sub(started.elapsed())));
            }
            keep_output(card, &child, "the memcheck run", false);
        }
    }
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
    Ok(())
}

/// The speed: the submission's timed runs (verified) against the reference's and cuBLAS's. A
/// timing that fails (a wrong result, a fault, a crash, the budget) gives no speed points and
/// says why, and takes none of the correctness points the cases earned.
pub fn speed_stage(
    card: &mut Card,
    args: &ChildArgs,
    shape: Shape,
    timeout: Duration,
    budget: &Budget,
) -> Result<(), MachineFault> {
    let case = Case { gemm: Gemm::new(shape, 1.0, 0.0), seed: 0, probe: None };
    let mut request = case.to_json();
    request["seconds"] = json!(2.0);
    let run = |subcommand: &str, card: &mut Card| -> Result<Result<Value, String>, MachineFault> {
        let limit = budget.wait(timeout * 4);
        let received = spawn(subcommand, args, None).and_then(|mut child| {
            child.send(&request.to_string())?;
            let answer = child.receive(limit).map_err(|why| ended(why, limit, budget));
            if subcommand == "grade-perf" {
                child.finish(Duration::from_secs(5));
                keep_output(card, &child, "the timed runs", false);
            }
            answer
        });
        answer(received)
    };
    let failed = |card: &mut Card, why: String| {
        if why == BUDGET_SPENT {
            card.stopped = Some(BUDGET_SPENT.into());
        }
        card.speed_note = format!("not timed: {why}");
        card.push(format!("timed runs at {shape}"), false, false, why);
    };
    let submission = match run("grade-perf", card)? {
        Ok(v) if v["ms"].is_number() => v,
        Ok(v) => {
            failed(card, named(v["wrong"].as_str().unwrap_or("the timed runs failed")));
            return Ok(());
        }
        Err(why) => {
            failed(card, why);
            return Ok(());
        }
    };
    let reference = match run("grade-reference", card)? {
        Ok(v) => v,
        Err(why) => {
            card.speed_note = format!("the reference could not be timed: {why}");
            return Ok(());
        }
    };
    let sub = submission["ms"].as_f64().unwrap_or(f64::INFINITY);
    let (r, c) = (reference["reference_ms"].as_f64().unwrap_or(0.0), reference["cublas_ms"].as_f64().unwrap_or(0.0));
    card.speed = Some(PERFORMANCE_POINTS * (r / sub / FULL_SPEED).min(1.0));
    let p = args.step.precision;
    // FP8: cublasGemmEx has none; it multiplies the same values in BF16.
    let blas = if p.cublas_gemm_ex() == p {
        "cuBLAS's".to_string()
    } else {
        format!("cuBLAS's in {} on the same values", p.cublas_gemm_ex())
    };
    card.speed_note = format!(
        "{sub:.3} ms at {shape}: {:.0}% of the reference solution's speed ({r:.3} ms), {:.1}% of {blas} ({c:.3} ms)",
        100.0 * r / sub,
        100.0 * c / sub
    );
    println!("speed: {}", card.speed_note);
    card.performance = json!({
        "submission_ms": sub, "reference_ms": r, "cublas_ms": c, "reps": submission["reps"],
        "untimed_seconds": submission["untimed_seconds"],
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn faults_are_named() {
        let why =
            "a timed run failed: DriverError(CUDA_ERROR_ILLEGAL_ADDRESS, \"an illegal memory access was encountered\")";
        assert!(named(why).starts_with("a fault: an illegal memory access; a timed run failed"), "{}", named(why));
        assert!(named("crashed (CUDA_ERROR_OUT_OF_MEMORY)").contains("out of GPU memory"));
        assert_eq!(named("wrong result"), "wrong result");
        assert!(named("DriverError(CUDA_ERROR_NOT_SUPPORTED)").starts_with("a fault: CUDA reported an error"));
    }

    /// A child loads the NVRTC this process found, however it found it.
    #[test]
    fn children_get_the_nvrtc_this_process_found() {
        let env = child_env(Path::new("/scratch"));
        let get = |k: &str| env.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone());
        assert_eq!(get("HOME"), Some("/scratch".into()));
        if let Some(dir) = common::harness::toolkit::nvrtc_dir() {
            let path = get("LD_LIBRARY_PATH").expect("the NVRTC's folder on the child's loader path");
            assert_eq!(std::env::split_paths(&path).next(), Some(dir));
        }
    }
}
