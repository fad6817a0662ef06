//! Step 13: FP32 inputs on Hopper's tensor cores, TF32 and 3xTF32. The kernel computes C^T =
//! B^T A^T on step 12's machinery: A, K-major as wgmma wants it, from shared memory; B^T through
//! registers, read from B's tiles as they lie. TF32: the TMA rounds both as it loads them, no
//! instruction does. 3xTF32: a pass splits A into two TF32 planes, B is split in registers, and
//! three TF32 products make each term. sm_90a only.

use common::harness::hopper::{self, arg, tensor_map};
use common::harness::hopper_host::{self, CHUNK_BYTES, HopperTiles};
use common::harness::host::HostCall;
use common::harness::precision::Elem;
use common::{Launch, Precision, Result, Shape, ceil_div};

// ANCHOR: tiles
/// The tiles of C^T (M and N swapped): `bm` columns of C per block, 64 per consumer; `bn` rows of
/// C (one wgmma's N). TF32: 128 x 256. 3xTF32 keeps two A planes per buffer, so its tiles are
/// 128 x 128 (chosen with `examples/tune.rs`, see notes/step13.md).
pub const fn tiles(p: Precision) -> HopperTiles {
    match p {
        Precision::Tf32x3 => HopperTiles { bm: 128, bn: 128, stages: 4, cluster: 2, group: 8 },
        _ => HopperTiles { bm: 128, bn: 256, stages: 4, cluster: 2, group: 8 },
    }
}
// ANCHOR_END: tiles

/// A planes per buffer: A rounded to TF32, and for 3xTF32 its big and small parts.
fn planes(p: Precision) -> usize {
    if p == Precision::Tf32x3 { 2 } else { 1 }
}

// ANCHOR: launch
/// Step 12's launch for C^T: jobs over (N, M), one or two A planes per buffer, whole jobs only.
pub fn launch_with(s: &Shape, p: Precision, t: HopperTiles) -> Launch {
    let consumers = t.bm / 64;
    let staging = consumers * 2 * CHUNK_BYTES;
    let jobs = t.jobs(&Shape::new(s.n, s.m, s.k));
    t.launch(s, p, (jobs * t.cluster, 1, 1), 128 * (consumers + 1) as u32, planes(p), staging).define("HALVES", 0)
}
// ANCHOR_END: launch

// ANCHOR: host
/// One GEMM: the tensor maps of A (boxes of 64 rows) and of B as it lies, a persistent cluster
/// launch, and C copied back when its rows needed padding for the TMA. 3xTF32 first has
/// `prepare_a` split A into two planes of 16-byte aligned rows in a workspace buffer.
fn run(call: &mut HostCall<'_>) -> Result<()> {
    let (p, gpu) = (call.precision, call.gpu);
    let bk = HopperTiles::bk(p);
    let a = if p == Precision::Tf32x3 {
        let Shape { m, k, .. } = call.gemm.shape;
        let w = Elem::F32.bytes();
        let ldt = k.max(1).div_ceil(hopper::TMA_ALIGN / w) * (hopper::TMA_ALIGN / w);
        let split = call.workspace.buffer(gpu, "A split", ldt * m * 2 * w)?;
        if k > 0 {
            let prepare = call.loaded.module.load_function("prepare_a")?;
            let (mi, ki, ldti, a) = (m as i32, k as i32, ldt as i32, call.a.ptr(gpu));
            let mut args = [arg(&mi), arg(&ki), arg(&a), arg(&split), arg(&ldti)];
            let grid = (ceil_div(m * ldt / 4, 256) as u32, 1, 1);
            hopper::launch(gpu, &prepare, grid, (256, 1, 1), 0, (1, 1, 1), false, &mut args)?;
        }
        call.workspace.tensor_map(vec![3, split, m as u64, k as u64], || {
            tensor_map(Elem::F32, split, &[k, m, 2], &[ldt * w, ldt * m * w], &[bk, 64, 1])
        })?
    } else {
        hopper_host::a_map(call, 64, bk)?
    };
    let b = hopper_host::b_map(call, bk)?;
    hopper_host::launch_through_c(call, &a, &b)
}
// ANCHOR_END: host

common::precision_steps! {
    idea: "FP32 inputs on wgmma: C^T = B^T A^T, the TMA rounding to TF32 or a pass splitting A for 3xTF32",
    hopper: run,
    headers: &[step11_cluster_persistent::SCHEDULE, step12_epilogue::EPILOGUE],
    precisions: { TF32 = Tf32, TF32X3 = Tf32x3 },
}
