//! Host side of Hopper's machinery, for steps 9-13: tensor maps for the Tensor Memory Accelerator
//! (`cuTensorMapEncodeTiled`), launches with thread-block clusters (`cuLaunchKernelEx`), and the
//! pitched copies that give the TMA row pitches it can describe. What the rungs' host code shares
//! on top of it is in [`crate::harness::hopper_host`].

use crate::harness::device::Gpu;
use crate::harness::precision::Elem;
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
        Elem::E4m3 => T::CU_TENSOR_MAP_DATA_TYPE_UINT8,
    }
}

/// A tensor map of a row-major tensor at device address `addr`: `dims` innermost first (in
/// elements), `pitches` the byte distance between consecutive indices of every dimension but the
/// innermost, `boxes` the tile one copy moves. The tile lands in shared memory swizzled across
/// its innermost extent, which must be 128 bytes (the rungs' tiles), or 64 or 32 (a narrower
/// swizzle, for tiles whose width is no multiple of 128 bytes); elements outside the tensor read
/// as zero.
pub fn tensor_map(elem: Elem, addr: u64, dims: &[usize], pitches: &[usize], boxes: &[usize]) -> Result<TensorMap> {
    tensor_map_promoted(elem, false, addr, dims, pitches, boxes, L2_PROMOTION)
}

/// The bytes a miss of every rung's loads brings into L2 (the TMA's L2 promotion): 256, the widest,
/// so that a box's row of 128 bytes brings its neighbour's too. Where B streams past L2 at decode
/// shapes step 15's rule asks for 128 instead (`STREAM_PROMOTION`, through `B_PROMOTION`).
pub const L2_PROMOTION: usize = 256;

/// [`tensor_map`] whose misses bring `promotion` bytes into L2: 0 (no promotion), 64, 128 or 256;
/// an experiment's knob (`--define A_PROMOTION=n`, `B_PROMOTION=n`). With `tf32`, an FP32 tensor whose loads the
/// TMA rounds to TF32 on their way into shared memory: to nearest, ties to even, as cuBLAS's TF32
/// does (its type is TFLOAT32), so that the TF32 kernel needs no rounding instruction (book
/// chapter 13).
pub fn tensor_map_promoted(
    elem: Elem,
    tf32: bool,
    addr: u64,
    dims: &[usize],
    pitches: &[usize],
    boxes: &[usize],
    promotion: usize,
) -> Result<TensorMap> {
    let ty = if tf32 { sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 } else { tma_type(elem) };
    let elem_bytes = elem.bytes();
    let rank = dims.len();
    if pitches.len() + 1 != rank || boxes.len() != rank || !(2..=5).contains(&rank) {
        return Err(Error::BadInput("a tensor map needs 2 to 5 dimensions, a pitch for each but the first".into()));
    }
    if addr as usize % TMA_ALIGN != 0 || pitches.iter().any(|p| p % TMA_ALIGN != 0) {
        return Err(Error::BadInput(format!(
            "the TMA needs 16-byte aligned rows; got address {addr:#x}, pitches {pitches:?} bytes"
        )));
    }
    use sys::CUtensorMapSwizzle as Swizzle;
    let swizzle = match boxes.first().map(|b| b * elem_bytes) {
        Some(128) => Swizzle::CU_TENSOR_MAP_SWIZZLE_128B,
        Some(64) => Swizzle::CU_TENSOR_MAP_SWIZZLE_64B,
        Some(32) => Swizzle::CU_TENSOR_MAP_SWIZZLE_32B,
        other => {
            let bytes = other.unwrap_or(0);
            return Err(Error::BadInput(format!("a swizzled TMA box is 128, 64 or 32 bytes wide, not {bytes}")));
        }
    };
    use sys::CUtensorMapL2promotion as Promotion;
    let promotion = match promotion {
        0 => Promotion::CU_TENSOR_MAP_L2_PROMOTION_NONE,
        64 => Promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
        128 => Promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
        256 => Promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        other => {
            return Err(Error::BadInput(format!("the TMA's L2 promotion is 0, 64, 128 or 256 bytes, not {other}")));
        }
    };
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
            ty,
            rank as u32,
            addr as *mut c_void,
            dims.as_ptr(),
            pitches.as_ptr(),
            boxes.as_ptr(),
            ones.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle,
            promotion,
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

/// A launch configuration on the harness stream with the attributes `attrs` (the cluster's shape
/// first).
fn config(
    gpu: &Gpu,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    smem_bytes: u32,
    attrs: &mut [sys::CUlaunchAttribute],
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
        attrs: attrs.as_mut_ptr(),
        numAttrs: attrs.len() as u32,
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

fn early_attr() -> sys::CUlaunchAttribute {
    // SAFETY: as in `cluster_attr`.
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
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
    let mut attrs = [cluster_attr(cluster)];
    let config = config(gpu, cluster, block, smem_bytes, &mut attrs);
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
/// (`cuLaunchKernelEx`), with `args` pointing to each kernel parameter in order. `early`: a
/// programmatic dependent launch, which may start before the launch ahead of it in the stream has
/// finished; only for a kernel that waits for it (`griddepcontrol.wait`) before it touches global
/// memory.
#[allow(clippy::too_many_arguments)]
pub fn launch(
    gpu: &Gpu,
    f: &CudaFunction,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    smem_bytes: u32,
    cluster: (u32, u32, u32),
    early: bool,
    args: &mut [*mut c_void],
) -> Result<()> {
    let mut attrs = [cluster_attr(cluster), early_attr()];
    let used = if early { 2 } else { 1 };
    let config = config(gpu, grid, block, smem_bytes, &mut attrs[..used]);
    // SAFETY: `args` has one pointer per kernel parameter, each to a live value of its type
    // (the caller's contract); the function belongs to this context.
    unsafe { sys::cuLaunchKernelEx(&config, f.cu_function(), args.as_mut_ptr(), std::ptr::null_mut()) }
        .result()
        .map_err(|e| Error::Cuda(format!("cluster launch of {grid:?} blocks in clusters of {cluster:?}: {e}")))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A box the TMA cannot swizzle across (neither 128, 64 nor 32 bytes wide) is refused with a
    /// line that says so, before the driver is asked.
    #[test]
    fn a_box_of_another_width_is_refused() {
        let e = tensor_map(Elem::F16, 0x10000, &[96, 64], &[256], &[24, 64]).unwrap_err().to_string();
        assert!(e.contains("128, 64 or 32 bytes wide, not 48"), "{e}");
    }

    /// An L2 promotion the TMA does not have is refused the same way.
    #[test]
    fn a_promotion_of_another_size_is_refused() {
        let e = tensor_map_promoted(Elem::F16, false, 0x10000, &[64, 64], &[128], &[64, 64], 100).unwrap_err();
        assert!(e.to_string().contains("0, 64, 128 or 256 bytes, not 100"), "{e}");
    }
}
