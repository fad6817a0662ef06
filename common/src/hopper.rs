//! Host side of Hopper's machinery, for steps 9-13: tensor maps for the Tensor Memory Accelerator
//! (`cuTensorMapEncodeTiled`), launches with thread-block clusters (`cuLaunchKernelEx`), the
//! pitched copies that give the TMA row pitches it can describe, and what every rung's host
//! code shares (its tiles and launch, the operands' tensor maps, the persistent grid's size).

use crate::device::Gpu;
use crate::host::HostCall;
use crate::launch::{Launch, ceil_div};
use crate::precision::{Elem, Precision};
use crate::problem::Shape;
use crate::{Error, Result};
use cudarc::driver::CudaFunction;
use cudarc::driver::sys;
use std::ffi::c_void;

/// A CUtensorMap: 128 opaque bytes, 64-byte aligned, passed to the kernel by value.
pub type TensorMap = sys::CUtensorMap;

/// The TMA requires every row pitch (and the base address) to be a multiple of 16 bytes.
pub const TMA_ALIGN: usize = 16;

fn tma_type(e: Elem) -> sys::CUtensorMapDataType {
    use sys::CUtensorMapDataType as T;
    match e {
        Elem::F16 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        Elem::Bf16 => T::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        Elem::F32 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        Elem::F64 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
    }
}

/// A tensor map of a row-major tensor at device address `addr`: `dims` innermost first (in
/// elements), `pitches` the byte distance between consecutive indices of every dimension but the
/// innermost, `boxes` the tile one copy moves. The tile lands in shared memory with 128-byte
/// swizzling (its innermost extent must be 128 bytes); elements outside the tensor read as zero.
pub fn tensor_map(elem: Elem, addr: u64, dims: &[usize], pitches: &[usize], boxes: &[usize]) -> Result<TensorMap> {
    let rank = dims.len();
    if pitches.len() + 1 != rank || boxes.len() != rank || !(2..=5).contains(&rank) {
        return Err(Error::BadInput("a tensor map needs 2 to 5 dimensions, a pitch for each but the first".into()));
    }
    if addr as usize % TMA_ALIGN != 0 || pitches.iter().any(|p| p % TMA_ALIGN != 0) {
        return Err(Error::BadInput(format!(
            "the TMA needs 16-byte aligned rows; got address {addr:#x}, pitches {pitches:?} bytes"
        )));
    }
    // A dimension of 0 (K = 0) is not describable; no copy is issued then anyway.
    let dims: Vec<u64> = dims.iter().map(|&d| d.max(1) as u64).collect();
    let pitches: Vec<u64> = pitches.iter().map(|&p| p as u64).collect();
    let boxes: Vec<u32> = boxes.iter().map(|&b| b as u32).collect();
    let ones = vec![1u32; rank];
    let mut map = std::mem::MaybeUninit::<TensorMap>::uninit();
    // SAFETY: every array holds `rank` (pitches: rank - 1) entries; the driver checks the rest
    // and writes the 128-byte map.
    unsafe {
        sys::cuTensorMapEncodeTiled(
            map.as_mut_ptr(),
            tma_type(elem),
            rank as u32,
            addr as *mut c_void,
            dims.as_ptr(),
            pitches.as_ptr(),
            boxes.as_ptr(),
            ones.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
        .result()
        .map_err(|e| Error::Cuda(format!("cuTensorMapEncodeTiled (dims {dims:?}, box {boxes:?}): {e}")))?;
        Ok(map.assume_init())
    }
}

/// Copies `rows` rows of `row_bytes` from `src` (pitch `src_pitch`) to `dst` (pitch
/// `dst_pitch`) on the harness stream: how a matrix whose rows the TMA cannot address gets
/// aligned rows.
pub fn copy_pitched(
    gpu: &Gpu,
    src: u64,
    src_pitch: usize,
    dst: u64,
    dst_pitch: usize,
    row_bytes: usize,
    rows: usize,
) -> Result<()> {
    if rows == 0 || row_bytes == 0 {
        return Ok(());
    }
    let copy = sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
        srcHost: std::ptr::null(),
        srcDevice: src,
        srcArray: std::ptr::null_mut(),
        srcPitch: src_pitch,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
        dstHost: std::ptr::null_mut(),
        dstDevice: dst,
        dstArray: std::ptr::null_mut(),
        dstPitch: dst_pitch,
        WidthInBytes: row_bytes,
        Height: rows,
    };
    // SAFETY: both regions are device allocations of at least rows * pitch bytes (callers).
    unsafe { sys::cuMemcpy2DAsync_v2(&copy, gpu.stream.cu_stream()) }.result()?;
    Ok(())
}

/// One kernel argument for [`launch`]: a pointer to its bytes, which must outlive the call.
pub fn arg<T>(value: &T) -> *mut c_void {
    value as *const T as *mut c_void
}

/// A launch configuration on the harness stream with one attribute (the cluster's shape).
fn config(
    gpu: &Gpu,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    smem_bytes: u32,
    attr: &mut sys::CUlaunchAttribute,
) -> sys::CUlaunchConfig {
    sys::CUlaunchConfig {
        gridDimX: grid.0,
        gridDimY: grid.1,
        gridDimZ: grid.2,
        blockDimX: block.0,
        blockDimY: block.1,
        blockDimZ: block.2,
        sharedMemBytes: smem_bytes,
        hStream: gpu.stream.cu_stream(),
        attrs: attr,
        numAttrs: 1,
    }
}

fn cluster_attr(cluster: (u32, u32, u32)) -> sys::CUlaunchAttribute {
    // SAFETY: a plain C struct; zero is a valid value of every field.
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim =
        sys::CUlaunchAttributeValue_union__bindgen_ty_1 { x: cluster.0, y: cluster.1, z: cluster.2 };
    attr
}

/// How many clusters of `cluster` blocks of `f` (with `block` threads and `smem_bytes` of dynamic
/// shared memory each) the GPU runs at once: the size of a persistent grid.
pub fn max_active_clusters(
    gpu: &Gpu,
    f: &CudaFunction,
    block: (u32, u32, u32),
    smem_bytes: u32,
    cluster: (u32, u32, u32),
) -> Result<u32> {
    let mut attr = cluster_attr(cluster);
    let config = config(gpu, cluster, block, smem_bytes, &mut attr);
    let mut n = 0;
    // SAFETY: the config and its one attribute are live for the call, which writes one int.
    unsafe { sys::cuOccupancyMaxActiveClusters(&mut n, f.cu_function(), &config) }
        .result()
        .map_err(|e| Error::Cuda(format!("cuOccupancyMaxActiveClusters (clusters of {cluster:?}): {e}")))?;
    if n <= 0 {
        return Err(Error::BadInput(format!("not one cluster of {cluster:?} blocks fits on this GPU")));
    }
    Ok(n as u32)
}

/// Launches `f` on the harness stream as a grid of thread-block clusters of `cluster` blocks
/// (`cuLaunchKernelEx`), with `args` pointing to each kernel parameter in order.
pub fn launch(
    gpu: &Gpu,
    f: &CudaFunction,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    smem_bytes: u32,
    cluster: (u32, u32, u32),
    args: &mut [*mut c_void],
) -> Result<()> {
    let mut attr = cluster_attr(cluster);
    let config = config(gpu, grid, block, smem_bytes, &mut attr);
    // SAFETY: `args` has one pointer per kernel parameter, each to a live value of its type
    // (the caller's contract); the function belongs to this context.
    unsafe { sys::cuLaunchKernelEx(&config, f.cu_function(), args.as_mut_ptr(), std::ptr::null_mut()) }
        .result()
        .map_err(|e| Error::Cuda(format!("cluster launch of {grid:?} blocks in clusters of {cluster:?}: {e}")))?;
    Ok(())
}

// ---------------------------------------------------------------- the rungs' shared host code

/// Block tile, pipeline depth and cluster of the Hopper rungs (steps 9-13), passed to their
/// kernels as compile-time defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HopperTiles {
    /// C tile of a block: BM rows (64 per consumer warpgroup) by BN columns (one wgmma's N).
    pub bm: usize,
    pub bn: usize,
    /// Buffers in the ring between the copies and the products.
    pub stages: usize,
    /// Blocks per cluster, along M, sharing each B tile by multicast (1: none).
    pub cluster: usize,
    /// Cluster rows per group of a persistent grid's tile order (1: row by row).
    pub group: usize,
}

impl std::fmt::Display for HopperTiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let HopperTiles { bm, bn, stages, cluster, group } = self;
        write!(f, "{bm}x{bn}, {stages} stages, cluster {cluster}, group {group}")
    }
}

impl HopperTiles {
    /// K of one tile in precision `p`: one 128-byte row (64 halves, 32 floats), the TMA's widest
    /// swizzle.
    pub fn bk(p: Precision) -> usize {
        128 / p.input().bytes()
    }

    /// Bytes of one ring buffer: an A tile (BM rows of 128 bytes) and `planes` B tiles (BN rows of
    /// 128 bytes each; 3xTF32 keeps two).
    pub fn stage_bytes(&self, planes: usize) -> usize {
        128 * (self.bm + self.bn * planes)
    }

    /// A cluster's share of C in a persistent grid: CLUSTER vertically adjacent BM x BN tiles (the
    /// rows of tiles rounded up to whole clusters).
    pub fn jobs(&self, s: &Shape) -> usize {
        ceil_div(ceil_div(s.m, self.bm), self.cluster) * ceil_div(s.n, self.bn)
    }

    /// The launch of a kernel with these tiles: `grid` blocks of `threads`, the ring of STAGES
    /// buffers of `planes` B tiles plus `extra_smem` bytes of dynamic shared memory (and 1 KiB to
    /// align the ring to the swizzle's 1024-byte period). Defines PREC, BM, BN, BK, STAGES, CLUSTER,
    /// GROUP and VEC (rows of an FP32 C are 8-byte aligned: N is even).
    pub fn launch(
        &self,
        s: &Shape,
        p: Precision,
        grid: (usize, usize, usize),
        threads: u32,
        planes: usize,
        extra_smem: usize,
    ) -> Launch {
        let mut launch = Launch::new(grid, (threads, 1, 1))
            .define("PREC", p.code())
            .define("BM", self.bm as i64)
            .define("BN", self.bn as i64)
            .define("BK", Self::bk(p) as i64)
            .define("STAGES", self.stages as i64)
            .define("CLUSTER", self.cluster as i64)
            .define("GROUP", self.group as i64)
            .define("VEC", (s.n % 2 == 0) as i64);
        launch.dynamic_smem_bytes = (self.stages * self.stage_bytes(planes) + extra_smem + 1024) as u32;
        launch
    }
}

/// A row-major matrix of `rows` rows of `cols` elements at `ptr` as the TMA can address it: the
/// matrix itself when its rows are 16-byte aligned, else a copy with padded rows (workspace
/// buffer `name`, copied in when `copy_in`). Returns the address and the row pitch in bytes.
pub fn aligned_rows(
    call: &mut HostCall<'_>,
    name: &'static str,
    ptr: u64,
    rows: usize,
    cols: usize,
    elem: Elem,
    copy_in: bool,
) -> Result<(u64, usize)> {
    let w = elem.bytes();
    // At least one element: K = 0 reads nothing, but a tensor map still needs a pitch.
    let pitch = cols.max(1).div_ceil(TMA_ALIGN / w) * TMA_ALIGN;
    if pitch == cols * w {
        return Ok((ptr, pitch));
    }
    let copy = call.workspace.buffer(call.gpu, name, pitch * rows)?;
    if copy_in {
        copy_pitched(call.gpu, ptr, cols * w, copy, pitch, cols * w, rows)?;
    }
    Ok((copy, pitch))
}

/// A's tensor map as the rungs load it: K-major as it is, boxes of BK x `rows`. Made once per
/// buffer and shape, then reused (cuBLAS keeps its plans too).
pub fn a_map(call: &mut HostCall<'_>, rows: usize, bk: usize) -> Result<TensorMap> {
    let Shape { m, k, .. } = call.gemm.shape;
    let elem = call.precision.input();
    let (a, pitch) = aligned_rows(call, "A with aligned rows", call.a.ptr(call.gpu), m, k, elem, true)?;
    let key = vec![0, a, m as u64, k as u64, rows as u64, bk as u64];
    call.workspace.tensor_map(key, || tensor_map(elem, a, &[k, m], &[pitch], &[bk, rows]))
}

/// B's tensor map as steps 9-12 load it: N-major as it is, boxes of 64 columns (128 bytes) x BK.
pub fn b_map(call: &mut HostCall<'_>, bk: usize) -> Result<TensorMap> {
    let Shape { n, k, .. } = call.gemm.shape;
    let elem = call.precision.input();
    let (b, pitch) = aligned_rows(call, "B with aligned rows", call.b.ptr(call.gpu), k, n, elem, true)?;
    let key = vec![1, b, n as u64, k as u64, bk as u64];
    call.workspace.tensor_map(key, || tensor_map(elem, b, &[n, k], &[pitch], &[64, bk]))
}

/// C's tensor map as steps 12 and 13 store it, boxes of 128 bytes x 64 rows. When C's rows are not
/// 16-byte aligned the map describes a padded copy instead (copied in first when beta reads C),
/// returned as (address, pitch) for [`copy_back`].
pub fn c_map(call: &mut HostCall<'_>) -> Result<(TensorMap, Option<(u64, usize)>)> {
    let Shape { m, n, .. } = call.gemm.shape;
    let elem = call.precision.output();
    let c = call.c.ptr(call.gpu);
    let (at, pitch) = aligned_rows(call, "C with aligned rows", c, m, n, elem, call.gemm.beta != 0.0)?;
    let key = vec![2, at, m as u64, n as u64];
    let map = call.workspace.tensor_map(key, || tensor_map(elem, at, &[n, m], &[pitch], &[128 / elem.bytes(), 64]))?;
    Ok((map, (at != c).then_some((at, pitch))))
}

/// Copies the kernel's result from the padded copy [`c_map`] made, if it made one, into C.
pub fn copy_back(call: &HostCall<'_>, padded: Option<(u64, usize)>) -> Result<()> {
    let Some((at, pitch)) = padded else { return Ok(()) };
    let Shape { m, n, .. } = call.gemm.shape;
    let row = n * call.precision.output().bytes();
    copy_pitched(call.gpu, at, pitch, call.c.ptr(call.gpu), row, row, m)
}

/// A persistent grid along x: as many clusters as the GPU runs at once (asked once per kernel),
/// each looping over jobs; no more than the launch's jobs (its grid), or halves of jobs when the
/// kernel cuts the last turn's (HALVES).
pub fn persistent_grid(call: &mut HostCall<'_>) -> Result<(u32, u32, u32)> {
    let (f, launch, gpu) = (&call.loaded.function, call.launch, call.gpu);
    let (smem, cluster) = (launch.dynamic_smem_bytes, launch.value("CLUSTER").unwrap_or(1) as u32);
    let key = vec![f.cu_function() as u64, smem as u64, cluster as u64];
    let resident = call.workspace.count(key, || max_active_clusters(gpu, f, launch.block, smem, (cluster, 1, 1)))?;
    let jobs = launch.grid.0 / cluster;
    let clusters =
        if launch.value("HALVES") == Some(1) && 2 * jobs <= resident { 2 * jobs } else { jobs.min(resident) };
    Ok((clusters * cluster, 1, 1))
}

// ANCHOR: run
/// One GEMM of steps 9 and 10: the tensor maps of A and B, then one block per tile of C.
pub fn run_tiles(call: &mut HostCall<'_>) -> Result<()> {
    let (bm, bk) = (call.launch.value("BM").unwrap_or(0) as usize, HopperTiles::bk(call.precision));
    let (a, b) = (a_map(call, bm, bk)?, b_map(call, bk)?);
    launch_sgemm(call, (&a, &b), None, call.launch.grid)
}

/// One GEMM of step 11: the tensor maps of A and B, then a persistent cluster launch.
pub fn run_persistent(call: &mut HostCall<'_>) -> Result<()> {
    let (bm, bk) = (call.launch.value("BM").unwrap_or(0) as usize, HopperTiles::bk(call.precision));
    let (a, b) = (a_map(call, bm, bk)?, b_map(call, bk)?);
    let grid = persistent_grid(call)?;
    launch_sgemm(call, (&a, &b), None, grid)
}
// ANCHOR_END: run

/// Launches the step's `sgemm(M, N, K, alpha, A's map, B's map, beta, C)` on `grid` in clusters of
/// the launch's CLUSTER blocks along x; with `c_map`, C's tensor map takes C's place (steps 12, 13).
pub fn launch_sgemm(
    call: &HostCall<'_>,
    maps: (&TensorMap, &TensorMap),
    c_map: Option<&TensorMap>,
    grid: (u32, u32, u32),
) -> Result<()> {
    let Shape { m, n, k } = call.gemm.shape;
    let (mi, ni, ki) = (m as i32, n as i32, k as i32);
    let (alpha, beta, c) = (call.gemm.alpha, call.gemm.beta, call.c.ptr(call.gpu));
    let c = c_map.map_or(arg(&c), arg);
    let mut args = [arg(&mi), arg(&ni), arg(&ki), arg(&alpha), arg(maps.0), arg(maps.1), arg(&beta), c];
    let (f, launch) = (&call.loaded.function, call.launch);
    let cluster = launch.value("CLUSTER").unwrap_or(1) as u32;
    self::launch(call.gpu, f, grid, launch.block, launch.dynamic_smem_bytes, (cluster, 1, 1), &mut args)
}

/// Bytes of one staging buffer of C in steps 12 and 13 (`CHUNK_BYTES` of hopper.cuh): 64 rows of
/// 128 bytes, one TMA box.
pub const CHUNK_BYTES: usize = 64 * 128;
