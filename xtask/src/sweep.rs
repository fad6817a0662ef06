//! `cargo xtask sweep [--out FILE] [--steps 01,05] [--shapes 1024,4096x11008x4096]`: runs every
//! step and cuBLAS on a sweep of shapes on the GPU, verifies every run, and writes one results
//! file per GPU model (`results/<gpu>.json`) that the book's tables and charts are made from.

use crate::results::{GpuRecord, Run, SCHEMA, Sweep, write};
use common::check::Prepared;
use common::clocks::Watch;
use common::compile::nvrtc_version;
use common::device::Gpu;
use common::device::sync;
use common::lt::CublasLt;
use common::lt::compare;
use common::matrix::DeviceMatrix;
use common::reference::{CUBLAS_MATH, Cublas};
use common::runner::Runner;
use common::timing::{TimingPlan, time_runs};
use common::{Gemm, Precision, Shape, Step, data};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Square sizes of the sweep, and shapes from real workloads: a transformer MLP layer
/// (4096 tokens, hidden 4096, middle 11008), decode-like skinny products (M = 16 tokens), and an
/// odd shape that exercises every edge path.
pub fn default_shapes() -> Vec<Shape> {
    let mut v: Vec<Shape> = [128, 256, 512, 1024, 2048, 4096, 8192].into_iter().map(Shape::cube).collect();
    v.extend([
        Shape::new(4096, 11008, 4096),
        Shape::new(16, 11008, 4096),
        Shape::new(16, 4096, 4096),
        Shape::new(1000, 1001, 999),
    ]);
    v
}

/// "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3".
pub fn slug(name: &str) -> String {
    common::names::slug(name, &[])
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock.
pub fn today() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[derive(clap::Args)]
pub struct Args {
    /// The results file (default: results/<gpu>.json)
    #[arg(long)]
    out: Option<PathBuf>,
    /// Steps to run, comma-separated ids, crate names or numbers (a number names every
    /// precision of a step); default: all
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    steps: Vec<String>,
    /// Shapes, comma-separated MxNxK or S; default: the sweep's squares and workload shapes
    #[arg(long, value_delimiter = ',', value_name = "LIST", value_parser = crate::shape)]
    shapes: Vec<Shape>,
    /// Keep the recorded runs from the existing results file (each with the date it was
    /// measured), replacing only the steps swept now at the shapes swept now (a swept step's
    /// other shapes are kept while its kernel's hash is unchanged): for a re-sweep of changed
    /// kernels, a few shapes at a time
    #[arg(long)]
    merge: bool,
}

/// Device-to-device copy bandwidth, bytes read plus bytes written per second (median of 10).
fn copy_bandwidth(gpu: &Gpu) -> common::Result<f64> {
    let n = 256 << 20; // 1 GiB of f32 each way
    let src = DeviceMatrix::from_host(gpu, &vec![1.0f32; n])?;
    let mut dst = DeviceMatrix::from_host(gpu, &vec![0.0f32; n])?;
    let plan = TimingPlan {
        settle: Duration::from_millis(50),
        measure: Duration::ZERO,
        rounds: 1,
        min_reps: 10,
        max_reps: 10,
    };
    let t = time_runs(gpu, plan, || Ok(gpu.stream.memcpy_dtod(&src.data, &mut dst.data)?))?;
    Ok(2.0 * (n * 4) as f64 / (t.median_ms * 1e-3))
}

pub fn run(Args { out, steps: keys, shapes, merge }: Args) -> Result<(), String> {
    let mut steps: Vec<&'static Step> = Vec::new();
    for key in keys.iter().map(|k| k.trim()).filter(|k| !k.is_empty()) {
        let picked = steps::variants(key);
        if picked.is_empty() {
            crate::step_key(key)?;
        }
        steps.extend(picked);
    }
    if steps.is_empty() {
        steps = steps::ALL.iter().collect();
    }
    let shapes = if shapes.is_empty() { default_shapes() } else { shapes };
    let e = |e: common::Error| e.to_string();
    let gpu = Gpu::shared().map_err(e)?;
    let cublas = Cublas::new(&gpu).map_err(e)?;
    let mut lt = CublasLt::new(&gpu).map_err(e)?;
    let (nv_major, nv_minor) = nvrtc_version().map_err(e)?;
    let out = out.unwrap_or_else(|| PathBuf::from("results").join(format!("{}.json", slug(&gpu.name))));
    let started = Instant::now();
    println!("sweep on {}: {} steps x {} shapes", gpu.describe(), steps.len(), shapes.len());
    let copy = copy_bandwidth(&gpu).map_err(e)?;
    println!("device-to-device copy: {:.0} GB/s (read + write)", copy / 1e9);
    // With --merge, the runs recorded before, each with the date it was measured: the registry's
    // other steps, and a swept step's runs at the shapes this sweep leaves out while its kernel
    // is unchanged (a long sweep can be run a few shapes at a time).
    let mut kernel_hashes: std::collections::BTreeMap<String, String> =
        steps.iter().map(|s| (s.id(), s.kernel.hash())).collect();
    let (kept, old_hashes, old_rehashed) = if merge && out.exists() {
        let old = crate::results::read(&out)?;
        let unchanged = |r: &Run| {
            kernel_hashes.get(&r.step).is_none_or(|hash| {
                old.kernel_hashes.get(&r.step) == Some(hash)
                    && !shapes.iter().any(|s| (s.m as u64, s.n as u64, s.k as u64) == (r.m, r.n, r.k))
            })
        };
        let kept: Vec<Run> = old
            .runs
            .iter()
            .filter(|r| unchanged(r) && steps::ALL.iter().any(|s| s.id() == r.step))
            .cloned()
            .map(|r| Run { date: Some(r.date.clone().unwrap_or_else(|| old.date.clone())), ..r })
            .collect();
        println!("merging: {} recorded runs kept from {}", kept.len(), out.display());
        (kept, old.kernel_hashes, old.rehashed)
    } else {
        (Vec::new(), Default::default(), Vec::new())
    };
    for (id, hash) in old_hashes {
        kernel_hashes.entry(id).or_insert(hash);
    }
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    }
    // The file is written after every run, so that a sweep stopped by a time limit keeps what it
    // measured (the hashes of the steps it had not reached yet say they are stale).
    let gpu_record = GpuRecord {
        name: gpu.name.clone(),
        compute_capability: format!("{}.{}", gpu.cc.0, gpu.cc.1),
        driver_cuda_version: format!("{}.{}", gpu.driver_version / 1000, (gpu.driver_version % 1000) / 10),
        sms: gpu.sms,
        sm_clock_khz: gpu.clock_khz,
        l2_bytes: gpu.l2_bytes as u64,
        peak_fp32_gflops: gpu.peak_fp32_flops() / 1e9,
        peak_dram_gbs: gpu.peak_dram_bytes() / 1e9,
        measured_copy_gbs: copy / 1e9,
    };
    let save = |runs: &[Run]| {
        let swept: Vec<&str> = runs.iter().map(|r| r.step.as_str()).collect();
        let sweep = Sweep {
            schema: SCHEMA,
            tool: "cargo xtask sweep".into(),
            date: today(),
            gpu: gpu_record.clone(),
            nvrtc_version: format!("{nv_major}.{nv_minor}"),
            cublas_version: cublas.version as i64,
            cublas_math: CUBLAS_MATH.into(),
            kernel_hashes: kernel_hashes
                .iter()
                .filter(|(id, _)| swept.contains(&id.as_str()) || kept.iter().any(|r| &r.step == *id))
                .map(|(id, h)| (id.clone(), h.clone()))
                .collect(),
            // A rehash stays while runs it vouches for are kept (they were all measured before it).
            rehashed: old_rehashed.iter().filter(|r| kept.iter().any(|k| k.step == r.step)).cloned().collect(),
            runs: kept.iter().cloned().chain(runs.iter().cloned()).collect(),
        };
        write(&out, &sweep)
    };

    let plan = TimingPlan {
        settle: Duration::from_millis(100),
        measure: Duration::from_millis(300),
        rounds: 3,
        min_reps: 6,
        max_reps: 100,
    };
    let total = steps.len() * shapes.len();
    let mut runs = Vec::new();
    let mut failures = 0;
    for (si, shape) in shapes.iter().enumerate() {
        let gemm = Gemm::new(*shape, 1.0, 0.0);
        let seed = data::fresh_seed();
        // One prepared problem (inputs, cuBLAS and CPU references) per precision and shape; its
        // cuBLAS configurations (FP16, BF16, TF32) checked once on it.
        let mut prepared: HashMap<Precision, Prepared> = HashMap::new();
        let mut checked: std::collections::HashSet<Precision> = Default::default();
        // Configurations that computed something else on this problem: never timed.
        let mut left_out: HashMap<Precision, Vec<common::lt::CublasConfig>> = HashMap::new();
        for (ki, step) in steps.iter().enumerate() {
            let prepared = match prepared.entry(step.precision) {
                std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(Prepared::new(&gpu, &cublas, &gemm, step.precision, seed).map_err(e)?)
                }
            };
            let mut runner = Runner::new(&gpu, step, None).map_err(e)?;
            let launch = runner.launch_for(shape).map_err(e)?;
            let resources = runner.load(&launch).map_err(e)?.resources;
            let verified = prepared.check(&mut runner).map_err(e)?;
            // The kernel, cuBLAS and (tensor-core precisions) cuBLAS's other configurations, in
            // turn: the GPU's clock drifts over seconds of tensor-core work, and the same
            // configuration timed a few seconds before the kernel was up to 10% faster than
            // timed next to it (notes/measuring.md, "cuBLAS timed next to each kernel").
            let check = checked.insert(step.precision);
            let left_out = left_out.entry(step.precision).or_default();
            let watch = Watch::start(&gpu);
            let (cmp, timed) = compare(&mut runner, &cublas, &mut lt, prepared, plan, check, left_out).map_err(e)?;
            let clocks = watch.stop();
            sync(&gpu, step.name).map_err(e)?;
            let passed = verified.passed();
            failures += usize::from(!passed);
            let fastest = common::lt::fastest(&timed);
            let of_fastest = fastest.map_or(String::new(), |(_, t)| {
                format!(" ({:.1}% of the fastest)", 100.0 * t.median_ms / cmp.kernel.median_ms)
            });
            println!(
                "[{:>3}/{total}] {:<26} {:<16} {:>9.3} ms {:>8.0} GFLOP/s {:>6.1}% of cuBLAS{of_fastest}  err {:.1e}  {}  ({:.0} s)",
                si * steps.len() + ki + 1,
                step.id(),
                shape.to_string(),
                cmp.kernel.median_ms,
                cmp.kernel.gflops(&gemm),
                100.0 * cmp.ratio(),
                verified.vs_cpu.rel_frobenius,
                if passed { "ok" } else { "FAILED" },
                started.elapsed().as_secs_f64()
            );
            if !passed {
                println!("{}", verified.report(&step.id()));
            }
            match &clocks {
                Ok(c) if c.held_back().is_some() => println!("        the GPU was held back: {}", c.describe()),
                Ok(_) => {}
                Err(why) if si + ki == 0 => println!("        the GPU's clock is not recorded: {why}"),
                Err(_) => {}
            }
            let config_gflops = timed.iter().map(|(c, t)| (c.label().to_string(), t.gflops(&gemm))).collect();
            runs.push(Run {
                date: None,
                step: step.id(),
                precision: step.precision.label().into(),
                m: shape.m as u64,
                n: shape.n as u64,
                k: shape.k as u64,
                alpha: gemm.alpha as f64,
                beta: gemm.beta as f64,
                seed,
                passed,
                time_ms: cmp.kernel.median_ms,
                min_ms: cmp.kernel.min_ms,
                reps: cmp.kernel.reps as u64,
                gflops: cmp.kernel.gflops(&gemm),
                cublas_ms: cmp.cublas.median_ms,
                cublas_gflops: cmp.cublas.gflops(&gemm),
                pct_of_cublas: 100.0 * cmp.ratio(),
                // FP16, BF16, TF32: every cuBLAS configuration, and the kernel against the fastest.
                cublas_configs: config_gflops,
                fastest_cublas: fastest.map(|(c, _)| c.label().to_string()),
                fastest_cublas_gflops: fastest.map(|(_, t)| t.gflops(&gemm)),
                pct_of_fastest_cublas: fastest.map(|(_, t)| 100.0 * t.median_ms / cmp.kernel.median_ms),
                rel_err_vs_cpu: verified.vs_cpu.rel_frobenius,
                rel_err_vs_cublas: verified.vs_cublas.rel_frobenius,
                // FP16, BF16 and TF32: the error against the exact product of the unrounded FP32 inputs.
                rel_err_vs_exact: verified.vs_exact.as_ref().map_or(verified.vs_cpu.rel_frobenius, |x| x.rel_frobenius),
                worst_elem_ratio_vs_cpu: verified.vs_cpu.worst_ratio,
                registers: resources.registers,
                static_smem_bytes: resources.smem_bytes,
                dynamic_smem_bytes: launch.dynamic_smem_bytes,
                local_bytes: resources.stack_bytes,
                spill_bytes: resources.spills(),
                threads_per_block: launch.threads_per_block(),
                grid: [launch.grid.0, launch.grid.1, launch.grid.2],
                defines: launch.defines.iter().map(|(n, v)| format!("{n}={v}")).collect(),
                clocks: clocks.ok(),
            });
            save(&runs)?;
        }
    }
    let n_runs = runs.len();
    save(&runs)?;
    println!("{} runs ({} failed) in {:.0} s -> {}", n_runs, failures, started.elapsed().as_secs_f64(), out.display());
    if failures > 0 {
        return Err(format!("{failures} runs failed verification"));
    }
    // Runs timed while the GPU was slowed for heat or by its board (`common::clocks`).
    let held_back: Vec<String> = runs
        .iter()
        .filter(|r| r.clocks.as_ref().is_some_and(|c| c.held_back().is_some()))
        .map(|r| format!("{} at {}x{}x{}", r.step, r.m, r.n, r.k))
        .collect();
    common::clocks::refuse_held_back(&held_back)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_dates() {
        assert_eq!(slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
        assert_eq!(slug("  A100-SXM4 (40GB) "), "a100-sxm4-40gb");
        let d = today();
        assert_eq!((d.len(), &d[4..5], &d[7..8]), (10, "-", "-"));
        assert!(d.as_str() > "2026-01-01");
    }
}
