//! What a step runs on: the GPU and NVRTC, its kernel compiled and launched, its data and
//! matrices, the step as its crate declares it, and the Hopper rungs' host machinery. It imports
//! no other layer (the map of its modules is the crate's, in `lib.rs`).

pub mod compile;
pub mod cores;
pub mod cubin;
pub mod data;
pub mod device;
pub mod error;
pub mod hopper;
pub mod hopper_host;
pub mod host;
pub mod launch;
pub mod matrix;
pub mod names;
pub mod patch;
pub mod precision;
pub mod problem;
pub mod quantize;
pub mod runner;
pub mod step;
pub mod toolkit;
