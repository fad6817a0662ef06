//! Checking a kernel: one problem prepared with both references (cuBLAS and a float64 CPU
//! product) and the scales of its bounds, a kernel run on a poisoned C, and the verdict.

use crate::harness::data::Inputs;
use crate::harness::device::{Gpu, sync};
use crate::harness::matrix::DeviceMatrix;
use crate::harness::precision::{Elem, Precision, Scaling};
use crate::harness::problem::{Gemm, Shape};
use crate::harness::quantize::{Operand, dequantize, quantize};
use crate::harness::runner::Runner;
use crate::verify::bound::Tolerance;
use crate::verify::compare::compare;
use crate::verify::reference::{Cublas, Reference, cpu_reference, reference_rows};
use crate::verify::report::Check;
use crate::verify::scales::{Scales, tf32_ties, tie_operands};
use crate::{Error, Result};

/// The result of one verified run.
pub struct Verified {
    pub gemm: Gemm,
    pub precision: Precision,
    pub seed: u64,
    /// The kernel against the float64 CPU reference of the inputs it multiplies (rounded to
    /// its precision): all rows, or sampled rows when large.
    pub vs_cpu: Check,
    /// The kernel against cuBLAS in the same precision, every element.
    pub vs_cublas: Check,
    /// FP16 and TF32: the kernel against the exact product of the unrounded FP32 inputs (the
    /// same rows as `vs_cpu`). What the precision costs; recorded, not pass/fail.
    pub vs_exact: Option<Check>,
}

impl Verified {
    pub fn passed(&self) -> bool {
        self.vs_cpu.passed() && self.vs_cublas.passed()
    }

    /// A multi-line report: what ran, and each check.
    pub fn report(&self, kernel: &str) -> String {
        let mut out = format!(
            "{kernel} ({}) on {} (seed {}):\n  {}\n  {}",
            self.precision, self.gemm, self.seed, self.vs_cpu, self.vs_cublas
        );
        if let Some(x) = &self.vs_exact {
            out += &format!(
                "\n  vs the exact product of the FP32 inputs (what {} rounding costs; not checked): rel. Frobenius error {:.2e}",
                self.precision, x.rel_frobenius
            );
        }
        out
    }
}

/// One problem ready to check kernels against: fresh random inputs on the GPU, stored as the
/// precision says, cuBLAS's result and the float64 CPU reference, computed once. `check` runs
/// a kernel on a freshly poisoned C (NaN when beta == 0, else the original C) and compares;
/// any number of kernels can be checked.
pub struct Prepared {
    pub gemm: Gemm,
    pub precision: Precision,
    pub seed: u64,
    /// The FP32 inputs as generated (A and B not yet rounded to the precision).
    pub inputs: Inputs,
    /// A and B as the kernel reads them.
    pub a: DeviceMatrix,
    pub b: DeviceMatrix,
    /// TF32: A and B already rounded to TF32, for cuBLAS (the kernel rounds its own), so that the
    /// two multiply the same values whatever rounding cuBLAS applies inside. FP8: the values the
    /// kernel multiplies, in BF16, for cuBLAS's BF16 product (B as K x N).
    rounded: Option<(DeviceMatrix, DeviceMatrix)>,
    scales: Scales,
    cpu: Reference,
    exact: Option<Reference>,
    cublas: Reference,
}

impl Prepared {
    pub fn new(gpu: &Gpu, cublas: &Cublas, gemm: &Gemm, precision: Precision, seed: u64) -> Result<Prepared> {
        Self::with_inputs(gpu, cublas, gemm, precision, seed, Inputs::new(gemm, seed))
    }

    /// [`Prepared::new`] on given inputs (the non-finite tests put inf and NaN into A and B). For
    /// block scales they are first varied block by block ([`Inputs::vary_by_block`]).
    pub fn with_inputs(
        gpu: &Gpu,
        cublas: &Cublas,
        gemm: &Gemm,
        precision: Precision,
        seed: u64,
        mut inputs: Inputs,
    ) -> Result<Prepared> {
        let (ein, eout) = (precision.input(), precision.output());
        let fp8 = precision.scaling().is_some();
        let Shape { m, n, k } = gemm.shape;
        if precision.scaling() == Some(Scaling::Block) {
            inputs.vary_by_block(gemm.shape, seed);
        }
        let (a, b, rounded_inputs) = if fp8 {
            // Quantized on the GPU; what the kernel multiplies is read back, exact in FP32.
            let a = quantize(gpu, precision, Operand::A, &inputs.a, m, k)?;
            let b = quantize(gpu, precision, Operand::B, &inputs.b, k, n)?;
            let ra = dequantize(gpu, precision, Operand::A, &a, m, k)?;
            let rb = dequantize(gpu, precision, Operand::B, &b, k, n)?;
            (a, b, Some((ra, rb)))
        } else {
            // What the kernel multiplies: copies only for the precisions that round their inputs.
            let round = |x: &[f32]| x.iter().map(|&v| precision.round_input(v)).collect::<Vec<f32>>();
            let a = DeviceMatrix::guarded(gpu, &inputs.a, ein, 0)?;
            let b = DeviceMatrix::guarded(gpu, &inputs.b, ein, 0)?;
            (a, b, precision.rounds_inputs().then(|| (round(&inputs.a), round(&inputs.b))))
        };
        let (ra, rb) = rounded_inputs.as_ref().map_or((&inputs.a[..], &inputs.b[..]), |(x, y)| (&x[..], &y[..]));
        // cuBLAS multiplies what the kernel multiplies: TF32 rounded here; FP8's values, exact in
        // BF16 (4 significant bits times a power of two), in a BF16 product (cublasGemmEx has no FP8).
        let rounded = match precision {
            Precision::Tf32 => Some((DeviceMatrix::guarded(gpu, ra, ein, 0)?, DeviceMatrix::guarded(gpu, rb, ein, 0)?)),
            _ if fp8 => {
                Some((DeviceMatrix::guarded(gpu, ra, Elem::Bf16, 0)?, DeviceMatrix::guarded(gpu, rb, Elem::Bf16, 0)?))
            }
            _ => None,
        };
        // A 16-bit C: the kernel reads C0 rounded to it, and its result is rounded once more.
        // cuBLAS's reference is its FP32 C of the same arithmetic on that C0, rounded here: its own
        // 16-bit C left a tenth of the elements wrong at 1000x1001x999 in BF16 on an H100
        // (notes/step12.md).
        let narrow = precision.output_unit_roundoff() > 0.0;
        let c0: std::borrow::Cow<[f32]> = if narrow {
            inputs.c0.iter().map(|&v| eout.store(v) as f32).collect()
        } else {
            std::borrow::Cow::Borrowed(&inputs.c0)
        };
        let (arithmetic, c_elem) = match () {
            _ if fp8 => (precision.cublas_gemm_ex(), Elem::F32),
            _ if narrow => (precision.arithmetic(), Elem::F32),
            _ => (precision, eout),
        };
        // With beta = 0 cuBLAS does not read C: no need to upload it.
        let mut c_ref = if gemm.beta == 0.0 {
            DeviceMatrix::uninit(gpu, c0.len(), c_elem)?
        } else {
            DeviceMatrix::guarded(gpu, &c0, c_elem, 0)?
        };
        let (ca, cb) = rounded.as_ref().map_or((&a, &b), |(x, y)| (x, y));
        cublas.gemm(gpu, arithmetic, gemm, ca, cb, &mut c_ref)?;
        sync(gpu, "cuBLAS")?;
        let unrounded = c_ref.download(gpu)?;
        // cuBLAS multiplied what the kernel multiplies (ra, rb): with alpha = 1 and beta = 0 its
        // result is A*B itself.
        let product = (gemm.alpha == 1.0 && gemm.beta == 0.0).then_some(&unrounded[..]);
        // TF32: the unrounded inputs, for the slack of ties rounded the other way.
        let fp32_inputs = (precision == Precision::Tf32).then_some((&inputs.a[..], &inputs.b[..]));
        let scales = scales_of(gpu, cublas, gemm, ra, rb, product, fp32_inputs)?;
        let from_cublas = if narrow { unrounded.iter().map(|&v| eout.store(v as f32)).collect() } else { unrounded };
        let rows = reference_rows(gemm);
        let cpu = cpu_reference(gemm, ra, rb, &c0, &rows);
        let exact = precision.rounds_inputs().then(|| cpu_reference(gemm, &inputs.a, &inputs.b, &c0, &rows));
        let cublas = Reference { rows: (0..gemm.shape.m).collect(), values: from_cublas };
        Ok(Prepared { gemm: *gemm, precision, seed, inputs, a, b, rounded, scales, cpu, exact, cublas })
    }

    /// A and B for cublasGemmEx: the kernel's, or for TF32 copies rounded on the host, or for FP8
    /// the values it multiplies in BF16.
    pub fn cublas_inputs(&self) -> (&DeviceMatrix, &DeviceMatrix) {
        self.rounded.as_ref().map_or((&self.a, &self.b), |(a, b)| (a, b))
    }

    /// cuBLAS's GEMM of the values the kernel multiplies into `c` (stored as the precision's
    /// output), as a speed to compare with: for FP8 in BF16 (cublasGemmEx has no FP8).
    pub fn cublas_gemm(&self, gpu: &Gpu, cublas: &Cublas, c: &mut DeviceMatrix) -> Result<()> {
        let (a, b) = self.cublas_inputs();
        cublas.gemm(gpu, self.precision.cublas_gemm_ex(), &self.gemm, a, b, c)
    }

    /// A fresh C for a run: C0 stored as the precision's output (NaN when beta == 0).
    pub fn fresh_c(&self, gpu: &Gpu, guard: usize) -> Result<DeviceMatrix> {
        DeviceMatrix::guarded(gpu, &self.inputs.c0, self.precision.output(), guard)
    }

    /// Runs the kernel once on a poisoned C and checks it against both references.
    pub fn check(&self, runner: &mut Runner) -> Result<Verified> {
        let gpu = runner.gpu.clone();
        let mut c = self.fresh_c(&gpu, 0)?;
        runner.run(&self.gemm, &self.a, &self.b, &mut c)?;
        sync(&gpu, &runner.kernel.name)?;
        Ok(self.check_result(&c.download(&gpu)?))
    }

    /// [`Prepared::check`], as an error carrying the report unless both checks pass (tools that
    /// must not time a wrong kernel).
    pub fn require(&self, runner: &mut Runner) -> Result<()> {
        let verified = self.check(runner)?;
        if verified.passed() { Ok(()) } else { Err(Error::BadInput(verified.report(&runner.kernel.name))) }
    }

    /// Checks a result C (M x N, row-major) computed from this problem's inputs.
    pub fn check_result(&self, got: &[f64]) -> Verified {
        let (gemm, c0, p) = (&self.gemm, &self.inputs.c0, self.precision);
        let against = |name, tol, reference| compare(name, gemm, tol, &self.scales, c0, got, reference);
        Verified {
            gemm: *gemm,
            precision: p,
            seed: self.seed,
            vs_cpu: against("CPU f64", Tolerance::vs_reference(p), &self.cpu),
            vs_cublas: against("cuBLAS", Tolerance::vs_cublas(p), &self.cublas),
            vs_exact: self.exact.as_ref().map(|r| against("exact FP32 product", Tolerance::vs_exact(p), r)),
        }
    }
}

impl Prepared {
    /// Checks a result against the float64 CPU rows alone (and the exact product of the FP32 inputs,
    /// for the precisions that round them): cheap at any size, for results that are references
    /// themselves (cuBLAS's other configurations).
    pub fn check_rows(&self, got: &[f64]) -> (Check, Option<Check>) {
        let (gemm, c0, p) = (&self.gemm, &self.inputs.c0, self.precision);
        let against = |name, tol, reference| compare(name, gemm, tol, &self.scales, c0, got, reference);
        let exact = self.exact.as_ref().map(|r| against("exact FP32 product", Tolerance::vs_exact(p), r));
        (against("CPU f64", Tolerance::vs_reference(p), &self.cpu), exact)
    }
}

/// The scales of the bounds ([`Scales`]: A*B and (A∘A)*(B∘B)) of the values a kernel multiplies:
/// on the CPU for small problems, with cuBLAS SGEMM for large ones (two more products next to
/// the reference's, instead of a CPU product of every row). `product`, when given, is A*B
/// already (the reference itself, when alpha = 1 and beta = 0). `unrounded`, for TF32, is the
/// FP32 inputs before rounding: the tie slack comes from them (on the GPU one more product, of
/// the operands concatenated along K); the other precisions have none and pay nothing.
fn scales_of(
    gpu: &Gpu,
    cublas: &Cublas,
    gemm: &Gemm,
    a: &[f32],
    b: &[f32],
    product: Option<&[f64]>,
    unrounded: Option<(&[f32], &[f32])>,
) -> Result<Scales> {
    let s = gemm.shape;
    if s.m * s.n * s.k <= 1 << 24 {
        let scales = Scales::new(gemm, a, b);
        return Ok(match unrounded {
            Some((ua, ub)) => scales.with_ties(tf32_ties(gemm, ua, ub)),
            None => scales,
        });
    }
    let multiply = |k: usize, x: &[f32], y: &[f32]| -> Result<Vec<f32>> {
        let (x, y) = (DeviceMatrix::from_host(gpu, x)?, DeviceMatrix::from_host(gpu, y)?);
        // beta = 0: C is not read, so whatever the allocation holds does not matter.
        let mut c = DeviceMatrix::uninit(gpu, s.m * s.n, crate::harness::precision::Elem::F32)?;
        cublas.sgemm(gpu, &Gemm::new(Shape { k, ..s }, 1.0, 0.0), &x, &y, &mut c)?;
        sync(gpu, "cuBLAS")?;
        Ok(c.download(gpu)?.into_iter().map(|v| v as f32).collect())
    };
    let square = |x: &[f32]| x.iter().map(|v| v * v).collect::<Vec<f32>>();
    let dot = match product {
        Some(p) => p.iter().map(|&v| v as f32).collect(),
        None => multiply(s.k, a, b)?,
    };
    let scales = Scales::from_products(s.n, dot, multiply(s.k, &square(a), &square(b))?);
    Ok(match unrounded {
        Some((ua, ub)) => {
            let (left, right) = tie_operands(s, ua, ub);
            scales.with_ties(multiply(2 * s.k, &left, &right)?)
        }
        None => scales,
    })
}

/// Runs the kernel and cuBLAS on fresh random inputs (`seed`), C poisoned first, and checks
/// the kernel against a float64 CPU reference and against cuBLAS.
pub fn verify(runner: &mut Runner, cublas: &Cublas, gemm: &Gemm, seed: u64) -> Result<Verified> {
    let precision = runner.step.precision;
    Prepared::new(&runner.gpu.clone(), cublas, gemm, precision, seed)?.check(runner)
}
