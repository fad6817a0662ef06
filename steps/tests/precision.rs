//! FP32 means FP32: kernels that compute in a lower precision (`tests/fixtures/reduced.cu`:
//! TF32, FP16 or BF16 inputs, or FP32 products cut to 16 bits) must fail the FP32 check at
//! every K from 64 to the suite's largest, on random data and on every precision probe, while
//! the FP32 steps and 3xTF32 pass. The `table` trial prints, per K, the bound and every
//! kernel's error (the figures of `notes/precision.md`). The `tf32-ties` trials pin the rule by
//! which each TF32 kernel rounds an input that lies exactly between two TF32 values. Without
//! NVRTC the compile trials are ignored, without a GPU the rest.

use common::harness::compile::compile;
use common::harness::device::{Gpu, nvrtc_present};
use common::harness::launch::with_defines;
use common::harness::matrix::DeviceMatrix;
use common::harness::precision::{tf32_rna, tf32_rne};
use common::harness::runner::Runner;
use common::tools::testing::probe_verdict;
use common::verify::check::{Prepared, Verified};
use common::verify::probe::probes;
use common::verify::reference::Cublas;
use common::{Gemm, KernelSource, Precision, Shape, Step, harness::data};
use libtest_mimic::{Arguments, Failed, Trial};
use std::sync::{Arc, Mutex, OnceLock};

/// The lower precisions of the fixture, by its `ROUND` define.
const FIXTURES: [(&str, i64); 4] =
    [("tf32-inputs", 1), ("fp16-inputs", 2), ("bf16-inputs", 3), ("products-16-bits", 4)];

/// Every K the claim is made at: 64 to the suite's largest, and the suite's 999.
const KS: [usize; 8] = [64, 128, 256, 512, 999, 1024, 2048, 4096];

/// The random problems: square in M and N, not a tile multiple, K as given.
fn random_gemm(k: usize) -> Gemm {
    Gemm::new(Shape::new(255, 257, k), 1.0, 0.0)
}

fn fixture() -> KernelSource {
    KernelSource {
        name: "steps/tests/fixtures/reduced.cu".into(),
        code: include_str!("fixtures/reduced.cu").into(),
        headers: &[],
    }
}

/// The GPU and cuBLAS of the whole binary, or why there are none.
fn shared() -> Result<(Arc<Gpu>, Arc<Mutex<Cublas>>), common::Error> {
    static BLAS: OnceLock<Result<Arc<Mutex<Cublas>>, common::Error>> = OnceLock::new();
    let gpu = Gpu::shared()?;
    let blas = BLAS.get_or_init(|| Cublas::new(&gpu).map(|b| Arc::new(Mutex::new(b)))).clone()?;
    Ok((gpu, blas))
}

/// A runner of the fixture with `ROUND = round`, on step 1's launch geometry.
fn fixture_runner(gpu: &Arc<Gpu>, round: i64) -> common::Result<Runner> {
    let step = &step01_naive::STEP;
    Ok(Runner::new(gpu, step, Some(fixture()))?
        .with_launch(move |s| with_defines((step.launch)(s), &[("ROUND", round)])))
}

/// `runner` on a problem prepared in `precision` from `inputs`.
fn run(runner: &mut Runner, gemm: &Gemm, seed: u64, inputs: Option<common::Inputs>) -> Result<Verified, Failed> {
    let (gpu, blas) = shared().map_err(|e| e.to_string())?;
    let blas = blas.lock().unwrap_or_else(|p| p.into_inner());
    let p = runner.step.precision;
    let prepared = match inputs {
        Some(x) => Prepared::with_inputs(&gpu, &blas, gemm, p, seed, x),
        None => Prepared::new(&gpu, &blas, gemm, p, seed),
    }
    .map_err(|e| e.to_string())?;
    Ok(prepared.check(runner).map_err(|e| e.to_string())?)
}

fn fixture_fails_random(round: i64, k: usize) -> Result<(), Failed> {
    let (gpu, _) = shared().map_err(|e| e.to_string())?;
    let mut runner = fixture_runner(&gpu, round).map_err(|e| e.to_string())?;
    let v = run(&mut runner, &random_gemm(k), data::fresh_seed(), None)?;
    if v.vs_cpu.passed() {
        return Err(format!("a lower precision passed the FP32 check: {}", v.report("fixture")).into());
    }
    Ok(())
}

fn fixture_fails_probes(round: i64) -> Result<(), Failed> {
    let (gpu, _) = shared().map_err(|e| e.to_string())?;
    let mut runner = fixture_runner(&gpu, round).map_err(|e| e.to_string())?;
    for probe in probes() {
        let seed = data::fresh_seed();
        let v = run(&mut runner, &probe.gemm, seed, Some(probe.inputs(seed)))?;
        // TF32, FP16 and BF16 lose bits of every probe; 16-bit products keep the 12-bit ones.
        let must_fail = round != 4 || probe.bits == common::verify::probe::Bits::TwentyTwo;
        if must_fail && probe_verdict(&v, "fixture").is_ok() {
            return Err(format!("probe {probe}: a lower precision gave the exact FP32 answer").into());
        }
    }
    Ok(())
}

/// One row of the table: the FP32 bound and every kernel's error at one K, as relative
/// Frobenius errors (the bound converted with the run's own ||sigma|| / ||C||).
fn table_row(k: usize, kernels: &mut [(String, Runner)]) -> Result<String, Failed> {
    let gemm = random_gemm(k);
    let seed = data::fresh_seed();
    let mut cells = Vec::new();
    let mut bound = f64::NAN;
    let mut failures = Vec::new();
    for (name, runner) in kernels.iter_mut() {
        let v = run(runner, &gemm, seed, None)?;
        let c = &v.vs_cpu;
        if runner.step.precision == Precision::F32 && runner.kernel.name.contains("steps/tests/fixtures") {
            if c.passed() {
                failures.push(format!("{name} passed at K = {k}"));
            }
        } else if !v.passed() {
            failures.push(format!("{name} failed at K = {k}: {}", v.report(name)));
        }
        if runner.step.precision == Precision::F32 && c.scaled_error > 0.0 && bound.is_nan() {
            bound = c.frobenius_limit * c.rel_frobenius / c.scaled_error;
        }
        cells.push(format!("{:.2e} ({:.2} σ)", c.rel_frobenius, c.scaled_error));
    }
    if !failures.is_empty() {
        return Err(failures.join("\n").into());
    }
    Ok(format!("| {k} | {bound:.2e} | {} |", cells.join(" | ")))
}

fn table() -> Result<(), Failed> {
    let (gpu, _) = shared().map_err(|e| e.to_string())?;
    let e = |e: common::Error| e.to_string();
    let mut kernels: Vec<(String, Runner)> = Vec::new();
    for step in [&step01_naive::STEP, &step06_double_buffer::STEP] {
        kernels.push((format!("{} (FP32)", step.name), Runner::new(&gpu, step, None).map_err(e)?));
    }
    let hopper: &[&Step] = if gpu.cc == (9, 0) {
        &[&step08_mma_ldmatrix::TF32X3, &step13_3xtf32::TF32X3]
    } else {
        &[&step08_mma_ldmatrix::TF32X3]
    };
    for step in hopper {
        kernels.push((step.id(), Runner::new(&gpu, step, None).map_err(e)?));
    }
    for (name, round) in FIXTURES {
        kernels.push((format!("fixture {name}"), fixture_runner(&gpu, round).map_err(e)?));
    }
    let names: Vec<&str> = kernels.iter().map(|(n, _)| n.as_str()).collect();
    let mut out = format!(
        "FP32 bound and errors on {} (255 x 257 x K, random data in [-1, 1), alpha 1, beta 0): relative \
         Frobenius error against float64, and in sigmas of the FP32 error model (the bound is {:.1} sigma)\n\n\
         | K | FP32 bound | {} |\n|---:|---:|{}\n",
        gpu.describe(),
        common::verify::bound::FROBENIUS_SIGMAS,
        names.join(" | "),
        "---:|".repeat(names.len())
    );
    for k in KS {
        out += &table_row(k, &mut kernels)?;
        out.push('\n');
    }
    println!("{out}");
    Ok(())
}

/// A rounding rule of FP32 to TF32, by name.
type Rule = (&'static str, fn(f32) -> f32);
const TO_EVEN: Rule = ("to even", tf32_rne);
const AWAY: Rule = ("away from zero", tf32_rna);

/// Every TF32 kernel and the rule it rounds a tie by: steps 7 (WMMA's conversion) and 8
/// (`tf32_round`) round in registers, away from zero; step 13 has the TMA round as it loads, as
/// cuBLAS does, to even.
const TIE_RULES: [(&Step, Rule); 3] =
    [(&step07_wmma::TF32, AWAY), (&step08_mma_ldmatrix::TF32, AWAY), (&step13_3xtf32::TF32, TO_EVEN)];

/// `step` on A of exact ties (FP32 values halfway between two TF32 values, half of them with an
/// even and half with an odd last kept bit) times B = the identity: C is A rounded, element by
/// element, and must be exactly `rule`'s rounding, not the other rule's.
fn ties_follow(step: &'static Step, (name, rule): Rule) -> Result<(), Failed> {
    let (gpu, _) = shared().map_err(|e| e.to_string())?;
    let e = |e: common::Error| e.to_string();
    let (m, k) = (67, 72);
    let mut rng = data::Rng::new(data::fresh_seed());
    // Sign, an exponent for magnitudes in [0.5, 4), 10 random kept mantissa bits, then the
    // 13 dropped bits exactly at the halfway point.
    let a: Vec<f32> = (0..m * k)
        .map(|_| {
            let r = rng.next_u64();
            let (sign, exp, kept) = ((r & 1) as u32, 126 + (r >> 1) as u32 % 3, (r >> 8) as u32 & 0x3ff);
            f32::from_bits(sign << 31 | exp << 23 | kept << 13 | 0x1000)
        })
        .collect();
    let b: Vec<f32> = (0..k * k).map(|i| if i / k == i % k { 1.0 } else { 0.0 }).collect();
    let elem = step.precision.input();
    let (da, db) =
        (DeviceMatrix::guarded(&gpu, &a, elem, 0).map_err(e)?, DeviceMatrix::guarded(&gpu, &b, elem, 0).map_err(e)?);
    let mut c = DeviceMatrix::guarded(&gpu, &vec![f32::NAN; m * k], step.precision.output(), 0).map_err(e)?;
    let mut runner = Runner::new(&gpu, step, None).map_err(e)?;
    runner.run(&Gemm::new(Shape::new(m, k, k), 1.0, 0.0), &da, &db, &mut c).map_err(e)?;
    let got = c.download(&gpu).map_err(e)?;
    let (other_name, other) = if name == TO_EVEN.0 { AWAY } else { TO_EVEN };
    let (mut ours, mut theirs, mut neither) = (0, 0, 0);
    for (&x, &g) in a.iter().zip(&got) {
        match (g == rule(x) as f64, g == other(x) as f64) {
            (true, _) => ours += 1,
            (false, true) => theirs += 1,
            (false, false) => neither += 1,
        }
    }
    if ours != a.len() {
        return Err(format!(
            "{}: of {} ties, {ours} rounded {name}, {theirs} {other_name}, {neither} neither",
            step.id(),
            a.len()
        )
        .into());
    }
    Ok(())
}

fn fixture_compiles(round: i64, arch: &str) -> Result<(), Failed> {
    let launch = with_defines((step01_naive::STEP.launch)(&Shape::cube(64)), &[("ROUND", round)]);
    compile(&fixture(), &launch.defines, arch).map_err(|e| e.to_string())?;
    Ok(())
}

fn main() -> std::process::ExitCode {
    common::tools::cli::program_start();
    let args = Arguments::from_args();
    let no_nvrtc = !nvrtc_present();
    let no_gpu = shared().err().filter(common::Error::is_missing_gpu);
    if let Some(why) = &no_gpu {
        eprintln!("note: the precision fixtures' GPU tests are ignored: {why}");
    }
    let mut trials = Vec::new();
    for (name, round) in FIXTURES {
        for arch in ["sm_80", "sm_90"] {
            trials.push(
                Trial::test(format!("{name}/compiles-{arch}"), move || fixture_compiles(round, arch))
                    .with_kind("nvrtc")
                    .with_ignored_flag(no_nvrtc),
            );
        }
        for k in KS {
            trials.push(
                Trial::test(format!("{name}/fails-fp32-check/K={k}"), move || fixture_fails_random(round, k))
                    .with_kind("gpu")
                    .with_ignored_flag(no_gpu.is_some()),
            );
        }
        trials.push(
            Trial::test(format!("{name}/fails-probes"), move || fixture_fails_probes(round))
                .with_kind("gpu")
                .with_ignored_flag(no_gpu.is_some()),
        );
    }
    let cc = shared().ok().map(|(gpu, _)| gpu.cc);
    for (step, rule) in TIE_RULES {
        // A step this GPU cannot run (step 13 before Hopper) is ignored, like the GPU trials
        // on a machine without one.
        let runs = cc.is_some_and(|cc| cc >= step.min_cc);
        trials.push(
            Trial::test(format!("tf32-ties/{}-rounds-{}", step.id(), rule.0.replace(' ', "-")), move || {
                ties_follow(step, rule)
            })
            .with_kind("gpu")
            .with_ignored_flag(!runs),
        );
    }
    trials.push(Trial::test("table", table).with_kind("gpu").with_ignored_flag(no_gpu.is_some()));
    let mut args = args;
    args.test_threads.get_or_insert(1);
    libtest_mimic::run(&args, trials).exit_code()
}
