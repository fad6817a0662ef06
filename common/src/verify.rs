//! Verification: every element of a result against a bound on the rounding error a correct
//! kernel can make, and the whole result against the same bound in the Frobenius norm.
//!
//! The bound follows the data. For element (i, j) let `t_k = a_ik * b_kj` be the K products of
//! the dot product, `d = sum t_k` the exact dot product and `q = sum t_k^2`. Whatever order a
//! kernel sums in (sequentially, in blocks, pairwise, split over K, with FMA or without), each
//! addition rounds once, relative to the partial sum it produces; rounding errors of independent
//! data add up like a random walk, so the error is about `u * sqrt(sum of s^2)` over the partial
//! sums `s`. Partial sums of j terms of i.i.d. data are about `j*d/K` plus noise of size
//! `sqrt(j*q/K)`, and the sequential order (the largest partial sums) gives
//! `sum_j s_j^2 ~ K * (d^2/3 + q/2)`. So one element's error is of the order of
//!
//! ```text
//! sigma = |alpha| * u * sqrt(K) * sqrt(d^2/3 + q/2)  +  3u * (|alpha*d| + |beta*C0|)
//! ```
//!
//! (the second term: the roundings of alpha*acc, beta*C0 and their sum). An element passes
//! within [`ELEMENT_SIGMAS`] sigmas, the whole result within [`FROBENIUS_SIGMAS`] of
//! `||sigma||_F`. The bound is measured against the terms, not the result, so a result that
//! cancels to almost nothing (alpha*A*B ~ -beta*C0) is judged by the size of what cancelled.
//! It is tight enough that arithmetic in a lower precision fails at every K: TF32 inputs carry
//! an error of about 2^-11 per product, a random walk of `2^-11 * sqrt(q)`, which is
//! `2^13 / (ELEMENT_SIGMAS * sqrt(K))` element bounds: 16 at K = 4096, more at smaller K
//! (book chapter "How we measure" derives it; `common/tests/verifier.rs` checks both sides).
//!
//! The tensor cores' FP32 accumulation truncates (rounds toward zero) instead of rounding to
//! nearest, so their errors need not cancel: for FP16, BF16 and TF32 products the bound is the
//! sum of one ulp per addition, `2u * sum |s| <= 2u * K * sqrt(d^2/3 + q/2)`, met once.
//!
//! TF32 rounds its inputs to nearest, and the hardware paths break exact ties differently: steps
//! 7 and 8 away from zero (`cvt.rna`, or its two-instruction equivalent), cuBLAS and the TMA to
//! even. Inputs with few significant bits tie often enough (about one in a few thousand) for a
//! tie rounded the other way to exceed the accumulation's bound at small K. The reference rounds
//! to even, and a TF32 kernel is allowed either rule, by exactly what it can change: with `dA`
//! and `dB` the distance between the two roundings of each input (zero except at a tie), an
//! element may move by up to `|alpha| * (dA (|B| + dB) + |A| dB)` (the `ties` of [`Terms`]),
//! a hard allowance added to the element's bound, not a multiple of sigma.
//!
//! An element that is not finite must be exactly where the reference has a non-finite value
//! of the same kind (NaN, +inf or -inf); everywhere else it fails.

use crate::precision::{Precision, tf32_rna, tf32_rne};
use crate::problem::Gemm;
use crate::reference::Reference;
use std::fmt;

/// Unit roundoff of FP32 (2^-24): the relative error of one rounding.
pub const F32_UNIT_ROUNDOFF: f64 = 1.0 / (1u64 << 24) as f64;

/// How many sigmas one element may be off. Calibrated by the property test
/// (`common/tests/verifier.rs`): correct FP32 results in every summation order stay under a
/// sixth of it; TF32 arithmetic exceeds it at every K the suite uses.
pub const ELEMENT_SIGMAS: f64 = 8.0;

/// How many times `||sigma||_F` the whole result may be off, for a result of many elements;
/// a result of few elements gets up to [`ELEMENT_SIGMAS`] (one element is one element).
pub const FROBENIUS_SIGMAS: f64 = 2.0;

/// How the accumulation being judged adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accumulation {
    /// Round to nearest: errors cancel like a random walk (SIMT FP32 and FP64, cuBLAS).
    Nearest,
    /// Round toward zero, as the tensor cores' FP32 adders do: up to one ulp per addition,
    /// all leaning the same way.
    Truncated,
}

/// The error model for one comparison.
#[derive(Clone, Copy, Debug)]
pub struct Tolerance {
    /// Unit roundoff of the accumulation being checked.
    pub u: f64,
    /// How many independent results' errors the difference holds: 1 against a float64
    /// reference, 2 when comparing two results of the same precision (a kernel and cuBLAS).
    pub sides: f64,
    pub accumulation: Accumulation,
    /// Relative error of each input as the kernel multiplies it, when the comparison is with a
    /// product of other values (the unrounded FP32 inputs): FP16's or TF32's 2^-11, 3xTF32's
    /// splitting error. 0 when the reference multiplies what the kernel multiplies.
    pub input_u: f64,
    /// Unit roundoff of C's storage when it is narrower than the accumulation (a 16-bit C): the
    /// result is rounded once more, and so was C0 when beta reads it. 0 for an FP32 or FP64 C.
    pub output_u: f64,
    /// The absolute error of that rounding where it is not relative: in C's subnormal range
    /// (FP16 below 2^-14), half the spacing of its subnormals.
    pub output_eta: f64,
    /// Weight of the TF32 tie allowance (`ties` of [`Terms`]), 0 or 1: 1 where a TF32 kernel is
    /// compared with a product of inputs rounded by one tie rule (the reference's, or cuBLAS's,
    /// which multiplies the same rounded inputs: once, not once per side), 0 elsewhere. The
    /// comparison with the exact product has none: its `input_u` covers any rounding.
    pub tie_rule: f64,
}

/// What one element's bound is made of: the exact dot product `d` and the sum of the squares
/// of its products `q` (of the values multiplied), alpha, beta and C0, and K; for TF32, how far
/// the dot product can move when tied inputs round the other way (0 otherwise).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Terms {
    pub dot: f64,
    pub sumsq: f64,
    /// `sum_k dA_ik (|b_kj| + dB_kj) + |a_ik| dB_kj`, [`tf32_ties`].
    pub ties: f64,
    pub alpha: f64,
    pub beta_c0: f64,
    pub k: usize,
}

impl Tolerance {
    pub const F32_VS_F64: Tolerance = Tolerance {
        u: F32_UNIT_ROUNDOFF,
        sides: 1.0,
        accumulation: Accumulation::Nearest,
        input_u: 0.0,
        output_u: 0.0,
        output_eta: 0.0,
        tie_rule: 0.0,
    };
    pub const F32_VS_F32: Tolerance = Tolerance { sides: 2.0, ..Self::F32_VS_F64 };

    /// The kernel against the float64 product of the inputs it multiplies (rounded to its
    /// precision): only the accumulation is judged. Products of FP16, BF16 or TF32 values are
    /// exact in FP32; the tensor cores add them with truncation. FP64 rounds to nearest at its
    /// own roundoff. 3xTF32 claims FP32 accuracy: it gets FP32's bound, plus its splitting
    /// error (each product within 2^-19 of a*b, [`Precision::input_unit_roundoff`]; TF32 alone
    /// is 2^-10). A 16-bit C adds one rounding of the result to its storage. TF32 allows its
    /// inputs' exact ties either rounding (the module's comment).
    pub fn vs_reference(p: Precision) -> Tolerance {
        let (output_u, output_eta) = (p.output_unit_roundoff(), p.output_underflow());
        match p.arithmetic() {
            Precision::F32 => Self::F32_VS_F64,
            Precision::Tf32 => Tolerance {
                accumulation: Accumulation::Truncated,
                output_u,
                output_eta,
                tie_rule: 1.0,
                ..Self::F32_VS_F64
            },
            Precision::F16 | Precision::Bf16 => {
                Tolerance { accumulation: Accumulation::Truncated, output_u, output_eta, ..Self::F32_VS_F64 }
            }
            Precision::Tf32x3 => Tolerance { input_u: p.input_unit_roundoff(), ..Self::F32_VS_F64 },
            Precision::F64 => Tolerance { u: f64::EPSILON / 2.0, ..Self::F32_VS_F64 },
            Precision::F16C16 | Precision::Bf16C16 => unreachable!("arithmetic() is FP16 or BF16"),
        }
    }

    /// The kernel against cuBLAS in the same precision, on the same rounded inputs.
    pub fn vs_cublas(p: Precision) -> Tolerance {
        Tolerance { sides: 2.0, ..Self::vs_reference(p) }
    }

    /// The kernel against the exact product of the FP32 inputs: what rounding the inputs
    /// costs. Recorded for the book, not a pass/fail criterion. No tie allowance: `input_u`
    /// bounds any rounding of the inputs, ties included.
    pub fn vs_exact(p: Precision) -> Tolerance {
        Tolerance { input_u: p.input_unit_roundoff(), tie_rule: 0.0, ..Self::vs_reference(p) }
    }

    /// The size of one element's error (see the module's comment). For truncated accumulation
    /// it is a bound already (every addition off by up to one ulp, 2u).
    pub fn sigma(&self, t: &Terms) -> f64 {
        let k = t.k as f64;
        let spread = (t.dot * t.dot / 3.0 + t.sumsq / 2.0).sqrt();
        let accumulation = match self.accumulation {
            Accumulation::Nearest => self.u * k.sqrt() * spread,
            Accumulation::Truncated => 2.0 * self.u * k * spread,
        };
        // Each product a*b carries up to input_u of a and of b: a random walk over K products.
        let inputs = 2.0 * self.input_u * t.sumsq.sqrt();
        let epilogue = 3.0 * self.u * (t.alpha.abs() * t.dot.abs() + t.beta_c0.abs());
        // A narrow C: the result rounded to it (on each side), and C0 rounded when it was stored;
        // relative to the value, or absolute among C's subnormals (an FP16 C at 3e-5).
        let roundings = self.sides + if t.beta_c0 != 0.0 { 1.0 } else { 0.0 };
        let storage = self.output_u * (self.sides * (t.alpha.abs() * t.dot.abs() + t.beta_c0.abs()) + t.beta_c0.abs())
            + self.output_eta * roundings;
        t.alpha.abs() * (self.sides * accumulation + inputs) + self.sides * epilogue + storage
    }

    /// How many sigmas one element may be off.
    pub fn element_sigmas(&self) -> f64 {
        match self.accumulation {
            Accumulation::Nearest => ELEMENT_SIGMAS,
            Accumulation::Truncated => 1.0,
        }
    }

    /// How far one element may move because its TF32 inputs' ties round the other way: a hard
    /// bound, not a sigma, so it is added to the bounds as it is (never times
    /// [`ELEMENT_SIGMAS`]). Once, whatever `sides`: both references multiply the same inputs.
    pub fn slack(&self, t: &Terms) -> f64 {
        self.tie_rule * t.alpha.abs() * t.ties
    }

    /// Bound on |got - expected| for one element: its sigmas, and the tie slack.
    pub fn element(&self, t: &Terms) -> f64 {
        self.element_sigmas() * self.sigma(t) + self.slack(t) + f64::MIN_POSITIVE
    }

    /// Bound on ||e||_F / ||sigma||_F over `elements` compared elements, where `e` is each
    /// element's |got - expected| less its [`Tolerance::slack`] (0 if within it): the average
    /// of many errors stays closer to its expectation than the worst of them does.
    pub fn frobenius(&self, elements: usize) -> f64 {
        match self.accumulation {
            Accumulation::Nearest => {
                FROBENIUS_SIGMAS + (ELEMENT_SIGMAS - FROBENIUS_SIGMAS) / (elements.max(1) as f64).sqrt()
            }
            Accumulation::Truncated => 1.0,
        }
    }
}

/// `d` and `q` of every element of C (M x N, row-major), from which the bounds are made, and
/// for TF32 the tie slack. Stored as f32: they size a bound, a relative error of 10^-7 in them
/// does not matter.
pub struct Scales {
    n: usize,
    dot: Vec<f32>,
    sumsq: Vec<f32>,
    /// TF32: [`tf32_ties`] of every element. None (0) for the other precisions.
    ties: Option<Vec<f32>>,
}

impl Scales {
    /// Computed on the CPU in float64, every element (for small problems and tests; the
    /// harness computes them with cuBLAS, [`Scales::from_products`]).
    pub fn new(gemm: &Gemm, a: &[f32], b: &[f32]) -> Scales {
        let crate::Shape { m, n, k } = gemm.shape;
        let (mut dot, mut sumsq) = (vec![0f32; m * n], vec![0f32; m * n]);
        let mut acc = vec![(0f64, 0f64); n];
        for i in 0..m {
            acc.iter_mut().for_each(|x| *x = (0.0, 0.0));
            for kk in 0..k {
                let x = a[i * k + kk] as f64;
                for (j, e) in acc.iter_mut().enumerate() {
                    let t = x * b[kk * n + j] as f64;
                    e.0 += t;
                    e.1 += t * t;
                }
            }
            for (j, &(d, q)) in acc.iter().enumerate() {
                dot[i * n + j] = d as f32;
                sumsq[i * n + j] = q as f32;
            }
        }
        Scales { n, dot, sumsq, ties: None }
    }

    /// From A*B and (A∘A)*(B∘B) (element-wise squares) computed elsewhere.
    pub fn from_products(n: usize, dot: Vec<f32>, sumsq: Vec<f32>) -> Scales {
        assert_eq!(dot.len(), sumsq.len(), "A*B and its squares have one shape");
        Scales { n, dot, sumsq, ties: None }
    }

    /// With the TF32 tie slack of every element ([`tf32_ties`], or its product computed
    /// elsewhere from [`tie_operands`]).
    pub fn with_ties(self, ties: Vec<f32>) -> Scales {
        assert_eq!(ties.len(), self.dot.len(), "the tie slack has C's shape");
        Scales { ties: Some(ties), ..self }
    }

    /// The terms of element (i, j) of `gemm` with C0 `c0` (of that element).
    pub fn terms(&self, gemm: &Gemm, i: usize, j: usize, c0: f32) -> Terms {
        let e = i * self.n + j;
        Terms {
            dot: self.dot[e] as f64,
            sumsq: self.sumsq[e] as f64,
            ties: self.ties.as_ref().map_or(0.0, |t| t[e] as f64),
            alpha: gemm.alpha as f64,
            beta_c0: if gemm.beta == 0.0 { 0.0 } else { gemm.beta as f64 * c0 as f64 },
            k: gemm.shape.k,
        }
    }
}

/// The operands whose product is the TF32 tie slack, from the unrounded FP32 inputs A (M x K)
/// and B (K x N): `[dA | |A|]` (M x 2K) and `[|B| + dB ; dB]` (2K x N), where `|A|` is A rounded
/// to TF32 as the reference rounds it (ties to even) and `dA = |rna(A) - rne(A)|`, one TF32
/// place at an exact tie and 0 elsewhere (likewise for B). Their product bounds
/// `|A'B' - AB|` for inputs A', B' rounded with either rule, element by element. Every value
/// is exact in f32 (at a tie `|B| + dB` is the larger rounding).
pub fn tie_operands(shape: crate::Shape, a: &[f32], b: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let crate::Shape { m, n, k } = shape;
    let tie = |x: f32| (tf32_rna(x) - tf32_rne(x)).abs();
    let mut left = Vec::with_capacity(2 * m * k);
    for row in a.chunks_exact(k.max(1)).take(m) {
        left.extend(row.iter().map(|&x| tie(x)));
        left.extend(row.iter().map(|&x| tf32_rne(x).abs()));
    }
    let mut right: Vec<f32> = b[..k * n].iter().map(|&x| tf32_rne(x).abs() + tie(x)).collect();
    right.extend(b[..k * n].iter().map(|&x| tie(x)));
    (left, right)
}

/// The TF32 tie slack of every element of C (M x N), computed on the CPU in float64 from the
/// unrounded inputs: the product of [`tie_operands`], as [`Scales::new`] makes A*B.
pub fn tf32_ties(gemm: &Gemm, a: &[f32], b: &[f32]) -> Vec<f32> {
    let shape = crate::Shape { k: 2 * gemm.shape.k, ..gemm.shape };
    let (left, right) = tie_operands(gemm.shape, a, b);
    Scales::new(&Gemm::new(shape, 1.0, 0.0), &left, &right).dot
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
    /// ||got - expected||_F / ||sigma||_F, each element's difference less its tie slack: what
    /// [`Tolerance::frobenius`] bounds.
    pub scaled_error: f64,
    pub frobenius_limit: f64,
    /// Finite elements that differ from the reference at all (the precision probes, whose
    /// answer FP32 arithmetic gets exactly, require none).
    pub inexact_elements: usize,
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
            "vs {}: {verdict}: Frobenius error {:.2} sigma (limit {:.2}; {:.2e} of the result), \
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
    let n = gemm.shape.n;
    let mut check = Check {
        against,
        rel_frobenius: 0.0,
        scaled_error: 0.0,
        frobenius_limit: tol.frobenius(expected.len()),
        inexact_elements: 0,
        worst_ratio: 0.0,
        worst: None,
        bad_elements: 0,
        nan_elements: 0,
        nonfinite_matched: 0,
        compared: expected.len(),
    };
    let (mut diff2, mut excess2, mut ref2, mut sigma2) = (0f64, 0f64, 0f64, 0f64);
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
            let terms = scales.terms(gemm, r, j, c0[r * n + j]);
            let sigma = tol.sigma(&terms);
            let bound = tol.element(&terms);
            let ratio = if g.is_finite() { (g - e).abs() / bound } else { f64::INFINITY };
            if !g.is_finite() {
                check.nan_elements += 1;
            } else {
                diff2 += (g - e).powi(2);
                // The tie slack is a hard allowance, not a random error: what is left over it
                // is what the sigmas judge.
                excess2 += ((g - e).abs() - tol.slack(&terms)).max(0.0).powi(2);
                check.inexact_elements += usize::from(g != e);
                if !approx::abs_diff_eq!(g, e, epsilon = bound) {
                    check.bad_elements += 1;
                }
            }
            ref2 += e * e;
            // An inf or NaN in another row or column can make this element's d or q infinite
            // (cuBLAS computes them from the same inputs) though its value is finite: leave it
            // out of the sum.
            if sigma.is_finite() {
                sigma2 += sigma * sigma;
            }
            if ratio > check.worst_ratio || check.worst.is_none() {
                check.worst_ratio = ratio;
                check.worst = Some(Worst { row: r, col: j, got: g, expected: e, bound });
            }
        }
    }
    let relative = |diff2: f64, norm2: f64| if norm2 > 0.0 { (diff2 / norm2).sqrt() } else { diff2.sqrt() };
    if check.nan_elements > 0 {
        check.rel_frobenius = f64::INFINITY;
        check.scaled_error = f64::INFINITY;
    } else {
        check.rel_frobenius = relative(diff2, ref2);
        check.scaled_error = relative(excess2, sigma2);
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

    fn terms(dot: f64, sumsq: f64, k: usize) -> Terms {
        Terms { dot, sumsq, ties: 0.0, alpha: 1.0, beta_c0: 0.0, k }
    }

    #[test]
    fn sigma_follows_k_and_the_data() {
        let t = Tolerance::F32_VS_F64;
        // Random-sign data in [-1, 1): d ~ sqrt(K)/3 and q ~ K/9, so sigma grows about like K
        // (sqrt(K) * sqrt(q)), its epilogue part like sqrt(K).
        let random = |k: f64| terms(k.sqrt() / 3.0, k / 9.0, k as usize);
        let (s64, s4096) = (t.sigma(&random(64.0)), t.sigma(&random(4096.0)));
        assert!((40.0..64.0).contains(&(s4096 / s64)), "{s64} {s4096}");
        // The Frobenius allowance shrinks towards FROBENIUS_SIGMAS with many elements.
        assert_eq!(t.frobenius(1), ELEMENT_SIGMAS);
        assert!(t.frobenius(1 << 20) < FROBENIUS_SIGMAS + 0.01);
        assert_eq!(Tolerance::F32_VS_F32.sigma(&terms(1.0, 1.0, 16)), 2.0 * t.sigma(&terms(1.0, 1.0, 16)));
    }

    #[test]
    fn tolerances_follow_the_precision() {
        use crate::Precision;
        let x = terms(64.0, 4096.0 / 9.0, 4096);
        let f32_bound = Tolerance::F32_VS_F64.element(&x);
        // Tensor-core accumulation truncates: a bound of one ulp per addition, far above FP32's.
        let tc = Tolerance::vs_reference(Precision::F16);
        assert_eq!(tc.accumulation, Accumulation::Truncated);
        assert!(tc.element(&x) > 4.0 * f32_bound);
        // FP64 is judged at FP64's roundoff.
        assert!(Tolerance::vs_reference(Precision::F64).element(&x) < 1e-8 * f32_bound);
        assert_eq!(Tolerance::vs_cublas(Precision::F32).sides, 2.0);
        // Against the exact product, TF32's and BF16's input rounding dominates.
        assert!(Tolerance::vs_exact(Precision::Tf32).sigma(&x) > 2f64.powi(-11) * x.sumsq.sqrt());
        assert!(Tolerance::vs_exact(Precision::Bf16).sigma(&x) > 2f64.powi(-8) * x.sumsq.sqrt());
        // 3xTF32 gets FP32's bound plus a splitting error 2^9 times smaller than TF32's rounding.
        let x3 = Tolerance::vs_reference(Precision::Tf32x3);
        assert_eq!((x3.accumulation, x3.input_u), (Accumulation::Nearest, 2f64.powi(-20)));
        assert!(x3.element(&x) < 2.0 * f32_bound);
    }

    #[test]
    fn a_16_bit_c_allows_the_rounding_of_its_subnormals() {
        use crate::Precision;
        use half::f16;
        // An FP16 C below 2^-14 is subnormal: its spacing is 2^-24 whatever the value, more than
        // the relative 2^-11 allows. A suite's 17x4096x3 case had C = 3.1564e-5 stored as
        // 3.1590e-5, the nearest FP16.
        let exact = 3.156_438_469_886_78e-5;
        let stored = f16::from_f64(exact).to_f64();
        let x = Terms { dot: exact, sumsq: exact * exact, ties: 0.0, alpha: 1.0, beta_c0: 0.0, k: 3 };
        let t = Tolerance::vs_reference(Precision::F16C16);
        assert!((stored - exact).abs() > 2f64.powi(-11) * exact);
        assert!((stored - exact).abs() <= t.element(&x), "{} > {}", (stored - exact).abs(), t.element(&x));
        // In the normal range the absolute term is negligible next to the relative one.
        let y = terms(64.0, 4096.0 / 9.0, 4096);
        let no_eta = Tolerance { output_eta: 0.0, ..t };
        assert!(t.element(&y) - no_eta.element(&y) < 1e-6 * no_eta.element(&y));
    }

    /// A*B computed in FP32 (sequential FMA) from inputs rounded by `round`.
    fn reduced(gemm: &Gemm, inputs: &Inputs, round: impl Fn(f32) -> f32) -> Vec<f64> {
        let Shape { m, n, k } = gemm.shape;
        let (a, b): (Vec<f32>, Vec<f32>) =
            (inputs.a.iter().map(|&x| round(x)).collect(), inputs.b.iter().map(|&x| round(x)).collect());
        (0..m * n)
            .map(|e| {
                let (i, j) = (e / n, e % n);
                let acc = (0..k).fold(0f32, |acc, t| a[i * k + t].mul_add(b[t * n + j], acc));
                (gemm.alpha * acc) as f64
            })
            .collect()
    }

    #[test]
    fn lower_precision_arithmetic_fails_the_fp32_check_at_every_k() {
        use crate::Precision;
        // The suite's K (tile edges, odd, skinny, large) and powers of two from 64 to 4096.
        for k in [1, 3, 5, 13, 31, 32, 33, 64, 127, 128, 129, 256, 512, 999, 1024, 2048, 4096] {
            let (gemm, inputs, got, exp) = setup(Shape::new(8, 8, k), 0.0);
            assert!(check(&gemm, &inputs, &got, &exp).passed(), "K = {k}: the correctly rounded result");
            let fp32 = reduced(&gemm, &inputs, |x| x);
            assert!(check(&gemm, &inputs, &fp32, &exp).passed(), "K = {k}: FP32 arithmetic");
            for p in [Precision::Tf32, Precision::F16, Precision::Bf16] {
                let got = reduced(&gemm, &inputs, |x| p.round_input(x));
                let c = check(&gemm, &inputs, &got, &exp);
                assert!(!c.passed(), "K = {k}: {p} arithmetic passed the FP32 check: {c}");
            }
        }
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

    /// A TF32 problem whose reference rounds ties to even, and the float64 result of the same
    /// inputs rounded ties away from zero (what steps 7 and 8 multiply).
    fn tf32_ties_case(gemm: &Gemm, inputs: &Inputs) -> (Scales, Reference, Vec<f64>) {
        use crate::precision::{tf32_rna, tf32_rne};
        let rows: Vec<usize> = (0..gemm.shape.m).collect();
        let round = |x: &[f32], r: fn(f32) -> f32| x.iter().map(|&v| r(v)).collect::<Vec<f32>>();
        let (even_a, even_b) = (round(&inputs.a, tf32_rne), round(&inputs.b, tf32_rne));
        let (away_a, away_b) = (round(&inputs.a, tf32_rna), round(&inputs.b, tf32_rna));
        let scales = Scales::new(gemm, &even_a, &even_b).with_ties(tf32_ties(gemm, &inputs.a, &inputs.b));
        let exp = cpu_reference(gemm, &even_a, &even_b, &inputs.c0, &rows);
        let got = cpu_reference(gemm, &away_a, &away_b, &inputs.c0, &rows).values;
        (scales, exp, got)
    }

    /// Random inputs with ties planted: every fifth value of A and B made an exact tie whose
    /// two roundings differ (the kept part even).
    fn planted_ties(gemm: &Gemm) -> Inputs {
        let mut inputs = Inputs::new(gemm, 7);
        for x in inputs.a.iter_mut().chain(inputs.b.iter_mut()).step_by(5) {
            *x = f32::from_bits((x.to_bits() & 0xffff_c000) | 0x1000);
        }
        inputs
    }

    #[test]
    fn tf32_ties_rounded_either_way_pass_and_nothing_more() {
        use crate::Precision;
        let gemm = Gemm::new(Shape::new(12, 10, 24), 1.5, 0.75);
        let inputs = planted_ties(&gemm);
        let (scales, exp, got) = tf32_ties_case(&gemm, &inputs);
        let run = |tol: Tolerance, got: &[f64]| compare("t", &gemm, tol, &scales, &inputs.c0, got, &exp);
        for tol in [Tolerance::vs_reference(Precision::Tf32), Tolerance::vs_cublas(Precision::Tf32)] {
            let c = run(tol, &got);
            assert!(c.passed(), "{c}");
            // Without the slack the ties fail, almost everywhere.
            let c = run(Tolerance { tie_rule: 0.0, ..tol }, &got);
            assert!(!c.passed() && c.bad_elements > got.len() / 2, "{c}");
        }
        // The slack is what a tie can change and no more: one element off by a little more than
        // its bound fails, and only that one.
        let tol = Tolerance::vs_reference(Precision::Tf32);
        let (i, j) = (3, 4);
        let t = scales.terms(&gemm, i, j, inputs.c0[i * 10 + j]);
        assert!(tol.slack(&t) > tol.sigma(&t), "the ties dominate this element's bound");
        let mut off = got.clone();
        off[i * 10 + j] = exp.values[i * 10 + j] + 1.01 * tol.element(&t);
        let c = run(tol, &off);
        assert!(!c.passed() && c.bad_elements == 1, "{c}");
        assert_eq!((c.worst.unwrap().row, c.worst.unwrap().col), (i, j));
    }

    #[test]
    fn tie_slack_of_empty_products_is_zero() {
        for (m, n, k) in [(33, 31, 0), (31, 0, 32), (0, 5, 7)] {
            let shape = Shape { m, n, k };
            let (a, b) = (vec![1.0 + 2f32.powi(-11); m * k], vec![1.0 + 2f32.powi(-11); k * n]);
            assert_eq!(tf32_ties(&Gemm::new(shape, 1.0, 0.0), &a, &b), vec![0.0; m * n], "{m}x{n}x{k}");
        }
    }

    #[test]
    fn tf32_ties_of_random_inputs_are_allowed_for_either_rule() {
        use crate::Precision;
        // The suite's odd shape with beta = 0: 24 random bits leave exact ties in a few of
        // 67*33 + 33*45 inputs, enough for the rule to matter at K = 33.
        let gemm = Gemm::new(Shape::new(67, 45, 33), 1.0, 0.0);
        let inputs = Inputs::new(&gemm, 42);
        let (scales, exp, got) = tf32_ties_case(&gemm, &inputs);
        let tol = Tolerance::vs_reference(Precision::Tf32);
        let c = compare("t", &gemm, tol, &scales, &inputs.c0, &got, &exp);
        assert!(c.passed(), "{c}");
        let strict = compare("t", &gemm, Tolerance { tie_rule: 0.0, ..tol }, &scales, &inputs.c0, &got, &exp);
        assert!(!strict.passed(), "{strict}");
        // Where no input ties, the slack is 0: most elements get no more than before.
        let zero = (0..67 * 45).filter(|&e| scales.terms(&gemm, e / 45, e % 45, 0.0).ties == 0.0).count();
        assert!(zero > 67 * 45 / 2, "{zero} elements without ties");
    }

    #[test]
    fn the_tie_slack_bounds_every_mix_of_rules() {
        use crate::precision::{tf32_rna, tf32_rne};
        let gemm = Gemm::new(Shape::new(6, 7, 40), 1.0, 0.0);
        let inputs = planted_ties(&gemm);
        let ties = tf32_ties(&gemm, &inputs.a, &inputs.b);
        let rows: Vec<usize> = (0..6).collect();
        let product = |ra: fn(f32) -> f32, rb: fn(f32) -> f32| {
            let a: Vec<f32> = inputs.a.iter().map(|&x| ra(x)).collect();
            let b: Vec<f32> = inputs.b.iter().map(|&x| rb(x)).collect();
            cpu_reference(&gemm, &a, &b, &inputs.c0, &rows).values
        };
        let even = product(tf32_rne, tf32_rne);
        for (ra, rb) in
            [(tf32_rna as fn(f32) -> f32, tf32_rne as fn(f32) -> f32), (tf32_rne, tf32_rna), (tf32_rna, tf32_rna)]
        {
            let other = product(ra, rb);
            for e in 0..even.len() {
                let moved = (other[e] - even[e]).abs();
                assert!(moved <= ties[e] as f64 * (1.0 + 1e-6), "element {e}: moved {moved:e} > {:e}", ties[e]);
            }
        }
        // One product of two ties, both rounded away: it moves by exactly the slack.
        let one = Gemm::new(Shape::new(1, 1, 1), 1.0, 0.0);
        let (a, b) = (1.0 + 2f32.powi(-11), (1.0 + 2f32.powi(-11)) * 0.125);
        let moved = tf32_rna(a) as f64 * tf32_rna(b) as f64 - tf32_rne(a) as f64 * tf32_rne(b) as f64;
        assert_eq!(tf32_ties(&one, &[a], &[b]), [moved as f32]);
        assert_eq!(moved, 2f64.powi(-12) + 2f64.powi(-23));
        // Inputs already on TF32's grid have no ties, and no slack.
        let grid = |x: &[f32]| x.iter().map(|&v| tf32_rne(v)).collect::<Vec<f32>>();
        let plain = Inputs::new(&gemm, 3);
        assert!(tf32_ties(&gemm, &grid(&plain.a), &grid(&plain.b)).iter().all(|&t| t == 0.0));
    }

    #[test]
    fn only_tf32_against_a_rounded_product_has_a_tie_allowance() {
        use crate::Precision;
        for p in Precision::ALL {
            let w = if p == Precision::Tf32 { 1.0 } else { 0.0 };
            assert_eq!(Tolerance::vs_reference(p).tie_rule, w, "{p}");
            // cuBLAS multiplies the reference's rounded inputs: the slack once, not per side.
            assert_eq!(Tolerance::vs_cublas(p).tie_rule, w, "{p}");
            assert_eq!(Tolerance::vs_exact(p).tie_rule, 0.0, "{p}");
        }
        // The slack adds to the bound as it is, not in sigmas, and to nothing without weight.
        let t = Terms { ties: 1e-3, ..terms(1.0, 1.0, 64) };
        let tol = Tolerance { tie_rule: 1.0, ..Tolerance::F32_VS_F64 };
        assert_eq!(tol.element(&t) - Tolerance::F32_VS_F64.element(&t), 1e-3);
        assert_eq!(Tolerance::F32_VS_F64.slack(&t), 0.0);
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
