//! The shared GPU test suite. A step's `tests/gpu.rs` is `common::testing::main(&STEP)`.
//! Every test is reported as ignored (with the reason) on a machine without a usable GPU,
//! and runs by itself where there is one.

use crate::harness::device::Gpu;
use crate::harness::runner::Runner;
use crate::harness::step::Step;
use crate::verify::check::{Prepared, Verified, verify};
use crate::verify::probe::Probe;
use crate::verify::reference::Cublas;
use crate::{Error, Gemm, Precision, Shape, harness::data};
use libtest_mimic::{Arguments, Failed, Trial};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, OnceLock};

/// The shapes every step is verified on: tiny, prime, around tile sizes, odd, skinny, big.
pub const SHAPE_SUITE: &[Shape] = &[
    Shape::new(1, 1, 1),
    Shape::new(2, 3, 5),
    Shape::new(7, 11, 13),
    Shape::new(13, 7, 3),
    Shape::cube(31),
    Shape::cube(32),
    Shape::cube(33),
    Shape::new(31, 32, 33),
    Shape::new(33, 31, 32),
    Shape::cube(127),
    Shape::cube(128),
    Shape::cube(129),
    Shape::new(127, 129, 128),
    Shape::new(1000, 1001, 999),
    Shape::new(17, 4096, 3),
    Shape::cube(4096),
];

/// (alpha, beta) pairs run on every shape of the suite. beta == 0 starts with C full of NaN.
pub const SUITE_SCALARS: &[(f32, f32)] = &[(1.0, 0.0), (-1.5, 0.75)];

/// Edge cases of BLAS semantics, each on its own shape.
pub const EDGE_CASES: &[(Shape, f32, f32)] = &[
    (Shape::new(31, 32, 33), 0.0, 1.0), // alpha = 0: C = beta*C
    (Shape::new(31, 32, 33), 0.0, 0.0), // C = 0, NaN in C must not survive
    (Shape::new(31, 32, 33), 2.0, -1.0),
    (Shape::new(33, 31, 32), 1.0, 1.0),
    (Shape::new(33, 31, 0), 1.0, 0.5), // K = 0: C = beta*C
    (Shape::new(33, 31, 0), 1.0, 0.0), // K = 0, beta = 0: C = 0
    (Shape::new(0, 31, 32), 1.0, 0.0), // empty C: nothing to do
    (Shape::new(31, 0, 32), 1.0, 0.0),
];

/// The precision probes ([`crate::verify::probe`]) a step in precision `p` must answer exactly:
/// those that claim FP32 accuracy (FP32, 3xTF32, FP64). The lower precisions fail them by design
/// (FP8 most of all: e4m3 holds 4 significant bits, the probes' values 12 or 22).
pub fn probes_for(p: Precision) -> Vec<Probe> {
    if p.fp32_accurate() { crate::verify::probe::probes() } else { Vec::new() }
}

/// A probe's verdict: the usual checks, and every element equal to the float64 answer.
pub fn probe_verdict(v: &Verified, kernel: &str) -> Result<(), String> {
    let inexact = v.vs_cpu.inexact_elements;
    if !v.passed() {
        Err(v.report(kernel))
    } else if inexact > 0 {
        Err(format!(
            "{inexact} of {} elements differ from the exact answer, which FP32 arithmetic gets in any \
             summation order on these inputs: the kernel rounds its inputs or products to fewer bits; {}",
            v.vs_cpu.compared,
            v.report(kernel)
        ))
    } else {
        Ok(())
    }
}

fn run_probe(step: &Step, probe: Probe) -> Result<(), Failed> {
    let (gpu, blas) = shared().map_err(|e| e.to_string())?;
    let blas = blas.lock().unwrap_or_else(|p| p.into_inner());
    let mut runner = Runner::new(&gpu, step, None).map_err(|e| e.to_string())?;
    let seed = data::fresh_seed();
    let p = Prepared::with_inputs(&gpu, &blas, &probe.gemm, step.precision, seed, probe.inputs(seed))
        .map_err(|e| e.to_string())?;
    let verified = p.check(&mut runner).map_err(|e| e.to_string())?;
    Ok(probe_verdict(&verified, &runner.kernel.name)?)
}

/// Shapes and scalars of the non-finite cases: inf and NaN in A and B, on the edge path and
/// on the fast path of every step.
pub const NONFINITE_CASES: &[(Shape, f32, f32)] =
    &[(Shape::new(33, 31, 32), 1.5, 0.0), (Shape::cube(128), -1.0, 0.5), (Shape::new(127, 129, 128), 1.0, 0.0)];

/// Every verified case of the suite.
pub fn cases() -> Vec<Gemm> {
    let suite = SHAPE_SUITE.iter().flat_map(|&s| SUITE_SCALARS.iter().map(move |&(a, b)| Gemm::new(s, a, b)));
    suite.chain(EDGE_CASES.iter().map(|&(s, a, b)| Gemm::new(s, a, b))).collect()
}

/// Cases run three times on one loaded kernel, with fresh inputs each time: a kernel that keeps
/// state in its module's globals must leave it ready for the next launch. On an H100 (66 clusters
/// of two) all three make steps 11 and 12 cut their last turn along K; a tile is then completed
/// from 5-6, 13-14 and 22 pieces.
pub const REPEAT_CASES: &[(Shape, f32, f32)] = &[
    (Shape::new(1100, 4000, 3001), -1.5, 0.75),
    (Shape::new(250, 18100, 2000), 1.0, 0.0),
    (Shape::new(60, 17600, 2800), 1.5, 0.0),
];

/// Cases a step adds to the shared suite for what is its own: `shapes`, each run with every pair
/// of [`SUITE_SCALARS`], and `repeatable` cases, each launched twice on the same inputs, which
/// must give the same bits (a reduction in a fixed order).
pub struct OwnCases {
    pub shapes: &'static [Shape],
    pub repeatable: &'static [(Shape, f32, f32)],
}

impl OwnCases {
    /// The shared suite alone.
    pub const NONE: OwnCases = OwnCases { shapes: &[], repeatable: &[] };
}

/// The GPU and cuBLAS handle the whole test binary shares, or why there is none.
fn shared() -> Result<(Arc<Gpu>, Arc<Mutex<Cublas>>), Error> {
    static BLAS: OnceLock<Result<Arc<Mutex<Cublas>>, Error>> = OnceLock::new();
    let gpu = Gpu::shared()?;
    let blas = BLAS.get_or_init(|| Cublas::new(&gpu).map(|b| Arc::new(Mutex::new(b)))).clone()?;
    Ok((gpu, blas))
}

/// `gemm` verified `times` times in a row on one runner (one loaded module), fresh inputs each time.
fn run_case(step: &Step, gemm: Gemm, times: usize) -> Result<(), Failed> {
    let (gpu, blas) = shared().map_err(|e| e.to_string())?;
    let blas = blas.lock().unwrap_or_else(|p| p.into_inner());
    let mut runner = Runner::new(&gpu, step, None).map_err(|e| e.to_string())?;
    for run in 1..=times {
        let verified = verify(&mut runner, &blas, &gemm, data::fresh_seed()).map_err(|e| e.to_string())?;
        if !verified.passed() {
            return Err(format!("launch {run} of {times}: {}", verified.report(&runner.kernel.name)).into());
        }
    }
    Ok(())
}

/// Random inputs with +inf and NaN in two rows of A (the first and the last) and -inf and
/// +inf in two columns of B (the last and the middle), at random depths: those rows and
/// columns of C must come out non-finite, of the same kind as in cuBLAS's and the float64
/// result, and every other element finite and correct.
pub fn nonfinite_inputs(gemm: &Gemm, seed: u64) -> data::Inputs {
    let Shape { m, n, k } = gemm.shape;
    let mut x = data::Inputs::new(gemm, seed);
    let mut rng = data::Rng::new(seed ^ 0x0f0f_0f0f);
    let mut depth = || (rng.next_u64() % k as u64) as usize;
    x.a[depth()] = f32::INFINITY;
    x.a[(m - 1) * k + depth()] = f32::NAN;
    x.b[depth() * n + n - 1] = f32::NEG_INFINITY;
    x.b[depth() * n + n / 2] = f32::INFINITY;
    x
}

/// `gemm` launched twice on one runner with the same inputs: both results pass and are the same
/// bits.
fn run_repeatable(step: &Step, gemm: Gemm) -> Result<(), Failed> {
    let (gpu, blas) = shared().map_err(|e| e.to_string())?;
    let blas = blas.lock().unwrap_or_else(|p| p.into_inner());
    let mut runner = Runner::new(&gpu, step, None).map_err(|e| e.to_string())?;
    let p = Prepared::new(&gpu, &blas, &gemm, step.precision, data::fresh_seed()).map_err(|e| e.to_string())?;
    let mut results = Vec::new();
    for _ in 0..2 {
        let mut c = p.fresh_c(&gpu, 0).map_err(|e| e.to_string())?;
        runner.run(&gemm, &p.a, &p.b, &mut c).map_err(|e| e.to_string())?;
        crate::harness::device::sync(&gpu, &runner.kernel.name).map_err(|e| e.to_string())?;
        let verified = p.check_result(&c.download(&gpu).map_err(|e| e.to_string())?);
        if !verified.passed() {
            return Err(verified.report(&runner.kernel.name).into());
        }
        results.push(c.bytes(&gpu).map_err(|e| e.to_string())?);
    }
    let differ = results[0].iter().zip(&results[1]).filter(|(a, b)| a != b).count();
    if differ > 0 {
        return Err(format!(
            "two launches on the same inputs differ in {differ} bytes of C: the sums are not added in a fixed order"
        )
        .into());
    }
    Ok(())
}

fn run_nonfinite_case(step: &Step, gemm: Gemm) -> Result<(), Failed> {
    let (gpu, blas) = shared().map_err(|e| e.to_string())?;
    let blas = blas.lock().unwrap_or_else(|p| p.into_inner());
    let mut runner = Runner::new(&gpu, step, None).map_err(|e| e.to_string())?;
    let seed = data::fresh_seed();
    let x = nonfinite_inputs(&gemm, seed);
    let p = Prepared::with_inputs(&gpu, &blas, &gemm, step.precision, seed, x).map_err(|e| e.to_string())?;
    let verified = p.check(&mut runner).map_err(|e| e.to_string())?;
    let Shape { m, n, .. } = gemm.shape;
    // Two whole rows and two whole columns of C, each element once.
    let expected = 2 * n + 2 * m - 4;
    for c in [&verified.vs_cpu, &verified.vs_cublas] {
        if c.nonfinite_matched != expected && c.nan_elements == 0 {
            return Err(
                format!("{} non-finite elements expected, {} matched: {c}", expected, c.nonfinite_matched).into()
            );
        }
    }
    if verified.passed() { Ok(()) } else { Err(verified.report(&runner.kernel.name).into()) }
}

/// Shapes whose launches cover every variant a step picks: the suite, the edge cases, the bench
/// shapes, a few alignments and the large shapes of the sweep.
pub fn variant_shapes() -> Vec<Shape> {
    let mut v: Vec<Shape> = SHAPE_SUITE.to_vec();
    v.extend(EDGE_CASES.iter().map(|c| c.0));
    v.extend(REPEAT_CASES.iter().map(|c| c.0));
    v.extend(crate::tools::bench::DEFAULT_SHAPES);
    v.extend([
        Shape::new(4096, 11008, 4096),
        Shape::new(16, 11008, 4096),
        Shape::new(8192, 1024, 4096),
        Shape::cube(8192),
    ]);
    v.extend([Shape::new(100, 100, 100), Shape::new(64, 64, 66), Shape::new(64, 66, 64), Shape::new(66, 64, 64)]);
    v.extend(crate::verify::probe::probes().iter().map(|p| p.gemm.shape));
    v
}

/// Every distinct launch (by its defines) a step picks for [`variant_shapes`].
pub fn variants(step: &Step) -> Vec<crate::Launch> {
    variants_for(step, &variant_shapes())
}

/// Every distinct launch (by its defines) a step picks for `shapes`.
pub fn variants_for(step: &Step, shapes: &[Shape]) -> Vec<crate::Launch> {
    let mut out: Vec<crate::Launch> = Vec::new();
    for s in shapes.iter().filter(|s| !s.is_empty()) {
        let l = (step.launch)(s);
        if !out.iter().any(|o| o.defines == l.defines) {
            out.push(l);
        }
    }
    out
}

/// The targets a step's kernel is compiled for without a GPU
/// ([`crate::tools::cli::default_targets`]).
pub fn compile_targets(step: &Step) -> Vec<&'static str> {
    crate::tools::cli::default_targets(step)
}

/// Whether `old` (a kernel with its shared headers as of an older commit) and the step's kernel
/// today compile to the same machine code, in every variant the step launches for
/// [`variant_shapes`] and `shapes` (those of the recorded runs) and for every target: every
/// section of the two CUBINs but the debug information (the line tables), byte for byte
/// ([`crate::harness::cubin::machine_code`]). Then results measured with `old` were measured
/// with today's machine code. The count of CUBINs compared, or the first variant that differs.
pub fn same_machine_code(
    step: &Step,
    old: &crate::KernelSource,
    old_headers: &[(&str, &str)],
    shapes: &[Shape],
) -> Result<usize, String> {
    let all: Vec<Shape> = variant_shapes().into_iter().chain(shapes.iter().copied()).collect();
    same_machine_code_at(step, old, old_headers, &all)
}

/// The same comparison in the variants the step launches for `shapes` alone: for a record of
/// those shapes only (a profile is one launch at one shape), which stays true where their
/// machine code did though another shape's changed.
pub fn same_machine_code_at(
    step: &Step,
    old: &crate::KernelSource,
    old_headers: &[(&str, &str)],
    all: &[Shape],
) -> Result<usize, String> {
    use crate::harness::compile::{compile, compile_with_headers};
    use crate::harness::cubin::machine_code;
    let mut compared = 0;
    for launch in variants_for(step, all) {
        for arch in compile_targets(step) {
            let then = compile_with_headers(old, old_headers, &launch.defines, arch)
                .map_err(|e| format!("{} as it was: {e}", step.id()))?;
            let now = compile(&step.kernel, &launch.defines, arch).map_err(|e| format!("{}: {e}", step.id()))?;
            let same = match (machine_code(&then.cubin), machine_code(&now.cubin)) {
                (Ok(then), Ok(now)) => then == now,
                (Err(e), _) | (_, Err(e)) => return Err(format!("{} on {arch}: {e}", step.id())),
            };
            if !same {
                return Err(format!(
                    "{} compiles to other machine code on {arch} with {:?}",
                    step.id(),
                    launch.defines
                ));
            }
            compared += 1;
        }
    }
    Ok(compared)
}

/// Compiles one variant and checks what ptxas reports: no spills, no stack, and no wgmma that
/// ptxas had to serialize (its notes C7512, C7519: a slow kernel, still correct).
pub fn compiles_cleanly(source: &crate::KernelSource, defines: &[(&str, i64)], arch: &str) -> Result<(), String> {
    let c = crate::harness::compile::compile(source, defines, arch).map_err(|e| e.to_string())?;
    let r = c.resources;
    if r.registers == 0 {
        return Err(format!("no ptxas report in the NVRTC log, so spills cannot be checked:\n{}", c.log));
    }
    if r.spills() > 0 || r.stack_bytes > 0 {
        return Err(format!("{} {defines:?} on {arch} spills: {r:?}\n{}", source.name, c.log));
    }
    if c.log.contains("wgmma.mma_async instructions are serialized") || c.log.contains("warpgroup.arrive is injected") {
        return Err(format!("{} {defines:?} on {arch}: ptxas serializes the wgmma:\n{}", source.name, c.log));
    }
    Ok(())
}

/// Whether a missing NVRTC fails instead of leaving the compile trials ignored: CI sets
/// `SGEMM_REQUIRE_NVRTC`, and so does a lab handout (in its `.cargo/config.toml`), where a
/// student's `cargo test` must never say ok without having compiled the kernel.
pub fn nvrtc_required() -> bool {
    std::env::var_os("SGEMM_REQUIRE_NVRTC").is_some()
}

/// The one line a required NVRTC that is missing fails with: what to install, and that an install
/// in a virtual environment is found while the environment is active.
pub fn nvrtc_missing() -> String {
    format!(
        "the kernel must be compiled here (SGEMM_REQUIRE_NVRTC is set: CI, or a lab handout), but {}; \
         an install in a virtual environment is found while it is active (`source VENV/bin/activate`)",
        Error::NoNvrtc
    )
}

/// One trial per variant and target: the step's kernel compiles with NVRTC, no GPU needed.
/// Without NVRTC they are ignored, or, where it is required, one trial fails with [`nvrtc_missing`].
pub fn compile_trials(step: &Step) -> Vec<Trial> {
    let missing = !crate::harness::device::nvrtc_present();
    let prefix = if step.precision == Precision::F32 { String::new() } else { format!("{}/", step.precision) };
    if missing && nvrtc_required() {
        return vec![Trial::test(format!("{prefix}compile/nvrtc"), || Err(nvrtc_missing().into())).with_kind("nvrtc")];
    }
    let mut out = Vec::new();
    for launch in variants(step) {
        for arch in compile_targets(step) {
            let defines: String = launch.defines.iter().map(|(n, v)| format!("/{n}={v}")).collect();
            let (source, defines_list) = (step.kernel.clone(), launch.defines.clone());
            out.push(
                Trial::test(format!("{prefix}compile/{arch}{defines}"), move || {
                    Ok(compiles_cleanly(&source, &defines_list, arch)?)
                })
                .with_kind("nvrtc")
                .with_ignored_flag(missing),
            );
        }
    }
    out
}

/// One trial per case, the step's own among them, named like `31x32x33/alpha=-1.5,beta=0.75`
/// (`fp16/31x32x33/...` for the tensor-core precisions).
pub fn trials(step: &Step, own: &OwnCases) -> Vec<Trial> {
    let missing = shared().err().filter(Error::is_missing_gpu).or_else(|| {
        // A GPU that cannot run this step (too old, or not the one architecture it is built for).
        let gpu = Gpu::shared().ok()?;
        let fits = gpu.require_cc(step.min_cc, &step.id());
        let fits = fits.and_then(|()| step.arch.map_or(Ok(()), |a| gpu.require_exact_cc(step.min_cc, a, &step.id())));
        fits.err()
    });
    if let Some(why) = &missing {
        eprintln!("note: {} GPU tests are ignored: {why}", step.id());
    }
    let prefix = if step.precision == Precision::F32 { String::new() } else { format!("{}/", step.precision) };
    let name =
        |what: &str, gemm: &Gemm| format!("{prefix}{what}{}/alpha={},beta={}", gemm.shape, gemm.alpha, gemm.beta);
    let scaled = |&s: &Shape| SUITE_SCALARS.iter().map(move |&(a, b)| Gemm::new(s, a, b));
    let suite = cases().into_iter().chain(own.shapes.iter().flat_map(scaled)).map(|gemm| {
        let step = step.clone();
        Trial::test(name("", &gemm), move || run_case(&step, gemm, 1))
    });
    let repeatable = own.repeatable.iter().map(|&(s, a, b)| {
        let (step, gemm) = (step.clone(), Gemm::new(s, a, b));
        Trial::test(name("same-bits/", &gemm), move || run_repeatable(&step, gemm))
    });
    let nonfinite = NONFINITE_CASES.iter().map(|&(s, a, b)| {
        let (step, gemm) = (step.clone(), Gemm::new(s, a, b));
        Trial::test(name("inf-nan/", &gemm), move || run_nonfinite_case(&step, gemm))
    });
    let repeat = REPEAT_CASES.iter().map(|&(s, a, b)| {
        let (step, gemm) = (step.clone(), Gemm::new(s, a, b));
        Trial::test(name("again/", &gemm), move || run_case(&step, gemm, 3))
    });
    let probes = probes_for(step.precision).into_iter().map(|probe| {
        let step = step.clone();
        Trial::test(format!("{prefix}probe/{probe}"), move || run_probe(&step, probe))
    });
    suite
        .chain(nonfinite)
        .chain(repeat)
        .chain(repeatable)
        .chain(probes)
        .map(|t| t.with_kind("gpu").with_ignored_flag(missing.is_some()))
        .collect()
}

/// Main of a step's test binary: the kernel's compile trials (NVRTC, no GPU) and the GPU suite.
/// Runs tests one at a time: they share one GPU.
pub fn main(step: &Step) -> ExitCode {
    main_variants(std::slice::from_ref(step))
}

/// Main of the GPU test binary of a step with one `Step` per precision: the suite in each.
pub fn main_variants(variants: &[Step]) -> ExitCode {
    main_variants_with(variants, &OwnCases::NONE)
}

/// [`main_variants`] with the step's own cases beside the shared suite.
pub fn main_variants_with(variants: &[Step], own: &OwnCases) -> ExitCode {
    crate::tools::cli::program_start();
    let mut args = Arguments::from_args();
    args.test_threads.get_or_insert(1);
    if !crate::harness::device::nvrtc_present() {
        match nvrtc_required() {
            true => eprintln!("error: {}", nvrtc_missing()),
            false => eprintln!("note: the kernel's compile tests are ignored: {}", Error::NoNvrtc),
        }
    }
    // A step of several precisions compiles one kernel: its first variant reports a missing NVRTC.
    let all = variants
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            let compiles =
                compile_trials(s).into_iter().filter(move |t| i == 0 || !t.name().ends_with("compile/nvrtc"));
            compiles.chain(trials(s, own))
        })
        .collect();
    libtest_mimic::run(&args, all).exit_code()
}
