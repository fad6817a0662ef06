//! Step 2: coalesced global memory access. Same work per thread as step 1; the grid's x
//! now runs along the columns of C.

use common::{Launch, Shape, Step, ceil_div};

/// Threads per block along each side.
pub const BLOCK: u32 = 32;

// ANCHOR: launch
/// Block (x, y) covers columns 32x..32x+31 and rows 32y..32y+31 of C.
pub fn launch(s: &Shape) -> Launch {
    let b = BLOCK as usize;
    Launch::new((ceil_div(s.n, b), ceil_div(s.m, b), 1), (BLOCK, BLOCK, 1))
}
// ANCHOR_END: launch

pub const STEP: Step = common::step! { idea: "a warp reads B and writes C in consecutive addresses", launch: launch };
