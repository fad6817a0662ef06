//! A step's real geometry, for the book's diagrams: its launch at one representative shape
//! (block, defines) and the sizes of the shared arrays its kernel declares, read from the kernel
//! source with those defines. Nothing here is typed in twice, so a diagram cannot drift from
//! the kernel it draws.

use common::{Launch, Shape, Step};

/// The shape every diagram is drawn for.
pub const SHAPE: (usize, usize, usize) = (4096, 4096, 4096);

pub struct Geometry {
    pub step: &'static Step,
    pub launch: Launch,
    pub shape: Shape,
}

impl Geometry {
    pub fn of(step: &'static Step) -> Geometry {
        let shape = Shape::new(SHAPE.0, SHAPE.1, SHAPE.2);
        Geometry { step, launch: (step.launch)(&shape), shape }
    }

    /// A compile-time define the launch passes to the kernel.
    pub fn define(&self, name: &str) -> Option<usize> {
        self.launch.value(name).map(|v| v as usize)
    }

    /// Every define, or an error naming the step and the missing one.
    pub fn defines<const N: usize>(&self, names: [&str; N]) -> Result<[usize; N], String> {
        let mut out = [0; N];
        for (o, name) in out.iter_mut().zip(names) {
            *o = self.define(name).ok_or_else(|| format!("{}: no define {name}", self.step.id()))?;
        }
        Ok(out)
    }

    /// Threads per block, in the order a warp takes them (x fastest).
    pub fn block(&self) -> (usize, usize) {
        (self.launch.block.0 as usize, self.launch.block.1 as usize)
    }

    /// The dimensions of `__shared__ ... NAME[d0][d1]...` in the kernel source, evaluated with
    /// the launch's defines: `Bs[TILE][TILE + 1]` gives `[32, 33]`.
    pub fn shared(&self, name: &str) -> Result<Vec<usize>, String> {
        let code = &self.step.kernel.code;
        let decl = code
            .lines()
            .filter(|l| l.contains("__shared__"))
            .find_map(|l| l.split_once(&format!(" {name}[")).map(|(_, rest)| rest))
            .ok_or_else(|| format!("{}: no __shared__ array {name}", self.step.id()))?;
        let decl = decl.split(';').next().unwrap_or_default();
        decl.trim_end_matches(']')
            .split("][")
            .map(|dim| self.eval(dim).ok_or_else(|| format!("{}: cannot evaluate {name}[{dim}]", self.step.id())))
            .collect()
    }

    /// The value of `constexpr int NAME = ...;` in the kernel source (or else in its step headers or a shared
    /// header), evaluated with the launch's defines: `BOX_BYTES = 64 * ROW` gives 8192.
    pub fn constant(&self, name: &str) -> Option<usize> {
        let decl = format!("constexpr int {name} = ");
        let kernel = &self.step.kernel;
        let headers = kernel.headers.iter().chain(common::harness::compile::HEADERS).map(|h| h.text);
        let sources = std::iter::once(kernel.code.as_ref()).chain(headers);
        let line = sources.flat_map(str::lines).find_map(|l| l.split_once(&decl).map(|(_, rest)| rest))?;
        self.eval(line.split(';').next()?)
    }

    /// A sum of products of integers, defines and the kernel's constants (all a shared array's
    /// size and a tile's bytes need).
    pub fn eval(&self, expr: &str) -> Option<usize> {
        let term = |t: &str| -> Option<usize> {
            t.split('*').try_fold(1, |acc, f| {
                let f = f.trim();
                f.parse().ok().or_else(|| self.define(f)).or_else(|| self.constant(f)).map(|v: usize| acc * v)
            })
        };
        expr.split('+').try_fold(0, |acc, t| term(t).map(|v| acc + v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_arrays_come_from_the_kernels() {
        let g = |key| Geometry::of(steps::find(key).unwrap());
        assert_eq!(g("3").shared("Bs").unwrap(), vec![32, 32]);
        assert_eq!(g("4").shared("Bs").unwrap(), vec![32, 33]);
        assert_eq!(g("6").shared("As").unwrap(), vec![2, 16, 132]);
        assert!(g("1").shared("Bs").is_err());
        assert_eq!(g("5").defines(["BM", "TN"]).unwrap(), [128, 8]);
        // Constants that build on others and on the defines.
        assert_eq!(g("11").constant("BOX_BYTES"), Some(64 * 128));
        assert_eq!(g("11").constant("STAGE_BYTES"), Some((128 + 256) * 128));
        assert_eq!(g("11").constant("NOPE"), None);
        assert_eq!(g("11").constant("MAX_PARTIALS"), Some(288), "from hopper.cuh");
    }
}
