//! Step 12: the epilogue. Consumers write C into shared memory, 64 rows x 128 bytes at a time,
//! and the TMA stores it in the background while they start the next tile; C may be stored in
//! FP32 or, as torch.matmul returns it, in the inputs' 16-bit type. FP16 and BF16, each with an
//! FP32 or a 16-bit C; sm_90a only.

use common::host::HostCall;
use common::rungs::{self, CHUNK_BYTES, HopperTiles};
use common::{Launch, Precision, Result, Shape, Step, kernel_source};

// ANCHOR: tiles
/// Step 11's tiles (chosen with `examples/tune.rs`, see notes/step12.md); the ring of four
/// buffers and two staging buffers of 8 KiB per consumer fill 225 of the SM's 227 KiB.
pub const fn tiles(_: Precision) -> HopperTiles {
    HopperTiles { bm: 128, bn: 256, stages: 4, cluster: 2, group: 8 }
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
/// its rows needed padding for the TMA.
fn run(call: &mut HostCall<'_>) -> Result<()> {
    let (bm, bk) = (call.launch.value("BM").unwrap_or(0) as usize, HopperTiles::bk(call.precision));
    let (a, b) = (rungs::a_map(call, bm, bk)?, rungs::b_map(call, bk)?);
    rungs::launch_through_c(call, &a, &b)
}
// ANCHOR_END: host

const fn variant(precision: Precision, launch: fn(&Shape) -> Launch) -> Step {
    Step {
        name: "step12-epilogue",
        idea: "C leaves through shared memory by TMA store while the next tile's products run; a 16-bit C",
        kernel: kernel_source!("src/kernel.cu"),
        launch,
        min_cc: (9, 0),
        precision,
        arch: Some("sm_90a"),
        host: Some(run),
    }
}

common::precision_steps! {
    FP16 = F16,
    BF16 = Bf16,
    FP16_C16 = F16C16,
    BF16_C16 = Bf16C16,
}

/// The precisions of this step, FP16 first (the binary's default).
pub const VARIANTS: [Step; 4] = [FP16, BF16, FP16_C16, BF16_C16];
