//! Seeded random inputs. Never zeros: zeros hide unwritten outputs and wrong indexing.

/// SplitMix64: tiny, fast, and good enough to make test matrices.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1), with 24 random bits: every value is exactly representable in f32.
    pub fn next_f32(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32) * (2.0 / (1u32 << 24) as f32) - 1.0
    }
}

/// A `rows x cols` row-major matrix of uniform values in [-1, 1).
pub fn random_matrix(rows: usize, cols: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    (0..rows * cols).map(|_| rng.next_f32()).collect()
}

/// A fresh seed for a run, from the clock; printed so that a failure can be replayed.
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    Rng::new(nanos as u64).next_u64()
}

/// The three inputs of one verified run.
pub struct Inputs {
    pub a: Vec<f32>,
    pub b: Vec<f32>,
    /// C before the run: random when beta != 0; all NaN when beta == 0, so that a kernel
    /// that reads C anyway (or leaves an element unwritten) shows up as NaN.
    pub c0: Vec<f32>,
}

impl Inputs {
    pub fn new(gemm: &crate::Gemm, seed: u64) -> Inputs {
        let crate::Shape { m, n, k } = gemm.shape;
        let a = random_matrix(m, k, seed);
        let b = random_matrix(k, n, seed ^ 0x5555_5555);
        let c0 = if gemm.beta == 0.0 { vec![f32::NAN; m * n] } else { random_matrix(m, n, seed ^ 0xaaaa_aaaa) };
        Inputs { a, b, c0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_in_range_and_seeded() {
        let x = random_matrix(64, 64, 7);
        assert!(x.iter().all(|v| (-1.0..1.0).contains(v)));
        assert_eq!(x, random_matrix(64, 64, 7));
        assert_ne!(x, random_matrix(64, 64, 8));
        let mean = x.iter().map(|&v| v as f64).sum::<f64>() / x.len() as f64;
        assert!(mean.abs() < 0.05, "mean {mean}");
    }
}
