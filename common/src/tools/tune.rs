//! The tile tuners of the tensor-core steps (`examples/tune.rs`): every candidate launch of a
//! step, verified and then timed against cuBLAS in the same precision, one table row each.

use crate::harness::compile::KernelSource;
use crate::harness::device::Gpu;
use crate::harness::launch::{Define, Launch};
use crate::harness::runner::Runner;
use crate::harness::step::Step;
use crate::timing::fairest::{ALGOS, checked_calls, fastest_call};
use crate::timing::lt::{CublasConfig, CublasLt, compare_with_configs};
use crate::timing::runs::{BATCH, Method, TimingPlan};
use crate::verify::check::Prepared;
use crate::verify::reference::Cublas;
use crate::{Gemm, Precision, Result, Shape, harness::data};
use std::path::PathBuf;
use std::rc::Rc;

/// What a tuner can try besides the step's own kernel: the options every `examples/tune.rs`
/// flattens into its own. An experiment kernel (`notes/experiments/<step>/*.cu`) runs under every
/// candidate's launch geometry; `--define` switches one of its knobs (or the step kernel's).
#[derive(clap::Args, Debug, Default)]
pub struct Experiment {
    /// Build every candidate from this .cu file (or an experiment's .patch) instead of the step's kernel
    #[arg(long, value_name = "FILE.cu")]
    pub kernel: Option<PathBuf>,
    /// Add or replace a compile-time define in every candidate (repeatable), e.g. --define STAGES=3;
    /// where a tuner's candidates follow the defines (step 14's), BM, BN, STAGES, CLUSTER and GROUP
    /// size the launch too
    #[arg(long, value_name = "NAME=VALUE", value_parser = crate::tools::cli::parse_define)]
    pub define: Vec<(String, i64)>,
    /// Time candidates even when their product is wrong, for bound experiments that leave work
    /// out on purpose (e.g. step 8's no-copies.patch); their rows say "wrong product"
    #[arg(long)]
    pub unchecked: bool,
    /// Only the candidates whose label contains this text, or one of its alternatives split by
    /// `|` (e.g. --only skew, --only "skew 4|128 rows")
    #[arg(long, value_name = "TEXT")]
    pub only: Option<String>,
    /// Time the step's own kernel beside --kernel's, candidate by candidate, the two in turns in one
    /// process against the same fastest cuBLAS; --define then applies to the experiment only
    #[arg(long, requires = "kernel")]
    pub beside: bool,
    /// Time every candidate this many times, the candidates (and with --beside the two kernels) in
    /// turns
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10))]
    pub rounds: u32,
    /// Time back to back (a sample the mean of a batch of runs in a row, as criterion and
    /// PyTorch's benchmarks time) instead of one run at a time, the fastest cuBLAS too
    #[arg(long)]
    pub back_to_back: bool,
}

impl Experiment {
    /// How every row, and the fastest cuBLAS it is measured against, is timed.
    fn plan(&self) -> TimingPlan {
        let method = if self.back_to_back { Method::BackToBack } else { Method::OneAtATime };
        TimingPlan { method, ..TimingPlan::default() }
    }
}

/// One kernel a tuner times under every candidate: the step's or an experiment's, with the defines
/// that go with it, and what its rows add to the candidate's label.
struct Contender {
    label: String,
    kernel: Option<KernelSource>,
    defines: Vec<Define>,
}

/// A candidate's launch for a contender's defines.
pub type LaunchFn = dyn Fn(&Shape, &[Define]) -> Launch;

/// A candidate's launch, shared by the rounds and the contenders that time it.
type LaunchOf = Rc<LaunchFn>;

/// What every row of one precision is timed against: its data, cuBLAS, and the fastest cuBLAS.
struct Baseline<'a> {
    gpu: &'a std::sync::Arc<Gpu>,
    cublas: &'a Cublas,
    lt: &'a mut CublasLt,
    prepared: &'a Prepared,
    fastest: Option<crate::timing::runs::Timing>,
    plan: TimingPlan,
}

/// Whether `--only`'s text (alternatives split by `|`) picks the candidate labelled `label`.
fn wanted(only: Option<&str>, label: &str) -> bool {
    only.is_none_or(|text| text.split('|').any(|alternative| label.contains(alternative)))
}

/// One launch geometry to try, and how the table names it.
pub struct Candidate {
    pub label: String,
    pub launch: Box<LaunchFn>,
}

impl Candidate {
    pub fn new(label: impl Into<String>, launch: impl Fn(&Shape) -> Launch + 'static) -> Candidate {
        Candidate { label: label.into(), launch: Box::new(move |s, _| launch(s)) }
    }

    /// A candidate whose launch follows the contender's defines: an experiment's `--define BM=192`
    /// changes the threads and the shared memory as well as the compiled tile (the step's own kernel,
    /// beside it, keeps the candidate's geometry).
    pub fn following(label: impl Into<String>, launch: impl Fn(&Shape, &[Define]) -> Launch + 'static) -> Candidate {
        Candidate { label: label.into(), launch: Box::new(launch) }
    }
}

/// Runs every candidate of every precision in `variants` (or only `only`) at `shape` and prints
/// a Markdown table; a candidate that does not compile or verify gets its row and no time.
/// Where cuBLASLt computes the precision, the column "% of fastest cuBLAS" compares with the
/// fastest configuration the references would pick (same C; `cublasGemmEx` and cuBLASLt's top
/// algorithms), timed once per precision.
pub fn run(
    variants: &[Step],
    shape: Shape,
    only: Option<Precision>,
    experiment: &Experiment,
    candidates: impl Fn(Precision) -> Vec<Candidate>,
) -> Result<()> {
    let base = &variants.first().ok_or_else(|| crate::Error::BadInput("no step to tune".into()))?.kernel;
    let kernel = experiment.kernel.as_deref().map(|k| KernelSource::from_file_over(k, base)).transpose()?;
    let extra = crate::tools::cli::static_defines(experiment.define.iter().cloned());
    // With --beside, the step's own kernel first (without the experiment's defines), then the experiment.
    let mut contenders = Vec::new();
    if experiment.beside {
        contenders.push(Contender { label: String::new(), kernel: None, defines: Vec::new() });
    }
    // A row names what differs from its candidate's label: the experiment beside the step, and the
    // defines (a tile size among them changes the launch itself).
    let named: Vec<String> = extra.iter().map(|(n, v)| format!("{n}={v}")).collect();
    let mut label = match (&kernel, experiment.beside) {
        (Some(k), true) => format!(", {}", k.name.rsplit('/').next().unwrap_or(&k.name)),
        _ => String::new(),
    };
    for d in &named {
        label.push_str(&format!(", {d}"));
    }
    contenders.push(Contender { label, kernel: kernel.clone(), defines: extra.clone() });
    let gpu = Gpu::shared()?;
    let cublas = Cublas::new(&gpu)?;
    let mut lt = CublasLt::new(&gpu)?;
    let name = variants.first().map_or("", |s| s.name);
    println!("{name} tiles on {} at {shape}", gpu.describe());
    if let Some(k) = &kernel {
        let how = if experiment.beside { "beside the step's, in turns" } else { "instead of the step's" };
        println!("kernel: {} ({how})", k.name);
    }
    if !named.is_empty() {
        let whose = if experiment.beside { "the experiment's candidates" } else { "every candidate" };
        println!("defines in {whose}: {}", named.join(", "));
    }
    if experiment.unchecked {
        println!("--unchecked: a candidate whose product is wrong is timed too");
    }
    if experiment.back_to_back {
        println!("--back-to-back: every sample the mean of {BATCH} runs in a row");
    }
    let plan = experiment.plan();
    println!("| precision | candidate | regs | smem (B) | GFLOP/s | % of cuBLAS | % of fastest cuBLAS | check |");
    println!("|---|---|---:|---:|---:|---:|---:|---|");
    let gemm = Gemm::new(shape, 1.0, 0.0);
    for step in variants.iter().filter(|s| only.is_none_or(|p| p == s.precision)) {
        let p = step.precision;
        let prepared = Prepared::new(&gpu, &cublas, &gemm, p, data::fresh_seed())?;
        // The fastest cuBLAS as the references pick it (their verdict is the targets'): with the
        // same C, `cublasGemmEx` and cuBLASLt's first ALGOS algorithms, each checked. The step
        // binary's configurations (the heuristic's first algorithm alone) can miss a faster one.
        let fastest = if CublasConfig::for_precision(p).contains(&CublasConfig::Lt) {
            let (calls, wrong) = checked_calls(&gpu, &cublas, &mut lt, &prepared, ALGOS)?;
            for w in wrong {
                println!("note: left out, it computed a wrong result: {w}");
            }
            fastest_call(&gpu, &cublas, &mut lt, &prepared, plan, &calls)?.map(|(label, t)| {
                println!("{p}: fastest cuBLAS {label} ({:.0} GFLOP/s)", t.gflops(&gemm));
                t
            })
        } else {
            None
        };
        let wanted = |c: &Candidate| wanted(experiment.only.as_deref(), &c.label);
        let chosen: Vec<(String, LaunchOf)> =
            candidates(p).into_iter().filter(wanted).map(|c| (c.label, Rc::from(c.launch))).collect();
        let mut baseline = Baseline { gpu: &gpu, cublas: &cublas, lt: &mut lt, prepared: &prepared, fastest, plan };
        // Every candidate under every contender compiled and verified once; the rounds only time them.
        let mut rows = Vec::new();
        for (label, launch) in &chosen {
            for who in &contenders {
                let row = format!("| {p} | {label}{} |", who.label);
                rows.extend(ready(&baseline, step, who, launch.clone(), row, experiment)?);
            }
        }
        for _ in 0..experiment.rounds.max(1) {
            for r in &mut rows {
                r.time(&mut baseline)?;
            }
        }
    }
    Ok(())
}

/// A row of the table whose kernel compiled and verified (or is timed unchecked), ready to time.
struct Ready {
    row: String,
    runner: Runner,
    /// Registers, dynamic shared memory, bytes spilled.
    resources: (u32, u32, u32),
    check: &'static str,
}

/// `who`'s kernel under one candidate's launch, loaded and verified: a row to time, or `None` after
/// printing the row of a kernel that does not compile, or does not verify and is not to be timed
/// unchecked.
fn ready(
    b: &Baseline<'_>,
    step: &Step,
    who: &Contender,
    launch: LaunchOf,
    row: String,
    experiment: &Experiment,
) -> Result<Option<Ready>> {
    let defines = who.defines.clone();
    let with_extra = move |s: &Shape| crate::harness::launch::with_defines(launch(s, &defines), &defines);
    let launch = with_extra(&b.prepared.gemm.shape);
    let mut runner = Runner::new(b.gpu, step, who.kernel.clone())?.with_launch(with_extra);
    let resources = match runner.load(&launch) {
        Ok(l) => l.resources,
        Err(e) => {
            println!("{row} - | - | - | - | - | {} |", e.to_string().lines().next().unwrap_or(""));
            return Ok(None);
        }
    };
    let verified = match b.prepared.check(&mut runner) {
        Ok(v) => v,
        Err(e) => {
            println!("{row} {} | {} | - | - | - | {e} |", resources.registers, launch.dynamic_smem_bytes);
            return Err(e);
        }
    };
    if !verified.passed() && !experiment.unchecked {
        println!("{row} {} | {} | - | - | - | FAILED |", resources.registers, launch.dynamic_smem_bytes);
        return Ok(None);
    }
    let check = if verified.passed() { "ok" } else { "wrong product, timed (--unchecked)" };
    let resources = (resources.registers, launch.dynamic_smem_bytes, resources.spills());
    Ok(Some(Ready { row, runner, resources, check }))
}

impl Ready {
    /// Times the row against the precision's baseline (cuBLASLt's FP8 for FP8), as the step binary
    /// does, and against the fastest cuBLAS, and prints it.
    fn time(&mut self, b: &mut Baseline<'_>) -> Result<()> {
        let (prepared, gemm) = (b.prepared, b.prepared.gemm);
        let (cmp, _) = compare_with_configs(&mut self.runner, b.cublas, b.lt, prepared, b.plan, &[])?;
        let of_fastest =
            b.fastest.map_or("-".to_string(), |t| format!("{:.1}%", 100.0 * t.median_ms / cmp.kernel.median_ms));
        let (regs, smem, spilled) = self.resources;
        println!(
            "{} {regs} | {smem} | {:.0} | {:.1}% | {of_fastest} | {} ({spilled} B spilled) |",
            self.row,
            cmp.kernel.gflops(&gemm),
            100.0 * cmp.ratio(),
            self.check
        );
        Ok(())
    }
}

/// What every tuner takes: a shape, optionally one precision, and an experiment.
#[derive(clap::Parser)]
#[command(name = "tune", version)]
struct TunerArgs {
    /// The shape, MxNxK or S
    #[arg(value_parser = crate::tools::cli::parse_shape, default_value = "4096")]
    shape: Shape,
    /// Only this precision (one of the step's)
    #[arg(value_parser = |s: &str| Precision::parse(s).ok_or_else(|| format!("`{s}` is not a precision")))]
    precision: Option<Precision>,
    #[command(flatten)]
    experiment: Experiment,
}

/// The `main` of a step's tuner (`examples/tune.rs`): parses the shape, the precision and the
/// experiment, then [`run`]s `candidates` on the step's `variants`.
pub fn main(variants: &[Step], candidates: impl Fn(Precision) -> Vec<Candidate>) -> std::process::ExitCode {
    let args: TunerArgs = clap::Parser::parse();
    crate::tools::cli::tool_main(|| run(variants, args.shape, args.precision, &args.experiment, candidates))
}

#[cfg(test)]
mod tests {
    use super::{Experiment, wanted};
    use crate::timing::runs::Method;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        experiment: Experiment,
    }

    #[test]
    fn wrong_products_are_timed_only_when_asked() {
        assert!(!Cli::try_parse_from(["tune"]).unwrap().experiment.unchecked);
        let cli = Cli::try_parse_from(["tune", "--unchecked", "--define", "STAGES=3"]).unwrap();
        assert!(cli.experiment.unchecked);
        assert_eq!(cli.experiment.define, vec![("STAGES".to_string(), 3)]);
        let cli = Cli::try_parse_from(["tune", "--only", "skew"]).unwrap();
        assert_eq!(cli.experiment.only.as_deref(), Some("skew"));
    }

    #[test]
    fn only_picks_any_of_its_alternatives() {
        assert!(wanted(None, "the rule's plan"));
        assert!(wanted(Some("skew"), "the rule's plan, skew 4"));
        assert!(!wanted(Some("skew"), "the rule's plan"));
        assert!(wanted(Some("skew 4|128 rows"), "the rule's plan on 128 rows"));
        assert!(wanted(Some("skew 4|128 rows"), "the rule's plan, skew 4"));
        assert!(!wanted(Some("skew 4|128 rows"), "the rule's plan, skew 6"));
    }

    #[test]
    fn the_step_is_timed_beside_an_experiment_only_when_there_is_one() {
        assert!(Cli::try_parse_from(["tune", "--beside"]).is_err());
        let cli = Cli::try_parse_from(["tune", "--kernel", "x.patch", "--beside", "--rounds", "3"]).unwrap();
        assert!(cli.experiment.beside);
        assert_eq!(cli.experiment.rounds, 3);
        assert_eq!(Cli::try_parse_from(["tune"]).unwrap().experiment.rounds, 1);
        assert!(Cli::try_parse_from(["tune", "--rounds", "0"]).is_err());
        assert!(Cli::try_parse_from(["tune", "--rounds", "11"]).is_err());
    }

    #[test]
    fn rows_are_timed_one_at_a_time_unless_asked_back_to_back() {
        assert_eq!(Cli::try_parse_from(["tune"]).unwrap().experiment.plan().method, Method::OneAtATime);
        let cli = Cli::try_parse_from(["tune", "--back-to-back"]).unwrap();
        assert_eq!(cli.experiment.plan().method, Method::BackToBack);
    }
}
