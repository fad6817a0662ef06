//! The shared harness of the SGEMM ladder. Every step crate is a kernel, its launch
//! geometry, and a few lines that call into this crate:
//!
//! - [`device`]: the GPU, with one-line errors when there is none;
//! - [`compile`]: NVRTC to a CUBIN for the exact GPU, with the step's defines; [`toolkit`]: where
//!   NVRTC and the CUDA headers are;
//! - [`step`]: the step description and the runner with the common kernel signature;
//! - [`precision`]: FP32, and the tensor-core precisions of steps 7-9 (TF32, FP16, BF16, FP64, 3xTF32);
//! - [`data`], [`reference`], [`verify`]: random inputs, cuBLAS and float64 references, checks;
//! - [`probe`]: inputs whose FP32 answer is exact, to tell FP32 arithmetic from lower precisions;
//! - [`hopper`]: tensor maps, cluster launches and pitched copies for step 9's TMA;
//! - [`lt`]: cuBLASLt, for the fastest cuBLAS configuration the tensor-core steps meet;
//! - [`measure`], [`roofline`]: CUDA-event timing and the FLOP and byte floors;
//! - [`cli`], [`bench`], [`testing`], [`tune`]: the step binary, the criterion bench, the GPU
//!   tests, the tile tuners.

pub mod bench;
pub mod cli;
pub mod compile;
pub mod data;
pub mod device;
pub mod error;
pub mod gate;
pub mod hopper;
pub mod lt;
pub mod measure;
pub mod precision;
pub mod probe;
pub mod problem;
pub mod reference;
pub mod roofline;
pub mod step;
pub mod testing;
pub mod toolkit;
pub mod tune;
pub mod verify;

pub use compile::KernelSource;
pub use data::Inputs;
pub use error::{Error, Result};
pub use precision::Precision;
pub use problem::{Gemm, Shape};
pub use step::{Launch, Step, ceil_div};
