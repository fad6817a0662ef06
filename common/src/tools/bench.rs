//! Criterion integration: a step's bench is `common::bench::run(c, &STEP)`. One group per
//! shape, the step and cuBLAS side by side, times from CUDA events, throughput in FLOPs;
//! a summary table (GFLOP/s and % of cuBLAS per shape) closes the run.

use crate::harness::device::Gpu;
use crate::harness::device::sync;
use crate::harness::matrix::DeviceMatrix;
use crate::harness::precision::Precision;
use crate::harness::runner::Runner;
use crate::harness::step::Step;
use crate::timing::lt::{CublasConfig, CublasInputs, CublasLt, compare};
use crate::timing::runs::{Timing, TimingPlan};
use crate::verify::check::Prepared;
use crate::verify::reference::Cublas;
use crate::{Gemm, Result, Shape, harness::data};
use criterion::{Criterion, SamplingMode, Throughput};
use cudarc::driver::sys::CUevent_flags;
use std::cell::RefCell;
use std::time::Duration;

/// Environment variable with the shapes to bench, e.g. `1024,4096x4096x1024`.
pub const SHAPES_ENV: &str = "SGEMM_BENCH_SHAPES";

/// Shapes benched when `SGEMM_BENCH_SHAPES` is not set.
pub const DEFAULT_SHAPES: [Shape; 3] = [Shape::cube(1024), Shape::cube(2048), Shape::cube(4096)];

/// The shapes to bench, from the environment or the default.
pub fn shapes() -> Result<Vec<Shape>> {
    match std::env::var(SHAPES_ENV) {
        Ok(list) => list.split(',').filter(|s| !s.trim().is_empty()).map(Shape::parse).collect(),
        Err(_) => Ok(DEFAULT_SHAPES.to_vec()),
    }
}

/// Prints the error as one line and exits: a bench without a GPU has nothing to measure.
fn or_exit<T>(r: Result<T>) -> T {
    r.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(1)
    })
}

/// Times `iters` back-to-back launches between two CUDA events.
fn event_time(gpu: &Gpu, iters: u64, mut launch: impl FnMut() -> Result<()>) -> Result<Duration> {
    let start = gpu.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    let stop = gpu.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    start.record(&gpu.stream)?;
    for _ in 0..iters {
        launch()?;
    }
    stop.record(&gpu.stream)?;
    let ms = start.elapsed_ms(&stop)?;
    Ok(Duration::from_secs_f64(ms as f64 * 1e-3))
}

/// One row of the closing summary.
pub struct Row {
    pub gemm: Gemm,
    pub precision: Precision,
    pub kernel: Timing,
    /// cuBLAS in the kernel's precision.
    pub cublas: Timing,
    /// Tensor-core precisions: cuBLAS SGEMM (FP32, TF32 off) on the same shape, the
    /// baseline every earlier step is measured against.
    pub sgemm: Option<Timing>,
    /// FP16, BF16 and TF32: cuBLAS through each of its configurations ([`CublasConfig`]), and
    /// the kernel timed in turns with them ([`crate::timing::runs::time_in_turn`]), after
    /// criterion.
    pub configs: Vec<(CublasConfig, Timing)>,
    pub kernel_in_turn: Option<Timing>,
}

impl Row {
    /// The fastest cuBLAS configuration measured for this row.
    pub fn fastest(&self) -> Option<(CublasConfig, Timing)> {
        crate::timing::lt::fastest(&self.configs)
    }
}

/// Benches `step` at every shape (alpha 1, beta 0), each verified first.
pub fn run(c: &mut Criterion, step: &Step) {
    run_variants(c, std::slice::from_ref(step));
}

/// Benches each precision variant of one step (step 7) at every shape.
pub fn run_variants(c: &mut Criterion, variants: &[Step]) {
    crate::tools::cli::program_start();
    let gpu = or_exit(Gpu::shared());
    let watch = crate::timing::clocks::Watch::start(&gpu);
    let mut rows = Vec::new();
    for step in variants {
        rows.extend(or_exit(bench_shapes(c, step)));
    }
    let name = variants.first().map_or("", |s| s.name);
    println!("\n{name} on {}", gpu.describe());
    println!("{}", summary(name, &rows));
    println!("{}", crate::timing::clocks::report(&watch.stop(), "the whole bench"));
}

/// The summary table: per shape, the step's and cuBLAS's GFLOP/s and the ratio; for the
/// tensor-core precisions also the speed-up over cuBLAS SGEMM.
pub fn summary(name: &str, rows: &[Row]) -> String {
    let multi = rows.iter().any(|r| r.precision != Precision::F32);
    // Criterion times each benchmark for seconds, one after the other: a GPU at its power cap
    // may give the kernel and cuBLAS different clocks (the book's "How we measure").
    let note = "Criterion's medians, the kernel's runs and then cuBLAS's, one after the other:\n\n";
    let mut out = if multi {
        format!(
            "{note}| shape | precision | {name} GFLOP/s | cuBLAS GFLOP/s (same precision) | % of cuBLAS | x cuBLAS SGEMM |\n|---|---|---:|---:|---:|---:|\n"
        )
    } else {
        format!("{note}| shape | {name} GFLOP/s | cuBLAS GFLOP/s | % of cuBLAS |\n|---|---:|---:|---:|\n")
    };
    let fastest: Vec<&Row> = rows.iter().filter(|r| r.configs.len() > 1).collect();
    for r in rows {
        let pct = 100.0 * r.cublas.median_ms / r.kernel.median_ms;
        let (k, cb) = (r.kernel.gflops(&r.gemm), r.cublas.gflops(&r.gemm));
        if multi {
            let x = r.sgemm.map_or("-".to_string(), |s| format!("{:.2}x", s.median_ms / r.kernel.median_ms));
            out += &format!("| {} | {} | {k:.0} | {cb:.0} | {pct:.1}% | {x} |\n", r.gemm.shape, r.precision);
        } else {
            out += &format!("| {} | {k:.0} | {cb:.0} | {pct:.1}% |\n", r.gemm.shape);
        }
    }
    if !fastest.is_empty() {
        out += &format!(
            "\nThe fastest cuBLAS (cublasGemmEx; cublasLt with a {} MiB workspace and its heuristic's first algorithm, \
             C in FP32 or in the 16-bit input type), timed in turns with the kernel after criterion's runs:\n\n\
             | shape | precision | {name} GFLOP/s | cuBLAS configurations, GFLOP/s | fastest | % of the fastest |\n\
             |---|---|---:|---|---|---:|\n",
            crate::timing::lt::WORKSPACE_BYTES >> 20
        );
        for r in fastest {
            let all: Vec<String> =
                r.configs.iter().map(|(c, t)| format!("{} {:.0}", c.label(), t.gflops(&r.gemm))).collect();
            let (best, t) = r.fastest().expect("configs");
            let kernel = r.kernel_in_turn.unwrap_or(r.kernel);
            out += &format!(
                "| {} | {} | {:.0} | {} | {} | {:.1}% |\n",
                r.gemm.shape,
                r.precision,
                kernel.gflops(&r.gemm),
                all.join(", "),
                best.label(),
                100.0 * t.median_ms / kernel.median_ms
            );
        }
    }
    out
}

fn bench_shapes(c: &mut Criterion, step: &Step) -> Result<Vec<Row>> {
    let gpu = Gpu::shared()?;
    let cublas = Cublas::new(&gpu)?;
    let mut lt = CublasLt::new(&gpu)?;
    let mut runner = Runner::new(&gpu, step, None)?;
    let p = step.precision;
    let mut rows = Vec::new();
    for shape in shapes()? {
        let gemm = Gemm::new(shape, 1.0, 0.0);
        // Never time a wrong kernel: verify on fresh inputs first, then time on the same ones.
        let prepared = Prepared::new(&gpu, &cublas, &gemm, p, data::fresh_seed())?;
        let verified = prepared.check(&mut runner)?;
        if !verified.passed() {
            return Err(crate::Error::BadInput(format!(
                "refusing to bench a wrong result: {}",
                verified.report(step.name)
            )));
        }
        let (a, b) = (&prepared.a, &prepared.b);
        let mut out = prepared.fresh_c(&gpu, 0)?;
        // The FP32 baseline for the tensor-core precisions: the same inputs as FP32.
        let mut fp32 = if p == Precision::F32 {
            None
        } else {
            let i = &prepared.inputs;
            let m = |x: &[f32]| DeviceMatrix::from_host(&gpu, x);
            Some((m(&i.a)?, m(&i.b)?, m(&i.c0)?))
        };

        let group_name = if p == Precision::F32 { shape.to_string() } else { format!("{p}/{shape}") };
        let mut group = c.benchmark_group(group_name);
        group.throughput(Throughput::Elements(shape.flops() as u64));
        group.sampling_mode(SamplingMode::Flat).sample_size(10);
        group.warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
        // Per-launch times of every timed batch, for the summary (the first batch is a warm-up).
        let kernel_ms = RefCell::new(Vec::new());
        let cublas_ms = RefCell::new(Vec::new());
        let sgemm_ms = RefCell::new(Vec::new());
        let mut failure = None;
        group.bench_function(step.id(), |bch| {
            bch.iter_custom(|iters| {
                let t = event_time(&gpu, iters, || runner.run(&gemm, a, b, &mut out));
                record(t, iters, &kernel_ms, &mut failure)
            })
        });
        let cublas_name = match p {
            Precision::F32 => "cuBLAS".to_string(),
            p if p.scaling().is_some() => format!("cuBLASLt {p}"),
            p => format!("cuBLAS {p}"),
        };
        // FP8 has no cublasGemmEx: its baseline is cuBLASLt's FP8 with the same scales.
        let lt_inputs =
            (CublasConfig::baseline(p) == CublasConfig::Lt).then(|| CublasInputs::new(&gpu, &prepared)).transpose()?;
        group.bench_function(cublas_name, |bch| {
            bch.iter_custom(|iters| {
                let t = event_time(&gpu, iters, || match &lt_inputs {
                    Some(inputs) => inputs.lt(&gpu, &mut lt, &mut out, 0),
                    None => prepared.cublas_gemm(&gpu, &cublas, &mut out),
                });
                record(t, iters, &cublas_ms, &mut failure)
            })
        });
        if let Some((a32, b32, c32)) = fp32.as_mut() {
            group.bench_function("cuBLAS fp32", |bch| {
                bch.iter_custom(|iters| {
                    let t = event_time(&gpu, iters, || cublas.sgemm(&gpu, &gemm, a32, b32, c32));
                    record(t, iters, &sgemm_ms, &mut failure)
                })
            });
        }
        group.finish();
        if let Some(e) = failure {
            return Err(e);
        }
        sync(&gpu, step.name)?;
        let timing = |v: RefCell<Vec<f64>>| {
            let v = v.into_inner();
            Timing::from_samples(if v.len() > 1 { v[1..].to_vec() } else { v })
        };
        let sgemm = fp32.is_some().then(|| timing(sgemm_ms));
        // Only where there are configurations to compare with: criterion timed the rest.
        let (configs, kernel_in_turn) = if CublasConfig::for_precision(p).len() > 1 {
            let plan = TimingPlan::default();
            let (cmp, configs) = compare(&mut runner, &cublas, &mut lt, &prepared, plan, true, &mut Vec::new())?;
            (configs, Some(cmp.kernel))
        } else {
            (Vec::new(), None)
        };
        let (kernel, cublas) = (timing(kernel_ms), timing(cublas_ms));
        rows.push(Row { gemm, precision: p, kernel, cublas, sgemm, configs, kernel_in_turn });
    }
    Ok(rows)
}

fn record(
    t: Result<Duration>,
    iters: u64,
    samples: &RefCell<Vec<f64>>,
    failure: &mut Option<crate::Error>,
) -> Duration {
    match t {
        Ok(d) => {
            samples.borrow_mut().push(d.as_secs_f64() * 1e3 / iters as f64);
            d
        }
        Err(e) => {
            failure.get_or_insert(e);
            Duration::from_nanos(1)
        }
    }
}
