//! The fairest reference: every way a user can ask cuBLAS for one GEMM on this GPU, each
//! checked once and then timed both ways. `cublasGemmEx` with the precision's C and, for FP16 and
//! BF16, a 16-bit C; `cublasLtMatmul` with a workspace, each of the heuristic's top algorithms,
//! with the same C types. One call at a time behind the gate ([`time_runs`]) is how the ladder
//! times; back to back ([`time_back_to_back`]) is how criterion and PyTorch's benchmarks time.
//! `cargo xtask references` records them beside the top rung and PyTorch's `torch.matmul`.

use crate::check::Prepared;
use crate::device::{Gpu, sync};
use crate::lt::CublasLt;
use crate::matrix::DeviceMatrix;
use crate::precision::{Elem, Precision};
use crate::reference::Cublas;
use crate::timing::{Timing, TimingPlan, time_back_to_back, time_runs};
use crate::{Error, Result};

/// The two timing methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// One run between two events, queued behind the gate, the GPU idle before and after.
    OneAtATime,
    /// [`crate::timing::BATCH`] runs between two events, queued behind the gate.
    BackToBack,
}

impl Method {
    pub const BOTH: [Method; 2] = [Method::OneAtATime, Method::BackToBack];

    pub fn label(self) -> &'static str {
        match self {
            Method::OneAtATime => "one at a time",
            Method::BackToBack => "back to back",
        }
    }

    /// Times `launch` with this method.
    pub fn time(self, gpu: &Gpu, plan: TimingPlan, launch: impl FnMut() -> Result<()>) -> Result<Timing> {
        match self {
            Method::OneAtATime => time_runs(gpu, plan, launch),
            Method::BackToBack => time_back_to_back(gpu, plan, launch),
        }
    }
}

/// Which door into cuBLAS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    GemmEx,
    /// The heuristic's `n`-th algorithm (0 = its first choice).
    Lt(usize),
}

impl Api {
    pub fn label(self) -> String {
        match self {
            Api::GemmEx => "cublasGemmEx".into(),
            Api::Lt(i) => format!("cublasLt algorithm {}", i + 1),
        }
    }
}

/// The C types a user can ask cuBLAS for in precision `p`: its own output, and for FP16 and BF16
/// also the 16-bit input type (what `torch.matmul` returns).
pub fn c_types(p: Precision) -> Vec<Elem> {
    match p {
        Precision::F16 | Precision::Bf16 => vec![p.output(), p.input()],
        _ => vec![p.output()],
    }
}

/// One cuBLAS configuration, timed both ways.
#[derive(Clone, Debug)]
pub struct Timed {
    pub api: Api,
    pub c: Elem,
    pub one_at_a_time: Timing,
    pub back_to_back: Timing,
    /// Relative Frobenius error against float64 on the FP32 inputs (the FP32 problem).
    pub rel_err_vs_exact: f64,
}

impl Timed {
    pub fn timing(&self, m: Method) -> &Timing {
        match m {
            Method::OneAtATime => &self.one_at_a_time,
            Method::BackToBack => &self.back_to_back,
        }
    }
}

/// Every configuration of the precision of `p` (`algos` of cuBLASLt's at most), each checked once
/// on the prepared problem (a 16-bit C to a relative error under 1%, what its rounding allows;
/// otherwise as a kernel is checked) and timed both ways. A configuration that computes something
/// else is left out and named in the second list.
pub fn time_all(
    gpu: &Gpu,
    blas: &Cublas,
    lt: &mut CublasLt,
    p: &Prepared,
    plan: TimingPlan,
    algos: usize,
) -> Result<(Vec<Timed>, Vec<String>)> {
    let (ca, cb) = p.cublas_inputs();
    let prec = p.precision;
    let (mut timed, mut wrong) = (Vec::new(), Vec::new());
    for c_elem in c_types(prec) {
        let n = lt.algo_count(&p.gemm, prec, c_elem)?.min(algos);
        let apis = std::iter::once(Api::GemmEx).chain((0..n).map(Api::Lt));
        for api in apis {
            let mut run = |c: &mut DeviceMatrix| match api {
                Api::GemmEx => blas.gemm(gpu, prec, &p.gemm, ca, cb, c),
                Api::Lt(i) => lt.matmul_algo(gpu, prec, &p.gemm, ca, cb, c, i),
            };
            let mut c = DeviceMatrix::guarded(gpu, &p.inputs.c0, c_elem, 0)?;
            run(&mut c)?;
            sync(gpu, "a cuBLAS configuration")?;
            let v = p.check_result(&c.download(gpu)?);
            let ok = if c_elem == prec.output() { v.passed() } else { v.vs_cublas.rel_frobenius < 1e-2 };
            let name = format!("{} with {c_elem:?} C", api.label());
            if !ok {
                wrong.push(format!("{name}: {}", v.report(&name)));
                continue;
            }
            let one_at_a_time = Method::OneAtATime.time(gpu, plan, || run(&mut c))?;
            let back_to_back = Method::BackToBack.time(gpu, plan, || run(&mut c))?;
            let rel_err_vs_exact = v.vs_exact.as_ref().map_or(v.vs_cpu.rel_frobenius, |x| x.rel_frobenius);
            timed.push(Timed { api, c: c_elem, one_at_a_time, back_to_back, rel_err_vs_exact });
        }
    }
    if timed.is_empty() {
        return Err(Error::Cuda(format!("no cuBLAS configuration computed {prec} correctly: {}", wrong.join("; "))));
    }
    Ok((timed, wrong))
}

/// The fastest configuration with C stored as `c` in method `m`.
pub fn fastest(timed: &[Timed], c: Elem, m: Method) -> Option<&Timed> {
    timed.iter().filter(|t| t.c == c).min_by(|a, b| a.timing(m).median_ms.total_cmp(&b.timing(m).median_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_bit_precisions_offer_a_sixteen_bit_c() {
        assert_eq!(c_types(Precision::F16), vec![Elem::F32, Elem::F16]);
        assert_eq!(c_types(Precision::Bf16), vec![Elem::F32, Elem::Bf16]);
        assert_eq!(c_types(Precision::Tf32), vec![Elem::F32]);
        assert_eq!(c_types(Precision::Tf32x3), vec![Elem::F32]);
    }

    #[test]
    fn fastest_picks_by_method_and_c_type() {
        let t = |ms: f64| Timing::from_samples(vec![ms]);
        let rows = vec![
            Timed {
                api: Api::GemmEx,
                c: Elem::F32,
                one_at_a_time: t(2.0),
                back_to_back: t(1.5),
                rel_err_vs_exact: 0.0,
            },
            Timed { api: Api::Lt(0), c: Elem::F32, one_at_a_time: t(1.8), back_to_back: t(1.6), rel_err_vs_exact: 0.0 },
            Timed { api: Api::Lt(1), c: Elem::F16, one_at_a_time: t(1.0), back_to_back: t(0.9), rel_err_vs_exact: 0.0 },
        ];
        assert_eq!(fastest(&rows, Elem::F32, Method::OneAtATime).unwrap().api, Api::Lt(0));
        assert_eq!(fastest(&rows, Elem::F32, Method::BackToBack).unwrap().api, Api::GemmEx);
        assert_eq!(fastest(&rows, Elem::F16, Method::BackToBack).unwrap().api, Api::Lt(1));
        assert!(fastest(&rows, Elem::Bf16, Method::BackToBack).is_none());
    }
}
