//! Timing with CUDA events: repeated runs, each queued behind the gate so that the events time the
//! GPU's work, the median; and a kernel against cuBLAS on the same problem in the same process.

use crate::check::Prepared;
use crate::device::{Gpu, sync};
use crate::problem::Gemm;
use crate::reference::Cublas;
use crate::runner::Runner;
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
        gemm.shape.flops() / (self.median_ms * 1e-3) / 1e9
    }
}

/// How long to warm up and to measure.
#[derive(Clone, Copy, Debug)]
pub struct TimingPlan {
    pub warmup: Duration,
    pub measure: Duration,
    pub min_reps: usize,
    pub max_reps: usize,
}

impl Default for TimingPlan {
    fn default() -> Self {
        TimingPlan {
            warmup: Duration::from_millis(100),
            measure: Duration::from_millis(500),
            min_reps: 5,
            max_reps: 200,
        }
    }
}

/// Times `launch` (which enqueues one run) with CUDA events around each run: warm-up
/// first (module load, cuBLAS heuristics and clocks settle), then runs until the time
/// budget or the repetition cap is reached. Returns the median. Each timed run is queued
/// behind the [gate](crate::gate), so the events time the GPU's work, not the host's.
pub fn time_runs(gpu: &Gpu, plan: TimingPlan, mut launch: impl FnMut() -> Result<()>) -> Result<Timing> {
    let start = gpu.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    let stop = gpu.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    let gate = crate::gate::of(gpu)?;
    let t0 = Instant::now();
    let mut warm = 0;
    while warm < 2 || t0.elapsed() < plan.warmup {
        launch()?;
        sync(gpu, "a warm-up run")?;
        warm += 1;
    }
    let t1 = Instant::now();
    let mut samples = Vec::new();
    while samples.len() < plan.min_reps || (t1.elapsed() < plan.measure && samples.len() < plan.max_reps) {
        gate.close(gpu)?;
        start.record(&gpu.stream)?;
        let queued = launch();
        stop.record(&gpu.stream)?;
        gate.open();
        queued?;
        let ms = start.elapsed_ms(&stop).map_err(|e| Error::Cuda(format!("a timed run failed: {e}")))?;
        gate.check()?;
        samples.push(ms as f64);
    }
    Ok(Timing::from_samples(samples))
}

/// Runs per sample of [`time_back_to_back`].
pub const BATCH: usize = 20;

/// Times `launch` the way criterion and PyTorch's benchmarks do: [`BATCH`] runs queued back to
/// back between two events, the sample being their mean. The batch is queued behind the gate, so
/// the host's launches are not timed either; what differs from [`time_runs`] is that a run starts
/// while the previous one drains its last wave, and the GPU never idles between runs. Returns the
/// median of the per-run means.
pub fn time_back_to_back(gpu: &Gpu, plan: TimingPlan, mut launch: impl FnMut() -> Result<()>) -> Result<Timing> {
    let start = gpu.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    let stop = gpu.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    let gate = crate::gate::of(gpu)?;
    let t0 = Instant::now();
    while t0.elapsed() < plan.warmup {
        for _ in 0..BATCH {
            launch()?;
        }
        sync(gpu, "a warm-up batch")?;
    }
    let t1 = Instant::now();
    let mut samples = Vec::new();
    while samples.len() < plan.min_reps || (t1.elapsed() < plan.measure && samples.len() < plan.max_reps) {
        gate.close(gpu)?;
        start.record(&gpu.stream)?;
        let queued = (0..BATCH).try_for_each(|_| launch());
        stop.record(&gpu.stream)?;
        gate.open();
        queued?;
        let ms = start.elapsed_ms(&stop).map_err(|e| Error::Cuda(format!("a timed batch failed: {e}")))?;
        gate.check()?;
        samples.push(ms as f64 / BATCH as f64);
    }
    Ok(Timing::from_samples(samples))
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

/// Times the kernel and cuBLAS on the inputs of a prepared problem (C starts as the problem's
/// C0 and is overwritten; with beta != 0 later runs read earlier results, which is fine for timing).
pub fn compare_prepared(runner: &mut Runner, cublas: &Cublas, p: &Prepared, plan: TimingPlan) -> Result<Comparison> {
    let gpu = runner.gpu.clone();
    let mut c = p.fresh_c(&gpu, 0)?;
    let kernel = time_runs(&gpu, plan, || runner.run(&p.gemm, &p.a, &p.b, &mut c))?;
    let (ca, cb) = p.cublas_inputs();
    let cublas_t = time_runs(&gpu, plan, || cublas.gemm(&gpu, p.precision, &p.gemm, ca, cb, &mut c))?;
    Ok(Comparison { gemm: p.gemm, kernel, cublas: cublas_t })
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
