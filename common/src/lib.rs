//! The shared harness of the SGEMM ladder. Every step crate is a kernel, its launch
//! geometry, and a few lines that call into this crate:
//!
//! - [`device`]: the GPU, with one-line errors when there is none;
//! - [`compile`]: NVRTC to a CUBIN for the exact GPU, with the step's defines; [`toolkit`]: where
//!   NVRTC and the CUDA headers are;
//! - [`step`]: the step as its crate declares it; [`launch`]: its launch geometry; [`host`]: what
//!   a step's own host code gets; [`runner`]: compiling, loading and launching with the common
//!   kernel signature; [`matrix`]: matrices on the GPU, their storage and guard zones;
//! - [`precision`]: FP32, and the tensor-core precisions of steps 7-9 (TF32, FP16, BF16, FP64, 3xTF32);
//! - [`data`], [`reference`], [`verify`]: random inputs, cuBLAS and float64 references, and the
//!   check of a result against them (the error bound, what it is made of, the comparison, its report);
//! - [`probe`]: inputs whose FP32 answer is exact, to tell FP32 arithmetic from lower precisions;
//! - [`hopper`]: tensor maps, cluster launches and pitched copies for step 9's TMA;
//! - [`lt`]: cuBLASLt, for the fastest cuBLAS configuration the tensor-core steps meet; [`fairest`]:
//!   every cuBLAS configuration a user can call, timed both ways;
//! - [`check`]: a prepared problem with both references, and a kernel's verdict;
//! - [`timing`], [`gate`], [`roofline`]: CUDA-event timing behind the gate, and the FLOP and byte floors;
//!   [`clocks`]: the GPU's clock and what held it back while figures were taken;
//! - [`cli`], [`bench`], [`testing`], [`tune`]: the step binary, the criterion bench, the GPU
//!   tests, the tile tuners.

pub mod bench;
pub mod check;
pub mod cli;
pub mod clocks;
pub mod compile;
pub mod data;
pub mod device;
pub mod error;
pub mod fairest;
pub mod gate;
pub mod hopper;
pub mod hopper_host;
pub mod host;
pub mod launch;
pub mod lt;
pub mod matrix;
pub mod names;
pub mod patch;
pub mod precision;
pub mod probe;
pub mod problem;
pub mod reference;
pub mod roofline;
pub mod runner;
pub mod step;
pub mod testing;
pub mod timing;
pub mod toolkit;
pub mod tune;
pub mod verify;

pub use compile::KernelSource;
pub use data::Inputs;
pub use error::{Error, Result};
pub use launch::{Launch, ceil_div};
pub use precision::Precision;
pub use problem::{Gemm, Shape};
pub use step::Step;
