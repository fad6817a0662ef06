//! Precision probes: inputs for which FP32 arithmetic has exactly one answer, whatever order a
//! kernel sums in, and arithmetic in any lower precision another.
//!
//! Every product is exact in FP32 (one factor is +-1), every product is a multiple of a grid
//! 2^-g, and the magnitudes of the K products of a dot product add up to less than 2^(24-g).
//! Then every partial sum of every subset of the products (whatever the order: sequential,
//! blocked, pairwise, split over K) is a multiple of 2^-g below 2^(24-g): 24 bits, exact in
//! FP32. So are alpha*acc (alpha a power of two) and acc + C0 (C0 on the same grid, the sum
//! still below 2^(24-g)). A correct FP32 kernel returns the float64 answer bit for bit; one that
//! rounds an input or a product to fewer bits does not, and no summation order can undo that,
//! because the bits lost are in the values themselves.
//!
//! Two kinds, each with its information in A (B is +-1) or in B (A is +-1):
//! - [`Bits::Twelve`]: every value is +-(1 + m*2^-11), m odd: 12 significant bits. TF32 and
//!   FP16 keep 11, BF16 8.
//! - [`Bits::TwentyTwo`]: per row of A (column of B), two values +-(1/4 + m*2^-23), m odd, with
//!   22 significant bits, among small ones (+-c*2^-23): a kernel that drops the low bits of an
//!   input or a product (keeping 16 or 20 of FP32's 24) is caught as well.

use crate::harness::data::{Inputs, Rng};
use crate::harness::problem::{Gemm, Shape};
use std::fmt;

/// The depths of the probes: from a small tile to the largest K of the shape suite.
pub const PROBE_KS: [usize; 4] = [64, 256, 1024, 4096];

/// Rows and columns of every probe: not multiples of any tile.
pub const PROBE_MN: (usize, usize) = (129, 127);

/// How many significant bits the probe's values need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bits {
    Twelve,
    TwentyTwo,
}

/// Which input carries the bits (the other holds +-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

/// One probe: a problem and the kind of inputs it is run on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Probe {
    pub gemm: Gemm,
    pub bits: Bits,
    pub side: Side,
}

impl fmt::Display for Probe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bits = match self.bits {
            Bits::Twelve => 12,
            Bits::TwentyTwo => 22,
        };
        let side = match self.side {
            Side::A => "A",
            Side::B => "B",
        };
        write!(f, "{bits}-bit {side} {}/alpha={},beta={}", self.gemm.shape, self.gemm.alpha, self.gemm.beta)
    }
}

/// Every probe: both kinds on both sides at every K of [`PROBE_KS`], alpha = 1; at the largest
/// K also alpha = -2 and (12 bits) beta = 1, so that the epilogue is probed too.
pub fn probes() -> Vec<Probe> {
    let (m, n) = PROBE_MN;
    let mut out = Vec::new();
    for bits in [Bits::Twelve, Bits::TwentyTwo] {
        for side in [Side::A, Side::B] {
            for k in PROBE_KS {
                let mut scalars = vec![(1.0, 0.0)];
                if k == *PROBE_KS.last().unwrap() {
                    scalars.push((-2.0, 0.0));
                    if bits == Bits::Twelve {
                        scalars.push((1.0, 1.0));
                    }
                }
                for (alpha, beta) in scalars {
                    out.push(Probe { gemm: Gemm::new(Shape::new(m, n, k), alpha, beta), bits, side });
                }
            }
        }
    }
    out
}

/// +-1 with a random sign.
fn sign(rng: &mut Rng) -> f32 {
    if rng.next_u64() & 1 == 0 { 1.0 } else { -1.0 }
}

/// A random odd integer in [1, 2^bits).
fn odd(rng: &mut Rng, bits: u32) -> u64 {
    (rng.next_u64() % (1 << bits)) | 1
}

impl Probe {
    /// The probe's inputs; the placement and signs follow `seed`, the exactness does not.
    pub fn inputs(&self, seed: u64) -> Inputs {
        let Shape { m, n, k } = self.gemm.shape;
        let mut rng = Rng::new(seed);
        // The matrix with the bits, as `vectors` dot products of length k each: rows of A, or
        // columns of B.
        let vectors = if self.side == Side::A { m } else { n };
        let mut bits = vec![0f32; vectors * k];
        for v in bits.chunks_exact_mut(k.max(1)) {
            match self.bits {
                Bits::Twelve => {
                    // 1 + m*2^-11 < 1.5: K of them add up to less than 1.5 * 4096 < 2^13, on
                    // the grid 2^-11.
                    for x in v.iter_mut() {
                        *x = sign(&mut rng) * (1.0 + odd(&mut rng, 10) as f32 * 2f32.powi(-11));
                    }
                }
                Bits::TwentyTwo => {
                    // Small ones: below 2^23 / K times 2^-23 each, less than 1 together.
                    let cmax = ((1u64 << 23) / k as u64).saturating_sub(1).max(1);
                    for x in v.iter_mut() {
                        *x = sign(&mut rng) * (1 + rng.next_u64() % cmax) as f32 * 2f32.powi(-23);
                    }
                    // Two with 22 significant bits, below 1/2 each, at random depths.
                    for _ in 0..2.min(k) {
                        let at = (rng.next_u64() % k as u64) as usize;
                        v[at] = sign(&mut rng) * (0.25 + odd(&mut rng, 21) as f32 * 2f32.powi(-23));
                    }
                }
            }
        }
        let ones_len = if self.side == Side::A { k * n } else { m * k };
        let ones: Vec<f32> = (0..ones_len).map(|_| sign(&mut rng)).collect();
        let (a, b) = match self.side {
            Side::A => (bits, ones),
            Side::B => {
                // `bits` holds columns of B: store them row-major (K x N).
                let mut b = vec![0f32; k * n];
                for j in 0..n {
                    for t in 0..k {
                        b[t * n + j] = bits[j * k + t];
                    }
                }
                (ones, b)
            }
        };
        let c0 = if self.gemm.beta == 0.0 {
            vec![f32::NAN; m * n]
        } else {
            // On the grid 2^-11 and below 2^11: acc + C0 stays below 2^13 (12-bit probes).
            (0..m * n).map(|_| (rng.next_u64() % (1 << 22)) as f32 * 2f32.powi(-11) - 2048.0).collect()
        };
        Inputs { a, b, c0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::reference::cpu_reference;

    /// The probe's product in FP32, summed in `order` (0: sequential FMA; 1: reversed, no FMA;
    /// 2: eight interleaved partial sums; 3: pairwise), with `round` applied to every input.
    fn fp32(p: &Probe, x: &Inputs, order: usize, round: impl Fn(f32) -> f32) -> Vec<f64> {
        let Shape { m, n, k } = p.gemm.shape;
        (0..m * n)
            .map(|e| {
                let (i, j) = (e / n, e % n);
                let t: Vec<f32> = (0..k).map(|q| round(x.a[i * k + q]) * round(x.b[q * n + j])).collect();
                let acc = match order {
                    0 => (0..k).fold(0f32, |s, q| round(x.a[i * k + q]).mul_add(round(x.b[q * n + j]), s)),
                    1 => t.iter().rev().fold(0f32, |s, v| s + v),
                    2 => {
                        let mut part = [0f32; 8];
                        t.iter().enumerate().for_each(|(q, v)| part[q % 8] += v);
                        part.iter().sum()
                    }
                    _ => {
                        let mut v = t;
                        while v.len() > 1 {
                            v = v.chunks(2).map(|c| c.iter().sum()).collect();
                        }
                        v.first().copied().unwrap_or(0.0)
                    }
                };
                let c = if p.gemm.beta == 0.0 { 0.0 } else { p.gemm.beta * x.c0[e] };
                (p.gemm.alpha * acc + c) as f64
            })
            .collect()
    }

    #[test]
    fn fp32_is_exact_in_every_order_and_lower_precisions_are_not() {
        let tf32 = crate::harness::precision::tf32_rna;
        let f16 = |x: f32| half::f16::from_f32(x).to_f32();
        let bf16 = |x: f32| half::bf16::from_f32(x).to_f32();
        // Products truncated to 20 significant bits: FP32 that drops low bits.
        let short = |x: f32| f32::from_bits(x.to_bits() & !0xf);
        for p in probes().into_iter().filter(|p| p.gemm.shape.k <= 1024) {
            // Fewer rows keep the test quick; the exactness argument is per element.
            let p = Probe { gemm: Gemm { shape: Shape { m: 5, n: 7, ..p.gemm.shape }, ..p.gemm }, ..p };
            let x = p.inputs(0x5eed ^ p.gemm.shape.k as u64);
            let rows: Vec<usize> = (0..5).collect();
            let exact = cpu_reference(&p.gemm, &x.a, &x.b, &x.c0, &rows).values;
            for order in 0..4 {
                assert_eq!(fp32(&p, &x, order, |v| v), exact, "{p}: FP32 in order {order} is not exact");
            }
            for (name, round) in [("TF32", &tf32 as &dyn Fn(f32) -> f32), ("FP16", &f16), ("BF16", &bf16)] {
                assert_ne!(fp32(&p, &x, 0, round), exact, "{p}: {name} inputs gave the FP32 answer");
            }
            if p.bits == Bits::TwentyTwo {
                assert_ne!(fp32(&p, &x, 0, short), exact, "{p}: 20-bit inputs gave the FP32 answer");
            }
        }
    }

    #[test]
    fn every_value_is_on_its_grid_and_the_sums_stay_in_24_bits() {
        for p in probes() {
            let x = p.inputs(7);
            let Shape { m, n, k } = p.gemm.shape;
            let (grid, limit) = match p.bits {
                Bits::Twelve => (2f64.powi(-11), 2f64.powi(13)),
                Bits::TwentyTwo => (2f64.powi(-23), 2.0),
            };
            for i in 0..m.min(3) {
                for j in 0..n.min(3) {
                    let t: Vec<f64> = (0..k).map(|q| x.a[i * k + q] as f64 * x.b[q * n + j] as f64).collect();
                    assert!(t.iter().all(|v| (v / grid).fract() == 0.0), "{p}: off the grid");
                    let total: f64 = t.iter().map(|v| v.abs()).sum();
                    // alpha is a power of two: it moves the grid and the sum together.
                    let c0 = if p.gemm.beta == 0.0 { 0.0 } else { 2048.0 };
                    assert!(total + c0 <= limit, "{p}: {total} + {c0} > {limit}");
                }
            }
        }
        assert_eq!(probes().len(), 2 * 2 * PROBE_KS.len() + 2 * 2 + 2);
    }
}
