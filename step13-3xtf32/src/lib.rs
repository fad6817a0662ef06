//! Step 13: FP32 accuracy on Hopper's tensor cores. Step 12's kernel in TF32 and 3xTF32: B goes
//! through a K-major copy rounded to TF32 (and split into big and small parts for 3xTF32), A
//! through registers, rounded or split there; 3xTF32 multiplies three TF32 products per term.
//! sm_90a only.

use common::hopper::{self, arg, tensor_map};
use common::host::HostCall;
use common::rungs::{self, CHUNK_BYTES, HopperTiles};
use common::{Launch, Precision, Result, Shape, Step, ceil_div, kernel_source};

// ANCHOR: tiles
/// TF32: step 12's tiles. 3xTF32 keeps two B planes per buffer, so its tiles are 128 wide
/// (chosen with `examples/tune.rs`, see notes/hopper.md).
pub const fn tiles(p: Precision) -> HopperTiles {
    match p {
        Precision::Tf32x3 => HopperTiles { bm: 128, bn: 128, stages: 4, cluster: 2, group: 8 },
        _ => HopperTiles { bm: 128, bn: 256, stages: 4, cluster: 2, group: 8 },
    }
}
// ANCHOR_END: tiles

/// B planes per buffer: B^T rounded to TF32, and for 3xTF32 its small parts.
fn planes(p: Precision) -> usize {
    if p == Precision::Tf32x3 { 2 } else { 1 }
}

// ANCHOR: launch
/// Step 12's launch, with one or two B planes per buffer and whole jobs only.
pub fn launch_with(s: &Shape, p: Precision, t: HopperTiles) -> Launch {
    let consumers = t.bm / 64;
    let staging = consumers * 2 * CHUNK_BYTES;
    t.launch(s, p, (t.jobs(s) * t.cluster, 1, 1), 128 * (consumers + 1) as u32, planes(p), staging).define("HALVES", 0)
}
// ANCHOR_END: launch

// ANCHOR: host
/// One GEMM: `prepare_b` writes B^T (rounded, and its small parts for 3xTF32) into a workspace
/// buffer with 16-byte aligned rows; then the tensor maps of A, B^T and C, a persistent cluster
/// launch, and C copied back when its rows needed padding for the TMA.
fn run(call: &mut HostCall<'_>) -> Result<()> {
    let (p, gpu) = (call.precision, call.gpu);
    let Shape { n, k, .. } = call.gemm.shape;
    let (bm, bk, w) = (call.launch.value("BM").unwrap_or(0) as usize, HopperTiles::bk(p), p.input().bytes());
    let a = rungs::a_map(call, bm, bk)?;
    let planes = planes(p);
    let ldt = k.max(1).div_ceil(hopper::TMA_ALIGN / w) * (hopper::TMA_ALIGN / w);
    let bt = call.workspace.buffer(gpu, "B^T", ldt * n * planes * w)?;
    if k > 0 {
        let prepare = call.loaded.module.load_function("prepare_b")?;
        let (ki, ni, ldti, b) = (k as i32, n as i32, ldt as i32, call.b.ptr(gpu));
        let mut args = [arg(&ki), arg(&ni), arg(&b), arg(&bt), arg(&ldti)];
        let grid = (ceil_div(n, 32) as u32, ceil_div(k, 32) as u32, 1);
        hopper::launch(gpu, &prepare, grid, (256, 1, 1), 0, (1, 1, 1), &mut args)?;
    }
    let elem = p.input();
    let b = call.workspace.tensor_map(vec![3, bt, n as u64, k as u64, planes as u64], || {
        tensor_map(elem, bt, &[k, n, planes], &[ldt * w, ldt * n * w], &[bk, 64, 1])
    })?;
    rungs::launch_through_c(call, &a, &b)
}
// ANCHOR_END: host

const fn variant(precision: Precision, launch: fn(&Shape) -> Launch) -> Step {
    Step {
        name: "step13-3xtf32",
        idea: "FP32 inputs on wgmma: A through registers, rounded to TF32 or split in two for 3xTF32",
        kernel: kernel_source!("src/kernel.cu"),
        launch,
        min_cc: (9, 0),
        precision,
        arch: Some("sm_90a"),
        host: Some(run),
    }
}

common::precision_steps! {
    TF32 = Tf32,
    TF32X3 = Tf32x3,
}

/// The precisions of this step, TF32 first (the binary's default).
pub const VARIANTS: [Step; 2] = [TF32, TF32X3];
