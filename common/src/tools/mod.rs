//! The front-ends a step crate calls: its binary, its criterion bench, its GPU tests and its
//! tile tuner. Nothing else in `common` imports them.

pub mod bench;
pub mod cli;
pub mod testing;
pub mod timeline;
pub mod tune;
