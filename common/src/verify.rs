//! Verification: a relative Frobenius error plus a per-element bound that scales with K and
//! the precision. NaN, infinity and unwritten elements always fail.

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
    /// precision): only the accumulation is judged. Products of FP16 or TF32 values are exact
    /// in FP32; the tensor cores' FP32 additions truncate, an error of up to one ulp (2^-23)
    /// each. FP64 rounds to nearest; the float64 reference itself is a second side.
    pub fn vs_reference(p: Precision) -> Tolerance {
        match p {
            Precision::F32 => Self::F32_VS_F64,
            Precision::Tf32 | Precision::F16 => {
                Tolerance { u: 2.0 * F32_UNIT_ROUNDOFF, truncated: true, ..Self::F32_VS_F64 }
            }
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

    /// Bound on ||got - expected||_F / ||expected||_F.
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
    pub rel_frobenius: f64,
    pub frobenius_limit: f64,
    /// Largest |got - expected| / bound over the compared elements (<= 1 passes).
    pub worst_ratio: f64,
    pub worst: Option<Worst>,
    pub bad_elements: usize,
    pub nan_elements: usize,
    pub compared: usize,
}

impl Check {
    pub fn passed(&self) -> bool {
        self.bad_elements == 0 && self.nan_elements == 0 && self.rel_frobenius <= self.frobenius_limit
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.passed() { "ok" } else { "FAILED" };
        write!(
            f,
            "vs {}: {verdict}: rel. Frobenius error {:.2e} (limit {:.2e}), {} of {} elements out of bounds, {} NaN/inf",
            self.against, self.rel_frobenius, self.frobenius_limit, self.bad_elements, self.compared, self.nan_elements
        )?;
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
        frobenius_limit: tol.frobenius(k),
        worst_ratio: 0.0,
        worst: None,
        bad_elements: 0,
        nan_elements: 0,
        compared: expected.len(),
    };
    let (mut diff2, mut ref2) = (0f64, 0f64);
    for (i, &r) in rows.iter().enumerate() {
        for j in 0..n {
            let g = got[r * n + j];
            let e = expected[i * n + j];
            let c_term = if gemm.beta == 0.0 { 0.0 } else { beta * (c0[r * n + j] as f64).abs() };
            let bound = tol.element(k, alpha * scales.a_rows[r] * scales.b_cols[j] + c_term);
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
            if ratio > check.worst_ratio || check.worst.is_none() {
                check.worst_ratio = ratio;
                check.worst = Some(Worst { row: r, col: j, got: g, expected: e, bound });
            }
        }
    }
    check.rel_frobenius = if check.nan_elements > 0 {
        f64::INFINITY
    } else if ref2 > 0.0 {
        (diff2 / ref2).sqrt()
    } else {
        diff2.sqrt()
    };
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
