//! `grade`: one submission, end to end, in the parent process, which never runs the submission's
//! code. The machine is checked first (a machine without NVRTC or the GPU it needs is an error,
//! never a student's zero). The submission is read once ([`crate::submission`]), its text checked
//! ([`crate::policy`]), then it is copied alone into a fresh folder and compiled by a confined
//! child ([`crate::stages`]); its cases ([`crate::cases`]), a compute-sanitizer pass and its timing
//! run in confined children; the reference solution and cuBLAS are timed in a child of their own.
//! A budget bounds the whole; the card is written whatever the submission does, and the staff's
//! record beside it.

use crate::cases::{all_cases, case_stage};
use crate::children::ChildArgs;
use crate::handout::refuse_inside_handout;
use crate::policy::check_includes;
use crate::report::{Card, write_atomically, write_text_atomically};
use crate::stages::{BUDGET_SPENT, Budget, MEMCHECK_CASES, MachineFault, compile_stage, memcheck_stage, speed_stage};
use crate::submission::{Scratch, Unread, read_submission, shown_name};
use common::harness::device::Gpu;
use common::{Gemm, Shape, Step};
use std::path::PathBuf;
use std::time::Duration;

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
    /// Also write the staff's record (hidden cases' shapes, results and output, the whole compile log), which students must not see
    #[arg(long, value_name = "FILE")]
    pub staff: Option<PathBuf>,
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

/// What a grading machine needs before anything of a student is graded: NVRTC, and for a GPU
/// grading the driver, a GPU and cuBLAS. Missing, it is the machine's fault: an error, no card.
pub fn preflight(no_gpu: bool) -> Result<(), String> {
    if !common::harness::device::nvrtc_present() {
        return Err(common::Error::NoNvrtc.to_string());
    }
    if !no_gpu {
        Gpu::shared().map_err(|e| e.to_string())?;
        if !common::harness::device::cublas_present() {
            return Err(common::Error::NoCublas.to_string());
        }
    }
    Ok(())
}

pub fn grade(a: GradeArgs) -> Result<(), String> {
    refuse_inside_handout()?;
    let budget = Budget::new(a.budget);
    // Everything the staff gave is read, and the machine checked, before anything of the
    // submission is read or run.
    let hidden = match &a.hidden {
        Some(path) => parse_hidden(&std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?)?,
        None => Vec::new(),
    };
    preflight(a.no_gpu)?;
    let submission = match read_submission(&a.file) {
        Err(Unread::Missing(why)) => return Err(why),
        Err(Unread::Refused(why)) => Err(why),
        Ok(bytes) => Ok(bytes),
    };
    let mode = if a.no_gpu { "no-gpu" } else { "gpu" };
    let mut card = Card::new(a.step.name, &shown_name(&a.file), mode);
    grade_card(&a, submission, &hidden, &budget, &mut card)
        .map_err(|MachineFault(why)| format!("the grading machine failed, so nothing was scored: {why}"))?;
    if budget.spent() && card.stopped.is_none() {
        card.stopped = Some(BUDGET_SPENT.into());
    }
    card.print();
    if let Some(path) = &a.json {
        write_atomically(path, &card.to_json())?;
    }
    if let Some(path) = &a.staff {
        write_text_atomically(path, &card.staff_record())?;
    }
    Ok(())
}

/// The stages, each on what the one before left; whatever the submission does, they end with
/// the card as far as it got.
fn grade_card(
    a: &GradeArgs,
    submission: Result<Vec<u8>, String>,
    hidden: &[Gemm],
    budget: &Budget,
    card: &mut Card,
) -> Result<(), MachineFault> {
    let bytes = match submission {
        Ok(bytes) => bytes,
        Err(why) => {
            card.push("submission", false, true, why);
            return Ok(());
        }
    };
    let scratch = Scratch::new(&bytes, &a.file).map_err(MachineFault)?;
    if let Err(why) = check_includes(a.step, &scratch.file, &String::from_utf8_lossy(&bytes)) {
        card.push("include policy", false, true, why);
        return Ok(());
    }
    let target = if a.no_gpu {
        a.step.arch.map_or(a.arch.clone(), str::to_string)
    } else {
        a.step.target(Gpu::shared().map_err(|e| MachineFault(e.to_string()))?.cc)
    };
    let args = ChildArgs { step: a.step, scratch: scratch.dir.clone(), file: scratch.file.clone() };
    let all = all_cases(a.step, hidden);
    let mut shapes: Vec<(Shape, bool)> = all.iter().map(|g| (g.case.gemm.shape, g.hidden)).collect();
    shapes.push((a.perf_shape, false));
    shapes.extend(MEMCHECK_CASES.map(|c| (c.0, false)));
    if !card.timed("compile", |card| compile_stage(card, &args, &target, &shapes, budget))? {
        return Ok(());
    }
    if a.no_gpu {
        card.push("cases, memcheck and speed", false, false, "not run: no GPU (--no-gpu)");
        return Ok(());
    }
    let timeout = Duration::from_secs(a.timeout);
    card.timed("cases", |card| case_stage(card, &args, &all, timeout, budget))?;
    if card.stopped.is_none() && card.all_passed() {
        card.timed("memcheck", |card| memcheck_stage(card, &args, timeout, budget))?;
    }
    // Speed counts only for a fully correct kernel: a fast wrong answer is worth nothing.
    if card.stopped.is_none() && card.all_passed() {
        card.timed("speed", |card| speed_stage(card, &args, a.perf_shape, timeout, budget))?;
    } else if card.speed_note.is_empty() {
        card.speed_note = "not timed: not every case passed".into();
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
        assert!(parse_hidden("1 1 1 inf 0").is_err());
    }
}
