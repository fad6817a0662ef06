//! Step 5: register tiles (8x8 per thread) computed as outer products, with float4 loads
//! from global and shared memory.

use common::{Launch, Shape, Step, ceil_div};

/// Block and thread tile sizes, passed to the kernel as compile-time defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadTiles {
    pub bm: usize,
    pub bn: usize,
    pub bk: usize,
    pub tm: usize,
    pub tn: usize,
}

/// 128x128 block tiles, 8 deep in K, 8x8 per thread: 256 threads.
pub const TILES: ThreadTiles = ThreadTiles { bm: 128, bn: 128, bk: 8, tm: 8, tn: 8 };

// ANCHOR: launch
/// One block per BM x BN tile of C, (BM/TM)*(BN/TN) threads. The float4 path (VEC) needs
/// every row of A, B and C to start 16-byte aligned: K and N multiples of 4. When the tiles
/// also divide M, N and K, nothing can fall outside the matrices: EDGE = 0 drops the checks.
pub fn launch_with(s: &Shape, t: ThreadTiles) -> Launch {
    let threads = (t.bm / t.tm) * (t.bn / t.tn);
    let vec = s.k % 4 == 0 && s.n % 4 == 0;
    let edge = !(vec && s.m % t.bm == 0 && s.n % t.bn == 0 && s.k % t.bk == 0);
    Launch::new((ceil_div(s.n, t.bn), ceil_div(s.m, t.bm), 1), (threads as u32, 1, 1))
        .define("BM", t.bm as i64)
        .define("BN", t.bn as i64)
        .define("BK", t.bk as i64)
        .define("TM", t.tm as i64)
        .define("TN", t.tn as i64)
        .define("VEC", vec as i64)
        .define("EDGE", edge as i64)
}
// ANCHOR_END: launch

pub fn launch(s: &Shape) -> Launch {
    launch_with(s, TILES)
}

pub const STEP: Step =
    common::step! { idea: "each thread computes an 8x8 tile of C as outer products, loading float4s", launch: launch };
