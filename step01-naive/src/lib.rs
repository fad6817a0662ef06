//! Step 1: the naive kernel, one thread per element of C in 32x32 blocks.

use common::{Launch, Shape, Step, ceil_div};

/// Threads per block along each side.
pub const BLOCK: u32 = 32;

// ANCHOR: launch
/// Block (x, y) covers rows 32x..32x+31 and columns 32y..32y+31 of C.
pub fn launch(s: &Shape) -> Launch {
    let b = BLOCK as usize;
    Launch::new((ceil_div(s.m, b), ceil_div(s.n, b), 1), (BLOCK, BLOCK, 1))
}
// ANCHOR_END: launch

pub const STEP: Step = common::step! { idea: "one thread per element of C", launch: launch };
