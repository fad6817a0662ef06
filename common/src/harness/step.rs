//! A step of the ladder, as its crate declares it: its kernel, its launch geometry, its
//! precision, and its own host code where it has some. The registry crate `steps` lists them.
//!
//! A crate states only what is its own: `step!` (one FP32 step) and `precision_steps!` (one
//! `Step` per precision) write the rest, the crate's name and `src/kernel.cu` among it.

use crate::harness::compile::KernelSource;
use crate::harness::host::HostFn;
use crate::harness::launch::{Define, Launch};
use crate::harness::precision::Precision;
use crate::harness::problem::Shape;

/// The entry point every kernel defines (`extern "C"`, so the name is not mangled).
pub const ENTRY: &str = "sgemm";

/// One rung of the ladder. Each step crate exports one of these as `STEP`, or one per
/// precision; the registry crate `steps` lists them all.
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
    /// What the kernel computes in: FP32 for steps 1-6; steps 7-13 have one `Step` per precision.
    pub precision: Precision,
    /// `None`: the kernel is compiled for the GPU at hand (`sm_80`, `sm_90`, ...). `Some`: it uses
    /// instructions of one architecture alone and is compiled for that target (steps 9-13:
    /// `sm_90a`, Hopper's wgmma and setmaxnreg), running only on compute capability `min_cc`.
    pub arch: Option<&'static str>,
    /// `None`: the harness launches `sgemm(M, N, K, alpha, A, B, beta, C)` itself. `Some`: the
    /// step's own host code does, for kernels that need more than pointers (steps 9-13: tensor
    /// maps, a cluster launch, a split copy of A for 3xTF32).
    pub host: Option<HostFn>,
    /// The rung with one of its ideas left out at a time, where it adds more than one.
    pub partials: &'static [Partial],
    /// Where the launch follows an experiment's tile defines (`BM`, `BN`, `STAGES`, `CLUSTER`,
    /// `GROUP`): the launch for a shape with those defines, so that `--define BN=192` sizes the
    /// grid and shared memory as it sizes the kernel. `None`: the defines reach the kernel alone.
    pub follow: Option<fn(&Shape, &[Define]) -> Launch>,
}

/// A rung with one of its ideas left out, so that a rung that adds two ideas measures each alone
/// (`cargo xtask sweep --partials`): step 11 in clusters of one block is its persistent grid
/// without multicast. The same kernel, another launch; verified like every run.
#[derive(Clone, Debug)]
pub struct Partial {
    /// A short name, recorded with its runs: `no-multicast`.
    pub name: &'static str,
    /// One line: what it leaves out.
    pub what: &'static str,
    pub step: Step,
}

/// The oldest GPU a kernel in precision `p` runs on: CUDA 13's oldest (compute capability 7.5),
/// the precision's own, or `floor`, whichever is latest.
pub const fn oldest_gpu(p: Precision, floor: (i32, i32)) -> (i32, i32) {
    const fn later(a: (i32, i32), b: (i32, i32)) -> (i32, i32) {
        if a.0 > b.0 || (a.0 == b.0 && a.1 >= b.1) { a } else { b }
    }
    later(later((7, 5), p.min_cc()), floor)
}

/// The last of its arguments: a macro's optional value, or the default before it.
#[doc(hidden)]
#[macro_export]
macro_rules! __last {
    ($x:expr) => {
        $x
    };
    ($x:expr, $($rest:expr),+) => {
        $crate::__last!($($rest),+)
    };
}

/// The `Step` of this crate's `src/kernel.cu`, the one literal of the type: `idea` and `launch`,
/// and where they differ from an FP32 step that the harness launches on any GPU of the ladder,
///
/// - `precision`: what it computes in (`precision_steps!` sets it);
/// - `min_cc`: a GPU older than this is refused;
/// - `hopper: HOST`: Hopper alone (sm_90a, compute capability 9.0), launched by its host code;
/// - `headers`: headers of step crates its kernel includes ([`crate::harness::compile::Header`]);
/// - `partials`: the rung with one idea left out at a time ([`Partial`]).
#[macro_export]
macro_rules! step {
    (
        idea: $idea:expr,
        launch: $launch:expr
        $(, precision: $p:expr)?
        $(, min_cc: $cc:expr)?
        $(, hopper: $host:expr)?
        $(, headers: $headers:expr)?
        $(, partials: $partials:expr)?
        $(,)?
    ) => {
        $crate::Step {
            name: env!("CARGO_PKG_NAME"),
            idea: $idea,
            kernel: $crate::kernel_source!("src/kernel.cu" $(, $headers)?),
            launch: $launch,
            min_cc: $crate::harness::step::oldest_gpu(
                $crate::__last!($crate::Precision::F32 $(, $p)?),
                $crate::__last!((0, 0) $(, $cc)? $(, { let _ = $host; (9, 0) })?),
            ),
            precision: $crate::__last!($crate::Precision::F32 $(, $p)?),
            arch: $crate::__last!(None $(, { let _ = $host; Some("sm_90a") })?),
            host: $crate::__last!(None $(, Some($host))?),
            partials: $crate::__last!(&[] $(, $partials)?),
            follow: None,
        }
    };
}

/// One `Step` per precision for a step crate that has `fn launch_with(&Shape, Precision, TILES) ->
/// Launch` and `const fn tiles(Precision) -> TILES`: after the keys of [`step!`] but `launch` and
/// `precision`, `precisions: { FP16 = F16, TF32 = Tf32 }` defines the consts `FP16` and `TF32`,
/// each launching with its precision's tiles, and `VARIANTS`, all of them in that order (the first
/// is the binary's default). `partials: { "name": "what" => |tiles| EDIT, ... }` gives the first
/// precision partial rungs, each launched with its tiles edited.
#[macro_export]
macro_rules! precision_steps {
    // The launch of precision `$p` with its tiles following an experiment's defines.
    (@follow $p:ident) => {{
        fn follow(s: &$crate::Shape, d: &[$crate::harness::launch::Define]) -> $crate::Launch {
            let tiles = $crate::harness::launch::Tiles::following(tiles($crate::Precision::$p), d);
            launch_with(s, $crate::Precision::$p, tiles)
        }
        follow
    }};
    // The launch of precision `$p`, with its tiles edited by `$edit` where one is given.
    (@launch $p:ident $(, $edit:expr)?) => {{
        fn launch(s: &$crate::Shape) -> $crate::Launch {
            let tiles = tiles($crate::Precision::$p);
            $(let edit = $edit; let tiles = edit(tiles);)?
            launch_with(s, $crate::Precision::$p, tiles)
        }
        launch
    }};
    (
        idea: $idea:expr,
        $(min_cc: $cc:expr,)?
        $(hopper: $host:expr,)?
        $(headers: $headers:expr,)?
        $(partials: { $($part:literal: $what:literal => $edit:expr),* $(,)? },)?
        $(follows_defines: $follows:literal,)?
        precisions: { $first:ident = $fp:ident $(, $name:ident = $p:ident)* $(,)? } $(,)?
    ) => {
        /// This step in `precision`, launched by `launch` (or `follow`, with tile defines).
        const fn variant(
            precision: $crate::Precision,
            launch: fn(&$crate::Shape) -> $crate::Launch,
            follow: Option<fn(&$crate::Shape, &[$crate::harness::launch::Define]) -> $crate::Launch>,
            partials: &'static [$crate::harness::step::Partial],
        ) -> $crate::Step {
            let mut step = $crate::step! {
                idea: $idea,
                launch: launch,
                precision: precision
                $(, min_cc: $cc)? $(, hopper: $host)? $(, headers: $headers)?,
                partials: partials,
            };
            step.follow = follow;
            step
        }
        /// Whether the launches follow an experiment's tile defines (`follows_defines: true`).
        const FOLLOWS: bool = $crate::__last!(false $(, $follows)?);
        /// The partial rungs of the first precision.
        const PARTIALS: &[$crate::harness::step::Partial] = &[$($(
            $crate::harness::step::Partial {
                name: $part,
                what: $what,
                step: variant($crate::Precision::$fp, $crate::precision_steps!(@launch $fp, $edit), None, &[]),
            }
        ),*)?];
        #[doc = concat!("This step in ", stringify!($fp), ", the binary's default.")]
        pub const $first: $crate::Step =
            variant($crate::Precision::$fp, $crate::precision_steps!(@launch $fp),
                if FOLLOWS { Some($crate::precision_steps!(@follow $fp)) } else { None }, PARTIALS);
        $(
            #[doc = concat!("This step in ", stringify!($p), ".")]
            pub const $name: $crate::Step =
                variant($crate::Precision::$p, $crate::precision_steps!(@launch $p),
                    if FOLLOWS { Some($crate::precision_steps!(@follow $p)) } else { None }, &[]);
        )*
        /// The precisions of this step, the binary's default first.
        pub const VARIANTS: [$crate::Step; [stringify!($first) $(, stringify!($name))*].len()] = [$first $(, $name)*];
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
