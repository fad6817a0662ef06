//! The book's pictures, as SVG: charts of the recorded results (plotters) and diagrams of the
//! steps' geometry (the `svg` crate). Both are deterministic, so `cargo xtask book --check`
//! compares them byte for byte like the generated tables.

pub mod chart;
pub mod diagram;
pub mod geometry;
pub mod roofline;
