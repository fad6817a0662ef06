//! How fast, and against what: timed runs behind the gate, the GPU's clocks while they ran,
//! cuBLAS and cuBLASLt as references, and the roofline's floors. It imports the harness and
//! verification (a reference is checked before it is timed).

pub mod clocks;
pub mod fairest;
pub mod gate;
pub mod lt;
pub mod lt_fp8;
pub mod roofline;
pub mod runs;
