//! The references run: at each shape and precision, every contender (the top rung of each C type
//! and every cuBLAS configuration that computes its product) timed in turns with both methods,
//! then each rung and its pick timed again (the verdict timing), while the GPU's clock is watched;
//! then the energy per GEMM of the verdict's contenders (`energy.rs`). The file is written after
//! every shape and precision.

use super::energy::{self, Spent};
use super::merge::{changed, merged, taken, voided};
use super::render::markdown;
use super::{
    PRECISIONS, References, Row, SCHEMA, Torch, Watched, elem_label, load_torch, parse_precision, top_rung,
    with_c_types, write,
};
use crate::results::{define_list, read_json};
use crate::sweep::{slug, today};
use common::harness::compile::KernelSource;
use common::harness::device::Gpu;
use common::harness::runner::Runner;
use common::timing::clocks::{self, Watch};
use common::timing::fairest::{CublasCall, both_ways, checked_calls};
use common::timing::lt::{CublasInputs, CublasLt};
use common::timing::runs::{Method, Timing, TimingPlan, Windows, time_in_turn_windows};
use common::verify::check::Prepared;
use common::verify::reference::Cublas;
use common::{Gemm, Precision, Shape, Step, harness::data};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args)]
pub struct Args {
    /// The results file (default: results/references/<gpu>.json)
    #[arg(long)]
    out: Option<PathBuf>,
    /// Shapes, comma-separated MxNxK or S (default: 4096, 8192, 4096x11008x4096)
    #[arg(long, value_delimiter = ',', value_name = "LIST", value_parser = crate::shape)]
    shapes: Vec<Shape>,
    /// The decode shapes (M = 1 to 256 at three layers' N and K), after --shapes or alone
    #[arg(long)]
    decode: bool,
    /// Precisions, comma-separated (default: fp16,bf16,tf32,3xtf32); fp8 and fp8-block time
    /// both C types (BF16 and FP32), as fp16 and bf16 do
    #[arg(long, value_delimiter = ',', value_name = "LIST", value_parser = parse_precision)]
    precisions: Vec<Precision>,
    /// cuBLASLt algorithms to time per C type, the heuristic's first ones
    #[arg(long, default_value_t = common::timing::fairest::ALGOS as u16, value_parser = clap::value_parser!(u16).range(1..=common::timing::lt::MAX_ALGOS as i64))]
    algos: u16,
    /// The JSON file scripts/torch-matmul.py wrote on this GPU, merged into the results
    #[arg(long, value_name = "FILE")]
    torch: Option<PathBuf>,
    /// Time this .cu file (or an experiment's .patch, applied to the top rung's kernel) as the
    /// top rung, with the rung's launch; its figures go to --out, never to results/
    #[arg(long, value_name = "FILE.cu", requires = "out")]
    kernel: Option<PathBuf>,
    /// Add or replace a compile-time define of the top rung's kernel (repeatable), with --out
    #[arg(long, value_name = "NAME=VALUE", value_parser = common::tools::cli::parse_define, requires = "out")]
    define: Vec<(String, i64)>,
    /// Keep the rows of the results file for the shapes and precisions this run does not time
    /// (to finish a run stopped by a time limit), but those that timed a top rung whose kernel has
    /// changed since
    #[arg(long, conflicts_with_all = ["kernel", "define"])]
    merge: bool,
    /// Drop the file's rows of these shapes and precisions (comma-separated MxNxK:PRECISION) and
    /// stop, with no GPU: for figures of a top rung that its rule now launches otherwise, until a
    /// `--merge` times them again
    #[arg(long, value_delimiter = ',', value_name = "LIST", value_parser = parse_pair, requires = "out", conflicts_with_all = ["kernel", "define", "merge", "torch"])]
    void: Vec<(Shape, Precision)>,
    /// Add to --out the pairs this other copy of it timed since (their rows differ) and stop, with
    /// no GPU: for references timed on two GPUs at once, each merging into its own copy
    #[arg(long, value_name = "FILE", requires = "out", conflicts_with_all = ["kernel", "define", "merge", "torch", "void"])]
    take: Option<PathBuf>,
    /// Drop the file's rows of every pair whose top rung's launch the registry now gives otherwise
    /// (`--void` with the pairs found for you) and stop, with no GPU
    #[arg(long, requires = "out", conflicts_with_all = ["kernel", "define", "merge", "torch", "void", "take"])]
    void_moved: bool,
}

/// The pairs of `file` with a row of a top rung whose defines its launch no longer gives
/// (`results::moved`), each once.
fn moved_pairs(file: &References) -> Result<Vec<(Shape, Precision)>, String> {
    let mut pairs = Vec::new();
    for r in file.rows.iter().chain(&file.verdict).filter(|r| !r.defines.is_empty()) {
        if crate::results::moved(&r.who, (r.m, r.n, r.k), &r.defines).is_some() {
            let pair = (Shape::new(r.m as usize, r.n as usize, r.k as usize), parse_precision(&r.precision)?);
            if !pairs.contains(&pair) {
                pairs.push(pair);
            }
        }
    }
    Ok(pairs)
}

fn parse_pair(s: &str) -> Result<(Shape, Precision), String> {
    let (shape, precision) = s.split_once(':').ok_or_else(|| format!("`{s}` is not MxNxK:PRECISION"))?;
    Ok((crate::shape(shape)?, parse_precision(precision)?))
}

/// How every contender is timed.
const PLAN: TimingPlan = TimingPlan {
    settle: Duration::from_millis(200),
    measure: Duration::from_millis(400),
    rounds: 5,
    min_reps: 10,
    max_reps: 150,
    method: Method::OneAtATime, // unused: `both_ways` takes both
};

/// How this task takes its figures ([`common::timing::fairest::both_ways`]).
fn in_turn(plan: &TimingPlan) -> String {
    format!(
        "median of the samples of {} turns of each contender, each after {} ms of its own untimed runs",
        plan.rounds,
        plan.settle.as_millis()
    )
}

pub fn run(
    Args { out, shapes, decode, precisions, algos, torch, kernel, define, merge, void, take, void_moved }: Args,
) -> Result<(), String> {
    if let (Some(out), true) = (&out, void_moved) {
        let file: References = read_json(out)?;
        let pairs = moved_pairs(&file)?;
        for (shape, p) in &pairs {
            println!("dropped {shape} {}", p.label());
        }
        write(out, &voided(&file, &pairs)?)?;
        println!(
            "{}: dropped the rows of {} pairs whose launch moved (`--merge` times them again)",
            out.display(),
            pairs.len()
        );
        return Ok(());
    }
    if let (Some(out), Some(other)) = (&out, &take) {
        let file: References = read_json(out)?;
        let both = taken(&file, &read_json(other)?)?;
        write(out, &both)?;
        println!(
            "{}: {} rows, {} before taking {}'s new pairs",
            out.display(),
            both.rows.len(),
            file.rows.len(),
            other.display()
        );
        return Ok(());
    }
    if let (Some(out), false) = (&out, void.is_empty()) {
        write(out, &voided(&read_json(out)?, &void)?)?;
        println!("{}: dropped the rows of {} pairs (`--merge` times them again)", out.display(), void.len());
        return Ok(());
    }
    let shapes = crate::sweep::with_decode(shapes, decode, || {
        vec![Shape::cube(4096), Shape::cube(8192), Shape::new(4096, 11008, 4096)]
    });
    let precisions = if precisions.is_empty() { PRECISIONS.to_vec() } else { precisions };
    let torch = torch.map(|f| load_torch(&f)).transpose()?;
    let experiments = experiments(kernel.as_deref(), &precisions)?;
    let defines = common::tools::cli::static_defines(define);
    let tool = tool_line(kernel.as_deref(), &defines, merge);
    let e = |e: common::Error| e.to_string();
    let gpu = Gpu::shared().map_err(e)?;
    let cublas = Cublas::new(&gpu).map_err(e)?;
    let lt = RefCell::new(CublasLt::new(&gpu).map_err(e)?);
    let out = out.unwrap_or_else(|| PathBuf::from("results/references").join(format!("{}.json", slug(&gpu.name))));
    println!(
        "references on {}: {} shapes x {} precisions, {} turns of each contender",
        gpu.describe(),
        shapes.len(),
        precisions.len(),
        PLAN.rounds
    );
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    // What the file holds beyond this run's shapes and precisions, kept by --merge.
    let kept: Option<References> = if merge {
        let old: References = read_json(&out)?;
        if old.gpu != gpu.name {
            return Err(format!("{} was measured on {}, not on {}", out.display(), old.gpu, gpu.name));
        }
        // A rung whose kernel changed since the file was written: its old rows go (merge.rs).
        let hashes = precisions.iter().flat_map(|&f| with_c_types(f)).filter_map(top_rung);
        let hashes = hashes.map(|rung| (rung.id(), rung.kernel.hash())).collect();
        for (rung, _) in changed(&old, &hashes) {
            println!("{rung}'s kernel changed since {} was written: its rows there are dropped", out.display());
        }
        Some(old)
    } else {
        None
    };
    let timed = shapes.iter().flat_map(|&s| precisions.iter().map(move |&p| (s, p))).collect();
    // Recorded beside the energy figures, whose windows open and close at the counter's steps.
    let energy_step_ms = common::timing::clocks::energy_step_ms(&gpu, Duration::from_millis(300)).unwrap_or(None);
    let header = Header {
        tool,
        date: today(),
        gpu: gpu.name.clone(),
        cublas_version: cublas.version as i64,
        torch,
        kept,
        timed,
        energy_step_ms,
    };
    let lab = Lab { gpu, cublas, lt, algos: algos as usize, experiments, defines };
    let mut recorded = Recorded::default();
    for &shape in &shapes {
        for &family in &precisions {
            lab.time(shape, family, &mut recorded)?;
            // Written after every shape and precision, so that a run stopped by a time limit keeps
            // what it measured.
            write(&out, &header.file(&recorded)?)?;
        }
    }
    // Written after the last precision already.
    let refs = header.file(&recorded)?;
    println!("\n{}", markdown(&refs));
    println!("wrote {} (`cargo xtask book` makes the book's table of it)", out.display());
    let held: Vec<String> = recorded
        .clocks
        .iter()
        .filter(|w| w.clocks.held_back().is_some())
        .map(|w| format!("{}x{}x{} {}", w.m, w.n, w.k, w.precision))
        .collect();
    common::timing::clocks::refuse_held_back(&held)
}

/// An experiment in the top rung's place, read once per rung before the GPU is asked for.
fn experiments(
    kernel: Option<&Path>,
    precisions: &[Precision],
) -> Result<BTreeMap<&'static str, KernelSource>, String> {
    let mut experiments = BTreeMap::new();
    if let Some(k) = kernel {
        for rung in precisions.iter().flat_map(|&f| with_c_types(f)).filter_map(top_rung) {
            if !experiments.contains_key(rung.name) {
                experiments
                    .insert(rung.name, KernelSource::from_file_over(k, &rung.kernel).map_err(|e| e.to_string())?);
            }
        }
    }
    Ok(experiments)
}

/// The file's `tool`: the command, with the experiment's file and defines that name the run.
fn tool_line(kernel: Option<&Path>, defines: &[(&'static str, i64)], merge: bool) -> String {
    let mut tool = String::from("cargo xtask references");
    if let Some(k) = kernel {
        let _ = write!(tool, " --kernel {}", k.display());
    }
    for (name, value) in defines {
        let _ = write!(tool, " --define {name}={value}");
    }
    if merge {
        tool += " --merge";
    }
    tool
}

/// What the file says beside its figures, and under `--merge` the file it adds them to.
struct Header {
    tool: String,
    date: String,
    gpu: String,
    cublas_version: i64,
    torch: Option<Torch>,
    kept: Option<References>,
    /// The shapes and precisions this run times: of those, the kept file's rows are replaced.
    timed: Vec<(Shape, Precision)>,
    /// How often the energy counter moved (see [`Recorded::energy`]).
    energy_step_ms: Option<f64>,
}

/// The figures a run has taken so far.
#[derive(Default)]
struct Recorded {
    rows: Vec<Row>,
    verdict: Vec<Row>,
    wrong: Vec<String>,
    hashes: BTreeMap<String, String>,
    clocks: Vec<Watched>,
    energy: Vec<Spent>,
}

impl Header {
    /// The file of the figures taken so far (with the kept file's other rows, under `--merge`).
    fn file(&self, r: &Recorded) -> Result<References, String> {
        let new = References {
            schema: SCHEMA,
            tool: self.tool.clone(),
            date: self.date.clone(),
            gpu: self.gpu.clone(),
            cublas_version: self.cublas_version,
            timing: in_turn(&PLAN),
            kernel_hashes: r.hashes.clone(),
            torch: self.torch.clone(),
            rows: r.rows.clone(),
            verdict: r.verdict.clone(),
            wrong: r.wrong.clone(),
            rehashed: Vec::new(),
            clocks: r.clocks.clone(),
            energy: r.energy.clone(),
            energy_step_ms: self.energy_step_ms,
        };
        match &self.kept {
            Some(old) => merged(old, new, &self.timed),
            None => Ok(new),
        }
    }
}

/// The GPU, its libraries, and how the top rungs are compiled.
struct Lab {
    gpu: Arc<Gpu>,
    cublas: Cublas,
    /// Shared by the cuBLASLt contenders, each of which borrows it for one run.
    lt: RefCell<CublasLt>,
    /// cuBLASLt algorithms per C type.
    algos: usize,
    experiments: BTreeMap<&'static str, KernelSource>,
    defines: Vec<(&'static str, i64)>,
}

/// One C type of a family: the problem, its top rung (checked) with the rung's error against
/// float64, and the cuBLAS configurations that computed the product, each with its error.
struct Problem {
    prepared: Prepared,
    rung: &'static Step,
    runner: Runner,
    err: f64,
    calls: Vec<(CublasCall, f64)>,
}

/// A contender's name, the precision it computes, and its error against float64.
type Label = (String, Precision, f64);

impl Lab {
    /// One problem per C type of `family`, on the same inputs; the rung of each is checked and its
    /// hash recorded, and the cuBLAS configurations that compute something else are named.
    fn problems(&self, gemm: &Gemm, family: Precision, rec: &mut Recorded) -> Result<Vec<Problem>, String> {
        let e = |e: common::Error| e.to_string();
        let (gpu, cublas, shape) = (&self.gpu, &self.cublas, gemm.shape);
        let seed = data::fresh_seed();
        let mut problems = Vec::new();
        for p in with_c_types(family) {
            let prepared = Prepared::new(gpu, cublas, gemm, p, seed).map_err(e)?;
            let rung = top_rung(p).ok_or_else(|| format!("no step of the ladder computes {p}"))?;
            let source = self.experiments.get(rung.name).cloned();
            let mut runner = Runner::new(gpu, rung, source).map_err(e)?.with_defines(&self.defines);
            let v = prepared.check(&mut runner).map_err(e)?;
            if !v.passed() {
                return Err(format!("{} at {shape}: {}", rung.id(), v.report(&rung.id())));
            }
            rec.hashes.insert(rung.id(), runner.kernel.hash());
            let err = v.vs_exact.as_ref().map_or(v.vs_cpu.rel_frobenius, |x| x.rel_frobenius);
            let (calls, left_out) =
                checked_calls(gpu, cublas, &mut self.lt.borrow_mut(), &prepared, self.algos).map_err(e)?;
            rec.wrong.extend(left_out.into_iter().map(|w| format!("{shape}: {w}")));
            problems.push(Problem { prepared, rung, runner, err, calls });
        }
        Ok(problems)
    }

    /// Times every contender of `family` at `shape` both ways, then the verdict timing, with the
    /// GPU's clock watched over both, then the energy of the verdict's contenders; adds the rows,
    /// the clock and the energy to `rec`.
    fn time(&self, shape: Shape, family: Precision, rec: &mut Recorded) -> Result<(), String> {
        let e = |e: common::Error| e.to_string();
        let gemm = Gemm::new(shape, 1.0, 0.0);
        let mut problems = self.problems(&gemm, family, rec)?;
        // Each rung's defines at this shape, as its runner launches it, for its rows.
        let launched: Vec<(String, Vec<String>)> = problems
            .iter()
            .map(|p| Ok((p.rung.id(), define_list(&p.runner.launch_for(&shape).map_err(e)?))))
            .collect::<Result<_, String>>()?;
        // Every contender of the family, in turn.
        let (gpu, cublas, lt) = (&*self.gpu, &self.cublas, &self.lt);
        let (mut labels, mut rungs): (Vec<Label>, Vec<usize>) = (Vec::new(), Vec::new());
        let mut runs: Vec<Box<dyn FnMut() -> common::Result<()> + '_>> = Vec::new();
        for Problem { prepared, rung, runner, err, calls } in &mut problems {
            let p = prepared.precision;
            let mut c = prepared.fresh_c(gpu, 0).map_err(e)?;
            rungs.push(runs.len());
            labels.push((rung.id(), p, *err));
            let prepared = &*prepared;
            runs.push(Box::new(move || runner.run(&prepared.gemm, &prepared.a, &prepared.b, &mut c)));
            let inputs = Rc::new(CublasInputs::new(gpu, prepared).map_err(e)?);
            for (call, err) in calls.iter() {
                let (mut c, inputs) = (prepared.fresh_c(gpu, 0).map_err(e)?, inputs.clone());
                labels.push((call.door.label(), p, *err));
                runs.push(Box::new(move || call.run(gpu, cublas, &mut lt.borrow_mut(), &inputs, &mut c)));
            }
        }
        let row = |label: &Label, m: Method, t: &Timing, timing: &str| {
            let mut r = row_of(shape, family, label, m.label(), t.median_ms, Some(label.2));
            if let Some((_, defines)) = launched.iter().find(|(rung, _)| *rung == r.who) {
                r.defines = defines.clone();
            }
            println!("{shape} {family} {:<30} {:<4} C {:<13} {:>8.1} TFLOP/s{timing}", r.who, r.c, r.method, r.tflops);
            r
        };
        let mut refs: Vec<&mut dyn FnMut() -> common::Result<()>> = runs.iter_mut().map(|r| &mut **r as _).collect();
        let watch = Watch::start(gpu);
        let (times, windows) = both_ways(gpu, PLAN, &mut refs).map_err(e)?;
        for (label, timing) in labels.iter().zip(&times) {
            for (m, t) in Method::BOTH.into_iter().zip(timing) {
                rec.rows.push(row(label, m, t, ""));
            }
        }
        // The verdict timing: each rung and the configuration of least median above, of its C
        // type and in this method, timed again on fresh samples (`references`' comment says why).
        let mut verdict_contenders: Vec<usize> = Vec::new();
        // Each verdict contender's windows of samples in a method, both ways and verdict timing.
        let mut verdict_windows: Vec<(usize, Method, Windows)> = Vec::new();
        for (i, m) in Method::BOTH.into_iter().enumerate() {
            let chosen = picked(&rungs, runs.len(), |x| times[x][i].median_ms);
            verdict_contenders.extend(&chosen);
            let mut refs: Vec<&mut dyn FnMut() -> common::Result<()>> =
                runs.iter_mut().enumerate().filter(|(x, _)| chosen.contains(x)).map(|(_, r)| &mut **r as _).collect();
            let (again, again_windows) = time_in_turn_windows(gpu, PLAN, m, &mut refs).map_err(e)?;
            // `refs` keeps the runs' order, and `chosen` is in it too (see `picked`).
            for ((&x, t), w) in chosen.iter().zip(&again).zip(again_windows) {
                rec.verdict.push(row(&labels[x], m, t, " (verdict timing)"));
                verdict_windows.push((x, m, windows[i][x].iter().copied().chain(w).collect()));
            }
        }
        let samples = watch.stop_timed();
        let watched = samples.as_ref().map_err(Clone::clone).and_then(|s| clocks::summed(s));
        println!("{shape} {family}: {}", clocks::report(&watched, "both timings"));
        // The clock each verdict contender's own samples met: contenders of one pair can meet
        // different clocks at the power cap (`notes/step15.md`, "The record with B's promotion at
        // 128 bytes").
        if let Ok(s) = &samples {
            for (x, m, w) in &verdict_windows {
                if let Some(c) = clocks::within(s, w) {
                    let (who, p, _) = &labels[*x];
                    println!("{shape} {family} {who:<30} {p} {:<13} clock: {}", m.label(), c.describe());
                }
            }
        }
        if let Ok(c) = watched {
            let (m, n, k) = (shape.m as u64, shape.n as u64, shape.k as u64);
            rec.clocks.push(Watched { m, n, k, precision: family.label().to_string(), clocks: c });
        }
        verdict_contenders.sort_unstable();
        verdict_contenders.dedup();
        self.energy(shape, family, &mut runs, &verdict_contenders, &labels, rec)
    }

    /// The energy per GEMM of the contenders `which` (indices into `runs` and `labels`), into
    /// `rec`; a GPU whose NVML keeps no energy counter is said and skipped, as the clock watch is.
    fn energy(
        &self,
        shape: Shape,
        family: Precision,
        runs: &mut [Box<dyn FnMut() -> common::Result<()> + '_>],
        which: &[usize],
        labels: &[Label],
        rec: &mut Recorded,
    ) -> Result<(), String> {
        if let Err(why) = common::timing::clocks::energy_mj(&self.gpu) {
            println!("{shape} {family}: the energy was not measured: {why}");
            return Ok(());
        }
        let tallies = energy::measure(&self.gpu, runs, which)?;
        for (&x, t) in which.iter().zip(&tallies) {
            let Some((joules, watts, mean_mhz)) = t.figures() else { continue };
            let row = row_of(shape, family, &labels[x], energy::METHOD, t.seconds * 1e3 / t.runs as f64, None);
            println!(
                "{shape} {family} {:<30} {:<4} C {joules:>8.4} J per GEMM, {watts:.0} W, {mean_mhz:.0} MHz",
                row.who, row.c
            );
            rec.energy.push(Spent { row, joules, watts, mean_mhz, runs: t.runs, seconds: t.seconds });
        }
        Ok(())
    }
}

/// The row of a contender (`label`) of `family` at `shape`, timed by `method` at `ms` a GEMM.
fn row_of(shape: Shape, family: Precision, label: &Label, method: &str, ms: f64, err: Option<f64>) -> Row {
    let (who, p, _) = label;
    Row {
        m: shape.m as u64,
        n: shape.n as u64,
        k: shape.k as u64,
        precision: family.label().into(),
        who: who.clone(),
        c: elem_label(p.output()).into(),
        method: method.into(),
        ms,
        tflops: shape.gflops_at(ms) / 1e3,
        rel_err_vs_exact: err,
        defines: Vec::new(),
    }
}

/// The contenders of the verdict timing, as indices into the first timing's: each C type's rung
/// (at `rungs[i]`, its cuBLAS configurations after it up to the next rung, or to `n`) followed by
/// its configuration of least `median`. In increasing order, as the runs are.
fn picked(rungs: &[usize], n: usize, median: impl Fn(usize) -> f64) -> Vec<usize> {
    let mut out = Vec::new();
    for (i, &rung) in rungs.iter().enumerate() {
        let end = rungs.get(i + 1).copied().unwrap_or(n);
        out.push(rung);
        out.extend((rung + 1..end).min_by(|&a, &b| median(a).total_cmp(&median(b))));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_contenders_are_each_rung_and_its_fastest_configuration() {
        // Two C types: the rung at 0 with configurations 1-3, the rung at 4 with 5-6.
        let medians = [9.0, 3.0, 2.0, 2.5, 9.0, 1.0, 1.5];
        assert_eq!(picked(&[0, 4], medians.len(), |i| medians[i]), [0, 2, 4, 5]);
    }

    /// --void-moved finds the pairs whose top rung ran another launch than today's, each once.
    #[test]
    fn a_void_finds_the_pairs_whose_launch_moved() {
        let root = crate::bundle::root();
        let all = super::super::load_all(&root).unwrap();
        let mut file = all.get(crate::book::BOOK_GPU).unwrap().clone();
        assert!(moved_pairs(&file).unwrap().is_empty(), "the recorded launches are today's");
        let at = |r: &Row| r.who.starts_with("step15") && (r.m, r.n, r.k) == (1, 4096, 4096);
        let mut n = 0;
        for r in file.rows.iter_mut().chain(file.verdict.iter_mut()).filter(|r| at(r)) {
            r.defines = r.defines.iter().map(|d| if d == "BN=8" { "BN=16".into() } else { d.clone() }).collect();
            n += 1;
        }
        assert!(n > 0, "a step 15 row at 1x4096x4096");
        let pairs = moved_pairs(&file).unwrap();
        assert_eq!(pairs.len(), 2, "{pairs:?}"); // FP16 and BF16, whichever C
        assert!(pairs.iter().all(|(s, _)| *s == Shape::new(1, 4096, 4096)));
    }
}
