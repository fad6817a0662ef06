//! Step 9: Hopper's own GEMM: the Tensor Memory Accelerator moves tiles (described by tensor
//! maps, completing on mbarriers), a warpgroup multiplies them with `wgmma` straight from shared
//! memory, a producer warpgroup feeds consumer warpgroups, and blocks of a cluster share B tiles
//! by TMA multicast. FP16, BF16, TF32 and 3xTF32; sm_90a only.

use common::hopper::{self, TMA_ALIGN, arg, copy_pitched, tensor_map};
use common::host::HostCall;
use common::{Launch, Precision, Result, Shape, Step, ceil_div, kernel_source};

/// Block tile, pipeline depth and cluster, passed to the kernel as compile-time defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClusterTiles {
    /// C tile of a block: BM rows (64 per consumer warpgroup) by BN columns (one wgmma's N).
    pub bm: usize,
    pub bn: usize,
    /// Buffers in the ring between the producer and the consumers.
    pub stages: usize,
    /// Blocks per cluster, along M: they share each B tile (TMA multicast).
    pub cluster: usize,
    /// Cluster rows per group of the tile order (1: row by row), see `job_origin` in the kernel.
    pub group: usize,
    /// One cluster per resident slot, each looping over tiles (else one cluster per tile).
    pub persistent: bool,
    /// A persistent grid cuts the jobs of a last turn that would leave most clusters idle in halves.
    pub halves: bool,
}

// ANCHOR: tiles
/// The tiles per precision (chosen with `examples/tune.rs`, see notes/step09.md): two consumer
/// warpgroups of 64 x 256 and two blocks per cluster; 3xTF32 keeps two B planes per stage, so
/// its tiles are 128 wide.
pub const fn tiles(p: Precision) -> ClusterTiles {
    match p {
        Precision::Tf32x3 => {
            ClusterTiles { bm: 128, bn: 128, stages: 4, cluster: 2, group: 8, persistent: true, halves: true }
        }
        _ => ClusterTiles { bm: 128, bn: 256, stages: 4, cluster: 2, group: 8, persistent: true, halves: true },
    }
}
// ANCHOR_END: tiles

/// Bytes of one ring buffer: an A tile (BM rows of 128 bytes) and a B tile (BN x BK, twice for 3xTF32).
pub fn stage_bytes(p: Precision, t: ClusterTiles) -> usize {
    let planes = if p == Precision::Tf32x3 { 2 } else { 1 };
    128 * (t.bm + t.bn * planes)
}

/// Whether the kernel cuts the jobs of a persistent grid's last turn into two halves of BN / 2
/// columns, so that it takes half as long: FP16 and BF16 (TF32's K loop has no registers for a
/// second copy), with whole 64-column boxes of B per block of the cluster.
pub fn halves(p: Precision, t: ClusterTiles) -> bool {
    t.persistent && t.halves && matches!(p, Precision::F16 | Precision::Bf16) && (t.bn / 2) % (64 * t.cluster) == 0
}

// ANCHOR: launch
/// One cluster per job (CLUSTER vertically adjacent BM x BN tiles of C, the rows of tiles
/// rounded up to whole clusters), laid out along x; a persistent launch shrinks the grid to the
/// clusters the GPU holds at once (`run`). 128 threads per consumer warpgroup plus the
/// producer's 128. BK: one 128-byte row of K. EDGE = 0 when the tiles (and clusters) divide M
/// and N; VEC: rows of C are 8-byte aligned (N even).
pub fn launch_with(s: &Shape, p: Precision, t: ClusterTiles) -> Launch {
    let bk = 128 / p.input().bytes();
    let jobs = ceil_div(ceil_div(s.m, t.bm), t.cluster) * ceil_div(s.n, t.bn);
    let edge = !(s.m % (t.bm * t.cluster) == 0 && s.n % t.bn == 0);
    let threads = 128 * (t.bm / 64 + 1) as u32;
    let mut launch = Launch::new((jobs * t.cluster, 1, 1), (threads, 1, 1))
        .define("PREC", p.code())
        .define("BM", t.bm as i64)
        .define("BN", t.bn as i64)
        .define("BK", bk as i64)
        .define("STAGES", t.stages as i64)
        .define("CLUSTER", t.cluster as i64)
        .define("GROUP", t.group as i64)
        .define("PERSISTENT", t.persistent as i64)
        .define("HALVES", halves(p, t) as i64)
        .define("VEC", (s.n % 2 == 0) as i64)
        .define("EDGE", edge as i64);
    // The ring, and 1 KiB to align it to the swizzle's 1024-byte period.
    launch.dynamic_smem_bytes = (t.stages * stage_bytes(p, t) + 1024) as u32;
    launch
}
// ANCHOR_END: launch

// ANCHOR: host
/// One GEMM: tensor maps for A and B, then the cluster launch of `sgemm`. A matrix whose rows
/// the TMA cannot address (a row pitch not a multiple of 16 bytes: K or N not a multiple of 8
/// halves or 4 floats) is first copied to a buffer with padded rows. TF32 and 3xTF32 first
/// write B^T (rounded to TF32; and its small parts) with `prepare_b`: wgmma reads 32-bit
/// operands K-major only.
fn run(call: &mut HostCall<'_>) -> Result<()> {
    let (p, gpu, launch) = (call.precision, call.gpu, call.launch);
    let Shape { m, n, k } = call.gemm.shape;
    let elem = p.input();
    let w = elem.bytes();
    let [bm, bn, bk, cluster] = ["BM", "BN", "BK", "CLUSTER"].map(|d| launch.value(d).unwrap_or(0) as usize);
    // Elements in a row of `len` rounded up to 16 bytes (at least one: K = 0 reads nothing, but
    // a tensor map still needs a pitch).
    let aligned = |len: usize| len.max(1).div_ceil(TMA_ALIGN / w) * (TMA_ALIGN / w);

    // A, K-major as it is: rows of K elements.
    let (mut a_ptr, mut a_pitch) = (call.a.ptr(gpu), if k == 0 { TMA_ALIGN } else { k * w });
    if a_pitch % TMA_ALIGN != 0 {
        let pitch = aligned(k) * w;
        let copy = call.workspace.buffer(gpu, "A with aligned rows", pitch * m)?;
        copy_pitched(gpu, a_ptr, a_pitch, copy, pitch, k * w, m)?;
        (a_ptr, a_pitch) = (copy, pitch);
    }
    // Tensor maps are made once per buffer and shape and then reused (cuBLAS keeps its plans too).
    let key = |what: u64, ptr: u64| vec![what, ptr, m as u64, n as u64, k as u64, bm as u64, bn as u64, cluster as u64];
    let tm_a = call.workspace.tensor_map(key(0, a_ptr), || tensor_map(elem, a_ptr, &[k, m], &[a_pitch], &[bk, bm]))?;

    let tm_b = if matches!(p, Precision::F16 | Precision::Bf16) {
        // B, N-major as it is: boxes of 64 columns (128 bytes) by BK rows.
        let (mut b_ptr, mut b_pitch) = (call.b.ptr(gpu), n * w);
        if b_pitch % TMA_ALIGN != 0 {
            let pitch = aligned(n) * w;
            let copy = call.workspace.buffer(gpu, "B with aligned rows", pitch * k)?;
            copy_pitched(gpu, b_ptr, b_pitch, copy, pitch, n * w, k)?;
            (b_ptr, b_pitch) = (copy, pitch);
        }
        call.workspace.tensor_map(key(1, b_ptr), || tensor_map(elem, b_ptr, &[n, k], &[b_pitch], &[64, bk]))?
    } else {
        // B^T, K-major, in one (TF32) or two (3xTF32: big, small) planes of N rows.
        let planes = if p == Precision::Tf32x3 { 2 } else { 1 };
        let ldt = aligned(k);
        let bt = call.workspace.buffer(gpu, "B^T", ldt * n * planes * w)?;
        if k > 0 {
            let prepare = call.loaded.module.load_function("prepare_b")?;
            let (ki, ni, ldti) = (k as i32, n as i32, ldt as i32);
            let b_ptr = call.b.ptr(gpu);
            let mut args = [arg(&ki), arg(&ni), arg(&b_ptr), arg(&bt), arg(&ldti)];
            let grid = (ceil_div(n, 32) as u32, ceil_div(k, 32) as u32, 1);
            hopper::launch(gpu, &prepare, grid, (256, 1, 1), 0, (1, 1, 1), &mut args)?;
        }
        call.workspace.tensor_map(key(2, bt), || {
            if planes == 1 {
                tensor_map(elem, bt, &[k, n], &[ldt * w], &[bk, 64])
            } else {
                tensor_map(elem, bt, &[k, n, planes], &[ldt * w, ldt * n * w], &[bk, 64, 1])
            }
        })?
    };

    let (mi, ni, ki) = (m as i32, n as i32, k as i32);
    let (alpha, beta, c) = (call.gemm.alpha, call.gemm.beta, call.c.ptr(gpu));
    let mut args = [arg(&mi), arg(&ni), arg(&ki), arg(&alpha), arg(&tm_a), arg(&tm_b), arg(&beta), arg(&c)];
    let f = &call.loaded.function;
    let (smem, cluster) = (launch.dynamic_smem_bytes, (cluster as u32, 1, 1));
    let mut grid = launch.grid;
    if launch.value("PERSISTENT") == Some(1) {
        // As many clusters as the GPU runs at once (asked once per kernel), each looping over
        // jobs; no more than there are jobs, or halves of jobs when the kernel cuts them.
        let key = vec![f.cu_function() as u64, smem as u64, cluster.0 as u64];
        let resident =
            call.workspace.count(key, || hopper::max_active_clusters(gpu, f, launch.block, smem, cluster))?;
        let jobs = grid.0 / cluster.0;
        let clusters =
            if launch.value("HALVES") == Some(1) && 2 * jobs <= resident { 2 * jobs } else { jobs.min(resident) };
        grid.0 = clusters * cluster.0;
    }
    hopper::launch(gpu, f, grid, launch.block, smem, cluster, &mut args)
}
// ANCHOR_END: host

const fn variant(precision: Precision, launch: fn(&Shape) -> Launch) -> Step {
    Step {
        name: "step09-wgmma-tma",
        idea: "the TMA moves tiles, warpgroups multiply them with wgmma; producer and consumer warps, clusters",
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
    TF32 = Tf32,
    TF32X3 = Tf32x3,
}

/// The four precisions of this step, FP16 first (the binary's default).
pub const VARIANTS: [Step; 4] = [FP16, BF16, TF32, TF32X3];
