//! cuBLASLt's FP8 on a real GPU, the reference the FP8 rung is timed against: for each FP8
//! precision, one call checked against the float64 rows and cuBLAS's BF16 check of the same
//! values, then the doors the tools take (`usable_configs`, `checked_calls`, `time_configs`).
//! The shapes take the padded copy of B's block scales (K = 640: five K-blocks) and a beta that
//! reads C. Ignored (with the reason) without a Hopper GPU.

use common::harness::device::{Gpu, sync};
use common::timing::fairest::{Door, checked_calls};
use common::timing::lt::{CublasConfig, CublasInputs, CublasLt, time_configs, usable_configs};
use common::timing::runs::{Method, TimingPlan};
use common::verify::check::Prepared;
use common::verify::reference::Cublas;
use common::{Gemm, Precision, Shape, harness::data};
use libtest_mimic::{Arguments, Failed, Trial};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Duration;

const FP8: [Precision; 4] = [Precision::Fp8, Precision::Fp8C32, Precision::Fp8Block, Precision::Fp8BlockC32];

fn gemms() -> [Gemm; 2] {
    [Gemm::new(Shape::new(256, 384, 640), 1.0, 0.0), Gemm::new(Shape::new(512, 256, 1024), 1.5, -0.5)]
}

fn lt_computes(p: Precision, gemm: Gemm) -> Result<(), Failed> {
    // One trial at a time on the harness's stream.
    static ONE: Mutex<()> = Mutex::new(());
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let gpu = Gpu::shared()?;
    let blas = Cublas::new(&gpu)?;
    let mut lt = CublasLt::new(&gpu)?;
    let prepared = Prepared::new(&gpu, &blas, &gemm, p, data::fresh_seed())?;
    let inputs = CublasInputs::new(&gpu, &prepared)?;
    let mut c = prepared.fresh_c(&gpu, 0)?;
    inputs.lt(&gpu, &mut lt, &mut c, 0)?;
    sync(&gpu, "cuBLASLt FP8")?;
    let verified = prepared.check_result(&c.download(&gpu)?);
    if !verified.passed() {
        return Err(verified.report("cublasLt").into());
    }
    println!("{}", verified.report("cublasLt"));
    // The tools' doors: cuBLASLt alone, checked, and timed.
    let usable = usable_configs(&gpu, &blas, &mut lt, &prepared, true, &mut Vec::new())?;
    if usable != [CublasConfig::Lt] {
        return Err(format!("usable configurations {usable:?}, not cuBLASLt alone").into());
    }
    let (ok, wrong) = checked_calls(&gpu, &blas, &mut lt, &prepared, 2)?;
    if !wrong.is_empty() || ok.iter().any(|(call, _)| call.door == Door::GemmEx) {
        return Err(format!("checked calls {ok:?}, wrong: {wrong:?}").into());
    }
    let plan = TimingPlan {
        settle: Duration::from_millis(20),
        measure: Duration::from_millis(20),
        rounds: 1,
        min_reps: 3,
        max_reps: 10,
        method: Method::OneAtATime,
    };
    let (_, timed) = time_configs(&gpu, &blas, &mut lt, &prepared, plan, &usable, None)?;
    match timed.as_slice() {
        [(CublasConfig::Lt, t)] if t.median_ms > 0.0 => Ok(()),
        other => Err(format!("timings {other:?}").into()),
    }
}

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let missing = Gpu::shared().and_then(|gpu| gpu.require_cc((9, 0), "cuBLASLt's FP8 block scaling")).err();
    if let Some(why) = &missing {
        eprintln!("note: the cuBLASLt FP8 GPU tests are ignored: {why}");
    }
    let trials = FP8
        .into_iter()
        .flat_map(|p| gemms().map(move |g| (p, g)))
        .map(|(p, g)| {
            let name = format!("{p}/{}/alpha={},beta={}", g.shape, g.alpha, g.beta);
            Trial::test(name, move || lt_computes(p, g)).with_ignored_flag(missing.is_some())
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}
