//! cuBLASLt: the other door into cuBLAS, with a workspace and the heuristic's first choice of
//! algorithm, and the option of an FP16 (or BF16) C. On Hopper it often reaches kernels that
//! `cublasGemmEx` does not, so the tensor-core steps are also measured against the fastest of
//! the cuBLAS configurations ([`CublasConfig`]), in the same process. FP8, which `cublasGemmEx`
//! lacks, has cuBLASLt alone (`lt_fp8`).

use crate::harness::device::Gpu;
use crate::harness::device::sync;
use crate::harness::matrix::DeviceMatrix;
use crate::harness::precision::{Elem, Precision};
use crate::harness::problem::{Gemm, Shape};
use crate::harness::runner::Runner;
use crate::timing::lt_fp8;
use crate::timing::runs::{Comparison, Timing, TimingPlan, time_in_turn};
use crate::verify::check::Prepared;
use crate::verify::reference::Cublas;
use crate::{Error, Result};
use cudarc::cublaslt::result as lt;
use cudarc::cublaslt::sys;
use cudarc::driver::{CudaSlice, DevicePtr};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;

/// Workspace cuBLASLt may use: NVIDIA recommends 32 MiB on Hopper.
pub const WORKSPACE_BYTES: usize = 32 << 20;

/// One way of asking cuBLAS for a GEMM, as recorded with results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CublasConfig {
    /// `cublasGemmEx`, C in the precision's output type (the ladder's reference, FP8 aside).
    GemmEx,
    /// `cublasLtMatmul` with a 32 MiB workspace and the heuristic's first algorithm, same C. For
    /// FP8: e4m3 with the precision's scales, fast accumulation off (`lt_fp8`).
    Lt,
    /// The same with C stored in the input type (FP16 or BF16): half the bytes of C.
    Lt16BitC,
}

impl CublasConfig {
    /// The configurations recorded for a precision: FP16 and BF16 get all three, TF32 and the
    /// 16-bit C precisions two, FP8 cuBLASLt alone, the others (FP32, FP64, 3xTF32's SGEMM) only
    /// `cublasGemmEx`.
    pub fn for_precision(p: Precision) -> &'static [CublasConfig] {
        match p {
            Precision::F16 | Precision::Bf16 => &[CublasConfig::GemmEx, CublasConfig::Lt, CublasConfig::Lt16BitC],
            // C is 16-bit already: both doors with it.
            Precision::Tf32 | Precision::F16C16 | Precision::Bf16C16 => &[CublasConfig::GemmEx, CublasConfig::Lt],
            Precision::Fp8 | Precision::Fp8C32 | Precision::Fp8Block | Precision::Fp8BlockC32 => &[CublasConfig::Lt],
            _ => &[CublasConfig::GemmEx],
        }
    }

    /// The configuration the ladder's "% of cuBLAS" is taken against: `cublasGemmEx`, or for FP8,
    /// which it lacks, cuBLASLt's FP8 with the same scaling.
    pub fn baseline(p: Precision) -> CublasConfig {
        if p.scaling().is_some() { CublasConfig::Lt } else { CublasConfig::GemmEx }
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
        Elem::E4m3 => sys::cudaDataType::CUDA_R_8F_E4M3,
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
            let desc = lt::create_matmul_desc(compute, scale).map_err(lt_err)?;
            let layouts = if p.scaling().is_some() {
                let w = self.workspace.device_ptr(self.workspace.stream()).0;
                // SAFETY: the descriptor was just made, with FP32 compute and scale types; the
                // workspace stands in for the scales until a call sets them.
                unsafe {
                    lt_fp8::describe(desc, p).map_err(lt_err)?;
                    lt_fp8::point_at(desc, [w, w]).map_err(lt_err)?;
                }
                lt_fp8::layouts(gemm.shape, lt_type(c_elem)).map_err(lt_err)?
            } else {
                // Row-major C = A*B is column-major C^T = B^T * A^T: B first, no transposes.
                [
                    lt::create_matrix_layout(input, n, k, n.max(1) as i64).map_err(lt_err)?,
                    lt::create_matrix_layout(input, k, m, k.max(1) as i64).map_err(lt_err)?,
                    lt::create_matrix_layout(lt_type(c_elem), n, m, n.max(1) as i64).map_err(lt_err)?,
                ]
            };
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
        if p.scaling().is_some() {
            return Err(Error::BadInput(format!("{p} needs its scales: cuBLASLt's FP8 runs through CublasInputs")));
        }
        self.launch(gpu, p, gemm, [a, b], None, c, algo)
    }

    /// [`CublasLt::matmul_algo`], and for FP8 (A M x K, B N x K, in e4m3) with `scales` in
    /// cuBLASLt's layouts ([`CublasInputs`] makes them).
    #[allow(clippy::too_many_arguments)]
    fn launch(
        &mut self,
        gpu: &Gpu,
        p: Precision,
        gemm: &Gemm,
        [a, b]: [&DeviceMatrix; 2],
        scales: Option<[u64; 2]>,
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
        // SAFETY: descriptors match the buffers (checked above); the workspace is ours; an FP8
        // plan's scales are set for this call, a plan's attributes being read when it is queued.
        unsafe {
            if let Some(s) = scales {
                lt_fp8::point_at(plan.desc, s).map_err(lt_err)?;
            }
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
/// What cuBLAS multiplies for a prepared problem, made once before it is run or timed: for
/// `cublasGemmEx` and cuBLASLt the inputs of [`Prepared::cublas_inputs`], and for FP8 (cuBLASLt
/// alone) the quantized matrices the kernel reads with their scales in cuBLASLt's layouts.
pub struct CublasInputs<'p> {
    pub prepared: &'p Prepared,
    scales: Option<[u64; 2]>,
}

impl<'p> CublasInputs<'p> {
    pub fn new(gpu: &Gpu, prepared: &'p Prepared) -> Result<CublasInputs<'p>> {
        let scales = prepared.precision.scaling().map(|_| lt_fp8::scale_addresses(gpu, prepared)).transpose()?;
        Ok(CublasInputs { prepared, scales })
    }

    /// `cublasGemmEx` into `c` (an error for FP8, which it lacks).
    pub fn gemm_ex(&self, gpu: &Gpu, blas: &Cublas, c: &mut DeviceMatrix) -> Result<()> {
        let (p, (a, b)) = (self.prepared, self.prepared.cublas_inputs());
        blas.gemm(gpu, p.precision, &p.gemm, a, b, c)
    }

    /// cuBLASLt's `algo`-th algorithm into `c` (0 = the heuristic's first choice).
    pub fn lt(&self, gpu: &Gpu, lt: &mut CublasLt, c: &mut DeviceMatrix, algo: usize) -> Result<()> {
        let p = self.prepared;
        match self.scales {
            Some(scales) => lt.launch(gpu, p.precision, &p.gemm, [&p.a, &p.b], Some(scales), c, algo),
            None => {
                let (a, b) = p.cublas_inputs();
                lt.matmul_algo(gpu, p.precision, &p.gemm, a, b, c, algo)
            }
        }
    }
}

/// The configurations recorded for `p`'s precision ([`CublasConfig::for_precision`]) that are
/// to be timed: those not in `left_out`. With `check`, each is run once first and checked (a
/// 16-bit C only for a relative error under 1%, what its rounding allows), and one that computes
/// something else is added to `left_out` with a note. A sweep checks once per problem.
pub fn usable_configs(
    gpu: &Gpu,
    blas: &Cublas,
    lt: &mut CublasLt,
    p: &Prepared,
    check: bool,
    left_out: &mut Vec<CublasConfig>,
) -> Result<Vec<CublasConfig>> {
    let mut usable = Vec::new();
    let inputs = if check { Some(CublasInputs::new(gpu, p)?) } else { None };
    for &config in CublasConfig::for_precision(p.precision) {
        if left_out.contains(&config) {
            continue;
        }
        if let Some(inputs) = &inputs {
            let mut c = output_for(gpu, p, config)?;
            run_config(gpu, blas, lt, inputs, config, &mut c)?;
            sync(gpu, config.label())?;
            let v = p.check_result(&c.download(gpu)?);
            let ok = if config == CublasConfig::Lt16BitC { v.vs_cublas.rel_frobenius < 1e-2 } else { v.passed() };
            if !ok {
                // Left out, and said so: a reference that computes something else is no reference
                // (cuBLAS's BF16 C at 1000x1001x999 on an H100, notes/step12.md).
                println!("note: {} left out, it computed a wrong result: {}", config.label(), v.report(config.label()));
                left_out.push(config);
                continue;
            }
        }
        usable.push(config);
    }
    Ok(usable)
}

/// A fresh C for `config`: the precision's output type, or its 16-bit input type.
fn output_for(gpu: &Gpu, p: &Prepared, config: CublasConfig) -> Result<DeviceMatrix> {
    match config {
        CublasConfig::Lt16BitC => DeviceMatrix::guarded(gpu, &p.inputs.c0, p.precision.input(), 0),
        _ => p.fresh_c(gpu, 0),
    }
}

fn run_config(
    gpu: &Gpu,
    blas: &Cublas,
    lt: &mut CublasLt,
    inputs: &CublasInputs,
    config: CublasConfig,
    c: &mut DeviceMatrix,
) -> Result<()> {
    match config {
        CublasConfig::GemmEx => inputs.gemm_ex(gpu, blas, c),
        CublasConfig::Lt | CublasConfig::Lt16BitC => inputs.lt(gpu, lt, c, 0),
    }
}

/// Configurations with their timings.
pub type Configs = Vec<(CublasConfig, Timing)>;

/// `kernel` (when given) and each of `configs` on a prepared problem, timed in turn one run at a
/// time ([`time_in_turn`]), each writing its own C.
pub fn time_configs(
    gpu: &Gpu,
    blas: &Cublas,
    lt: &mut CublasLt,
    p: &Prepared,
    plan: TimingPlan,
    configs: &[CublasConfig],
    kernel: Option<&mut dyn FnMut() -> Result<()>>,
) -> Result<(Option<Timing>, Configs)> {
    let (lt, inputs) = (RefCell::new(lt), CublasInputs::new(gpu, p)?);
    let mut runs: Vec<Box<dyn FnMut() -> Result<()> + '_>> = Vec::new();
    for &config in configs {
        let (mut c, lt, inputs) = (output_for(gpu, p, config)?, &lt, &inputs);
        runs.push(Box::new(move || run_config(gpu, blas, &mut lt.borrow_mut(), inputs, config, &mut c)));
    }
    let given = kernel.is_some();
    let mut contenders: Vec<&mut dyn FnMut() -> Result<()>> = Vec::new();
    if let Some(k) = kernel {
        contenders.push(k);
    }
    for r in runs.iter_mut() {
        contenders.push(&mut **r);
    }
    let mut times = time_in_turn(gpu, plan, plan.method, &mut contenders)?.into_iter();
    let kernel = if given { times.next() } else { None };
    Ok((kernel, configs.iter().copied().zip(times).collect()))
}

/// The kernel of `runner` against cuBLAS on a prepared problem, timed in turn with `configs`: the
/// comparison against the precision's [`CublasConfig::baseline`] (the ladder's "% of cuBLAS",
/// timed whether or not it is among `configs`), and each of `configs`. One timing of each call,
/// so the step binary's table and its line of configurations show the same baseline.
pub fn compare_with_configs(
    runner: &mut Runner,
    blas: &Cublas,
    lt: &mut CublasLt,
    p: &Prepared,
    plan: TimingPlan,
    configs: &[CublasConfig],
) -> Result<(Comparison, Configs)> {
    let gpu = runner.gpu.clone();
    let baseline = CublasConfig::baseline(p.precision);
    let mut all = configs.to_vec();
    if !all.contains(&baseline) {
        all.insert(0, baseline);
    }
    let mut c = p.fresh_c(&gpu, 0)?;
    let mut kernel = || runner.run(&p.gemm, &p.a, &p.b, &mut c);
    let (kernel, timed) = time_configs(&gpu, blas, lt, p, plan, &all, Some(&mut kernel))?;
    let kernel = kernel.expect("the kernel is the first contender");
    let cublas = timed.iter().find(|(c, _)| *c == baseline).expect("the baseline is among them").1;
    let timed = timed.into_iter().filter(|(c, _)| configs.contains(c)).collect();
    Ok((Comparison { gemm: p.gemm, kernel, cublas }, timed))
}

/// The kernel of `runner` against cuBLAS on a prepared problem, as the step binary and the sweep
/// time it ([`compare_with_configs`]): with the usable configurations of a tensor-core precision
/// ([`usable_configs`]; `check` and `left_out` as there; FP8's cuBLASLt among them, checked
/// as they are), or `cublasGemmEx` alone where the precision has no others.
pub fn compare(
    runner: &mut Runner,
    blas: &Cublas,
    lt: &mut CublasLt,
    p: &Prepared,
    plan: TimingPlan,
    check: bool,
    left_out: &mut Vec<CublasConfig>,
) -> Result<(Comparison, Configs)> {
    let configs = if CublasConfig::for_precision(p.precision) != [CublasConfig::GemmEx] {
        let gpu = runner.gpu.clone();
        usable_configs(&gpu, blas, lt, p, check, left_out)?
    } else {
        Vec::new()
    };
    compare_with_configs(runner, blas, lt, p, plan, &configs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp8_has_cublaslt_alone_as_its_baseline() {
        for p in Precision::ALL {
            let (configs, baseline) = (CublasConfig::for_precision(p), CublasConfig::baseline(p));
            if p.scaling().is_some() {
                assert_eq!((configs, baseline), (&[CublasConfig::Lt][..], CublasConfig::Lt), "{p}");
            } else {
                assert_eq!(baseline, CublasConfig::GemmEx, "{p}");
                assert!(configs.contains(&CublasConfig::GemmEx), "{p}");
            }
        }
    }
}
