//! Verification: a per-element bound and a Frobenius bound, both measured against the size of
//! the *terms* of `alpha*A*B + beta*C` rather than the size of the result (which can cancel to
//! almost nothing while its terms, and so its rounding errors, stay large). Both scale with K
//! and the precision. An element that is not finite must be exactly where the reference has a
//! non-finite value of the same kind (NaN, +inf or -inf); everywhere else it fails.

use crate::precision::Precision;
use crate::problem::Gemm;
use crate::reference::Reference;
use std::fmt;

/// Unit roundoff of FP32 (2^-24): the relative error of one rounding.
pub const F32_UNIT_ROUNDOFF: f64 = 1.0 / (1u64 << 24) as f64;

/// The error model for one comparison.
#[derive(Clone, Copy, Debug)]
pub struct Tolerance {
    /// Unit roundoff of the accumulation being checked.
    pub u: f64,
    /// How many roundings-worth the reference itself may be off (1 for a float64
    /// reference, 2 when comparing two results of the same precision, such as a kernel
    /// against cuBLAS).
    pub sides: f64,
    /// Tensor cores add with truncation (round toward zero), not to nearest: errors all lean
    /// the same way instead of cancelling like a random walk, so the Frobenius limit gets the
    /// same allowance as one element.
    pub truncated: bool,
    /// Unit roundoff of the inputs, when the comparison is with the exact product of the
    /// unrounded FP32 inputs (0 otherwise): each product a*b then carries up to 2 of these.
    pub input_u: f64,
}

impl Tolerance {
    pub const F32_VS_F64: Tolerance = Tolerance { u: F32_UNIT_ROUNDOFF, sides: 1.0, truncated: false, input_u: 0.0 };
    pub const F32_VS_F32: Tolerance = Tolerance { u: F32_UNIT_ROUNDOFF, sides: 2.0, ..Self::F32_VS_F64 };

    /// The kernel against the float64 product of the inputs it multiplies (rounded to its
    /// precision): only the accumulation is judged. Products of FP16, BF16 or TF32 values are
    /// exact in FP32; the tensor cores' FP32 additions truncate, an error of up to one ulp
    /// (2^-23) each. FP64 rounds to nearest; the float64 reference itself is a second side.
    /// 3xTF32 multiplies the unrounded FP32 inputs up to its splitting error, which is
    /// judged too (as `input_u`): it claims FP32 accuracy.
    pub fn vs_reference(p: Precision) -> Tolerance {
        let tensor_cores = Tolerance { u: 2.0 * F32_UNIT_ROUNDOFF, truncated: true, ..Self::F32_VS_F64 };
        match p {
            Precision::F32 => Self::F32_VS_F64,
            Precision::Tf32 | Precision::F16 | Precision::Bf16 => tensor_cores,
            Precision::Tf32x3 => Tolerance { input_u: p.input_unit_roundoff(), ..tensor_cores },
            Precision::F64 => Tolerance { u: f64::EPSILON / 2.0, sides: 2.0, ..Self::F32_VS_F64 },
        }
    }

    /// The kernel against cuBLAS in the same precision, on the same rounded inputs.
    pub fn vs_cublas(p: Precision) -> Tolerance {
        Tolerance { sides: 2.0, ..Self::vs_reference(p) }
    }

    /// The kernel against the exact product of the FP32 inputs: what rounding the inputs
    /// costs. Recorded for the book, not a pass/fail criterion.
    pub fn vs_exact(p: Precision) -> Tolerance {
        Tolerance { input_u: p.input_unit_roundoff(), ..Self::vs_reference(p) }
    }

    /// Roundings a K-term dot product may accumulate. The worst case is K (a sum of K
    /// terms, each FMA rounding once); rounding errors of random data add up like a random
    /// walk, about sqrt(K), so for large K we allow 8*sqrt(K) — far above what correct
    /// kernels show, far below what an indexing bug produces. Three more for alpha, beta.
    pub fn roundings(k: usize) -> f64 {
        let k = k as f64;
        k.min(8.0 * k.sqrt()) + 3.0
    }

    /// Bound on |got - expected| for one element. `scale` bounds the size of the terms:
    /// |alpha| * ||row of A|| * ||column of B|| + |beta| * |C0| (Cauchy-Schwarz bounds
    /// sum |a_ik * b_kj| by the product of the norms, so no second product is needed).
    pub fn element(&self, k: usize, scale: f64) -> f64 {
        (2.0 * self.input_u + self.sides * self.u * Self::roundings(k)) * scale + f64::MIN_POSITIVE
    }

    /// Bound on ||got - expected||_F / ||scale||_F, where scale is the per-element scale of
    /// the terms that [`Tolerance::element`] takes. Measured against the terms rather than
    /// the result, rounding errors that survive cancellation (a result far smaller than its
    /// terms) are still within it; against random-sign data the allowance below is generous,
    /// and it still catches a kernel that drops a single term of a K = 4096 dot product.
    pub fn frobenius(&self, k: usize) -> f64 {
        let accumulation = if self.truncated { Self::roundings(k) } else { 3.0 * (k as f64).sqrt() + 5.0 };
        2.0 * self.input_u + self.sides * self.u * accumulation
    }
}

/// The worst element of a comparison.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Worst {
    pub row: usize,
    pub col: usize,
    pub got: f64,
    pub expected: f64,
    pub bound: f64,
}

/// The outcome of comparing a result with a reference.
#[derive(Clone, Debug)]
pub struct Check {
    pub against: &'static str,
    /// ||got - expected||_F / ||expected||_F over the finite expected elements: the usual
    /// relative error, recorded with results. Not the pass/fail criterion (see `scaled_error`).
    pub rel_frobenius: f64,
    /// ||got - expected||_F / ||scale||_F: what [`Tolerance::frobenius`] bounds.
    pub scaled_error: f64,
    pub frobenius_limit: f64,
    /// Largest |got - expected| / bound over the compared elements (<= 1 passes).
    pub worst_ratio: f64,
    pub worst: Option<Worst>,
    pub bad_elements: usize,
    /// Elements whose finiteness differs from the reference: NaN or inf where the reference is
    /// finite (an unwritten element of a NaN-poisoned C, say), finite where it is not, or
    /// another kind of non-finite value (NaN for inf, or the wrong sign of inf).
    pub nan_elements: usize,
    /// Expected non-finite elements the kernel matched (inputs with inf or NaN).
    pub nonfinite_matched: usize,
    pub compared: usize,
}

impl Check {
    pub fn passed(&self) -> bool {
        self.bad_elements == 0 && self.nan_elements == 0 && self.scaled_error <= self.frobenius_limit
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.passed() { "ok" } else { "FAILED" };
        write!(
            f,
            "vs {}: {verdict}: Frobenius error {:.2e} of the terms' scale (limit {:.2e}; {:.2e} of the result), \
             {} of {} elements out of bounds, {} NaN/inf mismatches",
            self.against,
            self.scaled_error,
            self.frobenius_limit,
            self.rel_frobenius,
            self.bad_elements,
            self.compared,
            self.nan_elements
        )?;
        if self.nonfinite_matched > 0 {
            write!(f, ", {} non-finite elements as expected", self.nonfinite_matched)?;
        }
        if let Some(w) = self.worst {
            write!(
                f,
                "; worst C[{}][{}] = {} expected {} (|diff| {:.2e}, bound {:.2e})",
                w.row,
                w.col,
                w.got,
                w.expected,
                (w.got - w.expected).abs(),
                w.bound
            )?;
        }
        Ok(())
    }
}

/// The per-element scales of one problem: row norms of A and column norms of B.
pub struct Scales {
    a_rows: Vec<f64>,
    b_cols: Vec<f64>,
}

impl Scales {
    pub fn new(gemm: &Gemm, a: &[f32], b: &[f32]) -> Scales {
        let crate::Shape { m, n, k } = gemm.shape;
        let a_rows =
            (0..m).map(|i| a[i * k..(i + 1) * k].iter().map(|&x| (x as f64).powi(2)).sum::<f64>().sqrt()).collect();
        let mut b_cols = vec![0f64; n];
        for row in b.chunks_exact(n.max(1)).take(k) {
            for (acc, &x) in b_cols.iter_mut().zip(row) {
                *acc += (x as f64).powi(2);
            }
        }
        b_cols.iter_mut().for_each(|v| *v = v.sqrt());
        Scales { a_rows, b_cols }
    }

    /// ||row i of A||.
    pub fn a_row(&self, i: usize) -> f64 {
        self.a_rows[i]
    }

    /// ||column j of B||.
    pub fn b_col(&self, j: usize) -> f64 {
        self.b_cols[j]
    }
}

/// The kind of a value for the non-finite check: NaN, +inf, -inf, or finite.
fn kind(x: f64) -> u8 {
    if x.is_nan() {
        0
    } else if x == f64::INFINITY {
        1
    } else if x == f64::NEG_INFINITY {
        2
    } else {
        3
    }
}

/// Compares the rows of `got` (all of C, M x N) that `expected` holds.
pub fn compare(
    against: &'static str,
    gemm: &Gemm,
    tol: Tolerance,
    scales: &Scales,
    c0: &[f32],
    got: &[f64],
    expected: &Reference,
) -> Check {
    let (rows, expected) = (&expected.rows, &expected.values);
    let crate::Shape { n, k, .. } = gemm.shape;
    let (alpha, beta) = (gemm.alpha.abs() as f64, gemm.beta.abs() as f64);
    let mut check = Check {
        against,
        rel_frobenius: 0.0,
        scaled_error: 0.0,
        frobenius_limit: tol.frobenius(k),
        worst_ratio: 0.0,
        worst: None,
        bad_elements: 0,
        nan_elements: 0,
        nonfinite_matched: 0,
        compared: expected.len(),
    };
    let (mut diff2, mut ref2, mut scale2) = (0f64, 0f64, 0f64);
    for (i, &r) in rows.iter().enumerate() {
        for j in 0..n {
            let g = got[r * n + j];
            let e = expected[i * n + j];
            if !e.is_finite() {
                // Inputs with inf or NaN: the kernel must produce the same kind of value.
                if kind(g) == kind(e) {
                    check.nonfinite_matched += 1;
                } else {
                    check.nan_elements += 1;
                    check.worst_ratio = f64::INFINITY;
                    check.worst = Some(Worst { row: r, col: j, got: g, expected: e, bound: 0.0 });
                }
                continue;
            }
            let c_term = if gemm.beta == 0.0 { 0.0 } else { beta * (c0[r * n + j] as f64).abs() };
            let scale = alpha * scales.a_rows[r] * scales.b_cols[j] + c_term;
            let bound = tol.element(k, scale);
            let ratio = if g.is_finite() { (g - e).abs() / bound } else { f64::INFINITY };
            if !g.is_finite() {
                check.nan_elements += 1;
            } else {
                diff2 += (g - e).powi(2);
                if !approx::abs_diff_eq!(g, e, epsilon = bound) {
                    check.bad_elements += 1;
                }
            }
            ref2 += e * e;
            // An inf or NaN in another row or column makes this element's scale infinite
            // (a norm it shares), though its value is finite: leave it out of the sum.
            if scale.is_finite() {
                scale2 += scale * scale;
            }
            if ratio > check.worst_ratio || check.worst.is_none() {
                check.worst_ratio = ratio;
                check.worst = Some(Worst { row: r, col: j, got: g, expected: e, bound });
            }
        }
    }
    let relative = |norm2: f64| if norm2 > 0.0 { (diff2 / norm2).sqrt() } else { diff2.sqrt() };
    if check.nan_elements > 0 {
        check.rel_frobenius = f64::INFINITY;
        check.scaled_error = f64::INFINITY;
    } else {
        check.rel_frobenius = relative(ref2);
        check.scaled_error = relative(scale2);
    }
    check
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::cpu_reference;
    use crate::{Inputs, Shape};

    fn setup(shape: Shape, beta: f32) -> (Gemm, Inputs, Vec<f64>, Reference) {
        let gemm = Gemm::new(shape, 1.5, beta);
        let inputs = Inputs::new(&gemm, 42);
        let rows: Vec<usize> = (0..shape.m).collect();
        let r = cpu_reference(&gemm, &inputs.a, &inputs.b, &inputs.c0, &rows);
        // A float32 result: the reference rounded once.
        let got = r.values.iter().map(|&v| v as f32 as f64).collect();
        (gemm, inputs, got, r)
    }

    fn check(gemm: &Gemm, inputs: &Inputs, got: &[f64], exp: &Reference) -> Check {
        let scales = Scales::new(gemm, &inputs.a, &inputs.b);
        compare("test", gemm, Tolerance::F32_VS_F64, &scales, &inputs.c0, got, exp)
    }

    #[test]
    fn a_correctly_rounded_result_passes() {
        let (gemm, inputs, got, exp) = setup(Shape::new(33, 31, 129), 0.75);
        let c = check(&gemm, &inputs, &got, &exp);
        assert!(c.passed(), "{c}");
    }

    #[test]
    fn one_wrong_element_fails_and_is_named() {
        let (gemm, inputs, mut got, exp) = setup(Shape::new(33, 31, 129), 0.75);
        got[5 * 31 + 7] += 0.01;
        let c = check(&gemm, &inputs, &got, &exp);
        assert!(!c.passed());
        assert_eq!(c.bad_elements, 1);
        let w = c.worst.unwrap();
        assert_eq!((w.row, w.col), (5, 7));
        assert!(c.to_string().contains("C[5][7]"), "{c}");
    }

    #[test]
    fn one_nan_fails() {
        let (gemm, inputs, mut got, exp) = setup(Shape::new(16, 16, 16), 0.0);
        got[3] = f64::NAN;
        let c = check(&gemm, &inputs, &got, &exp);
        assert!(!c.passed());
        assert_eq!(c.nan_elements, 1);
        assert_eq!((c.worst.unwrap().row, c.worst.unwrap().col), (0, 3));
    }

    #[test]
    fn an_unwritten_output_fails() {
        // beta == 0: C starts as NaN, so an element the kernel never wrote stays NaN.
        let (gemm, inputs, mut got, exp) = setup(Shape::new(8, 8, 8), 0.0);
        got[63] = inputs.c0[63] as f64;
        assert!(!check(&gemm, &inputs, &got, &exp).passed());
    }

    #[test]
    fn tolerance_grows_with_k() {
        assert!(Tolerance::roundings(4096) > Tolerance::roundings(64));
        assert_eq!(Tolerance::roundings(1), 4.0);
        // sqrt growth past K = 64: 8*64 + 3 at K = 4096.
        assert_eq!(Tolerance::roundings(4096), 515.0);
        assert!(Tolerance::F32_VS_F32.frobenius(1024) > Tolerance::F32_VS_F64.frobenius(1024));
    }

    #[test]
    fn tolerances_follow_the_precision() {
        use crate::Precision;
        let k = 4096;
        // Tensor-core FP32 accumulation truncates: one ulp per addition, no cancellation assumed.
        let tc = Tolerance::vs_reference(Precision::F16);
        assert_eq!(tc.frobenius(k), 2f64.powi(-23) * Tolerance::roundings(k));
        assert!(tc.frobenius(k) > Tolerance::F32_VS_F64.frobenius(k));
        // FP64 is judged at FP64's roundoff; against the exact product, input rounding dominates.
        assert!(Tolerance::vs_reference(Precision::F64).frobenius(k) < 1e-12);
        assert!(Tolerance::vs_exact(Precision::Tf32).frobenius(k) > 2.0 * 2f64.powi(-11));
        assert_eq!(Tolerance::vs_cublas(Precision::F32).sides, 2.0);
        // BF16 rounds inputs to 8 significant bits: against the exact product that dominates.
        assert!(Tolerance::vs_exact(Precision::Bf16).frobenius(k) > 2.0 * 2f64.powi(-8));
        // 3xTF32 is judged against the exact FP32 product, within a few FP32 roundings.
        let x3 = Tolerance::vs_reference(Precision::Tf32x3);
        assert_eq!(x3.input_u, 2f64.powi(-20));
        assert!(x3.element(1, 1.0) < 1e-5 && x3.frobenius(k) < 1e-3);
    }

    #[test]
    fn a_tf32_rounded_product_fails_the_fp32_check() {
        // An FP32 kernel that silently used TF32 is caught: its error is far above FP32's bound.
        let (gemm, inputs, _, exp) = setup(Shape::new(64, 64, 256), 0.0);
        let a: Vec<f32> = inputs.a.iter().map(|&x| crate::precision::tf32_rna(x)).collect();
        let b: Vec<f32> = inputs.b.iter().map(|&x| crate::precision::tf32_rna(x)).collect();
        let rows: Vec<usize> = (0..64).collect();
        let got: Vec<f64> =
            cpu_reference(&gemm, &a, &b, &inputs.c0, &rows).values.iter().map(|&v| v as f32 as f64).collect();
        assert!(!check(&gemm, &inputs, &got, &exp).passed());
    }

    #[test]
    fn a_result_that_cancels_is_judged_by_its_terms() {
        // alpha*a*b and beta*c0 nearly cancel: the FP32 result's rounding errors are large next
        // to the result, but not next to the terms, which is what the bounds measure.
        let gemm = Gemm::new(Shape::new(1, 1, 1), -1.5, 0.75);
        let (a, b) = (0.1f32, 0.3f32);
        let c0 = (1.5 * a as f64 * b as f64 / 0.75) as f32;
        let got = (-1.5f32 * (a * b)).mul_add(1.0, 0.75 * c0) as f64;
        let exp = cpu_reference(&gemm, &[a], &[b], &[c0], &[0]);
        let scales = Scales::new(&gemm, &[a], &[b]);
        let c = compare("t", &gemm, Tolerance::F32_VS_F64, &scales, &[c0], &[got], &exp);
        assert!(c.rel_frobenius > 1e-3, "the result cancelled: {c}");
        assert!(c.passed(), "{c}");
        // An error of one part in 10^4 of the terms is still far outside the bounds.
        let off = compare("t", &gemm, Tolerance::F32_VS_F64, &scales, &[c0], &[got + 1e-4 * 0.045], &exp);
        assert!(!off.passed(), "{off}");
    }

    #[test]
    fn non_finite_results_must_match_in_kind() {
        let gemm = Gemm::new(Shape::new(1, 3, 1), 1.0, 0.0);
        let exp = Reference { rows: vec![0], values: vec![f64::INFINITY, f64::NAN, 1.0] };
        let scales = Scales::new(&gemm, &[1.0], &[f32::INFINITY, f32::NAN, 1.0]);
        let run = |got: &[f64]| compare("t", &gemm, Tolerance::F32_VS_F64, &scales, &[f32::NAN; 3], got, &exp);
        let ok = run(&[f64::INFINITY, f64::NAN, 1.0]);
        assert!(ok.passed(), "{ok}");
        assert_eq!(ok.nonfinite_matched, 2);
        for bad in [[f64::NEG_INFINITY, f64::NAN, 1.0], [f64::INFINITY, f64::INFINITY, 1.0], [1.0, f64::NAN, 1.0]] {
            let c = run(&bad);
            assert!(!c.passed() && c.nan_elements == 1, "{bad:?}: {c}");
        }
    }

    #[test]
    fn exact_zero_reference_needs_exact_zero() {
        let gemm = Gemm::new(Shape::new(2, 2, 2), 0.0, 0.0);
        let inputs = Inputs::new(&gemm, 1);
        let scales = Scales::new(&gemm, &inputs.a, &inputs.b);
        let zeros = Reference { rows: vec![0, 1], values: vec![0.0; 4] };
        let ok = compare("t", &gemm, Tolerance::F32_VS_F64, &scales, &inputs.c0, &[0.0; 4], &zeros);
        assert!(ok.passed(), "{ok}");
        let bad = compare("t", &gemm, Tolerance::F32_VS_F64, &scales, &inputs.c0, &[0.0, 0.0, 0.0, 1e-3], &zeros);
        assert!(!bad.passed());
    }
}
