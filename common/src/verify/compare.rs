//! A result against a reference (float64 or cuBLAS), element by element and in the Frobenius norm.

use super::bound::Tolerance;
use super::report::{Check, Worst};
use super::scales::Scales;
use crate::harness::problem::Gemm;
use crate::verify::reference::Reference;

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
