//! `cargo xtask references [--torch FILE] [--shapes ...] [--precisions ...]`: the top rung of
//! the ladder against every cuBLAS configuration a user can call ([`common::timing::fairest`])
//! and, when given the file `scripts/torch-matmul.py` wrote on the same GPU, PyTorch's
//! `torch.matmul`; each timed one at a time and back to back. Writes
//! `results/references/<gpu>.json`, which `cargo xtask book` turns into the book's table.
//! `--kernel` and `--define` time an experiment in the top rung's place, into the file `--out`
//! names.
//!
//! Two timings judge the rung. The first times every configuration (the table of all of them);
//! the fastest of each C type and method is picked there. The second, the verdict timing, times
//! only the rungs and the picked configurations again, on fresh samples, and gives the ratio that
//! meets the target or not. Several configurations often run the same kernel, and each median
//! carries a percent or two of noise, so the largest of several medians is biased upward (the
//! winner's curse): judged on the timing that picked it, cuBLAS would gain its noise. A pick's
//! second timing is independent of the choice, so it carries no such bias.
//!
//! Its parts: the file and the ladder's top rungs here; `timing.rs`, the run; `merge.rs`, a run's
//! figures added to the file it finishes (`--merge`); `render.rs`, the book's markdown of a file.

mod decode;
pub(crate) mod energy;
mod merge;
mod render;
mod timing;

pub use decode::decode;
pub use energy::table as energy_table;
pub use render::{every, targets, verdicts};
pub use timing::{Args, run};

use crate::results::read_json;
use common::harness::precision::Elem;
use common::timing::clocks::Clocks;
use common::{Precision, Step};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// How the files written before `timing` took their figures.
fn rounds() -> String {
    "median of three interleaved rounds".into()
}

/// The precision families timed by default, in the order the file lists them.
const PRECISIONS: [Precision; 4] = [Precision::F16, Precision::Bf16, Precision::Tf32, Precision::Tf32x3];

/// The version of the file's schema.
pub const SCHEMA: u32 = 1;

/// One timed configuration at one shape.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Row {
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub precision: String,
    /// The step crate, the cuBLAS configuration, or `torch.matmul`.
    pub who: String,
    /// How C is stored: fp32, fp16 or bf16.
    pub c: String,
    /// "one at a time" or "back to back".
    pub method: String,
    pub ms: f64,
    pub tflops: f64,
    /// Relative Frobenius error against float64 on the FP32 inputs.
    pub rel_err_vs_exact: Option<f64>,
    /// A top rung's compile-time defines at this shape (files written before it: none), so that
    /// a change of the rule that picks them shows (`results::launches`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub defines: Vec<String>,
}

/// What `scripts/torch-matmul.py` writes.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Torch {
    pub tool: String,
    pub date: String,
    pub gpu: String,
    pub torch: String,
    pub cuda: String,
    pub rows: Vec<Row>,
}

/// The file this task writes.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct References {
    pub schema: u32,
    pub tool: String,
    pub date: String,
    pub gpu: String,
    pub cublas_version: i64,
    /// How each figure was taken (files written before this field: three interleaved rounds of
    /// each contender's own block of samples).
    #[serde(default = "rounds")]
    pub timing: String,
    /// The top rung's kernel hash per precision when it was timed.
    pub kernel_hashes: std::collections::BTreeMap<String, String>,
    pub torch: Option<Torch>,
    /// Every contender in the first timing.
    pub rows: Vec<Row>,
    /// The verdict timing: the rung and the configuration the first timing found fastest, per C
    /// type and method, timed again (files written before it: none, and the first timing judges).
    #[serde(default)]
    pub verdict: Vec<Row>,
    /// cuBLAS configurations left out because they computed something else.
    pub wrong: Vec<String>,
    /// Rungs whose recorded hash `cargo xtask rehash` moved to a source with the same machine code.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rehashed: Vec<crate::results::Rehash>,
    /// The GPU's clock over each shape and precision's timings (files written before it: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clocks: Vec<Watched>,
    /// Each verdict contender's energy per GEMM (files written before it: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub energy: Vec<energy::Spent>,
    /// How often the GPU's energy counter moved while the run began, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_step_ms: Option<f64>,
}

/// The GPU's clock while one shape and precision were timed (both timings).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Watched {
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub precision: String,
    pub clocks: Clocks,
}

/// A precision by its label (`fp16`, `fp8-block`, ...), for the command line and the files' rows.
fn parse_precision(s: &str) -> Result<Precision, String> {
    Precision::parse(s).ok_or_else(|| {
        let all: Vec<&str> = Precision::ALL.iter().map(|p| p.label()).collect();
        format!("`{s}` is not a precision ({})", all.join(", "))
    })
}

fn elem_label(e: Elem) -> &'static str {
    match e {
        Elem::F16 => "fp16",
        Elem::Bf16 => "bf16",
        Elem::F32 => "fp32",
        Elem::F64 => "fp64",
        Elem::E4m3 => "e4m3",
    }
}

/// The top rung in precision `p`: the last step of the ladder that computes in it.
pub fn top_rung(p: Precision) -> Option<&'static Step> {
    steps::ALL.iter().rev().find(|s| s.precision == p)
}

/// The target of the top rung in `p` against the fastest reference with the same C, as a ratio
/// (3xTF32: against cuBLAS SGEMM; FP8: against cuBLASLt's FP8 with the same scaling).
pub fn target(p: Precision) -> Option<f64> {
    match p.arithmetic() {
        Precision::F16 | Precision::Bf16 | Precision::Fp8 | Precision::Fp8Block => Some(1.0),
        Precision::Tf32 => Some(0.95),
        Precision::Tf32x3 => Some(2.2),
        _ => None,
    }
}

/// The precisions a family is measured in: its own, and the same product with the other C type
/// (FP16 and BF16: a 16-bit C; FP8, whose own C is BF16: an FP32 C).
fn with_c_types(p: Precision) -> Vec<Precision> {
    match p {
        Precision::F16 => vec![p, Precision::F16C16],
        Precision::Bf16 => vec![p, Precision::Bf16C16],
        Precision::Fp8 => vec![p, Precision::Fp8C32],
        Precision::Fp8Block => vec![p, Precision::Fp8BlockC32],
        _ => vec![p],
    }
}

/// Writes a references file as this task does: pretty JSON, a newline at the end.
pub fn write(path: &Path, refs: &References) -> Result<(), String> {
    let text = serde_json::to_string_pretty(refs).map_err(|e| e.to_string())? + "\n";
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// `refs` without its rows of the shapes `rehash --drop-changed` dropped for the top rung `id`:
/// the pairs of those shapes in the rung's precision, whose figures timed other machine code.
pub fn drop_shapes(refs: &References, id: &str, shapes: &[String]) -> Result<References, String> {
    let precision = steps::by_id(id).ok_or_else(|| format!("{id}: not a step of the registry"))?.precision;
    let pairs = shapes
        .iter()
        .map(|s| common::Shape::parse(s).map(|s| (s, precision.arithmetic())).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, String>>()?;
    merge::voided(refs, &pairs)
}

/// The paths of the recorded references files, sorted by name.
pub fn files(root: &Path) -> Vec<std::path::PathBuf> {
    crate::results::json_files(&root.join("results/references")).unwrap_or_default()
}

/// Every recorded references file (`results/references/<gpu>.json`), by GPU.
pub fn load_all(root: &Path) -> Result<std::collections::BTreeMap<String, References>, String> {
    let mut out = std::collections::BTreeMap::new();
    for path in files(root) {
        out.insert(path.file_stem().unwrap_or_default().to_string_lossy().into_owned(), read_json(&path)?);
    }
    Ok(out)
}

/// The file `scripts/torch-matmul.py` wrote (`--torch`).
fn load_torch(path: &Path) -> Result<Torch, String> {
    read_json(path).map_err(|e| format!("{e} (not a file of scripts/torch-matmul.py)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn row(who: &str, c: &str, method: &str, tflops: f64) -> Row {
        Row {
            m: 64,
            n: 64,
            k: 64,
            precision: "fp16".into(),
            who: who.into(),
            c: c.into(),
            method: method.into(),
            ms: 1.0,
            tflops,
            rel_err_vs_exact: Some(1e-3),
            defines: Vec::new(),
        }
    }

    /// Fails, showing the text, unless `md` holds `line`.
    pub(super) fn has_line(md: &str, line: &str) {
        assert!(md.contains(line), "no line\n{line}\nin\n{md}");
    }

    /// A file of `rows` from a GPU called "GPU", without torch's figures.
    pub(super) fn file(rows: Vec<Row>) -> References {
        References {
            schema: SCHEMA,
            tool: "test".into(),
            date: "2026-01-01".into(),
            gpu: "GPU".into(),
            cublas_version: 1,
            timing: "test".into(),
            kernel_hashes: Default::default(),
            torch: None,
            rows,
            verdict: vec![],
            wrong: vec![],
            rehashed: vec![],
            clocks: vec![],
            energy: vec![],
            energy_step_ms: None,
        }
    }

    #[test]
    fn a_file_from_before_the_verdict_timing_reads() {
        let r = file(vec![row("cublasGemmEx", "fp32", "one at a time", 1.0)]);
        let mut json: serde_json::Value = serde_json::to_value(&r).unwrap();
        json.as_object_mut().unwrap().remove("verdict");
        let back: References = serde_json::from_value(json.clone()).unwrap();
        assert_eq!((back.rows, back.verdict), (r.rows, vec![]));
        // Unknown fields are still refused.
        json.as_object_mut().unwrap().insert("verdicts".into(), serde_json::Value::Array(vec![]));
        assert!(serde_json::from_value::<References>(json).is_err());
    }

    #[test]
    fn the_top_rungs() {
        assert!(top_rung(Precision::F16).unwrap().name.starts_with("step15"));
        assert!(top_rung(Precision::F16C16).unwrap().name.starts_with("step15"));
        assert!(top_rung(Precision::Tf32x3).unwrap().name.starts_with("step13"));
        assert!(top_rung(Precision::F32).unwrap().name.starts_with("step06"));
        assert_eq!(target(Precision::Tf32x3), Some(2.2));
    }

    #[test]
    fn fp8_is_timed_with_both_c_types_against_cublaslt() {
        assert_eq!(with_c_types(Precision::Fp8), [Precision::Fp8, Precision::Fp8C32]);
        assert_eq!(with_c_types(Precision::Fp8Block), [Precision::Fp8Block, Precision::Fp8BlockC32]);
        for p in [Precision::Fp8, Precision::Fp8C32, Precision::Fp8Block, Precision::Fp8BlockC32] {
            assert_eq!(target(p), Some(1.0), "{p}");
        }
        assert_eq!(elem_label(Precision::Fp8.output()), "bf16");
        assert_eq!(elem_label(Precision::Fp8C32.output()), "fp32");
    }
}
