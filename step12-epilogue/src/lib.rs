//! Step 12: the epilogue. Consumers write C into shared memory, 64 rows x 128 bytes at a time,
//! and the TMA stores it in the background while they start the next tile; C may be stored in
//! FP32 or, as torch.matmul returns it, in the inputs' 16-bit type. FP16 and BF16, each with an
//! FP32 or a 16-bit C; sm_90a only.

use common::harness::compile::Header;
use common::harness::hopper_host::{self, CHUNK_BYTES, HopperTiles};
use common::harness::host::HostCall;
use common::{Launch, Precision, Result, Shape};

// ANCHOR: tiles
/// Step 11's tiles (chosen with `examples/tune.rs`, see notes/step12.md); the ring of four
/// buffers and two staging buffers of 8 KiB per consumer fill 225 of the SM's 227 KiB.
pub const fn tiles(p: Precision) -> HopperTiles {
    step11_cluster_persistent::tiles(p)
}
// ANCHOR_END: tiles

// ANCHOR: launch
/// Step 11's launch, with two staging buffers of C per consumer after the ring.
pub fn launch_with(s: &Shape, p: Precision, t: HopperTiles) -> Launch {
    let consumers = t.bm / 64;
    let staging = consumers * 2 * CHUNK_BYTES;
    t.launch(s, p, (t.jobs(s) * t.cluster, 1, 1), 128 * (consumers + 1) as u32, 1, staging)
        .define("HALVES", t.halves() as i64)
}
// ANCHOR_END: launch

// ANCHOR: host
/// One GEMM: the tensor maps of A, B and C, a persistent cluster launch, and C copied back when
/// its rows needed padding for the TMA (step 14's too).
pub fn run(call: &mut HostCall<'_>) -> Result<()> {
    let (bm, bk) = (call.launch.value("BM").unwrap_or(0) as usize, HopperTiles::bk(call.precision));
    let (a, b) = (hopper_host::a_map(call, bm, bk)?, hopper_host::b_map(call, bk)?);
    hopper_host::launch_through_c(call, &a, &b)
}
// ANCHOR_END: host

/// This step's epilogue (C's chunks through shared memory and the TMA), which step 13 keeps.
pub const EPILOGUE: Header = common::step_header!("epilogue.cuh");

common::precision_steps! {
    idea: "C leaves through shared memory by TMA store while the next tile's products run; a 16-bit C",
    hopper: run,
    headers: &[step10_warp_specialized::WARPGROUPS, step11_cluster_persistent::SCHEDULE, EPILOGUE],
    precisions: { FP16 = F16, BF16 = Bf16, FP16_C16 = F16C16, BF16_C16 = Bf16C16 },
}
