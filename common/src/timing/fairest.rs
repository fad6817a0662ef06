//! The fairest reference: every way a user can ask cuBLAS for one GEMM on this GPU.
//! `cublasGemmEx` and each of cuBLASLt's top heuristic algorithms (with a workspace), with C in
//! FP32 and, for FP16 and BF16, in the inputs' 16-bit type (what `torch.matmul` returns); for FP8
//! cuBLASLt's alone, C in BF16 and in FP32 (`cublasGemmEx` has no FP8). Each is
//! checked once and then timed both ways ([`Method`]), one at a time behind the gate (how the
//! ladder times) and back to back (how criterion and PyTorch's benchmarks time), in turns with the
//! rungs they are compared with, each turn after its own settling runs, so that the GPU's clock,
//! which drifts over seconds of tensor-core work, treats them alike. `cargo xtask references`
//! records them beside the top rungs and PyTorch's `torch.matmul`, and then times the fastest
//! again with the rung, with [`time_in_turn`]: picked and judged on the same samples, the largest
//! of several noisy medians would be biased upward.

use crate::harness::device::{Gpu, sync};
use crate::harness::matrix::DeviceMatrix;
use crate::timing::lt::{CublasConfig, CublasInputs, CublasLt};
use crate::timing::runs::{Method, Timing, TimingPlan, Windows, time_in_turn, time_in_turn_windows};
use crate::verify::check::Prepared;
use crate::verify::reference::Cublas;
use crate::{Error, Result};
use std::cell::RefCell;

/// Which door into cuBLAS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Door {
    GemmEx,
    /// The heuristic's `n`-th algorithm (0 = its first choice).
    Lt(usize),
}

impl Door {
    pub fn label(self) -> String {
        match self {
            Door::GemmEx => "cublasGemmEx".into(),
            Door::Lt(i) => format!("cublasLt algorithm {}", i + 1),
        }
    }
}

/// One cuBLAS configuration on a prepared problem, whose precision says how C is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CublasCall {
    pub door: Door,
}

impl CublasCall {
    /// C = alpha*A*B + beta*C on a prepared problem's cuBLAS inputs into `c` (stored as its
    /// precision says).
    pub fn run(
        &self,
        gpu: &Gpu,
        blas: &Cublas,
        lt: &mut CublasLt,
        x: &CublasInputs,
        c: &mut DeviceMatrix,
    ) -> Result<()> {
        match self.door {
            Door::GemmEx => x.gemm_ex(gpu, blas, c),
            Door::Lt(i) => x.lt(gpu, lt, c, i),
        }
    }
}

/// The configurations that computed the product, each with its error against float64, and a line
/// for each that did not.
pub type Checked = (Vec<(CublasCall, f64)>, Vec<String>);

/// How many of cuBLASLt's heuristic algorithms the references time by default, and the tuners
/// with them: the fastest of these and `cublasGemmEx` is the cuBLAS the targets are judged by.
pub const ALGOS: usize = 4;
const _: () = assert!(ALGOS <= crate::timing::lt::MAX_ALGOS, "the heuristic is asked for MAX_ALGOS");

/// The configurations of `p`'s precision and C type, `GemmEx` (FP8 aside) and cuBLASLt's first `algos`, each
/// run once and checked against the CPU rows of `p` (as a kernel is checked there). Returns
/// those that computed the product, each with its error against float64 on the FP32 inputs,
/// and a line for each that did not.
pub fn checked_calls(gpu: &Gpu, blas: &Cublas, lt: &mut CublasLt, p: &Prepared, algos: usize) -> Result<Checked> {
    let n = lt.algo_count(&p.gemm, p.precision, p.precision.output())?.min(algos);
    let gemm_ex = CublasConfig::for_precision(p.precision).contains(&CublasConfig::GemmEx);
    let (inputs, mut ok, mut wrong) = (CublasInputs::new(gpu, p)?, Vec::new(), Vec::new());
    for door in gemm_ex.then_some(Door::GemmEx).into_iter().chain((0..n).map(Door::Lt)) {
        let call = CublasCall { door };
        let mut c = p.fresh_c(gpu, 0)?;
        call.run(gpu, blas, lt, &inputs, &mut c)?;
        sync(gpu, "a cuBLAS configuration")?;
        let (rows, exact) = p.check_rows(&c.download(gpu)?);
        if rows.passed() {
            ok.push((call, exact.as_ref().unwrap_or(&rows).rel_frobenius));
        } else {
            wrong.push(format!("{} ({}): {rows}", door.label(), p.precision));
        }
    }
    if ok.is_empty() {
        return Err(Error::Cuda(format!(
            "no cuBLAS configuration computed {} correctly: {}",
            p.precision,
            wrong.join("; ")
        )));
    }
    Ok((ok, wrong))
}

/// The fastest of `calls` (from [`checked_calls`] on `p`), each on a C of its own, timed one at a
/// time in turns as the ladder times: its label and its timing; `None` when `calls` is empty.
pub fn fastest_call(
    gpu: &Gpu,
    blas: &Cublas,
    lt: &mut CublasLt,
    p: &Prepared,
    plan: TimingPlan,
    calls: &[(CublasCall, f64)],
) -> Result<Option<(String, Timing)>> {
    let (lt, inputs) = (RefCell::new(lt), CublasInputs::new(gpu, p)?);
    let mut runs: Vec<Box<dyn FnMut() -> Result<()> + '_>> = Vec::new();
    for &(call, _) in calls {
        let (mut c, lt, inputs) = (p.fresh_c(gpu, 0)?, &lt, &inputs);
        runs.push(Box::new(move || call.run(gpu, blas, &mut lt.borrow_mut(), inputs, &mut c)));
    }
    let mut contenders: Vec<&mut dyn FnMut() -> Result<()>> = runs.iter_mut().map(|r| &mut **r as _).collect();
    let times = time_in_turn(gpu, plan, plan.method, &mut contenders)?;
    let fastest = calls.iter().zip(times).min_by(|(_, a), (_, b)| a.median_ms.total_cmp(&b.median_ms));
    Ok(fastest.map(|((call, _), t)| (call.door.label(), t)))
}

/// What [`both_ways`] returns: [one at a time, back to back] per contender, and each method's
/// windows of samples per contender.
pub type BothWays = (Vec<[Timing; 2]>, [Vec<Windows>; 2]);

/// Times every contender (a closure that queues one run of it) with both methods, each method in
/// turns ([`time_in_turn_windows`]). Returns [one at a time, back to back] per contender, and each
/// method's windows of samples per contender, for the clock each met.
pub fn both_ways(gpu: &Gpu, plan: TimingPlan, contenders: &mut [&mut dyn FnMut() -> Result<()>]) -> Result<BothWays> {
    let [one, batch] = Method::BOTH.map(|m| time_in_turn_windows(gpu, plan, m, contenders));
    let ((one, one_windows), (batch, batch_windows)) = (one?, batch?);
    Ok((one.into_iter().zip(batch).map(|(a, b)| [a, b]).collect(), [one_windows, batch_windows]))
}
