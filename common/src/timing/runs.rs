//! Timing with CUDA events: repeated runs, each queued behind the gate so that the events time the
//! GPU's work, the median; contenders timed in turn; and a kernel against cuBLAS on the same
//! problem in the same process.

use crate::harness::device::{Gpu, sync};
use crate::harness::problem::Gemm;
use crate::harness::runner::Runner;
use crate::verify::check::Prepared;
use crate::verify::reference::Cublas;
use crate::{Error, Result};
use cudarc::driver::sys::CUevent_flags;
use std::time::{Duration, Instant};

/// Median and spread of repeated event-timed runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub reps: usize,
}

impl Timing {
    /// From per-run times in milliseconds (at least one).
    pub fn from_samples(mut ms: Vec<f64>) -> Timing {
        assert!(!ms.is_empty(), "no samples");
        ms.sort_by(f64::total_cmp);
        let n = ms.len();
        let median = if n % 2 == 1 { ms[n / 2] } else { 0.5 * (ms[n / 2 - 1] + ms[n / 2]) };
        Timing { median_ms: median, min_ms: ms[0], max_ms: ms[n - 1], reps: n }
    }

    /// GFLOP/s of `gemm` at the median time.
    pub fn gflops(&self, gemm: &Gemm) -> f64 {
        gemm.shape.gflops_at(self.median_ms)
    }
}

/// How long to settle and to measure.
#[derive(Clone, Copy, Debug)]
pub struct TimingPlan {
    /// Untimed runs of a contender before each of its turns, so that the GPU's clock has followed
    /// it there (the first turn's also load modules and cuBLAS's heuristics).
    pub settle: Duration,
    /// Timed runs of a contender, over all its turns.
    pub measure: Duration,
    /// Turns of each contender, when there are several.
    pub rounds: usize,
    /// Samples of a contender, at least and at most, over all its turns.
    pub min_reps: usize,
    pub max_reps: usize,
    /// How a sample is taken, where a caller does not time both ways.
    pub method: Method,
}

impl Default for TimingPlan {
    fn default() -> Self {
        TimingPlan {
            settle: Duration::from_millis(100),
            measure: Duration::from_millis(500),
            rounds: 4,
            min_reps: 8,
            max_reps: 200,
            method: Method::OneAtATime,
        }
    }
}

/// The two ways a sample is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// One run between two events, queued behind the gate, the GPU idle before and after.
    OneAtATime,
    /// [`BATCH`] runs between two events, queued behind the gate, the sample being their mean:
    /// how criterion and PyTorch's benchmarks time. A run starts while the previous one drains
    /// its last wave, and the GPU never idles between runs.
    BackToBack,
}

/// Runs per sample of [`Method::BackToBack`].
pub const BATCH: usize = 20;

impl Method {
    pub const BOTH: [Method; 2] = [Method::OneAtATime, Method::BackToBack];

    pub fn label(self) -> &'static str {
        match self {
            Method::OneAtATime => "one at a time",
            Method::BackToBack => "back to back",
        }
    }

    fn runs(self) -> usize {
        match self {
            Method::OneAtATime => 1,
            Method::BackToBack => BATCH,
        }
    }
}

/// Times contenders (closures that each queue one run) in turns, with CUDA events. A turn is
/// `plan.settle` of untimed runs of one contender, then its share of the samples (`plan.measure`
/// split over `plan.rounds` turns); the contenders take turns, round after round, each round
/// starting one contender further on. Every sample is queued behind the
/// [gate](crate::timing::gate), so the events time the GPU's work, not the host's. Returns each
/// contender's median.
///
/// Why turns, and why the settling: the clock is the largest term. Under seconds of tensor-core
/// work the GPU sits at its power cap and its clock drifts, so contenders timed one after the
/// other meet different clocks (the same cuBLAS call moved by up to 10% within one process);
/// turns give each the same drift. And the clock follows the work within 50-200 ms: right after
/// FP16 tensor-core GEMMs an FP32 SGEMM ran 34% slower for its first 20 ms, and an FP16 GEMM
/// after SGEMMs 14% faster (`notes/measuring.md`). A sample taken right after another contender's
/// would be timed at that contender's clock, so each turn settles first.
pub fn time_in_turn(
    gpu: &Gpu,
    plan: TimingPlan,
    method: Method,
    contenders: &mut [&mut dyn FnMut() -> Result<()>],
) -> Result<Vec<Timing>> {
    Ok(time_in_turn_windows(gpu, plan, method, contenders)?.0)
}

/// When a contender's samples were taken: from the first sample of each of its turns to the end of
/// the last, one window a turn.
pub type Windows = Vec<(Instant, Instant)>;

/// [`time_in_turn`], with each contender's [`Windows`], so that a watch of the clock over the
/// whole timing can say which clock each contender's samples met (`clocks::within`).
pub fn time_in_turn_windows(
    gpu: &Gpu,
    plan: TimingPlan,
    method: Method,
    contenders: &mut [&mut dyn FnMut() -> Result<()>],
) -> Result<(Vec<Timing>, Vec<Windows>)> {
    let start = gpu.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    let stop = gpu.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    let gate = crate::timing::gate::of(gpu)?;
    let (n, runs) = (contenders.len(), method.runs());
    let rounds = if n == 1 { 1 } else { plan.rounds.max(1) };
    let per_turn = plan.measure / rounds as u32;
    let (min_reps, max_reps) = (plan.min_reps.div_ceil(rounds).max(1), plan.max_reps.div_ceil(rounds).max(1));
    let (mut samples, mut windows) = (vec![Vec::new(); n], vec![Vec::new(); n]);
    for round in 0..rounds {
        for i in (0..n).map(|i| (i + round) % n) {
            let launch = &mut contenders[i];
            let t0 = Instant::now();
            let mut settled = 0;
            while settled < 2 || t0.elapsed() < plan.settle {
                (0..runs).try_for_each(|_| launch())?;
                sync(gpu, "an untimed run")?;
                settled += 1;
            }
            let (t1, mut taken) = (Instant::now(), 0);
            while taken < min_reps || (t1.elapsed() < per_turn && taken < max_reps) {
                gate.close(gpu)?;
                start.record(&gpu.stream)?;
                let queued = (0..runs).try_for_each(|_| launch());
                stop.record(&gpu.stream)?;
                gate.open();
                queued?;
                let ms = start.elapsed_ms(&stop).map_err(|e| Error::Cuda(format!("a timed run failed: {e}")))?;
                gate.check()?;
                samples[i].push(ms as f64 / runs as f64);
                taken += 1;
            }
            windows[i].push((t1, Instant::now()));
        }
    }
    Ok((samples.into_iter().map(Timing::from_samples).collect(), windows))
}

/// Times `launch` alone, one run at a time ([`time_in_turn`] with one contender).
pub fn time_runs(gpu: &Gpu, plan: TimingPlan, mut launch: impl FnMut() -> Result<()>) -> Result<Timing> {
    Ok(time_in_turn(gpu, plan, Method::OneAtATime, &mut [&mut launch])?.remove(0))
}

/// The kernel and cuBLAS (in the kernel's precision) timed on the same inputs in the same process.
pub struct Comparison {
    pub gemm: Gemm,
    pub kernel: Timing,
    pub cublas: Timing,
}

impl Comparison {
    /// Kernel throughput as a fraction of cuBLAS (1.0 = as fast).
    pub fn ratio(&self) -> f64 {
        self.cublas.median_ms / self.kernel.median_ms
    }
}

/// Times the kernel and cuBLAS on the inputs of a prepared problem, in turn, in the plan's way
/// (each writes its own C, which starts as the problem's C0; with beta != 0 later runs read
/// earlier results, which is fine for timing).
pub fn compare_prepared(runner: &mut Runner, cublas: &Cublas, p: &Prepared, plan: TimingPlan) -> Result<Comparison> {
    let gpu = runner.gpu.clone();
    let (mut c, mut c_blas) = (p.fresh_c(&gpu, 0)?, p.fresh_c(&gpu, 0)?);
    let (ca, cb) = p.cublas_inputs();
    let mut kernel = || runner.run(&p.gemm, &p.a, &p.b, &mut c);
    let mut blas = || cublas.gemm(&gpu, p.precision, &p.gemm, ca, cb, &mut c_blas);
    let [kernel, cublas]: [Timing; 2] = time_in_turn(&gpu, plan, plan.method, &mut [&mut kernel, &mut blas])?
        .try_into()
        .expect("two contenders, two timings");
    Ok(Comparison { gemm: p.gemm, kernel, cublas })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_samples() {
        let t = Timing::from_samples(vec![3.0, 1.0, 2.0, 10.0]);
        assert_eq!((t.median_ms, t.min_ms, t.max_ms, t.reps), (2.5, 1.0, 10.0, 4));
        assert_eq!(Timing::from_samples(vec![4.0, 1.0, 2.0]).median_ms, 2.0);
    }

    #[test]
    fn gflops_from_median() {
        let g = Gemm::new(crate::Shape::cube(1000), 1.0, 0.0);
        let t = Timing::from_samples(vec![2.0]);
        // 2e9 FLOPs in 2 ms = 1000 GFLOP/s.
        assert!((t.gflops(&g) - 1000.0).abs() < 1e-9);
    }
}
