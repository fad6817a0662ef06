//! FP8's accumulation lesson: the tensor cores add FP8 products in a format narrower than FP32,
//! and step 14 promotes their sums into FP32 every 128 of K. Its experiment without the promotion
//! (`notes/experiments/step14-fp8/no-promotion.patch`) must fail the FP8 check at K = 16384 on
//! non-negative data (activations after a ReLU, whose partial sums grow with K), while the step
//! passes on it and on signed data. On signed data the experiment's error grows too, but stays
//! near the bound: only a few elements cross it, not every run. The `table` trial prints both kernels' errors over K (the figures of
//! `notes/step14.md`), and with `SGEMM_FP8_TABLE=FILE` writes them there as JSON. One more trial
//! guards the block scales: the experiment that applies a piece's first K-tile's scales to all of
//! its K-tiles (`one-k-tile-scales.patch`) must fail. Without a Hopper GPU the trials are ignored.

use common::harness::device::Gpu;
use common::harness::runner::Runner;
use common::verify::check::{Prepared, Verified};
use common::verify::reference::Cublas;
use common::{Gemm, Inputs, Shape, harness::data};
use libtest_mimic::{Arguments, Failed, Trial};
use std::sync::{Arc, Mutex, OnceLock};

/// The step and precision of the lesson: FP32 C, so that C's rounding hides nothing.
const STEP: &common::Step = &step14_fp8::FP8_C32;

/// The K of the claim, and the K of the table.
const CLAIM_K: usize = 16384;
const KS: [usize; 5] = [256, 1024, 4096, 8192, 16384];

/// The data: uniform in [-1, 1), or in [0, 1).
const DATA: [(&str, bool); 2] = [("signed", false), ("non-negative", true)];

fn shared() -> Result<(Arc<Gpu>, Arc<Mutex<Cublas>>), common::Error> {
    static BLAS: OnceLock<Result<Arc<Mutex<Cublas>>, common::Error>> = OnceLock::new();
    let gpu = Gpu::shared()?;
    let blas = BLAS.get_or_init(|| Cublas::new(&gpu).map(|b| Arc::new(Mutex::new(b)))).clone()?;
    Ok((gpu, blas))
}

/// Step 14, or (`promoted` false) its experiment without the promotion.
fn runner(promoted: bool) -> Result<Runner, Failed> {
    runner_of(STEP, (!promoted).then_some("no-promotion"))
}

/// `step`'s kernel, or its embedded experiment whose name holds `experiment`.
fn runner_of(step: &common::Step, experiment: Option<&str>) -> Result<Runner, Failed> {
    let (gpu, _) = shared().map_err(|e| e.to_string())?;
    let kernel = match experiment {
        None => None,
        Some(name) => {
            let found = steps::kernels::experiments(step.name).into_iter().find(|k| k.name.contains(name));
            Some(found.ok_or(format!("the {name} experiment is not embedded"))?)
        }
    };
    Ok(Runner::new(&gpu, step, kernel).map_err(|e| e.to_string())?)
}

/// The block scales read for the wrong K-tiles fail the check: the harness gives every block its
/// own power of two (`Inputs::vary_by_block`); on uniform data alone this experiment passed.
fn wrong_k_tile_scales_fail() -> Result<(), Failed> {
    let step = &step14_fp8::FP8_BLOCK;
    let mut r = runner_of(step, Some("one-k-tile-scales"))?;
    let (gpu, blas) = shared().map_err(|e| e.to_string())?;
    let blas = blas.lock().unwrap_or_else(|p| p.into_inner());
    let g = gemm(1024);
    let p = Prepared::new(&gpu, &blas, &g, step.precision, data::fresh_seed()).map_err(|e| e.to_string())?;
    let v = p.check(&mut r).map_err(|e| e.to_string())?;
    match v.vs_cpu.passed() {
        true => Err(format!("one K-tile's scales for all of K passed: {}", v.report(&r.kernel.name)).into()),
        false => Ok(()),
    }
}

/// 255 x 257 x K (a few tiles, each with all of K), alpha 1, beta 0.
fn gemm(k: usize) -> Gemm {
    Gemm::new(Shape::new(255, 257, k), 1.0, 0.0)
}

fn run(runner: &mut Runner, k: usize, non_negative: bool, seed: u64) -> Result<Verified, Failed> {
    let (gpu, blas) = shared().map_err(|e| e.to_string())?;
    let blas = blas.lock().unwrap_or_else(|p| p.into_inner());
    let g = gemm(k);
    let mut x = Inputs::new(&g, seed);
    if non_negative {
        for v in x.a.iter_mut().chain(x.b.iter_mut()) {
            *v = (*v + 1.0) / 2.0;
        }
    }
    let p = Prepared::with_inputs(&gpu, &blas, &g, STEP.precision, seed, x).map_err(|e| e.to_string())?;
    Ok(p.check(runner).map_err(|e| e.to_string())?)
}

/// At K = 16384 the step passes and the experiment fails the check against float64.
fn claim(promoted: bool, non_negative: bool) -> Result<(), Failed> {
    let mut r = runner(promoted)?;
    let v = run(&mut r, CLAIM_K, non_negative, data::fresh_seed())?;
    match (promoted, v.vs_cpu.passed()) {
        (true, false) => Err(format!("step 14 failed: {}", v.report(&r.kernel.name)).into()),
        (false, true) => Err(format!("the tensor cores' own sums passed: {}", v.report(&r.kernel.name)).into()),
        _ => Ok(()),
    }
}

/// Both kernels' relative Frobenius errors against float64 (of the FP8 values), and the step's
/// against the exact product of the unquantized inputs, per K and data.
fn table() -> Result<(), Failed> {
    let (gpu, _) = shared().map_err(|e| e.to_string())?;
    let (mut promoted, mut plain) = (runner(true)?, runner(false)?);
    let mut out = format!(
        "FP8 errors on {} ({} at 255 x 257 x K, alpha 1, beta 0): relative Frobenius error against \
         float64 of the FP8 values, with the promotion every 128 of K and without it (sigmas of the \
         FP8 bound in brackets: over 1 fails), and the step's against the exact product of the FP32 inputs\n\n\
         | data | K | promoted | not promoted | promoted vs FP32 inputs |\n|---|---:|---:|---:|---:|\n",
        gpu.describe(),
        STEP.id()
    );
    let mut rows = Vec::new();
    for (name, non_negative) in DATA {
        for k in KS {
            let seed = data::fresh_seed();
            let (p, n) = (run(&mut promoted, k, non_negative, seed)?, run(&mut plain, k, non_negative, seed)?);
            let exact = p.vs_exact.as_ref().map_or(f64::NAN, |c| c.rel_frobenius);
            out += &format!(
                "| {name} | {k} | {:.2e} ({:.2}) | {:.2e} ({:.2}) | {exact:.2e} |\n",
                p.vs_cpu.rel_frobenius, p.vs_cpu.scaled_error, n.vs_cpu.rel_frobenius, n.vs_cpu.scaled_error
            );
            rows.push(format!(
                "{{\"data\":\"{name}\",\"k\":{k},\"promoted\":{:e},\"promoted_sigmas\":{:e},\"plain\":{:e},\"plain_sigmas\":{:e},\"vs_fp32_inputs\":{exact:e},\"seed\":\"{seed}\"}}",
                p.vs_cpu.rel_frobenius, p.vs_cpu.scaled_error, n.vs_cpu.rel_frobenius, n.vs_cpu.scaled_error
            ));
        }
    }
    println!("{out}");
    if let Ok(path) = std::env::var("SGEMM_FP8_TABLE") {
        let json =
            format!("{{\"gpu\":\"{}\",\"step\":\"{}\",\"rows\":[\n{}\n]}}\n", gpu.name, STEP.id(), rows.join(",\n"));
        std::fs::write(&path, json).map_err(|e| format!("{path}: {e}"))?;
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    common::tools::cli::program_start();
    let args = Arguments::from_args();
    // The lesson needs Hopper (step 14 is sm_90a alone).
    let runs = shared().is_ok_and(|(gpu, _)| gpu.cc == (9, 0));
    if !runs {
        eprintln!("note: FP8's promotion trials are ignored: they need a Hopper GPU");
    }
    let mut trials = Vec::new();
    for (name, non_negative) in DATA {
        for (kernel, promoted) in [("step-passes", true), ("no-promotion-fails", false)] {
            if !promoted && !non_negative {
                continue;
            }
            trials.push(
                Trial::test(format!("{kernel}/K={CLAIM_K}/{name}"), move || claim(promoted, non_negative))
                    .with_kind("gpu")
                    .with_ignored_flag(!runs),
            );
        }
    }
    trials.push(Trial::test("table", table).with_kind("gpu").with_ignored_flag(!runs));
    trials.push(
        Trial::test("one-k-tile-scales-fails/fp8-block", wrong_k_tile_scales_fail)
            .with_kind("gpu")
            .with_ignored_flag(!runs),
    );
    let mut args = args;
    args.test_threads.get_or_insert(1);
    libtest_mimic::run(&args, trials).exit_code()
}
