//! The verifier's own tests: correct results pass in every case, wrong ones fail and are named.

use super::bound::*;
use super::compare::compare;
use super::report::*;
use super::scales::*;
use crate::verify::reference::{Reference, cpu_reference};
use crate::{Gemm, Inputs, Shape};

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
    use crate::harness::precision::{tf32_rna, tf32_rne};
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
    use crate::harness::precision::{tf32_rna, tf32_rne};
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
