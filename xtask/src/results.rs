//! The recorded results, `results/<gpu>.json`: one schema, written by the sweep and read by the
//! book, its charts and its diagrams. A missing or misspelt field is an error that names the
//! file and the field, never a NaN in the book.

use common::Precision;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The version of the schema below; a file of another version is refused.
pub const SCHEMA: u32 = 1;

/// The shape the ladder table and the bar chart use.
pub const HEADLINE: (u64, u64, u64) = (4096, 4096, 4096);

/// One recorded sweep on one GPU.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    pub schema: u32,
    pub tool: String,
    pub date: String,
    pub gpu: GpuRecord,
    pub nvrtc_version: String,
    pub cublas_version: i64,
    pub cublas_math: String,
    /// Each step's kernel source hash (`KernelSource::hash`) when it was swept.
    pub kernel_hashes: BTreeMap<String, String>,
    /// Steps whose source changed after their sweep while their machine code did not (`cargo
    /// xtask rehash`), oldest first: their hash above is the last record's `to`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rehashed: Vec<Rehash>,
    pub runs: Vec<Run>,
    /// Runs of partial rungs (`cargo xtask sweep --partials`): a rung with one of its ideas left
    /// out ([`common::harness::step::Partial`]), so that each idea's gain compares runs of one
    /// sweep. Each has `partial` set and `step` the id of the rung it varies (whose kernel hash it
    /// has); kept apart from `runs`, where a step's figures are the whole rung's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partials: Vec<Run>,
}

/// A step's recorded hash moved to a source that compiles to the same CUBINs.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rehash {
    pub step: String,
    /// The hash the step was swept with, and the commit whose sources have it.
    pub from: String,
    pub commit: String,
    pub to: String,
    /// CUBINs compared, every section but the debug line tables byte for byte (every variant the
    /// step launches, every target).
    pub cubins: usize,
    pub date: String,
    /// Shapes (MxNxK) whose figures were dropped, where the machine code changed at them alone
    /// (`rehash --drop-changed`): the hash stands for the kept shapes' figures, not for these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<String>,
}

/// The GPU a sweep ran on.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuRecord {
    pub name: String,
    pub compute_capability: String,
    pub driver_cuda_version: String,
    pub sms: u32,
    pub sm_clock_khz: u32,
    pub l2_bytes: u64,
    pub peak_fp32_gflops: f64,
    pub peak_dram_gbs: f64,
    pub measured_copy_gbs: f64,
}

/// One step at one shape: verified, then timed against cuBLAS in the same run.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Run {
    /// The date of the sweep that measured this run, when a later sweep of other steps was merged
    /// into the file (`cargo xtask sweep --merge`); none: the file's date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    pub step: String,
    /// A partial rung's name (`no-multicast`, in `Sweep::partials`); none in `runs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<String>,
    pub precision: String,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub alpha: f64,
    pub beta: f64,
    pub seed: u64,
    pub passed: bool,
    pub rel_err_vs_cpu: f64,
    pub rel_err_vs_cublas: f64,
    /// Against the exact product of the unrounded FP32 inputs (the FP32 problem).
    pub rel_err_vs_exact: f64,
    pub worst_elem_ratio_vs_cpu: f64,
    pub time_ms: f64,
    pub min_ms: f64,
    pub reps: u64,
    pub gflops: f64,
    pub cublas_ms: f64,
    pub cublas_gflops: f64,
    pub pct_of_cublas: f64,
    /// GFLOP/s of each cuBLAS configuration timed next to the kernel (tensor-core precisions).
    pub cublas_configs: BTreeMap<String, f64>,
    pub fastest_cublas: Option<String>,
    pub fastest_cublas_gflops: Option<f64>,
    pub pct_of_fastest_cublas: Option<f64>,
    pub grid: [u32; 3],
    pub threads_per_block: u32,
    pub dynamic_smem_bytes: u32,
    pub static_smem_bytes: u32,
    pub registers: u32,
    pub spill_bytes: u32,
    pub local_bytes: u32,
    pub defines: Vec<String>,
    /// The GPU's clock while the kernel and cuBLAS were timed (runs swept before it: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocks: Option<common::timing::clocks::Clocks>,
}

impl Run {
    pub fn shape(&self) -> (u64, u64, u64) {
        (self.m, self.n, self.k)
    }
}

/// One results file: its name (the GPU's slug) and its sweep.
pub struct Results {
    pub slug: String,
    pub sweep: Sweep,
}

impl Results {
    pub fn runs(&self) -> impl Iterator<Item = &Run> {
        self.sweep.runs.iter()
    }

    pub fn run(&self, step: &str, shape: (u64, u64, u64)) -> Option<&Run> {
        self.runs().find(|r| r.step == step && r.shape() == shape)
    }

    /// The FP32 steps (the SGEMM ladder) in registry order, as recorded.
    pub fn steps(&self) -> Vec<&'static str> {
        steps::ALL
            .iter()
            .filter(|s| s.precision == Precision::F32)
            .map(|s| s.name)
            .filter(|n| self.runs().any(|r| r.step == *n))
            .collect()
    }

    /// The tensor-core steps, each precision, as recorded: (id, precision).
    pub fn tensor_steps(&self) -> Vec<(String, Precision)> {
        steps::ALL
            .iter()
            .filter(|s| s.precision != Precision::F32)
            .map(|s| (s.id(), s.precision))
            .filter(|(id, _)| self.runs().any(|r| r.step == id.as_str()))
            .collect()
    }

    /// The cuBLAS SGEMM run at `shape` (every FP32 step's record carries it; the first one's).
    pub fn sgemm_run(&self, shape: (u64, u64, u64)) -> Option<&Run> {
        self.run(self.steps().first().copied().unwrap_or(""), shape)
    }

    /// When the runs of the steps `keep` selects were measured: one date, or the dates of the sweeps
    /// merged into the file ("2026-11-23 and 2026-11-25", "2026-11-23, 2026-11-25 and 2026-11-26").
    pub fn dates(&self, keep: impl Fn(&str) -> bool) -> String {
        let mut dates: Vec<&str> =
            self.runs().filter(|r| keep(&r.step)).map(|r| r.date.as_deref().unwrap_or(&self.sweep.date)).collect();
        dates.sort();
        dates.dedup();
        if dates.is_empty() { self.sweep.date.clone() } else { and_list(&dates) }
    }

    /// Shapes in recorded order, without repeats.
    pub fn shapes(&self) -> Vec<(u64, u64, u64)> {
        let mut v: Vec<(u64, u64, u64)> = Vec::new();
        for r in self.runs() {
            if !v.contains(&r.shape()) {
                v.push(r.shape());
            }
        }
        v
    }
}

/// A launch's compile-time defines as the results files list them: `NAME=VALUE`.
pub fn define_list(launch: &common::Launch) -> Vec<String> {
    launch.defines.iter().map(|(n, v)| format!("{n}={v}")).collect()
}

/// `4096³`, or `MxNxK`.
pub fn shape_name((m, n, k): (u64, u64, u64)) -> String {
    if m == n && n == k { format!("{m}³") } else { format!("{m}x{n}x{k}") }
}

/// "step05-threadtile-float4" -> "05".
pub fn number(step: &str) -> &str {
    step.trim_start_matches("step").split('-').next().unwrap_or(step)
}

/// Reads one results file; an error names the file, and the field where one is wrong.
pub fn read(path: &Path) -> Result<Sweep, String> {
    let sweep: Sweep = read_json(path)?;
    if sweep.schema != SCHEMA {
        return Err(format!("{}: schema {} (this tool reads schema {SCHEMA})", path.display(), sweep.schema));
    }
    Ok(sweep)
}

/// A JSON file of type `T`; errors name the file.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Writes a results file (pretty-printed, keys in a fixed order, a newline at the end).
pub fn write(path: &Path, sweep: &Sweep) -> Result<(), String> {
    let text = serde_json::to_string_pretty(sweep).map_err(|e| e.to_string())? + "\n";
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The paths of the results files of the workspace at `root`, sorted by name.
pub fn files(root: &Path) -> Result<Vec<PathBuf>, String> {
    let dir = root.join("results");
    json_files(&dir).map_err(|e| format!("{}: {e}", dir.display()))
}

/// The `.json` files of `dir`, sorted by name.
pub fn json_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    files_with(dir, "json")
}

/// The files of `dir` named `*.EXT`, sorted by name.
pub fn files_with(dir: &Path, ext: &str) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    files.sort();
    Ok(files)
}

/// Every results file of the workspace at `root`, sorted by name.
pub fn load_all(root: &Path) -> Result<Vec<Results>, String> {
    files(root)?
        .iter()
        .map(|p| {
            Ok(Results { slug: p.file_stem().unwrap_or_default().to_string_lossy().into_owned(), sweep: read(p)? })
        })
        .collect()
}

/// Items as a sentence lists them: "a", "a and b", "a, b and c".
pub fn and_list(items: &[&str]) -> String {
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A figure read and written again is the same figure (serde_json's `float_roundtrip`): a
    /// rewrite of a results file (`--merge`, `rehash`) changes only what it means to change.
    #[test]
    fn figures_survive_a_rewrite() {
        for text in ["1.7259231567382813", "0.21664960384368895", "637.0571154824188"] {
            let v: f64 = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::to_string(&v).unwrap(), text);
        }
    }

    #[test]
    fn dates_are_listed_as_a_sentence_lists_them() {
        assert_eq!(and_list(&[]), "");
        assert_eq!(and_list(&["2026-11-28"]), "2026-11-28");
        assert_eq!(and_list(&["2026-11-28", "2026-11-29"]), "2026-11-28 and 2026-11-29");
        assert_eq!(and_list(&["2026-11-28", "2026-11-29", "2026-11-30"]), "2026-11-28, 2026-11-29 and 2026-11-30");
    }

    #[test]
    fn the_recorded_results_load_and_a_misspelt_field_is_named() {
        let all = load_all(&crate::bundle::root()).unwrap();
        assert!(!all.is_empty() && all.iter().all(|r| !r.sweep.runs.is_empty()));
        let path = crate::bundle::root().join("results").join(format!("{}.json", all[0].slug));
        let text = std::fs::read_to_string(&path).unwrap().replacen("\"gflops\"", "\"gflop\"", 1);
        let tmp = std::env::temp_dir().join(format!("results-{}.json", std::process::id()));
        std::fs::write(&tmp, text).unwrap();
        let e = read(&tmp).unwrap_err();
        std::fs::remove_file(&tmp).unwrap();
        assert!(e.contains("gflop") && e.contains(&tmp.display().to_string()), "{e}");
    }
}

/// A record's defines against those its step's launch gives its shape today: what moved, where a
/// rule changed since (not the kernel, so no hash says so); None where it ran today's launch or
/// names no step of the registry.
pub fn moved(step: &str, (m, n, k): (u64, u64, u64), defines: &[String]) -> Option<String> {
    let step = steps::by_id(step)?;
    let shape = common::Shape::new(m as usize, n as usize, k as usize);
    let now = define_list(&(step.launch)(&shape));
    (now != defines).then(|| format!("{} {shape}: {defines:?} -> {now:?}", step.id()))
}

#[cfg(test)]
mod launches {
    use super::*;

    /// Every record of the book's GPU ran the launch the registry gives its shape today: a rule
    /// changed since (step 15's table of narrow tiles, say) voids the records it moves, which a
    /// kernel's hash does not see. The references' rows say their rung's defines since
    /// 2026-11-30; `references --void` drops the older ones a change moves, and `sweep
    /// --void-moved` and `references --void-moved` drop every record this test would name.
    #[test]
    fn each_record_ran_the_launch_of_today() {
        let root = crate::bundle::root();
        let all = load_all(&root).unwrap();
        let r = all.iter().find(|r| r.slug == crate::book::BOOK_GPU).unwrap();
        let mut stale: Vec<String> = r.runs().filter_map(|run| moved(&run.step, run.shape(), &run.defines)).collect();
        let refs = crate::references::load_all(&root).unwrap();
        let rows = refs.get(crate::book::BOOK_GPU).map(|f| f.rows.iter().chain(&f.verdict)).into_iter().flatten();
        stale.extend(rows.filter(|r| !r.defines.is_empty()).filter_map(|r| moved(&r.who, (r.m, r.n, r.k), &r.defines)));
        assert!(stale.is_empty(), "{} stale:\n{}", stale.len(), stale.join("\n"));
        // Step 15 at M = 1 as it ran before its narrow tiles went to eight: moved.
        let at = (1, 4096, 4096);
        let now =
            define_list(&(steps::by_id("step15-skinny-fp16").unwrap().launch)(&common::Shape::new(1, 4096, 4096)));
        assert!(now.iter().any(|d| d == "BN=8"), "{now:?}");
        let before: Vec<String> = now.iter().map(|d| if d == "BN=8" { "BN=16".into() } else { d.clone() }).collect();
        assert!(moved("step15-skinny-fp16", at, &before).is_some());
        assert_eq!(moved("step15-skinny-fp16", at, &now), None);
    }
}
