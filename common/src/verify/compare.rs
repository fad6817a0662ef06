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

/// What a run of the reference's rows adds to a comparison. Parts are merged in row order, so the
/// outcome is the same however many threads made them.
#[derive(Default)]
struct Part {
    diff2: f64,
    excess2: f64,
    ref2: f64,
    sigma2: f64,
    inexact: usize,
    bad: usize,
    nan: usize,
    matched: usize,
    /// The last element whose finiteness mismatched: the comparison's worst, whatever came before.
    forced: Option<Worst>,
    /// The first finite element, with its ratio (the worst of a comparison that starts here).
    first: Option<(f64, Worst)>,
    /// The first element of the largest ratio (a NaN ratio, 0/0, never counts).
    best: Option<(f64, Worst)>,
}

/// Elements of C one part compares: a part is whole rows, a million elements or so.
const PART_ELEMENTS: usize = 1 << 20;

/// What a comparison reads: the result (all of C, M x N), the reference's rows, and what each
/// element's bound is made of.
struct Operands<'a> {
    gemm: &'a Gemm,
    tol: Tolerance,
    scales: &'a Scales,
    c0: &'a [f32],
    got: &'a [f64],
    expected: &'a Reference,
}

/// Compares the rows of `got` (all of C, M x N) that `expected` holds: in parts of whole rows, on
/// every core when the rows are many (a 8192 x 8192 C is 67 million elements against cuBLAS).
pub fn compare(
    against: &'static str,
    gemm: &Gemm,
    tol: Tolerance,
    scales: &Scales,
    c0: &[f32],
    got: &[f64],
    expected: &Reference,
) -> Check {
    let part_rows = (PART_ELEMENTS / gemm.shape.n.max(1)).max(1);
    in_parts(against, &Operands { gemm, tol, scales, c0, got, expected }, part_rows)
}

/// [`compare`] with `part_rows` rows a part (the tests cut small problems into many parts).
fn in_parts(against: &'static str, x: &Operands, part_rows: usize) -> Check {
    let (tol, expected) = (x.tol, x.expected);
    let count = expected.rows.len().div_ceil(part_rows);
    let part = |p: usize| {
        let rows = p * part_rows..((p + 1) * part_rows).min(expected.rows.len());
        compare_rows(x, rows)
    };
    // A thread for every 4 million elements or so (map_on_cores takes no more than the parts).
    let threads = crate::harness::cores::cores().min(expected.values.len() / (4 * PART_ELEMENTS));
    let parts = crate::harness::cores::map_on_cores(count, threads, part);
    let mut check = Check {
        against,
        rel_frobenius: 0.0,
        scaled_error: 0.0,
        frobenius_limit: tol.frobenius(expected.values.len()),
        inexact_elements: 0,
        worst_ratio: 0.0,
        worst: None,
        bad_elements: 0,
        nan_elements: 0,
        nonfinite_matched: 0,
        compared: expected.values.len(),
    };
    let (mut diff2, mut excess2, mut ref2, mut sigma2) = (0f64, 0f64, 0f64, 0f64);
    for p in parts {
        (diff2, excess2, ref2, sigma2) = (diff2 + p.diff2, excess2 + p.excess2, ref2 + p.ref2, sigma2 + p.sigma2);
        check.inexact_elements += p.inexact;
        check.bad_elements += p.bad;
        check.nan_elements += p.nan;
        check.nonfinite_matched += p.matched;
        // The worst as one pass over every element in order finds it: a mismatch of finiteness
        // takes it outright; otherwise the first element takes it, then each larger ratio.
        if let Some(w) = p.forced {
            (check.worst_ratio, check.worst) = (f64::INFINITY, Some(w));
        } else if check.worst.is_none() {
            match (p.first, p.best) {
                (Some((ratio, w)), _) if ratio.is_nan() => (check.worst_ratio, check.worst) = (ratio, Some(w)),
                (_, Some((ratio, w))) => (check.worst_ratio, check.worst) = (ratio, Some(w)),
                _ => {}
            }
        } else if let Some((ratio, w)) = p.best.filter(|(ratio, _)| *ratio > check.worst_ratio) {
            (check.worst_ratio, check.worst) = (ratio, Some(w));
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

/// One part of [`compare`]: the reference's rows `which` (positions in `expected.rows`).
fn compare_rows(x: &Operands, which: std::ops::Range<usize>) -> Part {
    let Operands { gemm, tol, scales, c0, got, expected } = *x;
    let n = gemm.shape.n;
    let mut part = Part::default();
    for i in which {
        let r = expected.rows[i];
        for j in 0..n {
            let g = got[r * n + j];
            let e = expected.values[i * n + j];
            if !e.is_finite() {
                // Inputs with inf or NaN: the kernel must produce the same kind of value.
                if kind(g) == kind(e) {
                    part.matched += 1;
                } else {
                    part.nan += 1;
                    part.forced = Some(Worst { row: r, col: j, got: g, expected: e, bound: 0.0 });
                }
                continue;
            }
            let terms = scales.terms(gemm, r, j, c0[r * n + j]);
            let sigma = tol.sigma(&terms);
            let bound = tol.element(&terms);
            let ratio = if g.is_finite() { (g - e).abs() / bound } else { f64::INFINITY };
            if !g.is_finite() {
                part.nan += 1;
            } else {
                part.diff2 += (g - e).powi(2);
                // The tie slack is a hard allowance, not a random error: what is left over it
                // is what the sigmas judge.
                part.excess2 += ((g - e).abs() - tol.slack(&terms)).max(0.0).powi(2);
                part.inexact += usize::from(g != e);
                if !approx::abs_diff_eq!(g, e, epsilon = bound) {
                    part.bad += 1;
                }
            }
            part.ref2 += e * e;
            // An inf or NaN in another row or column can make this element's d or q infinite
            // (cuBLAS computes them from the same inputs) though its value is finite: leave it
            // out of the sum.
            if sigma.is_finite() {
                part.sigma2 += sigma * sigma;
            }
            let w = Worst { row: r, col: j, got: g, expected: e, bound };
            part.first.get_or_insert((ratio, w));
            if part.best.is_none_or(|(best, _)| ratio > best) && !ratio.is_nan() {
                part.best = Some((ratio, w));
            }
        }
    }
    part
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::data::Rng;
    use crate::{Precision, Shape};

    /// The worst element as one pass over every element in order finds it (the comparison before
    /// it came in parts): a mismatch of finiteness takes it outright; otherwise the first element
    /// takes it, then each larger ratio.
    fn worst_in_one_pass(
        gemm: &Gemm,
        tol: Tolerance,
        scales: &Scales,
        c0: &[f32],
        got: &[f64],
        r: &Reference,
    ) -> (f64, Option<(usize, usize)>) {
        let n = gemm.shape.n;
        let (mut worst, mut at) = (0.0, None);
        for (i, &row) in r.rows.iter().enumerate() {
            for j in 0..n {
                let (g, e) = (got[row * n + j], r.values[i * n + j]);
                if !e.is_finite() {
                    if kind(g) != kind(e) {
                        (worst, at) = (f64::INFINITY, Some((row, j)));
                    }
                    continue;
                }
                let bound = tol.element(&scales.terms(gemm, row, j, c0[row * n + j]));
                let ratio = if g.is_finite() { (g - e).abs() / bound } else { f64::INFINITY };
                if ratio > worst || at.is_none() {
                    (worst, at) = (ratio, Some((row, j)));
                }
            }
        }
        (worst, at)
    }

    /// Parts of any size find what one part finds, the counts and the worst element exactly, the
    /// sums to their rounding; and one part finds the worst that one pass over the elements finds. The cases: NaN and inf about, NaN bounds (from NaN scales:
    /// a NaN ratio, which no later ratio beats), every element exact (the first is the worst),
    /// the first element's ratio NaN.
    #[test]
    fn parts_find_what_one_pass_finds() {
        let mut rng = Rng::new(3);
        for case in 0..80 {
            let (m, n) = (1 + rng.next_u64() as usize % 9, 1 + rng.next_u64() as usize % 11);
            let gemm = Gemm::new(Shape::new(m, n, 1 + case % 5), 1.0, if case % 2 == 0 { 0.0 } else { 0.5 });
            let kind = case % 4;
            let mut pick = |x: f64| match rng.next_u64() % 16 {
                0 if kind == 0 => f64::NAN,
                1 if kind == 0 => f64::INFINITY,
                2 if kind == 0 => f64::NEG_INFINITY,
                _ if kind == 1 => x,
                3 | 4 => x,
                _ => x + rng.next_f32() as f64 * 1e-3,
            };
            let expected: Vec<f64> =
                (0..m * n).map(|e| if e % 7 == 3 && kind == 0 { pick(1.0) } else { (e % 5) as f64 }).collect();
            let got: Vec<f64> = expected.iter().map(|&e| if e.is_finite() { pick(e) } else { pick(0.0) }).collect();
            // NaN scales here and there (every element's bound NaN, so its ratio too), and where
            // the first compared element is (the last row's first: the rows are reversed).
            let first = (m - 1) * n;
            let nan_at = |e: usize| (kind != 1 && e % 9 == 5) || (kind == 2 && e == first);
            let dot: Vec<f32> = (0..m * n).map(|e| if nan_at(e) { f32::NAN } else { 1.0 }).collect();
            let scales = Scales::from_products(n, dot.clone(), dot);
            let c0 = vec![0.25f32; m * n];
            let reference = Reference { rows: (0..m).rev().collect(), values: expected };
            let tol = Tolerance::vs_cublas(Precision::F32);
            let x = Operands { gemm: &gemm, tol, scales: &scales, c0: &c0, got: &got, expected: &reference };
            let whole = in_parts("cuBLAS", &x, m);
            let (worst, at_worst) = worst_in_one_pass(&gemm, tol, &scales, &c0, &got, &reference);
            assert!(worst == whole.worst_ratio || worst.is_nan() && whole.worst_ratio.is_nan(), "case {case}: {worst}");
            assert_eq!(whole.worst.map(|w| (w.row, w.col)), at_worst, "case {case}: the worst element");
            for part_rows in 1..m {
                let parts = in_parts("cuBLAS", &x, part_rows);
                let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-12 * a.abs();
                let counts = |c: &Check| (c.inexact_elements, c.bad_elements, c.nan_elements, c.nonfinite_matched);
                assert_eq!(counts(&parts), counts(&whole), "case {case}, {part_rows} rows a part");
                let at = |c: &Check| c.worst.map(|w| (w.row, w.col));
                assert_eq!(at(&parts), at(&whole), "case {case}, {part_rows} rows a part: the worst element");
                assert!(
                    same(parts.worst_ratio, whole.worst_ratio),
                    "case {case}: {} against {}",
                    parts.worst_ratio,
                    whole.worst_ratio
                );
                assert!(same(parts.rel_frobenius, whole.rel_frobenius) && same(parts.scaled_error, whole.scaled_error));
            }
        }
    }
}
