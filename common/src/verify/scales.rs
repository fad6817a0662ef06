//! What each element's bound is made of: its dot product, the sum of its products' squares, and
//! the TF32 tie slack.

use super::bound::Terms;
use crate::harness::precision::{tf32_rna, tf32_rne};
use crate::harness::problem::Gemm;

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
