//! Step 4: step 3 without its shared-memory bank conflict (one float of padding per row).

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

pub const STEP: Step =
    common::step! { idea: "one float of padding spreads a column of the B tile over all 32 banks", launch: launch };
