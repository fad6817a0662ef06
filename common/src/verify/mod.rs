//! Verification: whether a result is right. Every element of a result is checked against a bound
//! on the rounding error a correct kernel can make, and the whole result against the same bound in
//! the Frobenius norm.
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
//! within [`ELEMENT_SIGMAS`](bound::ELEMENT_SIGMAS) sigmas, the whole result within
//! [`FROBENIUS_SIGMAS`](bound::FROBENIUS_SIGMAS) of
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
//! element may move by up to `|alpha| * (dA (|B| + dB) + |A| dB)` (the `ties` of
//! [`Terms`](bound::Terms)), a hard allowance added to the element's bound, not a multiple of
//! sigma.
//!
//! An element that is not finite must be exactly where the reference has a non-finite value
//! of the same kind (NaN, +inf or -inf); everywhere else it fails.
//!
//! Its parts: [`bound`], the error model; [`scales`], what each element's bound is made of (the
//! TF32 tie slack among it); [`compare`], a result against a float64 or cuBLAS reference;
//! [`report`], the outcome and its line. Around them: [`reference`](mod@reference), the two
//! references (cuBLAS in the kernel's precision, float64 on the CPU); [`probe`], inputs with
//! exactly one FP32 answer; [`check`], a problem prepared with both references, and a kernel's
//! verdict. The layer imports only the harness.

pub mod bound;
pub mod check;
pub mod compare;
pub mod probe;
pub mod reference;
pub mod report;
pub mod scales;
#[cfg(test)]
mod tests;
