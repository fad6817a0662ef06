//! FP32 -> FP8 (e4m3) with scales, on the GPU: how the harness gives the FP8 precisions their
//! inputs (`quantize.cu`; not timed). Scales are powers of two ([`Scaling`]), laid out as the FP8
//! kernel and DeepGEMM read them:
//!
//! - per tensor: one FP32 for A, one for B;
//! - A per row per 128 of K: `KB x M4` floats (KB = ceil(K / 128), M4 = M rounded up to 4),
//!   scale (kb, m) at `kb * M4 + m`;
//! - B per 128 x 128 block: `NB x KB4` floats (KB4 = KB rounded up to 4), scale (nb, kb) at
//!   `nb * KB4 + kb`.
//!
//! These are cuBLASLt's layouts too (it asks for the padding, zeros), so that the FP8 kernel and
//! its reference read the same scales.
//!
//! B is stored K-major (N x K), the layout FP8 wgmma reads and a linear layer's weight has.

use crate::harness::compile::helper_module;
use crate::harness::device::{Gpu, sync};
use crate::harness::matrix::{DeviceMatrix, alloc};
use crate::harness::precision::{Elem, Precision, SCALE_BLOCK, Scaling, e4m3_to_f32};
use crate::{Error, Result};
use cudarc::driver::{CudaFunction, DevicePtr, LaunchConfig, PushKernelArg};

/// Which operand of the product: A is M x K, B is K x N (stored N x K).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    A,
    B,
}

/// How many FP32 scales an operand of `rows x cols` (A: M x K; B: K x N) has.
pub fn scale_count(scaling: Scaling, operand: Operand, rows: usize, cols: usize) -> usize {
    match (scaling, operand) {
        (Scaling::Tensor, _) => 1,
        (Scaling::Block, Operand::A) => cols.div_ceil(SCALE_BLOCK) * rows.next_multiple_of(4),
        (Scaling::Block, Operand::B) => cols.div_ceil(SCALE_BLOCK) * rows.div_ceil(SCALE_BLOCK).next_multiple_of(4),
    }
}

/// Where the block scale of element (r, c) of an operand of `rows x cols` (A: M x K; B: K x N)
/// lies among its scales.
pub fn block_scale_at(operand: Operand, rows: usize, r: usize, c: usize) -> usize {
    match operand {
        Operand::A => c / SCALE_BLOCK * rows.next_multiple_of(4) + r,
        Operand::B => c / SCALE_BLOCK * rows.div_ceil(SCALE_BLOCK).next_multiple_of(4) + r / SCALE_BLOCK,
    }
}

/// `host` (A: M x K, or B: K x N, row-major FP32) quantized on the GPU as `p` says: e4m3 values
/// (B transposed to N x K) with their scales.
pub fn quantize(
    gpu: &Gpu,
    p: Precision,
    operand: Operand,
    host: &[f32],
    rows: usize,
    cols: usize,
) -> Result<DeviceMatrix> {
    let scaling = p.scaling().ok_or_else(|| Error::BadInput(format!("{p} is not an FP8 precision")))?;
    if host.len() != rows * cols {
        return Err(Error::BadInput("quantize: the matrix does not match its shape".into()));
    }
    let kernels = Kernels::of(gpu)?;
    let x = DeviceMatrix::from_host(gpu, host)?;
    let mut q = DeviceMatrix::uninit(gpu, host.len(), Elem::E4m3)?;
    // Zeros first: the kernels below leave the layout's padding as it is.
    let mut scales = alloc(gpu, 4 * scale_count(scaling, operand, rows, cols))?;
    gpu.stream.memset_zeros(&mut scales)?;
    let (px, pq, ps) = (x.ptr(gpu), q.ptr(gpu), scales.device_ptr(&gpu.stream).0);
    let (r, c) = (rows as i32, cols as i32);
    let grid = |threads: usize| LaunchConfig {
        grid_dim: (threads.div_ceil(256).clamp(1, 1 << 20) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: each kernel's arguments are its signature in quantize.cu; the buffers hold
    // rows * cols values, rows * cols bytes and the scales of this layout.
    unsafe {
        match scaling {
            Scaling::Tensor => {
                let amax = alloc(gpu, 4)?;
                let pa = amax.device_ptr(&gpu.stream).0;
                gpu.upload(&[0; 4], pa)?;
                let n = host.len() as i64;
                gpu.stream
                    .launch_builder(&kernels.amax)
                    .arg(&px)
                    .arg(&n)
                    .arg(&pa)
                    .launch(grid(host.len().min(1 << 22)))?;
                let transpose = (operand == Operand::B) as i32;
                let mut args = gpu.stream.launch_builder(&kernels.tensor);
                args.arg(&px).arg(&r).arg(&c).arg(&transpose).arg(&pa).arg(&pq).arg(&ps);
                args.launch(grid(host.len().min(1 << 24)))?;
            }
            Scaling::Block if operand == Operand::A => {
                let warps = rows * cols.div_ceil(SCALE_BLOCK);
                gpu.stream
                    .launch_builder(&kernels.rows)
                    .arg(&px)
                    .arg(&r)
                    .arg(&c)
                    .arg(&pq)
                    .arg(&ps)
                    .launch(grid(32 * warps))?;
            }
            Scaling::Block => {
                let cfg = LaunchConfig {
                    grid_dim: (rows.div_ceil(SCALE_BLOCK).max(1) as u32, cols.div_ceil(SCALE_BLOCK).max(1) as u32, 1),
                    block_dim: (256, 1, 1),
                    shared_mem_bytes: 0,
                };
                gpu.stream.launch_builder(&kernels.blocks).arg(&px).arg(&r).arg(&c).arg(&pq).arg(&ps).launch(cfg)?;
            }
        }
    }
    sync(gpu, "FP8 quantization")?;
    q.scales = Some(scales);
    Ok(q)
}

/// What an FP8 operand stands for, on the host in its logical layout (A: M x K; B: K x N): each
/// stored value times its scale, exact in FP32 (the scales are powers of two).
pub fn dequantize(
    gpu: &Gpu,
    p: Precision,
    operand: Operand,
    q: &DeviceMatrix,
    rows: usize,
    cols: usize,
) -> Result<Vec<f32>> {
    let scaling = p.scaling().ok_or_else(|| Error::BadInput(format!("{p} is not an FP8 precision")))?;
    let mut bytes = vec![0u8; rows * cols];
    if !bytes.is_empty() {
        gpu.download(q.ptr(gpu), &mut bytes)?;
    }
    let count = scale_count(scaling, operand, rows, cols);
    let mut raw = vec![0u8; 4 * count];
    gpu.download(q.scales_ptr(gpu), &mut raw)?;
    let scales: Vec<f32> = raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    let mut out = vec![0f32; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            let s = match scaling {
                Scaling::Tensor => scales[0],
                Scaling::Block => scales[block_scale_at(operand, rows, r, c)],
            };
            // B is K x N logically (r = k, c = n), stored N x K.
            let at = if operand == Operand::A { r * cols + c } else { c * rows + r };
            out[r * cols + c] = e4m3_to_f32(bytes[at]) * s;
        }
    }
    Ok(out)
}

/// The quantization kernels of `gpu` (their module compiled once per process and GPU).
struct Kernels {
    amax: CudaFunction,
    tensor: CudaFunction,
    rows: CudaFunction,
    blocks: CudaFunction,
}

impl Kernels {
    fn of(gpu: &Gpu) -> Result<Kernels> {
        let module = helper_module(gpu, "common/src/harness/quantize.cu", include_str!("quantize.cu"))?;
        Ok(Kernels {
            amax: module.load_function("amax_tensor")?,
            tensor: module.load_function("quantize_tensor")?,
            rows: module.load_function("quantize_rows")?,
            blocks: module.load_function("quantize_blocks")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_counts() {
        assert_eq!(scale_count(Scaling::Tensor, Operand::A, 100, 300), 1);
        // A: 3 K-blocks of 100 rows (a multiple of 4); 101 rows pad to 104.
        assert_eq!(scale_count(Scaling::Block, Operand::A, 100, 300), 300);
        assert_eq!(scale_count(Scaling::Block, Operand::A, 101, 300), 312);
        // B (K = 300, N = 129): 2 N-blocks of 3 K-blocks, padded to 4; K = 512 needs no padding.
        assert_eq!(scale_count(Scaling::Block, Operand::B, 300, 129), 8);
        assert_eq!(scale_count(Scaling::Block, Operand::B, 512, 129), 8);
    }

    #[test]
    fn block_scales_lie_where_the_kernel_reads_them() {
        // A (101 x 300): (kb, m) at kb * 104 + m.
        assert_eq!(block_scale_at(Operand::A, 101, 5, 0), 5);
        assert_eq!(block_scale_at(Operand::A, 101, 100, 299), 2 * 104 + 100);
        // B (K = 300 x N = 129): (nb, kb) at nb * 4 + kb.
        assert_eq!(block_scale_at(Operand::B, 300, 299, 0), 2);
        assert_eq!(block_scale_at(Operand::B, 300, 0, 128), 4);
    }
}
