//! The bound on one element's error, and on the whole result's (the module's comment derives it).

use crate::harness::precision::Precision;

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
    /// FP8: the tensor cores add each run of `interval` products in a format narrower than FP32
    /// (unit roundoff 2^-`tensor_bits`, truncated), and the kernel adds those partial sums into FP32
    /// registers (round to nearest) every `interval` of K. The narrow sums start from zero at
    /// every promotion, so their error grows with the interval, not with K.
    Promoted { tensor_bits: i32, interval: usize },
}

/// What the FP8 tensor cores keep of a sum: about 14 bits (DeepSeek-V3's report, section 3.3.2,
/// on the H800), taken as a unit roundoff of 2^-14; the kernel promotes every 128 of K.
pub const FP8_ACCUMULATION: Accumulation = Accumulation::Promoted { tensor_bits: 14, interval: 128 };

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
    /// `sum_k dA_ik (|b_kj| + dB_kj) + |a_ik| dB_kj`, [`tf32_ties`](super::scales::tf32_ties).
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
            Precision::Fp8 | Precision::Fp8Block => {
                Tolerance { accumulation: FP8_ACCUMULATION, output_u, output_eta, ..Self::F32_VS_F64 }
            }
            Precision::F16C16 | Precision::Bf16C16 | Precision::Fp8C32 | Precision::Fp8BlockC32 => {
                unreachable!("arithmetic() is FP16, BF16 or FP8")
            }
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
            // Each run's truncated sum, bounded as Truncated's over `interval` products (with the
            // whole sum's spread: no run's partial sums exceed it by much), and the FP32 sum of
            // the K / interval runs, rounded to nearest.
            Accumulation::Promoted { tensor_bits, interval } => {
                let tensor_u = 2f64.powi(-tensor_bits);
                let runs = (k / interval as f64).ceil().max(1.0);
                2.0 * tensor_u * k.min(interval as f64) * spread + self.u * runs.sqrt() * spread
            }
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
            Accumulation::Truncated | Accumulation::Promoted { .. } => 1.0,
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
            Accumulation::Truncated | Accumulation::Promoted { .. } => 1.0,
        }
    }
}
