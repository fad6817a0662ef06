//! Seeded random inputs. Never zeros: zeros hide unwritten outputs and wrong indexing.

use crate::harness::cores::cores;
use crate::harness::precision::SCALE_BLOCK;

/// SplitMix64: tiny, fast, and good enough to make test matrices.
#[derive(Clone, Debug)]
pub struct Rng(u64);

/// SplitMix64's step: its state after n values is the seed plus n of them.
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The generator `Rng::new(seed)` becomes after `n` values: SplitMix64 is a counter, so a
    /// thread can start a matrix's values anywhere and make the same ones.
    pub fn skipped(seed: u64, n: u64) -> Rng {
        Rng(seed.wrapping_add(n.wrapping_mul(GAMMA)))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GAMMA);
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

/// A `rows x cols` row-major matrix of uniform values in [-1, 1): the values of one generator,
/// made in pieces of a million by every core (B of the largest suite shape is 170 million).
pub fn random_matrix(rows: usize, cols: usize, seed: u64) -> Vec<f32> {
    const PIECE: usize = 1 << 20;
    let mut values = vec![0f32; rows * cols];
    let threads = cores().clamp(1, values.len().div_ceil(PIECE).max(1));
    let share = values.len().div_ceil(threads).max(1);
    let fill = |t: usize, part: &mut [f32]| {
        let mut rng = Rng::skipped(seed, (t * share) as u64);
        part.iter_mut().for_each(|v| *v = rng.next_f32());
    };
    if threads == 1 {
        fill(0, &mut values); // a small matrix: no thread to start
    } else {
        std::thread::scope(|scope| {
            for (t, part) in values.chunks_mut(share).enumerate() {
                scope.spawn(move || fill(t, part));
            }
        });
    }
    values
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

    /// For FP8 with block scales: every row of A per 128 of K, and every 128 x 128 block of B,
    /// times its own power of two from 2^-3 to 2^3, so that the blocks' scales differ by up to 64
    /// times and a kernel that applies one block's scale to another fails the check. (Uniform
    /// data alone leave every block's scale within about 1% of the others': a kernel that read
    /// one K-tile's scales for all of K passed.) Powers of two keep every value exact, and its
    /// sign, infinity or NaN.
    pub fn vary_by_block(&mut self, shape: crate::Shape, seed: u64) {
        let crate::Shape { m, n, k } = shape;
        if m * n * k == 0 {
            return; // nothing to vary (and no rows to cut A or B into)
        }
        let mut rng = Rng::new(seed ^ 0x3c3c_3c3c);
        let mut factor = || 2f32.powi((rng.next_u64() % 7) as i32 - 3);
        for row in self.a.chunks_mut(k).take(m) {
            for block in row.chunks_mut(SCALE_BLOCK) {
                let f = factor();
                block.iter_mut().for_each(|v| *v *= f);
            }
        }
        let blocks_n = n.div_ceil(SCALE_BLOCK);
        let mut f = Vec::new();
        for (r, row) in self.b.chunks_mut(n).take(k).enumerate() {
            if r % SCALE_BLOCK == 0 {
                f = (0..blocks_n).map(|_| factor()).collect();
            }
            for (block, fb) in row.chunks_mut(SCALE_BLOCK).zip(&f) {
                block.iter_mut().for_each(|v| *v *= fb);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_in_pieces_as_in_one() {
        // A matrix made by every core holds one generator's values in order.
        for (rows, cols) in [(3, 5), (1, 1 << 20), (3, (1 << 20) + 7), (0, 9)] {
            let mut rng = Rng::new(42);
            let one: Vec<f32> = (0..rows * cols).map(|_| rng.next_f32()).collect();
            assert_eq!(random_matrix(rows, cols, 42), one, "{rows} x {cols}");
        }
    }

    #[test]
    fn values_in_range_and_seeded() {
        let x = random_matrix(64, 64, 7);
        assert!(x.iter().all(|v| (-1.0..1.0).contains(v)));
        assert_eq!(x, random_matrix(64, 64, 7));
        assert_ne!(x, random_matrix(64, 64, 8));
        let mean = x.iter().map(|&v| v as f64).sum::<f64>() / x.len() as f64;
        assert!(mean.abs() < 0.05, "mean {mean}");
    }

    #[test]
    fn blocks_get_their_own_powers_of_two() {
        let gemm = crate::Gemm::new(crate::Shape::new(3, 200, 300), 1.0, 0.0);
        let plain = Inputs::new(&gemm, 5);
        let mut varied = Inputs::new(&gemm, 5);
        varied.vary_by_block(gemm.shape, 5);
        // The factor of each (row of A, block of K) and (block of K, block of N) of B: one
        // power of two from 1/8 to 8 across a block, and not one for all blocks.
        let factor = |x: f32, y: f32| {
            let f = y / x;
            assert!((0.125..=8.0).contains(&f) && f.log2().fract() == 0.0, "{y} / {x}");
            f
        };
        let mut fa = Vec::new();
        for i in 0..3 {
            for blk in 0..3 {
                let at = |c: usize| i * 300 + blk * 128 + c;
                let f = factor(plain.a[at(0)], varied.a[at(0)]);
                let last = (300 - blk * 128).min(128) - 1;
                assert_eq!(f, factor(plain.a[at(last)], varied.a[at(last)]));
                fa.push(f);
            }
        }
        let fb: Vec<f32> = [(0, 0), (127, 127), (128, 0), (299, 199), (0, 128)]
            .iter()
            .map(|&(r, c)| factor(plain.b[r * 200 + c], varied.b[r * 200 + c]))
            .collect();
        assert_eq!(fb[0], fb[1], "one factor per block of B");
        assert!(fa.iter().any(|&f| f != fa[0]) && fb.iter().any(|&f| f != fb[0]), "{fa:?} {fb:?}");
        assert_eq!(plain.c0.len(), varied.c0.len());
        // Empty problems (the suite's K = 0, M = 0 and N = 0 cases) are left as they are.
        for (m, n, k) in [(33, 31, 0), (0, 31, 32), (31, 0, 32)] {
            let g = crate::Gemm::new(crate::Shape::new(m, n, k), 1.0, 0.0);
            let mut x = Inputs::new(&g, 1);
            x.vary_by_block(g.shape, 1);
            assert_eq!((x.a, x.b), (Inputs::new(&g, 1).a, Inputs::new(&g, 1).b));
        }
    }
}
