//! cuBLASLt: the other door into cuBLAS, with a workspace and the heuristic's first choice of
//! algorithm, and the option of an FP16 (or BF16) C. On Hopper it often reaches kernels that
//! `cublasGemmEx` does not, so the tensor-core steps are also measured against the fastest of
//! the cuBLAS configurations ([`CublasConfig`]), in the same process.

use crate::check::Prepared;
use crate::device::Gpu;
use crate::device::sync;
use crate::matrix::DeviceMatrix;
use crate::precision::{Elem, Precision};
use crate::problem::{Gemm, Shape};
use crate::reference::Cublas;
use crate::timing::{Timing, TimingPlan, time_runs};
use crate::{Error, Result};
use cudarc::cublaslt::result as lt;
use cudarc::cublaslt::sys;
use cudarc::driver::{CudaSlice, DevicePtr};
use std::collections::HashMap;
use std::ffi::c_void;

/// Workspace cuBLASLt may use: NVIDIA recommends 32 MiB on Hopper.
pub const WORKSPACE_BYTES: usize = 32 << 20;

/// One way of asking cuBLAS for a GEMM, as recorded with results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CublasConfig {
    /// `cublasGemmEx`, C in the precision's output type (the ladder's reference everywhere).
    GemmEx,
    /// `cublasLtMatmul` with a 32 MiB workspace and the heuristic's first algorithm, same C.
    Lt,
    /// The same with C stored in the input type (FP16 or BF16): half the bytes of C.
    Lt16BitC,
}

impl CublasConfig {
    /// The configurations recorded for a precision: FP16 and BF16 get all three, TF32 and the
    /// 16-bit C precisions two, the others (FP32, FP64, 3xTF32's SGEMM) only `cublasGemmEx`.
    pub fn for_precision(p: Precision) -> &'static [CublasConfig] {
        match p {
            Precision::F16 | Precision::Bf16 => &[CublasConfig::GemmEx, CublasConfig::Lt, CublasConfig::Lt16BitC],
            // C is 16-bit already: both doors with it.
            Precision::Tf32 | Precision::F16C16 | Precision::Bf16C16 => &[CublasConfig::GemmEx, CublasConfig::Lt],
            _ => &[CublasConfig::GemmEx],
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            CublasConfig::GemmEx => "cublasGemmEx",
            CublasConfig::Lt => "cublasLt",
            CublasConfig::Lt16BitC => "cublasLt 16-bit C",
        }
    }
}

/// The fastest of the cuBLAS configurations timed on one problem.
pub fn fastest(timed: &[(CublasConfig, Timing)]) -> Option<(CublasConfig, Timing)> {
    timed.iter().copied().min_by(|a, b| a.1.median_ms.total_cmp(&b.1.median_ms))
}

fn lt_type(e: Elem) -> sys::cudaDataType {
    match e {
        Elem::F16 => sys::cudaDataType::CUDA_R_16F,
        Elem::Bf16 => sys::cudaDataType::CUDA_R_16BF,
        Elem::F32 => sys::cudaDataType::CUDA_R_32F,
        Elem::F64 => sys::cudaDataType::CUDA_R_64F,
    }
}

fn lt_err(e: lt::CublasError) -> Error {
    Error::Cuda(format!("cuBLASLt: {e:?}"))
}

/// How many algorithms the heuristic is asked for: its first is what `matmul` runs; the study of
/// references (`cargo xtask references`) times each.
pub const MAX_ALGOS: usize = 8;

/// The descriptors and the heuristic's algorithms (best first) of one (shape, precision, C type),
/// made once.
struct Plan {
    desc: sys::cublasLtMatmulDesc_t,
    layouts: [sys::cublasLtMatrixLayout_t; 3],
    algos: Vec<sys::cublasLtMatmulAlgo_t>,
}

impl Drop for Plan {
    fn drop(&mut self) {
        // SAFETY: made by `plan` and used by nobody else; errors on teardown are ignored.
        unsafe {
            let _ = lt::destroy_matmul_desc(self.desc);
            for l in self.layouts {
                let _ = lt::destroy_matrix_layout(l);
            }
        }
    }
}

/// A cuBLASLt handle with its workspace, on the harness stream.
pub struct CublasLt {
    handle: sys::cublasLtHandle_t,
    workspace: CudaSlice<u8>,
    plans: HashMap<(Shape, Precision, Elem), Plan>,
}

impl Drop for CublasLt {
    fn drop(&mut self) {
        self.plans.clear();
        // SAFETY: the handle is ours and no work using it is pending past the stream's sync.
        unsafe {
            let _ = lt::destroy_handle(self.handle);
        }
    }
}

impl CublasLt {
    pub fn new(gpu: &Gpu) -> Result<CublasLt> {
        // SAFETY: only tries to dlopen the library.
        if !unsafe { sys::is_culib_present() } {
            return Err(Error::NoCublas);
        }
        let handle = lt::create_handle().map_err(lt_err)?;
        // SAFETY: scratch memory cuBLASLt writes before it reads.
        let workspace = unsafe { gpu.stream.alloc::<u8>(WORKSPACE_BYTES) }?;
        Ok(CublasLt { handle, workspace, plans: HashMap::new() })
    }

    fn plan(&mut self, gemm: &Gemm, p: Precision, c_elem: Elem) -> Result<&Plan> {
        let key = (gemm.shape, p, c_elem);
        if !self.plans.contains_key(&key) {
            let Shape { m, n, k } = gemm.shape;
            let (m, n, k) = (m as u64, n as u64, k as u64);
            let compute = match p {
                Precision::Tf32 => sys::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32,
                Precision::F64 => sys::cublasComputeType_t::CUBLAS_COMPUTE_64F,
                _ => sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            };
            let scale = lt_type(p.scalar());
            let input = lt_type(p.input());
            // Row-major C = A*B is column-major C^T = B^T * A^T: B first, no transposes.
            let desc = lt::create_matmul_desc(compute, scale).map_err(lt_err)?;
            let layouts = [
                lt::create_matrix_layout(input, n, k, n.max(1) as i64).map_err(lt_err)?,
                lt::create_matrix_layout(input, k, m, k.max(1) as i64).map_err(lt_err)?,
                lt::create_matrix_layout(lt_type(c_elem), n, m, n.max(1) as i64).map_err(lt_err)?,
            ];
            let pref = lt::create_matmul_pref().map_err(lt_err)?;
            // SAFETY: every descriptor was just created; the preference is destroyed below.
            let heuristic = unsafe {
                let bytes = WORKSPACE_BYTES;
                lt::set_matmul_pref_attribute(
                    pref,
                    sys::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                    &bytes as *const usize as *const c_void,
                    std::mem::size_of::<usize>(),
                )
                .map_err(lt_err)?;
                let mut found = [std::mem::zeroed::<sys::cublasLtMatmulHeuristicResult_t>(); MAX_ALGOS];
                let mut count = 0;
                let status = sys::cublasLtMatmulAlgoGetHeuristic(
                    self.handle,
                    desc,
                    layouts[0],
                    layouts[1],
                    layouts[2],
                    layouts[2],
                    pref,
                    MAX_ALGOS as i32,
                    found.as_mut_ptr(),
                    &mut count,
                )
                .result();
                let _ = lt::destroy_matmul_pref(pref);
                let no_algo =
                    |why: String| Error::Cuda(format!("cuBLASLt has no algorithm for {p} at {}: {why}", gemm.shape));
                status.map_err(|e| no_algo(format!("{e:?}")))?;
                let algos: Vec<_> = found[..count.max(0) as usize]
                    .iter()
                    .filter(|h| h.state == sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS)
                    .map(|h| h.algo)
                    .collect();
                if algos.is_empty() {
                    return Err(no_algo("the heuristic returned none".into()));
                }
                algos
            };
            self.plans.insert(key, Plan { desc, layouts, algos: heuristic });
        }
        Ok(&self.plans[&key])
    }

    /// How many algorithms the heuristic offers for this problem with C stored as `c_elem`
    /// (at most [`MAX_ALGOS`]).
    pub fn algo_count(&mut self, gemm: &Gemm, p: Precision, c_elem: Elem) -> Result<usize> {
        Ok(self.plan(gemm, p, c_elem)?.algos.len())
    }

    /// Row-major C = alpha*A*B + beta*C in `p`, with C stored as `c.elem` (the precision's
    /// output type, or its 16-bit input type), by the heuristic's first algorithm.
    pub fn matmul(
        &mut self,
        gpu: &Gpu,
        p: Precision,
        gemm: &Gemm,
        a: &DeviceMatrix,
        b: &DeviceMatrix,
        c: &mut DeviceMatrix,
    ) -> Result<()> {
        self.matmul_algo(gpu, p, gemm, a, b, c, 0)
    }

    /// The same by the heuristic's `algo`-th algorithm (0 = its first choice).
    #[allow(clippy::too_many_arguments)]
    pub fn matmul_algo(
        &mut self,
        gpu: &Gpu,
        p: Precision,
        gemm: &Gemm,
        a: &DeviceMatrix,
        b: &DeviceMatrix,
        c: &mut DeviceMatrix,
        algo: usize,
    ) -> Result<()> {
        gemm.shape.check_32bit()?;
        if a.elem != p.input() || b.elem != p.input() || !(c.elem == p.output() || c.elem == p.input()) {
            return Err(Error::BadInput(format!("buffers are not stored as {p} expects")));
        }
        let (alpha64, beta64) = (gemm.alpha as f64, gemm.beta as f64);
        let (alpha, beta): (*const c_void, *const c_void) = if p == Precision::F64 {
            (&alpha64 as *const f64 as *const _, &beta64 as *const f64 as *const _)
        } else {
            (&gemm.alpha as *const f32 as *const _, &gemm.beta as *const f32 as *const _)
        };
        let handle = self.handle;
        let w = self.workspace.device_ptr(&gpu.stream).0;
        let plan = self.plan(gemm, p, c.elem)?;
        let algo = plan.algos.get(algo).ok_or_else(|| {
            Error::BadInput(format!("cuBLASLt offers {} algorithms, not {}", plan.algos.len(), algo + 1))
        })?;
        let pc = c.ptr(gpu);
        // SAFETY: descriptors match the buffers (checked above); the workspace is ours.
        unsafe {
            lt::matmul(
                handle,
                plan.desc,
                alpha,
                beta,
                b.ptr(gpu) as *const c_void,
                plan.layouts[0],
                a.ptr(gpu) as *const c_void,
                plan.layouts[1],
                pc as *const c_void,
                plan.layouts[2],
                pc as *mut c_void,
                plan.layouts[2],
                algo,
                w as *mut c_void,
                WORKSPACE_BYTES,
                gpu.stream.cu_stream() as *mut _,
            )
            .map_err(lt_err)
        }
    }
}
/// cuBLAS through each configuration recorded for the precision ([`CublasConfig::for_precision`])
/// on a prepared problem. With `check`, each is checked once first (a 16-bit C only for a relative
/// error under 1%, what its rounding allows), and one that computes something else is added to
/// `left_out` with a note; those in `left_out` are never timed. A sweep checks once per problem
/// and times again next to every kernel.
pub fn time_cublas_configs(
    gpu: &Gpu,
    blas: &Cublas,
    lt: &mut CublasLt,
    p: &Prepared,
    plan: TimingPlan,
    check: bool,
    left_out: &mut Vec<CublasConfig>,
) -> Result<Vec<(CublasConfig, Timing)>> {
    let (ca, cb) = p.cublas_inputs();
    let mut c = p.fresh_c(gpu, 0)?;
    let mut c16 = DeviceMatrix::guarded(gpu, &p.inputs.c0, p.precision.input(), 0)?;
    let mut out = Vec::new();
    for &config in CublasConfig::for_precision(p.precision) {
        if left_out.contains(&config) {
            continue;
        }
        let mut run = |c: &mut DeviceMatrix, c16: &mut DeviceMatrix| match config {
            CublasConfig::GemmEx => blas.gemm(gpu, p.precision, &p.gemm, ca, cb, c),
            CublasConfig::Lt => lt.matmul(gpu, p.precision, &p.gemm, ca, cb, c),
            CublasConfig::Lt16BitC => lt.matmul(gpu, p.precision, &p.gemm, ca, cb, c16),
        };
        if check {
            let mut fresh = p.fresh_c(gpu, 0)?;
            let mut fresh16 = DeviceMatrix::guarded(gpu, &p.inputs.c0, p.precision.input(), 0)?;
            run(&mut fresh, &mut fresh16)?;
            sync(gpu, config.label())?;
            let got = if config == CublasConfig::Lt16BitC { fresh16.download(gpu)? } else { fresh.download(gpu)? };
            let v = p.check_result(&got);
            let ok = if config == CublasConfig::Lt16BitC { v.vs_cublas.rel_frobenius < 1e-2 } else { v.passed() };
            if !ok {
                // Left out, and said so: a reference that computes something else is no reference
                // (cuBLAS's BF16 C at 1000x1001x999 on an H100, notes/hopper.md).
                println!("note: {} left out, it computed a wrong result: {}", config.label(), v.report(config.label()));
                left_out.push(config);
                continue;
            }
        }
        out.push((config, time_runs(gpu, plan, || run(&mut c, &mut c16))?));
    }
    Ok(out)
}
