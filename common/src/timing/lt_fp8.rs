//! cuBLASLt's FP8 (e4m3) GEMM with scales: the reference the FP8 rung is measured against
//! (`cublasGemmEx` has no FP8). The FP8 part of `lt`'s plans, and the scales of a prepared
//! problem in cuBLASLt's layouts ([`scale_addresses`]).
//!
//! What NVIDIA's cuBLAS 13 documentation asks of it (<https://docs.nvidia.com/cuda/cublas/#cublasltmatmul>,
//! <https://docs.nvidia.com/cuda/cublas/#scaling-factors-layouts>), and how the harness meets it:
//!
//! - FP8 runs "TN": cuBLAS-A transposed, cuBLAS-B not, both K-major. Row-major C = A*B is
//!   column-major C^T (N x M) = op(X) * Y with X our B (N x K row-major: K x N column-major, ld
//!   K, op T) and Y our A (M x K row-major: K x M column-major, ld K, op N); CUBLAS_COMPUTE_32F,
//!   scale type CUDA_R_32F.
//! - C with e4m3 x e4m3: C and D of one type, BF16, FP16 or FP32 (an e4m3 D takes a 16-bit C);
//!   beta != 0 reads C in that type. The block scalings write D in 16F, 16BF or 32F only.
//! - Fast accumulation off (CUBLASLT_MATMUL_DESC_FAST_ACCUM = 0, the default, set explicitly):
//!   cuBLAS promotes the tensor cores' partial sums to FP32, as the FP8 rung does.
//! - Per tensor: one FP32 scale per operand (CUBLASLT_MATMUL_DESC_A/B_SCALE_POINTER), so
//!   cuBLAS-A's scale is our B's and cuBLAS-B's our A's; the addresses are set per call.
//! - Block scaling (sm_90, cuBLAS 12.9 and later): the pairs VEC128/VEC128, VEC128/BLK128x128
//!   and BLK128x128/VEC128 are supported (BLK128x128/BLK128x128 is not); here cuBLAS-A (the
//!   weight, our B) takes BLK128x128_32F and cuBLAS-B (the activations, our A) VEC128_32F. M and
//!   N must be multiples of 4 and the scales' addresses 16-byte aligned. The layouts:
//!   - VEC128 for cuBLAS-B: "N-major with shape N x L" (L = ceil(K/128)), scale (m, kb) of our
//!     A at `kb*M + m`;
//!   - BLK128x128 for cuBLAS-A: "K-major, shape L4 x ceil(M/128)" with L4 = L rounded up to a
//!     multiple of 4, scale (nb, kb) of our B at `nb*L4 + kb`.
//!
//!   Both are the harness's layouts (`quantize`): the FP8 rung reads what cuBLASLt reads.

use crate::harness::device::Gpu;
use crate::harness::precision::{Precision, Scaling};
use crate::harness::problem::Shape;
use crate::verify::check::Prepared;
use crate::{Error, Result};
use cudarc::cublaslt::result::{self as lt, CublasError};
use cudarc::cublaslt::sys;
use std::ffi::c_void;

use sys::cublasLtMatmulDescAttributes_t as Attr;
use sys::cublasLtMatmulMatrixScale_t as Mode;

/// Sets one attribute of a matmul descriptor to `value`.
///
/// # Safety
/// `desc` is a live descriptor and `T` the attribute's type in cublasLt.h.
unsafe fn set<T>(desc: sys::cublasLtMatmulDesc_t, attr: Attr, value: &T) -> Result<(), CublasError> {
    // SAFETY: as the caller promises; cuBLASLt copies the value.
    unsafe { lt::set_matmul_desc_attribute(desc, attr, value as *const T as *const c_void, size_of::<T>()) }
}

/// The FP8 part of a plan: "TN", fast accumulation off, and the block scalings' modes.
///
/// # Safety
/// `desc` is a live descriptor made with CUBLAS_COMPUTE_32F and scale type CUDA_R_32F.
pub(crate) unsafe fn describe(desc: sys::cublasLtMatmulDesc_t, p: Precision) -> Result<(), CublasError> {
    // cuBLASLt's bindings lack cublasOperation_t: it is cuBLAS's (cublas_api.h).
    use cudarc::cublas::sys::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};
    let (t, n) = (CUBLAS_OP_T, CUBLAS_OP_N);
    // SAFETY: each value has its attribute's type (cublasOperation_t, int8_t, int32_t).
    unsafe {
        set(desc, Attr::CUBLASLT_MATMUL_DESC_TRANSA, &t)?;
        set(desc, Attr::CUBLASLT_MATMUL_DESC_TRANSB, &n)?;
        set(desc, Attr::CUBLASLT_MATMUL_DESC_FAST_ACCUM, &0i8)?;
        if p.scaling() == Some(Scaling::Block) {
            set(
                desc,
                Attr::CUBLASLT_MATMUL_DESC_A_SCALE_MODE,
                &(Mode::CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F as i32),
            )?;
            set(
                desc,
                Attr::CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
                &(Mode::CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F as i32),
            )?;
        }
    }
    Ok(())
}

/// The layouts of cuBLAS-A (our B, K x N column-major), cuBLAS-B (our A, K x M) and C^T (N x M).
pub(crate) fn layouts(shape: Shape, c: sys::cudaDataType) -> Result<[sys::cublasLtMatrixLayout_t; 3], CublasError> {
    let (m, n, k) = (shape.m as u64, shape.n as u64, shape.k as u64);
    let e4m3 = sys::cudaDataType::CUDA_R_8F_E4M3;
    Ok([
        lt::create_matrix_layout(e4m3, k, n, k.max(1) as i64)?,
        lt::create_matrix_layout(e4m3, k, m, k.max(1) as i64)?,
        lt::create_matrix_layout(c, n, m, n.max(1) as i64)?,
    ])
}

/// Sets the scales' device addresses, cuBLAS-A's (our B's) and cuBLAS-B's (our A's): those of
/// one call, or before the heuristic is asked any 16-byte aligned ones (it reads no data).
///
/// # Safety
/// `desc` is a live descriptor of an FP8 plan; before a call, the addresses hold the scales its
/// modes expect.
pub(crate) unsafe fn point_at(desc: sys::cublasLtMatmulDesc_t, [a, b]: [u64; 2]) -> Result<(), CublasError> {
    let (a, b) = (a as *const c_void, b as *const c_void);
    // SAFETY: the attributes are pointers (const void*).
    unsafe {
        set(desc, Attr::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a)?;
        set(desc, Attr::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b)
    }
}

/// The device addresses of an FP8 problem's scales, cuBLAS-A's (our B's) and cuBLAS-B's (our A's):
/// the harness's, which are in cuBLASLt's layouts.
pub(crate) fn scale_addresses(gpu: &Gpu, p: &Prepared) -> Result<[u64; 2]> {
    let Shape { m, n, .. } = p.gemm.shape;
    let (b, cublas_b) = (p.b.scales_ptr(gpu), p.a.scales_ptr(gpu));
    if b == 0 || cublas_b == 0 {
        return Err(Error::BadInput(format!("{}: the FP8 matrices carry no scales", p.precision)));
    }
    let block = p.precision.scaling() == Some(Scaling::Block);
    if block && (m % 4 != 0 || n % 4 != 0) {
        return Err(Error::BadInput(format!(
            "cuBLASLt's block scales need M and N multiples of 4, not {}",
            p.gemm.shape
        )));
    }
    Ok([b, cublas_b])
}
