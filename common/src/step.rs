//! A step of the ladder, as its crate declares it: its kernel, its launch geometry, its
//! precision, and its own host code where it has some. The registry crate `steps` lists them.

use crate::compile::KernelSource;
use crate::host::HostFn;
use crate::launch::Launch;
use crate::precision::Precision;
use crate::problem::Shape;

/// The entry point every kernel defines (`extern "C"`, so the name is not mangled).
pub const ENTRY: &str = "sgemm";

/// One rung of the ladder. Each step crate exports one of these as `STEP`; the registry
/// crate `steps` lists them all.
#[derive(Clone, Debug)]
pub struct Step {
    /// The crate name, e.g. `step01-naive`.
    pub name: &'static str,
    /// One line: the idea this step adds.
    pub idea: &'static str,
    pub kernel: KernelSource,
    /// The launch geometry and compile-time defines for a shape, stated once, beside the kernel.
    pub launch: fn(&Shape) -> Launch,
    /// The oldest GPU the kernel runs on (with `arch`: the only one).
    pub min_cc: (i32, i32),
    /// What the kernel computes in: FP32 for steps 1-6; steps 7-9 have one `Step` per precision.
    pub precision: Precision,
    /// `None`: the kernel is compiled for the GPU at hand (`sm_80`, `sm_90`, ...). `Some`: it uses
    /// instructions of one architecture alone and is compiled for that target (step 9:
    /// `sm_90a`, Hopper's wgmma and setmaxnreg), running only on compute capability `min_cc`.
    pub arch: Option<&'static str>,
    /// `None`: the harness launches `sgemm(M, N, K, alpha, A, B, beta, C)` itself. `Some`: the
    /// step's own host code does, for kernels that need more than pointers (step 9: tensor
    /// maps, a cluster launch, a split copy of A for 3xTF32).
    pub host: Option<HostFn>,
}

/// One `Step` per precision for a step crate that has `const fn variant(Precision, fn(&Shape) ->
/// Launch) -> Step` and `fn launch_with(&Shape, Precision, WarpTiles) -> Launch` with `const fn
/// tiles(Precision) -> WarpTiles`: `precision_steps! { FP16 = F16, TF32 = Tf32 }` defines the consts
/// `FP16` and `TF32`, each launching with its precision's tiles.
#[macro_export]
macro_rules! precision_steps {
    ($($(#[$doc:meta])* $name:ident = $p:ident),* $(,)?) => {
        $(
            $(#[$doc])*
            pub const $name: $crate::Step = variant($crate::Precision::$p, {
                fn launch(s: &$crate::Shape) -> $crate::Launch {
                    launch_with(s, $crate::Precision::$p, tiles($crate::Precision::$p))
                }
                launch
            });
        )*
    };
}

impl Step {
    /// The crate name, plus the precision when it is not FP32: `step07-wmma-fp16`. Unique in
    /// the registry; results and the book key on it.
    pub fn id(&self) -> String {
        match self.precision {
            Precision::F32 => self.name.to_string(),
            p => format!("{}-{}", self.name, p.label()),
        }
    }

    /// The NVRTC target on a GPU of compute capability `cc`: the step's own, or `sm_XY`.
    pub fn target(&self, cc: (i32, i32)) -> String {
        self.arch.map_or_else(|| format!("sm_{}{}", cc.0, cc.1), str::to_string)
    }
}
