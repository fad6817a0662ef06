//! The shared code of the SGEMM ladder, in four layers. Every step crate is a kernel, its launch
//! geometry and a few lines that call into them. A module imports from its own layer and the
//! layers listed before it, never from one listed after it (`scripts/import-cycles.py`, in CI).
//!
//! - [`harness`], what a step runs on:
//!   [`error`](harness::error), one error type whose every variant is one line;
//!   [`toolkit`](harness::toolkit), where NVRTC and the CUDA headers are;
//!   [`device`](harness::device), the GPU, with one-line errors when there is none;
//!   [`compile`](harness::compile), NVRTC to a CUBIN for the exact GPU, with the step's defines and
//!   the headers it includes (`common/include`, and a rung's own through [`step_header!`]);
//!   [`cubin`](harness::cubin), a CUBIN's sections and the machine code among them;
//!   [`patch`](harness::patch), experiments as diffs against a step's kernel;
//!   [`precision`](harness::precision), FP32 and the tensor-core precisions of steps 7-13;
//!   [`problem`](harness::problem), a GEMM's shape and scalars, its FLOPs and minimal bytes;
//!   [`data`](harness::data), seeded random inputs;
//!   [`cores`](harness::cores), the host's cores for the harness's CPU work;
//!   [`matrix`](harness::matrix), matrices on the GPU, their storage and guard zones;
//!   [`launch`](harness::launch), a kernel's launch geometry;
//!   [`step`](harness::step), the step as its crate declares it ([`step!`], [`precision_steps!`]);
//!   [`host`](harness::host), what a step's own host code gets;
//!   [`runner`](harness::runner), compiling, loading and launching with the common signature;
//!   [`hopper`](harness::hopper), tensor maps, cluster launches and pitched copies for the TMA;
//!   [`hopper_host`](harness::hopper_host), what the host code of the Hopper rungs (9-13) shares;
//!   [`names`](harness::names), file-name-safe ids.
//! - [`verify`], whether a result is right:
//!   [`reference`](verify::reference), cuBLAS and float64 references;
//!   the error bound and what it is made of ([`bound`](verify::bound),
//!   [`scales`](verify::scales)), a result against a reference ([`compare`](verify::compare)) and
//!   its outcome ([`report`](verify::report));
//!   [`probe`](verify::probe), inputs whose FP32 answer is exact, to tell FP32 arithmetic from
//!   lower precisions;
//!   [`check`](verify::check), a prepared problem with both references, and a kernel's verdict.
//! - [`timing`], how fast, and against what:
//!   [`runs`](timing::runs), CUDA-event timing, its median and turns;
//!   [`gate`](timing::gate), the gate that keeps host time out of a timed run;
//!   [`clocks`](timing::clocks), the GPU's clock and what held it back while figures were taken;
//!   [`lt`](timing::lt), cuBLASLt, for the fastest cuBLAS configuration the tensor-core steps meet;
//!   [`fairest`](timing::fairest), every cuBLAS configuration a user can call, timed both ways;
//!   [`roofline`](timing::roofline), the FLOP and byte floors.
//! - [`tools`], the front-ends a step crate calls:
//!   [`cli`](tools::cli), the step binary; [`bench`](tools::bench), the criterion bench;
//!   [`testing`](tools::testing), the GPU tests; [`tune`](tools::tune), the tile tuners.
//!
//! What every step uses is also at the root: [`Step`], [`Launch`], [`Shape`], [`Gemm`],
//! [`Precision`], [`KernelSource`], [`Inputs`], [`Error`] and [`Result`].

pub mod harness;
pub mod timing;
pub mod tools;
pub mod verify;

pub use harness::compile::KernelSource;
pub use harness::data::Inputs;
pub use harness::error::{Error, Result};
pub use harness::launch::{Launch, ceil_div};
pub use harness::precision::Precision;
pub use harness::problem::{Gemm, Shape};
pub use harness::step::Step;
