//! The cases a submission is checked on (the public shape suite, the precision probes, the hidden
//! cases), each verified in a confined child. The hidden cases run in a child of their own, so
//! that what the kernel prints while one runs goes to the staff's record alone; a card names a
//! hidden case and says whether it passed, nothing more.

use crate::children::ChildArgs;
use crate::gpu::Case;
use crate::protocol::{ChildProc, Ended};
use crate::report::Card;
use crate::stages::{BUDGET_SPENT, Budget, MachineFault, ended, keep_output, named, spawn};
use common::tools::testing::{cases, probes_for};
use common::{Gemm, Step, harness::data};
use serde_json::Value;
use std::time::Duration;

/// One case as the grading runs it.
#[derive(Clone, Debug)]
pub struct Graded {
    /// How the card names it (`public 33x31x32 alpha=1 beta=0`, `hidden case 2`).
    pub name: String,
    pub case: Case,
    /// Whether it carries points (an empty C launches nothing: reported, not scored).
    pub scored: bool,
    pub hidden: bool,
}

/// Every case the submission is checked on, named for the card.
pub fn all_cases(step: &Step, hidden: &[Gemm]) -> Vec<Graded> {
    let graded = |name: String, gemm: Gemm, probe: Option<usize>, hidden: bool| Graded {
        name,
        case: Case { gemm, seed: data::fresh_seed(), probe },
        scored: !gemm.shape.is_empty(),
        hidden,
    };
    let mut out: Vec<Graded> = cases().into_iter().map(|g| graded(format!("public {g}"), g, None, false)).collect();
    let all_probes = common::verify::probe::probes();
    for probe in probes_for(step.precision) {
        let index = all_probes.iter().position(|p| *p == probe);
        out.push(graded(format!("probe {probe}"), probe.gemm, index, false));
    }
    for (i, g) in hidden.iter().enumerate() {
        out.push(graded(format!("hidden case {}", i + 1), *g, None, true));
    }
    out
}

/// The child that runs cases, and whether it runs the hidden ones.
struct Worker {
    child: ChildProc,
    hidden: bool,
}

/// Ends a worker and moves what it printed last to the card.
fn retire(card: &mut Card, worker: Option<Worker>) {
    if let Some(mut w) = worker {
        w.child.finish(Duration::from_secs(5));
        keep_output(card, &w.child, "the cases", w.hidden);
    }
}

/// How one case ended.
enum Outcome {
    Done(Value),
    Failed(String),
    TimedOut(String),
}

/// Runs one case in the worker, or in a fresh one; the worker is kept for the next case only
/// when this one ended in a result that was no fault of the kernel.
fn run_one(
    card: &mut Card,
    args: &ChildArgs,
    worker: &mut Option<Worker>,
    g: &Graded,
    limit: Duration,
    budget: &Budget,
) -> Result<Outcome, MachineFault> {
    let mut w = match worker.take() {
        Some(w) => w,
        None => match spawn("grade-cases", args, None) {
            Ok(child) => Worker { child, hidden: g.hidden },
            Err(why) => return Ok(Outcome::Failed(why)),
        },
    };
    let outcome = match w.child.send(&g.case.to_json().to_string()) {
        Err(why) => Outcome::Failed(why),
        Ok(()) => match w.child.receive(limit) {
            Ok(v) if v["machine"].is_string() => {
                return Err(MachineFault(v["machine"].as_str().unwrap_or_default().to_string()));
            }
            Ok(v) => Outcome::Done(v),
            Err(Ended::TimedOut) => Outcome::TimedOut(ended(Ended::TimedOut, limit, budget)),
            Err(why) => Outcome::Failed(ended(why, limit, budget)),
        },
    };
    keep_output(card, &w.child, "the cases", w.hidden);
    match &outcome {
        Outcome::Done(v) if v["fault"] != true => *worker = Some(w),
        _ => retire(card, Some(w)),
    }
    Ok(outcome)
}

/// The cases, in order: after a crash or a fault the next case starts in a fresh child; after a
/// time-out none runs.
pub fn case_stage(
    card: &mut Card,
    args: &ChildArgs,
    all: &[Graded],
    timeout: Duration,
    budget: &Budget,
) -> Result<(), MachineFault> {
    let mut worker: Option<Worker> = None;
    let mut stop: Option<String> = None;
    for g in all {
        if budget.spent() && stop.is_none() {
            stop = Some(BUDGET_SPENT.into());
            card.stopped = stop.clone();
        }
        if let Some(why) = &stop {
            card.push(g.name.clone(), false, g.scored, format!("not run: {why}"));
            continue;
        }
        if worker.as_ref().is_some_and(|w| w.hidden != g.hidden) {
            retire(card, worker.take());
        }
        let limit = budget.wait(timeout);
        let (ok, output) = match run_one(card, args, &mut worker, g, limit, budget)? {
            Outcome::Done(v) if v["passed"] == true => {
                (true, format!("ok (error {:.1e})", v["rel_err_vs_cpu"].as_f64().unwrap_or(0.0)))
            }
            Outcome::Done(v) => (false, named(v["reason"].as_str().unwrap_or("wrong result"))),
            Outcome::Failed(why) => (false, why),
            Outcome::TimedOut(why) => {
                if why == BUDGET_SPENT {
                    card.stopped = Some(BUDGET_SPENT.into());
                }
                stop = Some(if why == BUDGET_SPENT { why.clone() } else { "an earlier case timed out".into() });
                (false, why)
            }
        };
        if g.hidden {
            let shown = if ok { "ok" } else { "failed" };
            card.push_hidden(g.name.clone(), ok, g.scored, shown, format!("{}: {output}", g.case.gemm));
        } else {
            card.push(g.name.clone(), ok, g.scored, output);
        }
    }
    retire(card, worker.take());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::Shape;

    #[test]
    fn every_case_is_named_and_probes_only_for_fp32_accurate_steps() {
        let fp32 = all_cases(&step_like(common::Precision::F32), &[Gemm::new(Shape::cube(5), 1.0, 0.0)]);
        assert!(fp32.iter().any(|g| g.name.starts_with("probe") && g.case.probe.is_some()));
        let last = fp32.last().unwrap();
        assert!(last.name == "hidden case 1" && last.hidden);
        assert_eq!(fp32.iter().filter(|g| g.hidden).count(), 1);
        for lower in steps::variants("14").into_iter().chain([&step_like(common::Precision::F16)]) {
            let all = all_cases(lower, &[]);
            assert!(!all.iter().any(|g| g.name.starts_with("probe")), "{} is probed", lower.id());
            assert_eq!(all.len(), cases().len(), "{}: every public case", lower.id());
        }
        // Empty C launches nothing: reported, not scored.
        assert!(fp32.iter().any(|g| g.case.gemm.shape.is_empty() && !g.scored));
    }

    fn step_like(p: common::Precision) -> Step {
        Step { precision: p, ..steps::ALL[0].clone() }
    }
}
