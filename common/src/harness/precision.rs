//! The precisions a kernel can compute in. Steps 1-6 are FP32 SGEMMs; steps 7-13 run the same
//! product on tensor cores in FP16, BF16 (with C in FP32 or in the 16-bit type), TF32, FP64, and
//! 3xTF32 (FP32 accuracy from three TF32 products). A precision fixes how A and B are stored,
//! what the hardware multiplies (the inputs rounded to it), what C and the scalars are, which
//! cuBLAS call is the reference, and how large an error is still correct.

use std::fmt;

/// How a GEMM is computed. Inputs are always generated as FP32 values; the precision says
/// what the kernel sees of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Precision {
    /// FP32 in, FP32 out, FP32 arithmetic (no tensor cores): steps 1-6.
    F32,
    /// FP32 in memory, rounded to TF32 (10 mantissa bits) by the kernel, FP32 accumulation
    /// on tensor cores.
    Tf32,
    /// FP16 (half) inputs in memory, FP32 accumulation on tensor cores, FP32 C.
    F16,
    /// BF16 (bfloat16: FP32's exponent, 7 mantissa bits) inputs in memory, FP32 accumulation
    /// on tensor cores, FP32 C.
    Bf16,
    /// FP64 everywhere (DGEMM).
    F64,
    /// FP32 in and out, computed on TF32 tensor cores as three products per term: each input
    /// is split into a TF32 "big" part and a TF32 "small" remainder, and big*big + big*small +
    /// small*big is accumulated in FP32. An SGEMM with FP32-level error; cuBLAS SGEMM (TF32
    /// off) is its reference.
    Tf32x3,
    /// FP16 inputs, FP32 accumulation on tensor cores, C stored in FP16 (what `torch.matmul`
    /// returns for FP16 tensors); alpha and beta in FP32.
    F16C16,
    /// BF16 inputs, FP32 accumulation on tensor cores, C stored in BF16.
    Bf16C16,
    /// FP8 (e4m3: 4 exponent bits, 3 mantissa bits) A and B, B given K-major (N x K, a linear
    /// layer's weight), each with one FP32 scale ([`Scaling::Tensor`]); FP32 accumulation,
    /// promoted from the tensor cores' narrower sums every 128 of K; C in BF16.
    Fp8,
    /// The same with C in FP32.
    Fp8C32,
    /// FP8 with fine-grained scales ([`Scaling::Block`]: DeepSeek-V3's, as DeepGEMM takes them),
    /// applied as the partial sums are promoted; C in BF16.
    Fp8Block,
    /// The same with C in FP32.
    Fp8BlockC32,
}

/// How an FP8 input carries the range its 8 bits lack: one FP32 scale per tensor, or per block.
/// A stored value q stands for q * scale. Scales are powers of two (the UE8M0 scales of
/// DeepSeek-V3.1 and the MX formats): scaling is then exact, and the values the kernel multiplies
/// are exactly FP32 (and BF16) numbers that a float64 reference can take as they are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scaling {
    /// One scale for A, one for B.
    Tensor,
    /// A: one scale per row per 128 values of K (1 x 128); B: one per 128 x 128 block.
    Block,
}

/// The K (and, for B, N) of one block of [`Scaling::Block`].
pub const SCALE_BLOCK: usize = 128;

/// The largest finite e4m3 value: a block's largest magnitude is scaled to at most this.
pub const E4M3_MAX: f32 = 448.0;

/// How a matrix is stored on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Elem {
    F16,
    Bf16,
    F32,
    F64,
    /// FP8 e4m3 (OCP's E4M3FN: no infinities, one NaN pattern per sign).
    E4m3,
}

impl Elem {
    pub const fn bytes(self) -> usize {
        match self {
            Elem::F16 | Elem::Bf16 => 2,
            Elem::F32 => 4,
            Elem::F64 => 8,
            Elem::E4m3 => 1,
        }
    }
}

impl Precision {
    pub const ALL: [Precision; 12] = [
        Precision::F32,
        Precision::Tf32,
        Precision::F16,
        Precision::Bf16,
        Precision::F64,
        Precision::Tf32x3,
        Precision::F16C16,
        Precision::Bf16C16,
        Precision::Fp8,
        Precision::Fp8C32,
        Precision::Fp8Block,
        Precision::Fp8BlockC32,
    ];

    /// Short lower-case name, used in step ids, result files and flags: `fp16`.
    pub const fn label(self) -> &'static str {
        match self {
            Precision::F32 => "fp32",
            Precision::Tf32 => "tf32",
            Precision::F16 => "fp16",
            Precision::Bf16 => "bf16",
            Precision::F64 => "fp64",
            Precision::Tf32x3 => "3xtf32",
            Precision::F16C16 => "fp16-c16",
            Precision::Bf16C16 => "bf16-c16",
            Precision::Fp8 => "fp8",
            Precision::Fp8C32 => "fp8-c32",
            Precision::Fp8Block => "fp8-block",
            Precision::Fp8BlockC32 => "fp8-block-c32",
        }
    }

    /// The precision's code in the kernels' table (`common/include/precision.cuh`), passed to a
    /// kernel as its `PREC` define.
    pub const fn code(self) -> i64 {
        match self {
            Precision::F32 => 0,
            Precision::F16 => 1,
            Precision::Bf16 => 2,
            Precision::Tf32 => 3,
            Precision::F64 => 4,
            Precision::Tf32x3 => 5,
            Precision::F16C16 => 6,
            Precision::Bf16C16 => 7,
            Precision::Fp8 => 8,
            Precision::Fp8C32 => 9,
            Precision::Fp8Block => 10,
            Precision::Fp8BlockC32 => 11,
        }
    }

    /// The precision of the arithmetic, whatever C is stored as: FP16 for FP16 with a 16-bit C.
    pub const fn arithmetic(self) -> Precision {
        match self {
            Precision::F16C16 => Precision::F16,
            Precision::Bf16C16 => Precision::Bf16,
            Precision::Fp8C32 => Precision::Fp8,
            Precision::Fp8BlockC32 => Precision::Fp8Block,
            p => p,
        }
    }

    /// How an FP8 precision scales its inputs; `None` for the others.
    pub const fn scaling(self) -> Option<Scaling> {
        match self {
            Precision::Fp8 | Precision::Fp8C32 => Some(Scaling::Tensor),
            Precision::Fp8Block | Precision::Fp8BlockC32 => Some(Scaling::Block),
            _ => None,
        }
    }

    /// The precision cublasGemmEx computes this one's check and comparison in: itself, or for
    /// FP8, which it lacks, BF16 (which holds the values an FP8 kernel multiplies exactly).
    pub const fn cublas_gemm_ex(self) -> Precision {
        if self.scaling().is_some() { Precision::Bf16 } else { self }
    }

    /// Whether B is stored K-major (N x K, row-major) rather than K x N: FP8 alone, because FP8
    /// wgmma reads both operands K-major.
    pub const fn b_k_major(self) -> bool {
        self.scaling().is_some()
    }

    pub fn parse(text: &str) -> Option<Precision> {
        Precision::ALL.into_iter().find(|p| p.label().eq_ignore_ascii_case(text.trim()))
    }

    /// Storage of A and B on the device.
    pub const fn input(self) -> Elem {
        match self {
            Precision::F16 | Precision::F16C16 => Elem::F16,
            Precision::Bf16 | Precision::Bf16C16 => Elem::Bf16,
            Precision::F64 => Elem::F64,
            Precision::F32 | Precision::Tf32 | Precision::Tf32x3 => Elem::F32,
            Precision::Fp8 | Precision::Fp8C32 | Precision::Fp8Block | Precision::Fp8BlockC32 => Elem::E4m3,
        }
    }

    /// Storage of C.
    pub const fn output(self) -> Elem {
        match self {
            Precision::F64 => Elem::F64,
            Precision::F16C16 => Elem::F16,
            Precision::Bf16C16 | Precision::Fp8 | Precision::Fp8Block => Elem::Bf16,
            _ => Elem::F32,
        }
    }

    /// The type of alpha and beta, and of the accumulation: FP64 for FP64, FP32 otherwise.
    pub const fn scalar(self) -> Elem {
        match self {
            Precision::F64 => Elem::F64,
            _ => Elem::F32,
        }
    }

    /// Unit roundoff of C's storage when it is narrower than the accumulation (a 16-bit C: each
    /// result rounded once more), else 0.
    pub fn output_unit_roundoff(self) -> f64 {
        match self {
            Precision::F16C16 => 2f64.powi(-11),
            Precision::Bf16C16 | Precision::Fp8 | Precision::Fp8Block => 2f64.powi(-8),
            _ => 0.0,
        }
    }

    /// The absolute error of storing a result in C where rounding is not relative: half the
    /// spacing of C's subnormals for a 16-bit C (FP16: 2^-25, below 2^-14; BF16: 2^-134), else 0.
    pub fn output_underflow(self) -> f64 {
        match self {
            Precision::F16C16 => 2f64.powi(-25),
            Precision::Bf16C16 | Precision::Fp8 | Precision::Fp8Block => 2f64.powi(-134),
            _ => 0.0,
        }
    }

    /// The value the hardware multiplies when the kernel is given `x`: `x` rounded to the
    /// precision's input format, to nearest with ties to even (FP16 and BF16 as the host stores
    /// them; TF32 as cuBLAS and a TFLOAT32 tensor map of the TMA round, [`tf32_rne`]). Steps 7
    /// and 8 round TF32 ties away from zero instead ([`tf32_rna`]); the verifier accepts either
    /// rule at an exact tie, by exactly what the tie can change ([`crate::verify`]). Exact in f32 for
    /// every precision. 3xTF32 multiplies the FP32 inputs themselves (to within the splitting
    /// error that [`Precision::input_unit_roundoff`] states).
    pub fn round_input(self, x: f32) -> f32 {
        match self {
            Precision::F32 | Precision::F64 | Precision::Tf32x3 => x,
            Precision::F16 | Precision::F16C16 => half::f16::from_f32(x).to_f32(),
            Precision::Bf16 | Precision::Bf16C16 => half::bf16::from_f32(x).to_f32(),
            Precision::Tf32 => tf32_rne(x),
            // The value depends on its block's scale: the harness quantizes on the GPU and reads
            // back what the kernel multiplies (`harness::quantize`).
            Precision::Fp8 | Precision::Fp8C32 | Precision::Fp8Block | Precision::Fp8BlockC32 => x,
        }
    }

    /// True for the precisions that claim FP32 accuracy or better (FP32, 3xTF32, FP64): they
    /// must answer the precision probes exactly.
    pub fn fp32_accurate(self) -> bool {
        matches!(self, Precision::F32 | Precision::Tf32x3 | Precision::F64)
    }

    /// True when the kernel multiplies something other than the FP32 inputs.
    pub fn rounds_inputs(self) -> bool {
        matches!(
            self.arithmetic(),
            Precision::Tf32 | Precision::F16 | Precision::Bf16 | Precision::Fp8 | Precision::Fp8Block
        )
    }

    /// Unit roundoff of the input format: the relative error of rounding one input. For
    /// 3xTF32, what splitting costs: big is x truncated to TF32, the rest below 2^-10 |x| and
    /// rounded to TF32 within 2^-21 |x|; the dropped small*small product is below 2^-20 |a b|, so a
    /// product is within 2 * 2^-21 + 2^-20 = 2^-19 of |a b|: 2^-20 per input.
    pub fn input_unit_roundoff(self) -> f64 {
        match self.arithmetic() {
            // 10 stored mantissa bits: 2^-11.
            Precision::F16 | Precision::Tf32 => 2f64.powi(-11),
            // 7 stored mantissa bits: 2^-8.
            Precision::Bf16 => 2f64.powi(-8),
            Precision::Tf32x3 => 2f64.powi(-20),
            // 3 stored mantissa bits: 2^-4 (within the range a block's scale gives it).
            Precision::Fp8 | Precision::Fp8Block => 2f64.powi(-4),
            _ => 0.0,
        }
    }

    /// The oldest GPU with tensor cores for this precision (FP16: Volta; BF16, TF32 and FP64:
    /// Ampere).
    pub const fn min_cc(self) -> (i32, i32) {
        match self {
            Precision::F32 => (3, 5),
            Precision::F16 | Precision::F16C16 => (7, 0),
            Precision::Bf16 | Precision::Tf32 | Precision::F64 | Precision::Tf32x3 | Precision::Bf16C16 => (8, 0),
            // FP8 tensor cores: Ada (8.9) and Hopper.
            Precision::Fp8 | Precision::Fp8C32 | Precision::Fp8Block | Precision::Fp8BlockC32 => (8, 9),
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// An e4m3 byte as FP32 (exact). 0x7f and 0xff are NaN; there are no infinities.
pub fn e4m3_to_f32(b: u8) -> f32 {
    let (sign, exp, man) = (if b & 0x80 != 0 { -1.0 } else { 1.0 }, (b >> 3) & 0xf, b & 7);
    if exp == 0xf && man == 7 {
        return f32::NAN;
    }
    let magnitude = if exp == 0 { man as f32 * 2f32.powi(-9) } else { (8 + man) as f32 * 2f32.powi(exp as i32 - 10) };
    sign * magnitude
}

/// FP32 -> e4m3, rounded to nearest with ties to even and saturated at ±448 (PTX
/// `cvt.rn.satfinite.e4m3x2.f32`, what the harness's quantization kernel runs); NaN stays NaN, and
/// infinity, which e4m3 lacks, becomes NaN too.
pub fn f32_to_e4m3(x: f32) -> u8 {
    if !x.is_finite() {
        return 0x7f;
    }
    let sign = if x.is_sign_negative() { 0x80 } else { 0 };
    let a = x.abs().min(E4M3_MAX);
    // The nearest of the 127 finite magnitudes, ties to the even code (the codes are ordered).
    let (mut lo, mut hi) = (0u8, 0x7e);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if e4m3_to_f32(mid) <= a { lo = mid } else { hi = mid }
    }
    let (dl, dh) = (a - e4m3_to_f32(lo), e4m3_to_f32(hi) - a);
    sign | if dl < dh || (dl == dh && lo % 2 == 0) { lo } else { hi }
}

/// FP32 -> TF32 bits: round to 10 mantissa bits, to nearest with ties away from zero
/// (PTX `cvt.rna.tf32.f32`), the 13 low bits zero. Our inputs are finite and small.
pub fn tf32_rna(x: f32) -> f32 {
    if !x.is_finite() {
        return x;
    }
    // Adding half of the last kept bit to the magnitude rounds ties away from zero.
    f32::from_bits((x.to_bits() + 0x1000) & 0xffff_e000)
}

/// FP32 -> TF32 bits: round to 10 mantissa bits, to nearest with ties to even (what cuBLAS's
/// TF32 and the TMA's TFLOAT32 tensor maps do), the 13 low bits zero. Non-finite values are
/// returned as they are; a carry out of the mantissa moves into the exponent, which is the
/// correct result (2 - 2^-11 rounds to 2).
pub fn tf32_rne(x: f32) -> f32 {
    if !x.is_finite() {
        return x;
    }
    // Just under half of the last kept bit, plus that bit: a tie rounds up only when the kept
    // part is odd, to the even neighbour.
    let bits = x.to_bits();
    f32::from_bits((bits + 0xfff + ((bits >> 13) & 1)) & 0xffff_e000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tf32_rounds_to_nearest_ties_away() {
        assert_eq!(tf32_rna(1.0), 1.0);
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: away from zero.
        assert_eq!(tf32_rna(1.0 + 2f32.powi(-11)), 1.0 + 2f32.powi(-10));
        assert_eq!(tf32_rna(-(1.0 + 2f32.powi(-11))), -(1.0 + 2f32.powi(-10)));
        assert_eq!(tf32_rna(1.0 + 2f32.powi(-12)), 1.0);
        let x = 0.123_456_79f32;
        assert_eq!(tf32_rna(x).to_bits() & 0x1fff, 0);
        assert!(((tf32_rna(x) - x) / x).abs() as f64 <= Precision::Tf32.input_unit_roundoff());
    }

    #[test]
    fn tf32_rne_rounds_ties_to_even() {
        let ulp = 2f32.powi(-10);
        // 1 + 2^-11 is halfway between 1 (even) and 1 + 2^-10 (odd): down to 1.
        assert_eq!(tf32_rne(1.0 + ulp / 2.0), 1.0);
        // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even): up.
        assert_eq!(tf32_rne(1.0 + 3.0 * ulp / 2.0), 1.0 + 2.0 * ulp);
        assert_eq!(tf32_rne(-(1.0 + ulp / 2.0)), -1.0);
        assert_eq!(tf32_rne(-(1.0 + 3.0 * ulp / 2.0)), -(1.0 + 2.0 * ulp));
        // A tie below 2 whose kept part is all ones: the carry reaches the exponent.
        assert_eq!(tf32_rne(2.0 - ulp / 2.0), 2.0);
        assert_eq!(tf32_rne(-(2.0 - ulp / 2.0)), -2.0);
        assert_eq!(tf32_rne(1.0 + ulp / 4.0), 1.0);
        assert_eq!(tf32_rne(1.0 + 3.0 * ulp / 4.0), 1.0 + ulp);
        for x in [f32::INFINITY, f32::NEG_INFINITY] {
            assert_eq!(tf32_rne(x), x);
        }
        assert!(tf32_rne(f32::NAN).is_nan());
    }

    /// Ties to even and ties away from zero agree everywhere but at an exact tie (the 13 dropped
    /// bits 0x1000), and there they differ exactly when the kept part is even.
    #[test]
    fn tf32_rules_differ_exactly_at_ties() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u32
        };
        for i in 0..200_000u32 {
            // Every third value a planted tie; exponents kept away from overflow.
            let mut bits = next() & 0xbfff_ffff;
            if i % 3 == 0 {
                bits = (bits & 0xffff_e000) | 0x1000;
            }
            let x = f32::from_bits(bits);
            let (even, away) = (tf32_rne(x), tf32_rna(x));
            assert_eq!(even.to_bits() & 0x1fff, 0, "{x:e}");
            let tie = bits & 0x1fff == 0x1000;
            let kept_even = bits & 0x2000 == 0;
            assert_eq!(even != away, tie && kept_even, "{x:e}: {even:e} {away:e}");
            if even != away {
                assert!(away.abs() > even.abs() && (away - even).abs() == (x - even).abs() * 2.0, "{x:e}");
            }
        }
    }

    /// The codes here and in the kernels' table (`enum PrecisionCode` of precision.cuh) agree.
    #[test]
    fn codes_match_the_kernels_table() {
        let header = include_str!("../../include/precision.cuh");
        let table = header.split("enum PrecisionCode").nth(1).and_then(|t| t.split("};").next()).unwrap();
        let mut named = 0;
        for line in table.lines() {
            let Some((name, rest)) = line.trim().split_once('=') else { continue };
            let code: i64 = rest.trim().trim_start_matches(' ').split(',').next().unwrap().trim().parse().unwrap();
            let p = Precision::ALL
                .into_iter()
                .find(|p| p.code() == code)
                .unwrap_or_else(|| panic!("precision.cuh's {name} = {code} has no Precision"));
            let expected = p.label().to_uppercase().replace('-', "_").replace("3XTF32", "TF32X3");
            assert_eq!(name.trim(), expected, "code {code}");
            named += 1;
        }
        assert_eq!(named, Precision::ALL.len(), "every precision has a code in precision.cuh");
    }

    #[test]
    fn e4m3_codec() {
        assert_eq!(e4m3_to_f32(0x7e), 448.0);
        assert_eq!(e4m3_to_f32(0x38), 1.0);
        assert_eq!(e4m3_to_f32(0x01), 2f32.powi(-9));
        assert!(e4m3_to_f32(0x7f).is_nan() && e4m3_to_f32(0xff).is_nan());
        // Every finite code encodes back to itself; beyond 448 saturates.
        for b in (0..=0xffu8).filter(|b| b & 0x7f != 0x7f) {
            assert_eq!(f32_to_e4m3(e4m3_to_f32(b)), if b == 0x80 { 0x80 } else { b }, "{b:#x}");
        }
        assert_eq!(f32_to_e4m3(1e6), 0x7e);
        assert_eq!(f32_to_e4m3(-1e6), 0xfe);
        assert_eq!(f32_to_e4m3(f32::INFINITY) & 0x7f, 0x7f);
        // 1 + 1/16 lies halfway between 1 (code 0x38, even) and 1.125 (0x39): to even.
        assert_eq!(f32_to_e4m3(1.0625), 0x38);
        assert_eq!(f32_to_e4m3(1.1875), 0x3a);
        assert_eq!(f32_to_e4m3(1.06), 0x38);
    }

    #[test]
    fn fp16_rounding_and_labels() {
        assert_eq!(Precision::F16.round_input(1.0 + 2f32.powi(-12)), 1.0);
        assert_eq!(Precision::F32.round_input(0.1), 0.1);
        for p in Precision::ALL {
            assert_eq!(Precision::parse(p.label()), Some(p));
        }
        assert_eq!(Precision::parse("FP16"), Some(Precision::F16));
        assert_eq!(Precision::parse("3xTF32"), Some(Precision::Tf32x3));
        // BF16 keeps 8 significant bits: 1 + 2^-9 rounds to 1, 1 + 2^-7 is kept.
        assert_eq!(Precision::Bf16.round_input(1.0 + 2f32.powi(-9)), 1.0);
        assert_eq!(Precision::Bf16.round_input(1.0 + 2f32.powi(-7)), 1.0 + 2f32.powi(-7));
        assert_eq!(Precision::Bf16.input().bytes(), 2);
        assert!(!Precision::Tf32x3.rounds_inputs());
        assert_eq!(Precision::Tf32x3.round_input(0.1), 0.1);
        assert_eq!(Precision::F16.input().bytes(), 2);
        assert_eq!(Precision::F64.output().bytes(), 8);
    }
}
