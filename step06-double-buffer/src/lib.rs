//! Step 6: step 5 with two shared-memory buffers: the next K-tile loads while the current
//! one computes, one barrier per K-tile.

use common::{Launch, Shape, Step};
use step05_threadtile_float4::ThreadTiles;

/// Step 5's 128x128 block tiles and 8x8 thread tiles, 16 deep in K instead of 8: half the
/// barriers per FMA, and each thread moves two float4s of A and two of B per K-tile.
pub const TILES: ThreadTiles = ThreadTiles { bk: 16, ..step05_threadtile_float4::TILES };

// ANCHOR: launch
/// Step 5's launch geometry (one block per BM x BN tile of C; VEC and EDGE picked the same
/// way) with these tiles.
pub fn launch(s: &Shape) -> Launch {
    step05_threadtile_float4::launch_with(s, TILES)
}
// ANCHOR_END: launch

pub const STEP: Step =
    common::step! { idea: "the next K-tile is loaded while the current one is computed", launch: launch };
