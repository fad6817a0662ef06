//! The two references every kernel is checked against: cuBLAS in the kernel's precision
//! (SGEMM with TF32 off for steps 1-6) on the same inputs, and a float64 product on the CPU
//! through ndarray.

use crate::harness::device::{Gpu, cublas_present};
use crate::harness::matrix::{DeviceMatrix, check_storage};
use crate::harness::precision::{Elem, Precision};
use crate::harness::problem::Gemm;
use crate::{Error, Result};
use cudarc::cublas::sys as cb;
use ndarray::{Array2, ArrayView1, ArrayView2, s};

/// How cuBLAS is asked to compute, recorded with every result.
pub const CUBLAS_MATH: &str = "cublasGemmEx, CUBLAS_DEFAULT_MATH; FP32: CUBLAS_COMPUTE_32F (TF32 off), \
     TF32: CUBLAS_COMPUTE_32F_FAST_TF32, FP16/BF16: 16F/16BF inputs with CUBLAS_COMPUTE_32F, FP64: CUBLAS_COMPUTE_64F; \
     3xTF32: SGEMM (TF32 off); FP8 (no cublasGemmEx): cublasLtMatmul, e4m3 TN with CUBLAS_COMPUTE_32F, fast \
     accumulation off, one FP32 scale per tensor or (fp8-block) BLK128x128_32F for B and VEC128_32F for A, \
     checked against a BF16 cublasGemmEx of the dequantized values";

/// A cuBLAS handle on the harness stream.
pub struct Cublas {
    blas: cudarc::cublas::CudaBlas,
    pub version: i32,
}

impl Cublas {
    pub fn new(gpu: &Gpu) -> Result<Cublas> {
        if !cublas_present() {
            return Err(Error::NoCublas);
        }
        let blas = cudarc::cublas::CudaBlas::new(gpu.stream.clone())?;
        let mut version = 0;
        // SAFETY: the handle is live; both calls only set or read handle state.
        unsafe {
            cb::cublasSetMathMode(*blas.handle(), cb::cublasMath_t::CUBLAS_DEFAULT_MATH).result()?;
            cb::cublasGetVersion_v2(*blas.handle(), &mut version).result()?;
        }
        Ok(Cublas { blas, version })
    }

    /// Row-major C = alpha*A*B + beta*C in FP32 (TF32 off): the reference of steps 1-6.
    pub fn sgemm(
        &self,
        gpu: &Gpu,
        gemm: &Gemm,
        a: &DeviceMatrix,
        b: &DeviceMatrix,
        c: &mut DeviceMatrix,
    ) -> Result<()> {
        self.gemm(gpu, Precision::F32, gemm, a, b, c)
    }

    /// Row-major C = alpha*A*B + beta*C in `precision`, with A, B and C stored as the
    /// precision says (FP16 and BF16 may also store C in their 16-bit type). cuBLAS is column-major, and a row-major matrix is its transpose in
    /// column-major, so compute C^T = B^T * A^T: B goes first.
    pub fn gemm(
        &self,
        gpu: &Gpu,
        precision: Precision,
        gemm: &Gemm,
        a: &DeviceMatrix,
        b: &DeviceMatrix,
        c: &mut DeviceMatrix,
    ) -> Result<()> {
        let s = gemm.shape;
        s.check_32bit()?;
        // FP16 and BF16 offer a 16-bit C too (the fastest references store C so).
        let c16 = matches!(precision, Precision::F16 | Precision::Bf16) && c.elem == precision.input();
        if !c16 {
            check_storage(precision, a, b, c)?;
        } else if a.elem != precision.input() || b.elem != precision.input() {
            return Err(Error::BadInput(format!("buffers are not stored as {precision} expects")));
        }
        let (m, n, k) = (s.m as i32, s.n as i32, s.k as i32);
        let ty = |e: Elem| match e {
            Elem::F16 => cb::cudaDataType::CUDA_R_16F,
            Elem::Bf16 => cb::cudaDataType::CUDA_R_16BF,
            Elem::F32 => cb::cudaDataType::CUDA_R_32F,
            Elem::F64 => cb::cudaDataType::CUDA_R_64F,
            Elem::E4m3 => cb::cudaDataType::CUDA_R_8F_E4M3,
        };
        let compute = match precision.arithmetic() {
            // 3xTF32's reference is SGEMM: the accuracy it must match and the speed it must beat.
            Precision::F32 | Precision::F16 | Precision::Bf16 | Precision::Tf32x3 => {
                cb::cublasComputeType_t::CUBLAS_COMPUTE_32F
            }
            Precision::Tf32 => cb::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32,
            Precision::F64 => cb::cublasComputeType_t::CUBLAS_COMPUTE_64F,
            // FP8's cuBLAS check multiplies the same values in BF16 (`Prepared`); cublasGemmEx
            // has no FP8, and cuBLASLt's FP8 is timed as its own configuration.
            Precision::Fp8 | Precision::Fp8Block => {
                return Err(Error::BadInput("cublasGemmEx has no FP8: use cuBLASLt".into()));
            }
            Precision::F16C16 | Precision::Bf16C16 | Precision::Fp8C32 | Precision::Fp8BlockC32 => {
                unreachable!("arithmetic() is FP16, BF16 or FP8")
            }
        };
        // The scalars have the compute type: double for FP64, float otherwise.
        let (alpha64, beta64) = (gemm.alpha as f64, gemm.beta as f64);
        let (alpha, beta): (*const std::ffi::c_void, *const std::ffi::c_void) = if precision == Precision::F64 {
            (&alpha64 as *const f64 as *const _, &beta64 as *const f64 as *const _)
        } else {
            (&gemm.alpha as *const f32 as *const _, &gemm.beta as *const f32 as *const _)
        };
        // SAFETY: buffer sizes and types match the shape and precision (checked above and by
        // the constructors); leading dimensions are at least 1 as cuBLAS requires.
        unsafe {
            cudarc::cublas::result::gemm_ex(
                *self.blas.handle(),
                cb::cublasOperation_t::CUBLAS_OP_N,
                cb::cublasOperation_t::CUBLAS_OP_N,
                n,
                m,
                k,
                alpha,
                b.ptr(gpu) as *const _,
                ty(b.elem),
                n.max(1),
                a.ptr(gpu) as *const _,
                ty(a.elem),
                k.max(1),
                beta,
                c.ptr(gpu) as *mut _,
                ty(c.elem),
                n.max(1),
                compute,
                cb::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )?;
        }
        Ok(())
    }
}

/// Largest M*N*K the CPU reference computes in full; above it, only sampled rows.
pub const CPU_FULL_LIMIT: usize = 1 << 31;

/// Rows of C the CPU reference computes for a large problem.
pub const CPU_SAMPLE_ROWS: usize = 48;

/// Reference values for some rows of C (all rows for small problems), in float64.
pub struct Reference {
    pub rows: Vec<usize>,
    /// `rows.len() x N`, row-major.
    pub values: Vec<f64>,
}

/// Which rows the CPU computes: all of them when the product is small, else the first,
/// the last and an even spread between (edges are where tiling bugs live).
pub fn reference_rows(gemm: &Gemm) -> Vec<usize> {
    let s = gemm.shape;
    if s.m * s.n * s.k.max(1) <= CPU_FULL_LIMIT || s.m <= CPU_SAMPLE_ROWS {
        return (0..s.m).collect();
    }
    let mut rows: Vec<usize> = (0..CPU_SAMPLE_ROWS).map(|i| i * (s.m - 1) / (CPU_SAMPLE_ROWS - 1)).collect();
    rows.extend([1, s.m - 2]);
    rows.sort_unstable();
    rows.dedup();
    rows
}

/// Columns of C in one block of the sampled CPU reference.
const REFERENCE_COLS: usize = 256;

/// Rows of C up to which the CPU reference sums blocks of columns on every core (a large
/// problem's sampled rows, or a skinny problem's all); above, ndarray's blocked product is faster.
const THREADED_ROWS: usize = 64;

/// alpha*A*B + beta*C0 in float64 for the given rows; beta == 0 ignores C0 (it may be NaN).
///
/// A few rows (a large problem's 50 sampled, or a skinny one's every row) against a wide B: each
/// block of [`REFERENCE_COLS`] columns is summed over K in order, one row of B at a time widened
/// to float64 and applied to four rows of C at once, by as many threads as the machine has (a GPU
/// node has 16 cores). ndarray's product needs all of B in float64, 8 bytes a value (1.4 GB for
/// the largest suite shape's 3300 x 51600, twice for the precisions that round their inputs), and
/// uses four threads at most. Many rows: ndarray, whose blocked product is faster there.
pub fn cpu_reference(gemm: &Gemm, a: &[f32], b: &[f32], c0: &[f32], rows: &[usize]) -> Reference {
    let s = gemm.shape;
    let starts: Vec<usize> = (0..s.n).step_by(REFERENCE_COLS).collect();
    // A thread for every 4 million multiply-adds or so: a small problem (the verifier's own
    // tests check 100,000 of them) is ndarray's on the calling thread.
    let work = (rows.len() * s.n * s.k) >> 22;
    let threads = crate::harness::cores::cores().clamp(1, starts.len().min(work).max(1));
    if rows.len() > THREADED_ROWS || threads == 1 {
        return whole(gemm, a, b, c0, rows);
    }
    let b = ArrayView2::from_shape((s.k, s.n), b).expect("B matches shape");
    let (alpha, beta) = (gemm.alpha as f64, gemm.beta as f64);
    let block = |j0: usize| -> Array2<f64> {
        let j1 = (j0 + REFERENCE_COLS).min(s.n);
        let w = j1 - j0;
        let mut c = Array2::<f64>::zeros((rows.len(), w));
        let mut b_row = vec![0f64; w];
        let sums = c.as_slice_mut().expect("a new array is contiguous");
        for kk in 0..s.k {
            b_row.iter_mut().zip(b.slice(s![kk, j0..j1])).for_each(|(d, &v)| *d = v as f64);
            // Four rows of C at a time, so that each value of B loaded serves four sums; then
            // the rows left over one at a time.
            let x = |i: usize| a[rows[i] * s.k + kk] as f64;
            let full = rows.len() / 4 * 4;
            for (q, quad) in sums[..full * w].chunks_exact_mut(4 * w).enumerate() {
                let (x0, x1, x2, x3) = (x(4 * q), x(4 * q + 1), x(4 * q + 2), x(4 * q + 3));
                let (c0, rest) = quad.split_at_mut(w);
                let (c1, rest) = rest.split_at_mut(w);
                let (c2, c3) = rest.split_at_mut(w);
                let lanes = c0.iter_mut().zip(c1.iter_mut()).zip(c2.iter_mut()).zip(c3.iter_mut()).zip(b_row.iter());
                for ((((c0, c1), c2), c3), &bv) in lanes {
                    *c0 += x0 * bv;
                    *c1 += x1 * bv;
                    *c2 += x2 * bv;
                    *c3 += x3 * bv;
                }
            }
            for (i, row) in sums[full * w..].chunks_exact_mut(w).enumerate() {
                let xi = x(full + i);
                row.iter_mut().zip(b_row.iter()).for_each(|(c, &bv)| *c += xi * bv);
            }
        }
        for (i, &r) in rows.iter().enumerate() {
            let old = &c0[r * s.n + j0..r * s.n + j1];
            c.row_mut(i).zip_mut_with(&ArrayView1::from(old), |x, &v| {
                *x = alpha * *x + if beta == 0.0 { 0.0 } else { beta * v as f64 };
            });
        }
        c
    };
    let blocks = crate::harness::cores::map_on_cores(starts.len(), threads, |t| block(starts[t]));
    let mut values = vec![0f64; rows.len() * s.n];
    for (&j0, c) in starts.iter().zip(blocks) {
        for (i, row) in c.rows().into_iter().enumerate() {
            values[i * s.n + j0..i * s.n + j0 + row.len()].iter_mut().zip(row).for_each(|(d, &v)| *d = v);
        }
    }
    Reference { rows: rows.to_vec(), values }
}

/// [`cpu_reference`] by ndarray's product of the rows of A and all of B, widened to float64.
fn whole(gemm: &Gemm, a: &[f32], b: &[f32], c0: &[f32], rows: &[usize]) -> Reference {
    let s = gemm.shape;
    let mut picked = Array2::<f64>::zeros((rows.len(), s.k));
    for (i, &r) in rows.iter().enumerate() {
        picked.row_mut(i).zip_mut_with(&ArrayView1::from(&a[r * s.k..(r + 1) * s.k]), |d, &v| *d = v as f64);
    }
    let b64 = ArrayView2::from_shape((s.k, s.n), b).expect("B matches shape").mapv(f64::from);
    let mut c = Array2::<f64>::zeros((rows.len(), s.n));
    if gemm.beta != 0.0 {
        for (i, &r) in rows.iter().enumerate() {
            c.row_mut(i).zip_mut_with(&ArrayView1::from(&c0[r * s.n..(r + 1) * s.n]), |d, &v| *d = v as f64);
        }
    }
    ndarray::linalg::general_mat_mul(gemm.alpha as f64, &picked, &b64, gemm.beta as f64, &mut c);
    Reference { rows: rows.to_vec(), values: c.into_raw_vec_and_offset().0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Shape;

    #[test]
    fn cpu_reference_small_product() {
        // [1 2; 3 4] * [5 6; 7 8] = [19 22; 43 50]; then 2*that + 0.5*[1 1; 1 1]
        let g = Gemm::new(Shape::cube(2), 2.0, 0.5);
        let r = cpu_reference(&g, &[1., 2., 3., 4.], &[5., 6., 7., 8.], &[1.; 4], &[0, 1]);
        assert_eq!(r.values, vec![38.5, 44.5, 86.5, 100.5]);
        // beta == 0 never reads C, even when it is NaN.
        let g = Gemm::new(Shape::cube(2), 1.0, 0.0);
        let r = cpu_reference(&g, &[1., 2., 3., 4.], &[5., 6., 7., 8.], &[f32::NAN; 4], &[1]);
        assert_eq!(r.values, vec![43.0, 50.0]);
    }

    /// The same sums by the definition, one element at a time.
    fn naive(gemm: &Gemm, a: &[f32], b: &[f32], c0: &[f32], rows: &[usize]) -> Vec<f64> {
        let Shape { n, k, .. } = gemm.shape;
        let mut out = Vec::new();
        for &r in rows {
            for j in 0..n {
                let dot: f64 = (0..k).map(|kk| a[r * k + kk] as f64 * b[kk * n + j] as f64).sum();
                let old = if gemm.beta == 0.0 { 0.0 } else { gemm.beta as f64 * c0[r * n + j] as f64 };
                out.push(gemm.alpha as f64 * dot + old);
            }
        }
        out
    }

    #[test]
    fn blocks_of_columns_are_the_product() {
        // Blocks of columns with a ragged last one, every row or sampled ones, empty sizes.
        // (Small work or many rows by ndarray; up to THREADED_ROWS rows of large work by blocks of
        // columns on threads.)
        let cases = [
            (3, 600, 37, 0.5),
            (5, 256, 64, 0.0),
            (4, 513, 1, -1.0),
            (2, 7, 0, 0.25),
            (0, 300, 5, 1.0),
            (130, 70, 9, 0.5),
            // Work for two threads or more where the machine has two cores (CI's): ragged last
            // blocks, a row left over from the fours.
            (5, 1000, 2000, 0.0),
            (7, 1300, 1500, 0.5),
        ];
        for (m, n, k, beta) in cases {
            let g = Gemm::new(Shape::new(m, n, k), 1.5, beta);
            let x = crate::Inputs::new(&g, 11);
            for rows in [(0..m).collect::<Vec<_>>(), (0..m).step_by(2).collect()] {
                let got = cpu_reference(&g, &x.a, &x.b, &x.c0, &rows).values;
                let want = naive(&g, &x.a, &x.b, &x.c0, &rows);
                assert_eq!(got.len(), want.len(), "{m}x{n}x{k}");
                for (e, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert!((g - w).abs() <= 1e-12 * (1.0 + w.abs()), "{m}x{n}x{k} element {e}: {g} against {w}");
                }
            }
        }
    }

    #[test]
    fn samples_edges_of_large_problems() {
        let rows = reference_rows(&Gemm::new(Shape::cube(4096), 1.0, 0.0));
        assert!(rows.len() <= CPU_SAMPLE_ROWS + 2);
        assert_eq!((rows[0], rows[1], *rows.last().unwrap()), (0, 1, 4095));
        assert!(rows.contains(&4094));
        assert_eq!(reference_rows(&Gemm::new(Shape::new(17, 4096, 3), 1.0, 0.0)).len(), 17);
    }
}
