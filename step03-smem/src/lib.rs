//! Step 3: shared-memory cache blocking with 32x32 tiles of A and B.

use common::{Launch, Shape, Step, ceil_div};

/// Side of the square tiles of A, B and C a block works on (one thread per element of C).
pub const TILE: u32 = 32;

// ANCHOR: launch
/// Block (x, y) computes the TILE x TILE tile of C at column TILE*x, row TILE*y.
pub fn launch(s: &Shape) -> Launch {
    let t = TILE as usize;
    Launch::new((ceil_div(s.n, t), ceil_div(s.m, t), 1), (TILE, TILE, 1)).define("TILE", t as i64)
}
// ANCHOR_END: launch

pub const STEP: Step = common::step! { idea: "tiles of A and B cached in shared memory, each global element loaded once per block", launch: launch };
