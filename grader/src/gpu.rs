//! What the grader's children do on the GPU: run one verified case, and time a kernel on runs
//! that are verified too. A case and a timed run look the same to a kernel: fresh random inputs,
//! buffers with guard zones of a random number of pages on each side, C poisoned (NaN when
//! beta = 0) right before the run, the result checked right after it.

use common::harness::device::Gpu;
use common::harness::device::sync;
use common::harness::matrix::DeviceMatrix;
use common::harness::precision::Precision;
use common::harness::runner::Runner;
use common::tools::testing::probe_verdict;
use common::verify::check::Prepared;
use common::verify::probe::probes;
use common::verify::reference::Cublas;
use common::{Gemm, Inputs, Shape, harness::data};
use cudarc::driver::sys::CUevent_flags;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// Bytes of one guard page.
pub const PAGE: usize = 4096;

/// Guard pages on each side of a buffer: between one and four, drawn per buffer, so that a kernel
/// cannot know where the guard ends.
pub fn guard_pages(seed: u64) -> usize {
    1 + (data::Rng::new(seed ^ 0x6a09_e667).next_u64() % 4) as usize
}

/// One case as the parent sends it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Case {
    pub gemm: Gemm,
    pub seed: u64,
    /// An index into [`common::verify::probe::probes`]: the case runs on that probe's inputs.
    pub probe: Option<usize>,
}

impl Case {
    pub fn to_json(self) -> Value {
        let s = self.gemm.shape;
        json!({ "m": s.m, "n": s.n, "k": s.k, "alpha": self.gemm.alpha, "beta": self.gemm.beta,
                "seed": self.seed.to_string(), "probe": self.probe })
    }

    pub fn from_json(v: &Value) -> Result<Case, String> {
        let bad = || format!("bad case {v}");
        let dim = |name: &str| v[name].as_u64().map(|x| x as usize).ok_or_else(bad);
        let num = |name: &str| v[name].as_f64().map(|x| x as f32).ok_or_else(bad);
        let shape = Shape::new(dim("m")?, dim("n")?, dim("k")?);
        shape.check_32bit().map_err(|e| e.to_string())?;
        Ok(Case {
            gemm: Gemm::new(shape, num("alpha")?, num("beta")?),
            seed: v["seed"].as_str().and_then(|s| s.parse().ok()).ok_or_else(bad)?,
            probe: v["probe"].as_u64().map(|i| i as usize),
        })
    }
}

/// The buffers of one run: A and B guarded copies of the problem's (for FP8 its quantized bytes
/// and their scales), C guarded and poisoned; and A's and B's bytes as the run got them.
struct Buffers {
    a: DeviceMatrix,
    b: DeviceMatrix,
    c: DeviceMatrix,
    inputs: [Vec<u8>; 2],
}

impl Buffers {
    fn new(gpu: &Gpu, p: &Prepared, seed: u64) -> common::Result<Buffers> {
        let guard = |salt: u64, m: &DeviceMatrix| guard_pages(seed ^ salt) * PAGE / m.elem.bytes();
        let (a, b) = (p.a.guarded_copy(gpu, guard(1, &p.a))?, p.b.guarded_copy(gpu, guard(2, &p.b))?);
        // Read back before the run: a kernel that writes the problem's own copies too is caught.
        let inputs = [a.bytes(gpu)?, b.bytes(gpu)?];
        let c = p.fresh_c(gpu, guard_pages(seed ^ 3) * PAGE / p.precision.output().bytes())?;
        Ok(Buffers { a, b, c, inputs })
    }

    /// Why the run is wrong, if it is: its result, the guard zones, or its inputs.
    fn verdict(&self, gpu: &Gpu, p: &Prepared, kernel: &str, probe: bool) -> Result<Value, String> {
        let e = |e: common::Error| e.to_string();
        let verified = p.check_result(&self.c.download(gpu).map_err(e)?);
        let mut problems = Vec::new();
        for (name, m) in [("A", &self.a), ("B", &self.b), ("C", &self.c)] {
            let (before, after) = m.guard_damage(gpu).map_err(e)?;
            if before + after > 0 {
                problems.push(format!(
                    "wrote outside {name}: {before} guard elements before it and {after} after it changed"
                ));
            }
        }
        if self.a.bytes(gpu).map_err(e)? != self.inputs[0] || self.b.bytes(gpu).map_err(e)? != self.inputs[1] {
            let scales = if p.precision.scaling().is_some() { " or their scales" } else { "" };
            problems.push(format!("modified its inputs A or B{scales}"));
        }
        let checked = if probe {
            probe_verdict(&verified, kernel)
        } else if verified.passed() {
            Ok(())
        } else {
            Err(verified.report(kernel))
        };
        let reason = match (problems.is_empty(), checked) {
            (true, Ok(())) => String::new(),
            (true, Err(why)) => why,
            (false, _) => problems.join("; "),
        };
        Ok(json!({
            "passed": reason.is_empty(),
            "reason": reason,
            "rel_err_vs_cpu": verified.vs_cpu.rel_frobenius,
            "rel_err_vs_cublas": verified.vs_cublas.rel_frobenius,
            "rel_err_vs_exact": verified.vs_exact.as_ref().map_or(verified.vs_cpu.rel_frobenius, |x| x.rel_frobenius),
        }))
    }
}

/// Runs one case on fresh buffers and checks it.
pub fn run_case(gpu: &Gpu, cublas: &Cublas, runner: &mut Runner, case: &Case) -> Result<Value, String> {
    let e = |e: common::Error| e.to_string();
    let p = runner.step.precision;
    let inputs = match case.probe {
        Some(i) => probes().get(i).ok_or(format!("no probe {i}"))?.inputs(case.seed),
        None => Inputs::new(&case.gemm, case.seed),
    };
    let prepared = Prepared::with_inputs(gpu, cublas, &case.gemm, p, case.seed, inputs).map_err(e)?;
    let mut buffers = Buffers::new(gpu, &prepared, case.seed).map_err(e)?;
    runner.run(&case.gemm, &buffers.a, &buffers.b, &mut buffers.c).map_err(e)?;
    sync(gpu, &runner.kernel.name).map_err(e)?;
    buffers.verdict(gpu, &prepared, &runner.kernel.name, case.probe.is_some())
}

/// What is timed: a step's kernel (the submission or the reference), or cuBLAS.
pub enum Timed<'a> {
    Kernel(&'a mut Runner),
    Cublas,
}

/// How long and how often to time.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    pub warmup: usize,
    pub min_reps: usize,
    pub max_reps: usize,
    /// Stop after this long once `min_reps` are timed.
    pub seconds: f64,
}

impl Default for Plan {
    fn default() -> Self {
        Plan { warmup: 1, min_reps: 2, max_reps: 15, seconds: 2.0 }
    }
}

/// The outcome of [`time_verified`].
#[derive(Clone, Debug, Default)]
pub struct Timing {
    pub median_ms: f64,
    pub reps: usize,
    /// Seconds spent preparing problems, uploading buffers and checking results (not timed).
    pub prepare_s: f64,
    pub upload_s: f64,
    pub check_s: f64,
}

/// Times `what` on `gemm`: every repetition on freshly uploaded, guarded buffers with C
/// poisoned, queued behind the harness's gate so the events time the GPU alone, and checked
/// after it (outside the timed interval). With `submission` every repetition also gets new
/// random inputs (a submission cannot replay a result) and its result is checked; trusted code
/// (the reference, cuBLAS) reuses one problem, uploaded anew each time just the same, and is not
/// checked. An error names a wrong repetition.
pub fn time_verified(
    gpu: &Gpu,
    cublas: &Cublas,
    mut what: Timed<'_>,
    gemm: &Gemm,
    precision: Precision,
    plan: Plan,
    submission: bool,
) -> Result<Timing, String> {
    let e = |e: common::Error| e.to_string();
    let gate = common::timing::gate::of(gpu).map_err(e)?;
    let start = gpu.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(|x| x.to_string())?;
    let stop = gpu.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(|x| x.to_string())?;
    // Compile and load the kernel first: the host must queue a timed run within the gate's second.
    if let Timed::Kernel(runner) = &mut what {
        let launch = runner.launch_for(&gemm.shape).map_err(e)?;
        runner.load(&launch).map_err(e)?;
    }
    let began = Instant::now();
    let mut samples = Vec::new();
    let mut t = Timing::default();
    let mut problem: Option<Prepared> = None;
    for rep in 0.. {
        let enough = samples.len() >= plan.min_reps
            && (samples.len() >= plan.max_reps || began.elapsed() > Duration::from_secs_f64(plan.seconds));
        if enough {
            break;
        }
        let seed = data::fresh_seed();
        let phase = Instant::now();
        if submission || problem.is_none() {
            problem = Some(Prepared::new(gpu, cublas, gemm, precision, seed).map_err(e)?);
        }
        let prepared = problem.as_ref().expect("made above");
        t.prepare_s += phase.elapsed().as_secs_f64();
        let phase = Instant::now();
        let mut buffers = Buffers::new(gpu, prepared, seed).map_err(e)?;
        sync(gpu, "the upload").map_err(e)?;
        t.upload_s += phase.elapsed().as_secs_f64();
        gate.close(gpu).map_err(e)?;
        start.record(&gpu.stream).map_err(|x| x.to_string())?;
        // cuBLAS reads the inputs the reference was computed from (for TF32: rounded on the host;
        // for FP8: the values the kernel multiplies, in BF16).
        let queued = match &mut what {
            Timed::Kernel(runner) => runner.run(gemm, &buffers.a, &buffers.b, &mut buffers.c),
            Timed::Cublas => prepared.cublas_gemm(gpu, cublas, &mut buffers.c),
        };
        stop.record(&gpu.stream).map_err(|x| x.to_string())?;
        gate.open();
        queued.map_err(e)?;
        let ms = start.elapsed_ms(&stop).map_err(|x| format!("a timed run failed: {x}"))?;
        gate.check().map_err(e)?;
        sync(gpu, "a timed run").map_err(e)?;
        let phase = Instant::now();
        // The warm-up run is not timed, so it needs no check.
        if let (true, true, Timed::Kernel(runner)) = (submission, rep >= plan.warmup, &what) {
            let v = buffers.verdict(gpu, prepared, &runner.kernel.name, false)?;
            if v["passed"] != true {
                return Err(format!(
                    "a timed run produced a wrong result: {}",
                    v["reason"].as_str().unwrap_or_default()
                ));
            }
        }
        t.check_s += phase.elapsed().as_secs_f64();
        if rep >= plan.warmup {
            samples.push(ms as f64);
        }
    }
    samples.sort_by(f64::total_cmp);
    let n = samples.len();
    t.median_ms = if n % 2 == 1 { samples[n / 2] } else { 0.5 * (samples[n / 2 - 1] + samples[n / 2]) };
    t.reps = n;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_travel_as_json() {
        let c = Case { gemm: Gemm::new(Shape::new(33, 31, 7), -1.5, 0.75), seed: u64::MAX - 3, probe: Some(4) };
        assert_eq!(Case::from_json(&c.to_json()).unwrap(), c);
        assert!(Case::from_json(&json!({"m": 1})).is_err());
        let huge = json!({"m": 100000, "n": 100000, "k": 1, "alpha": 1.0, "beta": 0.0, "seed": "1", "probe": null});
        assert!(Case::from_json(&huge).is_err());
    }

    #[test]
    fn guards_are_one_to_four_pages() {
        let pages: Vec<usize> = (0..64).map(guard_pages).collect();
        assert!(pages.iter().all(|p| (1..=4).contains(p)));
        assert!((1..=4).all(|p| pages.contains(&p)));
    }
}
