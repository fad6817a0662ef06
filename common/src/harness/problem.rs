//! The problem: C = alpha*A*B + beta*C with row-major A (MxK), B (KxN), C (MxN),
//! and the two numbers every step is judged by: its FLOPs and its minimal bytes.

use crate::{Error, Result};
use std::fmt;

/// Matrix dimensions of one GEMM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    pub m: usize,
    pub n: usize,
    pub k: usize,
}

impl Shape {
    pub const fn new(m: usize, n: usize, k: usize) -> Self {
        Shape { m, n, k }
    }

    pub const fn cube(s: usize) -> Self {
        Shape::new(s, s, s)
    }

    /// 2*M*N*K: one multiply and one add per term of every dot product.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }

    /// GFLOP/s of one GEMM of this shape taking `ms` milliseconds.
    pub fn gflops_at(&self, ms: f64) -> f64 {
        self.flops() / (ms * 1e-3) / 1e9
    }

    /// True when the kernel has nothing to write (an empty C).
    pub fn is_empty(&self) -> bool {
        self.m == 0 || self.n == 0
    }

    /// Kernels index with 32-bit `int`: every matrix must have fewer than 2^31 elements,
    /// and nothing may be larger than `int` can hold.
    pub fn check_32bit(&self) -> Result<()> {
        const LIMIT: u128 = i32::MAX as u128;
        let (m, n, k) = (self.m as u128, self.n as u128, self.k as u128);
        let biggest = (m * k).max(k * n).max(m * n).max(m).max(n).max(k);
        if biggest > LIMIT {
            return Err(Error::BadInput(format!(
                "shape {self} is too large: a matrix would have {biggest} elements, and the kernels \
                 index with 32-bit ints (at most {LIMIT}); split the product into smaller GEMMs"
            )));
        }
        Ok(())
    }

    /// Parses `MxNxK` or a single `S` (meaning SxSxS).
    pub fn parse(text: &str) -> Result<Self> {
        let bad = || Error::BadInput(format!("bad shape {text:?}: write MxNxK (e.g. 4096x4096x1024) or S for SxSxS"));
        let parts: Vec<usize> =
            text.split(['x', 'X']).map(|p| p.trim().parse::<usize>().map_err(|_| bad())).collect::<Result<_>>()?;
        match parts[..] {
            [s] => Ok(Shape::cube(s)),
            [m, n, k] => Ok(Shape::new(m, n, k)),
            _ => Err(bad()),
        }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}x{}", self.m, self.n, self.k)
    }
}

/// One GEMM call: a shape and the two scalars.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gemm {
    pub shape: Shape,
    pub alpha: f32,
    pub beta: f32,
}

impl Gemm {
    pub fn new(shape: Shape, alpha: f32, beta: f32) -> Self {
        Gemm { shape, alpha, beta }
    }

    /// The fewest bytes any kernel must move through device memory: A and B read once,
    /// C written once, and read once more only when beta != 0 (beta == 0 means C is not read).
    pub fn min_bytes(&self, elem_bytes: usize) -> f64 {
        let Shape { m, n, k } = self.shape;
        let c_passes = if self.beta == 0.0 { 1 } else { 2 };
        (elem_bytes * (m * k + k * n + c_passes * m * n)) as f64
    }

    /// The fewest bytes in a precision: A and B in its input format, C in its output format.
    pub fn min_bytes_in(&self, p: crate::Precision) -> f64 {
        let Shape { m, n, k } = self.shape;
        let c_passes = if self.beta == 0.0 { 1 } else { 2 };
        (p.input().bytes() * (m * k + k * n) + p.output().bytes() * c_passes * m * n) as f64
    }

    /// FLOPs per byte at the memory floor: how much arithmetic each byte must feed.
    pub fn arithmetic_intensity(&self, elem_bytes: usize) -> f64 {
        self.shape.flops() / self.min_bytes(elem_bytes)
    }
}

impl fmt::Display for Gemm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} alpha={} beta={}", self.shape, self.alpha, self.beta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flops_and_bytes_at_4096() {
        let g = Gemm::new(Shape::cube(4096), 1.0, 0.0);
        assert_eq!(g.shape.flops(), 2.0 * 4096f64.powi(3));
        // A, B and C once each: 3 * 4096^2 floats.
        assert_eq!(g.min_bytes(4), 3.0 * 4.0 * 4096f64.powi(2));
        // 2*4096^3 / (12*4096^2) = 4096/6.
        assert!((g.arithmetic_intensity(4) - 4096.0 / 6.0).abs() < 1e-9);
        // beta != 0 reads C too.
        assert_eq!(Gemm::new(Shape::cube(4096), 1.0, 0.5).min_bytes(4), 16.0 * 4096f64.powi(2));
        // FP16: A and B in 2 bytes, C in 4.
        assert_eq!(g.min_bytes_in(crate::Precision::F16), 8.0 * 4096f64.powi(2));
        assert_eq!(g.min_bytes_in(crate::Precision::F32), g.min_bytes(4));
    }

    #[test]
    fn parse_shapes() {
        assert_eq!(Shape::parse("4096").unwrap(), Shape::cube(4096));
        assert_eq!(Shape::parse("17x4096x3").unwrap(), Shape::new(17, 4096, 3));
        assert!(Shape::parse("17x4096").is_err());
        assert!(Shape::parse("abc").is_err());
    }

    #[test]
    fn rejects_32bit_overflow() {
        assert!(Shape::new(65536, 32768, 1).check_32bit().is_err());
        assert!(Shape::new(1, 1, 1 << 31).check_32bit().is_err());
        assert!(Shape::new(46340, 46340, 1).check_32bit().is_ok());
        assert!(Shape::cube(16384).check_32bit().is_ok());
    }
}
