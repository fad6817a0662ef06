//! How a kernel is launched for one shape: its grid, block, shared memory and compile-time
//! defines, stated once beside the kernel by each step.

use crate::harness::problem::Shape;
use crate::{Error, Result};

/// How to launch a kernel for one shape: grid, block, dynamic shared memory and the
/// compile-time defines (tile sizes, fast-path switches) the kernel is built with.
/// A compile-time define: its name and value.
pub type Define = (&'static str, i64);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub dynamic_smem_bytes: u32,
    pub defines: Vec<Define>,
}

impl Launch {
    pub fn new(grid: (usize, usize, usize), block: (u32, u32, u32)) -> Launch {
        // Sizes beyond u32 saturate and are rejected by `check`.
        let clamp = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
        Launch {
            grid: (clamp(grid.0), clamp(grid.1), clamp(grid.2)),
            block,
            dynamic_smem_bytes: 0,
            defines: Vec::new(),
        }
    }

    pub fn define(mut self, name: &'static str, value: i64) -> Launch {
        self.defines.push((name, value));
        self
    }

    /// The launch without the define `name` (none to remove leaves it as it is).
    pub fn without(mut self, name: &str) -> Launch {
        self.defines.retain(|(n, _)| *n != name);
        self
    }

    /// The value of the define `name`, if the launch passes it.
    pub fn value(&self, name: &str) -> Option<i64> {
        self.defines.iter().find(|(n, _)| *n == name).map(|&(_, v)| v)
    }

    pub fn threads_per_block(&self) -> u32 {
        self.block.0 * self.block.1 * self.block.2
    }

    /// CUDA's launch limits, checked before a broken grid reaches the driver.
    pub fn check(&self, shape: &Shape) -> Result<()> {
        let (x, y, z) = self.grid;
        if x > i32::MAX as u32 || y > 65535 || z > 65535 {
            return Err(Error::BadInput(format!(
                "shape {shape} needs a grid of {x}x{y}x{z} blocks, beyond CUDA's limit of (2^31-1)x65535x65535"
            )));
        }
        if self.threads_per_block() == 0 || self.threads_per_block() > 1024 {
            return Err(Error::BadInput(format!("a block of {:?} threads is not launchable", self.block)));
        }
        Ok(())
    }
}

/// Block, warp and pipeline shape of the warp-tiled tensor-core steps (7 and 8), passed to the
/// kernel as compile-time defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpTiles {
    /// C tile of a block, BM x BN, and the depth in K of one pipeline stage.
    pub bm: usize,
    pub bn: usize,
    pub bk: usize,
    /// C tile of a warp, WM x WN: a grid of the step's fragments or mma tiles.
    pub wm: usize,
    pub wn: usize,
    /// K-tiles in flight: one computing, STAGES-1 loading.
    pub stages: usize,
    /// Blocks per SM the compiler must leave registers for (`__launch_bounds__`).
    pub min_blocks: usize,
}

impl Tiles for WarpTiles {}

/// ceil(a / b), the number of tiles of size `b` that cover `a`.
pub const fn ceil_div(a: usize, b: usize) -> usize {
    a.div_ceil(b)
}

/// `launch` with each define in `extra` replaced or added.
pub fn with_defines(mut launch: Launch, extra: &[Define]) -> Launch {
    for &(name, value) in extra {
        match launch.defines.iter_mut().find(|(n, _)| *n == name) {
            Some(d) => d.1 = value,
            None => launch.defines.push((name, value)),
        }
    }
    launch
}

/// A step's tiles, which an experiment's tile defines (`--define BN=192`) may resize where the
/// step says its launch follows them (`follows_defines: true` in `precision_steps!`).
pub trait Tiles: Sized {
    /// These tiles with the defines applied; by default the defines do not touch them.
    fn following(self, _defines: &[Define]) -> Self {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::Launch;

    #[test]
    fn without_removes_one_define_and_keeps_the_rest() {
        let launch = Launch::new((1, 1, 1), (128, 1, 1)).define("PDL", 1).define("BM", 64);
        let launch = launch.without("PDL");
        assert_eq!((launch.value("PDL"), launch.value("BM")), (None, Some(64)));
        assert_eq!(launch.clone().without("PDL").defines, launch.defines);
    }
}
