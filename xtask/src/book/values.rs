//! Named values: how a figure gets into a chapter's prose without being typed. A chapter writes
//! `{{#include generated/values.md:NAME}}` where the figure goes (mdBook's anchored include works
//! mid-sentence), and `cargo xtask book` computes NAME from the results files and writes it into
//! `generated/values.md` between `ANCHOR: NAME` and `ANCHOR_END: NAME`. Only the values some
//! chapter includes are written; a name the tool cannot compute fails the build with the chapter
//! and line that asked for it.
//!
//! A name is fields joined by `_`: an optional GPU (the slug of a results file; without it the
//! book's GPU, [`super::hardware::BOOK_GPU`]), then one of
//!
//! | name | value | example |
//! |---|---|---|
//! | `ID_SHAPES_METRIC` | a run's figure | `step06-double-buffer_4096_pct`: `95.1%` |
//! | `ID_SHAPES_x_OTHER` | ID's GFLOP/s over OTHER's at the same shape: OTHER a step id, or a GPU's slug (the same step there) | `step02-coalesce_4096_x_step01-naive`: `12.6x` |
//! | `ID_profile_KEY` | a counter of the step's profile (`profiles.rs` names the keys), in the profile table's units | `step09-wgmma-tma-fp16_profile_tensor-pipe`: `58.8%` |
//! | `partials_RUN_SHAPES_METRIC` | a run of the partials sweep (`partials.rs`): RUN a registry id, or `ID-PART` for its partial rung PART | `partials_step11-cluster-persistent-fp16-no-multicast_4096_fastest` |
//! | `partials_RUN_SHAPES_x_OTHER` | RUN's GFLOP/s over OTHER's, both runs of the partials sweep | `partials_step11-cluster-persistent-fp16_4096_x_step10-warp-specialized-fp16` |
//! | `promotion_DATA_K_FIELD` | a row of FP8's promotion table (`promotion.rs`): DATA `signed` or `non-negative` | `promotion_non-negative_16384_plain`: `2.5e-1` |
//! | `gpu_FIELD` | the GPU's record | `gpu_copy`: `4264 GB/s` |
//!
//! ID is a registry id (`step08-mma-ldmatrix-fp16`); SHAPES one shape (`4096` for 4096³,
//! `4096x11008x4096`) or a range of the recorded cubes (`2048-8192`), whose values print as
//! `94.2-95.9%`; METRIC one of [`METRICS`]; FIELD one of [`GPU_FIELDS`]. The ratios of the
//! partials sweep compare its own runs only: the gain of one idea, within one sweep.

use super::partials::Partials;
use super::profiles::Profiles;
use super::promotion::Promotions;
use crate::results::{HEADLINE, Results, Run};
use common::timing::roofline::Floors;
use common::{Gemm, Shape};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The file, relative to `book/src/generated/`.
pub const FILE: &str = "values.md";

/// What a value may be computed from.
pub struct Sources<'a> {
    pub all: &'a [Results],
    pub profiles: &'a BTreeMap<String, Profiles>,
    pub partials: &'a Partials,
    pub promotion: &'a Promotions,
}

/// The metrics of one run, and how each prints.
pub const METRICS: &[(&str, &str)] = &[
    ("gflops", "GFLOP/s: 48811 GFLOP/s"),
    ("tflops", "TFLOP/s: 48.8 TFLOP/s"),
    ("pct", "% of cuBLAS in the same precision, measured beside it: 95.1%"),
    ("fastest", "% of the fastest cuBLAS configuration measured beside it: 90.1%"),
    ("sgemm", "GFLOP/s over cuBLAS SGEMM's at the same shape (3xTF32's own reference): 2.43x"),
    ("cublas-tflops", "cuBLAS in the same precision, TFLOP/s: 51.3 TFLOP/s"),
    ("ms", "the median time: 0.282 ms"),
    ("error", "relative error against float64: 1.1e-6"),
    ("mhz", "the SM clock while it ran, mean of the samples: 1830 MHz"),
];

/// The fields of a GPU's record.
pub const GPU_FIELDS: &[(&str, &str)] = &[
    ("name", "as the driver names it"),
    ("date", "the date of its sweep"),
    ("sms", "streaming multiprocessors"),
    ("clock", "the SM clock the device reports, GHz"),
    ("peak-fp32", "FP32 SIMT peak: lanes x 2 x clock, TFLOP/s"),
    ("peak-fp16", "dense FP16 tensor-core peak: the datasheet's FLOPs per SM and clock x SMs x clock, TFLOP/s"),
    ("peak-tf32", "dense TF32 tensor-core peak, half FP16's, TFLOP/s"),
    ("peak-fp8", "dense FP8 tensor-core peak, twice FP16's, TFLOP/s"),
    ("dram", "DRAM bandwidth from the device's memory clock and bus width, GB/s"),
    ("copy", "a device-to-device copy, measured by the sweep (read + write), GB/s"),
    ("l2", "L2 cache, MiB"),
    ("compute-floor", "2 x 4096³ FLOPs at the FP32 peak, ms"),
    ("memory-floor", "4096³'s minimal FP32 bytes at the DRAM bandwidth, ms"),
    ("floor-ratio", "the compute floor over the memory floor"),
    ("ridge", "the FP32 peak over the DRAM bandwidth, FLOP/byte"),
    ("ridge-copy", "the FP32 peak over the measured copy, FLOP/byte"),
];

/// `values.md`: every value the chapters under `book_src` include, each between its anchors.
pub fn file(book_src: &Path, sources: &Sources) -> Result<String, String> {
    let mut s = String::from(
        "<!-- The figures the chapters' prose includes, computed by `cargo xtask book` from the results \
         files (xtask/src/book/values.rs says how to name one). Generated: do not edit. -->\n",
    );
    for (name, used_at) in uses(book_src) {
        let v = value(&name, sources).map_err(|e| format!("{used_at}: value `{name}`: {e}"))?;
        let _ = write!(s, "ANCHOR: {name}\n{v}\nANCHOR_END: {name}\n");
    }
    Ok(s)
}

/// The value names the chapters include, each with where it is first asked for.
fn uses(book_src: &Path) -> BTreeMap<String, String> {
    let target = book_src.join("generated").join(FILE);
    let mut pages = Vec::new();
    super::checks::collect_md(book_src, &mut pages);
    let mut out = BTreeMap::new();
    for page in pages.iter().filter(|p| !p.starts_with(book_src.join("generated"))) {
        let text = std::fs::read_to_string(page).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            for spec in line.split("{{#include ").skip(1).filter_map(|p| p.split_once("}}").map(|(s, _)| s.trim())) {
                let Some((path, name)) = spec.split_once(':') else { continue };
                if same_file(&page.parent().unwrap_or(book_src).join(path), &target) {
                    out.entry(name.to_string()).or_insert_with(|| format!("{}:{}", page.display(), i + 1));
                }
            }
        }
    }
    out
}

/// Whether two paths name the same file, without asking the file system (it may not exist yet).
fn same_file(a: &Path, b: &Path) -> bool {
    let norm = |p: &Path| {
        let mut out = PathBuf::new();
        for c in p.components() {
            match c {
                std::path::Component::ParentDir => {
                    out.pop();
                }
                std::path::Component::CurDir => {}
                c => out.push(c),
            }
        }
        out
    };
    norm(a) == norm(b)
}

/// The value `name` stands for (see the module's documentation).
pub fn value(name: &str, sources: &Sources) -> Result<String, String> {
    let fields: Vec<&str> = name.split('_').collect();
    let (slug, rest) = match sources.all.iter().find(|r| r.slug == fields[0]) {
        Some(_) => (fields[0], &fields[1..]),
        None => (super::hardware::BOOK_GPU, &fields[..]),
    };
    let r = gpu(sources, slug)?;
    match rest {
        ["gpu", field] => gpu_field(r, field),
        [id, "profile", key] => {
            let profile = sources.profiles.get(slug).and_then(|p| p.get(*id));
            let profile = profile.ok_or_else(|| format!("no profile of {id} in results/profiles/{slug}/"))?;
            profile.value(key)
        }
        ["promotion", data, k, field] => {
            let p = sources.promotion.get(slug).ok_or_else(|| format!("no results/fp8-promotion/{slug}.json"))?;
            super::promotion::value(p, data, k, field)
        }
        ["partials", rest @ ..] => {
            let p = sources.partials.get(slug).ok_or_else(|| format!("no results/partials/{slug}.json"))?;
            let of = |name: &str, shape| super::partials::run(p, name, shape);
            match rest {
                [name, shapes, "x", other] => ratios(p, shapes, |s| Ok(of(name, s)?.gflops / of(other, s)?.gflops)),
                [name, shapes, metric] => {
                    let runs = shapes_of(p, shapes)?.into_iter().map(|s| of(name, s)).collect::<Result<Vec<_>, _>>()?;
                    run_metric(p, &runs, metric)
                }
                _ => Err("not a value of the partials: partials_RUN_SHAPES_METRIC or partials_RUN_SHAPES_x_OTHER".into()),
            }
        }
        [id, shapes, "x", other] => {
            let (other_gpu, other_id) = match sources.all.iter().find(|o| o.slug == *other) {
                Some(o) => (o, *id),
                None => (r, *other),
            };
            ratios(r, shapes, |shape| Ok(run(r, id, shape)?.gflops / run(other_gpu, other_id, shape)?.gflops))
        }
        [id, shapes, metric] => {
            let runs = shapes_of(r, shapes)?.into_iter().map(|s| run(r, id, s)).collect::<Result<Vec<_>, _>>()?;
            run_metric(r, &runs, metric)
        }
        _ => Err(
            "not a value name: GPU_ID_SHAPES_METRIC, ID_SHAPES_x_OTHER, ID_profile_KEY, partials_RUN_SHAPES_METRIC, promotion_DATA_K_FIELD or gpu_FIELD"
                .into(),
        ),
    }
}

/// A ratio at each of the shapes SHAPES names in `r`, printed as a range.
fn ratios(r: &Results, shapes: &str, at: impl Fn((u64, u64, u64)) -> Result<f64, String>) -> Result<String, String> {
    let values = shapes_of(r, shapes)?.into_iter().map(at).collect::<Result<Vec<f64>, String>>()?;
    Ok(range(&values, ratio, "x"))
}

fn gpu<'a>(sources: &'a Sources, slug: &str) -> Result<&'a Results, String> {
    sources.all.iter().find(|r| r.slug == slug).ok_or_else(|| format!("no results/{slug}.json"))
}

fn run<'a>(r: &'a Results, id: &str, shape: (u64, u64, u64)) -> Result<&'a Run, String> {
    if steps::by_id(id).is_none() {
        return Err(format!("{id} is not a step of the registry"));
    }
    r.run(id, shape).ok_or_else(|| format!("results/{}.json has no run of {id} at {shape:?}", r.slug))
}

/// `4096`, `4096x11008x4096`, or `2048-8192`: the recorded cubes from one size to the other.
fn shapes_of(r: &Results, field: &str) -> Result<Vec<(u64, u64, u64)>, String> {
    if let Some((lo, hi)) = field.split_once('-') {
        let (lo, hi): (u64, u64) =
            (lo.parse().map_err(|_| bad_shape(field))?, hi.parse().map_err(|_| bad_shape(field))?);
        let cubes: Vec<_> =
            r.shapes().into_iter().filter(|&(m, n, k)| m == n && n == k && (lo..=hi).contains(&m)).collect();
        return if cubes.is_empty() { Err(format!("no recorded cube from {lo}³ to {hi}³")) } else { Ok(cubes) };
    }
    let dims: Vec<u64> = field.split('x').map(|d| d.parse().map_err(|_| bad_shape(field))).collect::<Result<_, _>>()?;
    match dims[..] {
        [n] => Ok(vec![(n, n, n)]),
        [m, n, k] => Ok(vec![(m, n, k)]),
        _ => Err(bad_shape(field)),
    }
}

fn bad_shape(field: &str) -> String {
    format!("`{field}` is not a shape: 4096, 4096x11008x4096 or 2048-8192")
}

fn run_metric(r: &Results, runs: &[&Run], metric: &str) -> Result<String, String> {
    let each = |f: &dyn Fn(&Run) -> Option<f64>| -> Result<Vec<f64>, String> {
        runs.iter().map(|x| f(x).ok_or_else(|| format!("{} at {:?} has no `{metric}`", x.step, x.shape()))).collect()
    };
    let one = |d: usize| move |v: f64| format!("{v:.d$}");
    Ok(match metric {
        "gflops" => range(&each(&|x| Some(x.gflops))?, one(0), " GFLOP/s"),
        "tflops" => range(&each(&|x| Some(x.gflops / 1e3))?, one(1), " TFLOP/s"),
        "pct" => range(&each(&|x| Some(x.pct_of_cublas))?, one(1), "%"),
        "fastest" => range(&each(&|x| x.pct_of_fastest_cublas)?, one(1), "%"),
        "cublas-tflops" => range(&each(&|x| Some(x.cublas_gflops / 1e3))?, one(1), " TFLOP/s"),
        "ms" => range(&each(&|x| Some(x.time_ms))?, one(3), " ms"),
        "error" => range(&each(&|x| Some(x.rel_err_vs_cpu))?, |v| format!("{v:.1e}"), ""),
        "mhz" => range(&each(&|x| x.clocks.as_ref().map(|c| c.mean_mhz))?, one(0), " MHz"),
        "sgemm" => range(&each(&|x| r.sgemm_run(x.shape()).map(|s| x.gflops / s.cublas_gflops))?, ratio, "x"),
        _ => {
            let names: Vec<&str> = METRICS.iter().map(|m| m.0).collect();
            return Err(format!("no metric `{metric}` (one of {})", names.join(", ")));
        }
    })
}

/// A ratio as the book prints one: 1.35, 12.6, 138.
fn ratio(v: f64) -> String {
    match v {
        v if v >= 100.0 => format!("{v:.0}"),
        v if v >= 10.0 => format!("{v:.1}"),
        v => format!("{v:.2}"),
    }
}

/// `low-high` + unit, printed with `fmt`; one figure when both print alike.
fn range(values: &[f64], fmt: impl Fn(f64) -> String, unit: &str) -> String {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (a, b) = (fmt(lo), fmt(hi));
    if a == b { format!("{a}{unit}") } else { format!("{a}-{b}{unit}") }
}

fn gpu_field(r: &Results, field: &str) -> Result<String, String> {
    let g = &r.sweep.gpu;
    let (m, n, k) = HEADLINE;
    let gemm = Gemm::new(Shape::new(m as usize, n as usize, k as usize), 1.0, 0.0);
    let Floors { compute_ms, memory_ms } = Floors::of(&gemm, g.peak_fp32_gflops * 1e9, g.peak_dram_gbs * 1e9);
    Ok(match field {
        "name" => g.name.clone(),
        "date" => r.dates(|_| true),
        "sms" => g.sms.to_string(),
        "clock" => format!("{:.2} GHz", g.sm_clock_khz as f64 / 1e6),
        "peak-fp32" => format!("{:.1} TFLOP/s", g.peak_fp32_gflops / 1e3),
        "peak-fp16" | "peak-tf32" | "peak-fp8" => {
            let per = super::hardware::tensor_fp16_per_sm_clock(&g.name)
                .ok_or_else(|| format!("no datasheet for {} (xtask/src/book/hardware.rs)", g.name))?;
            let fp16 = g.sms as f64 * per as f64 * g.sm_clock_khz as f64 / 1e9;
            let times = match field {
                "peak-fp16" => 1.0,
                "peak-tf32" => 0.5,
                _ => 2.0,
            };
            format!("{:.1} TFLOP/s", fp16 * times)
        }
        "dram" => format!("{:.0} GB/s", g.peak_dram_gbs),
        "copy" => format!("{:.0} GB/s", g.measured_copy_gbs),
        "l2" => format!("{} MiB", g.l2_bytes >> 20),
        "compute-floor" => format!("{compute_ms:.2} ms"),
        "memory-floor" => format!("{memory_ms:.3} ms"),
        "floor-ratio" => format!("{:.0}", compute_ms / memory_ms),
        "ridge" => format!("{:.0} FLOP/byte", g.peak_fp32_gflops / g.peak_dram_gbs),
        "ridge-copy" => format!("{:.0} FLOP/byte", g.peak_fp32_gflops / g.measured_copy_gbs),
        _ => {
            let names: Vec<&str> = GPU_FIELDS.iter().map(|f| f.0).collect();
            return Err(format!("no GPU field `{field}` (one of {})", names.join(", ")));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources<'a>(
        all: &'a [Results],
        profiles: &'a BTreeMap<String, Profiles>,
        partials: &'a Partials,
    ) -> Sources<'a> {
        static NO_PROMOTION: Promotions = Promotions::new();
        Sources { all, profiles, partials, promotion: &NO_PROMOTION }
    }

    #[test]
    fn values_come_from_the_results() {
        let all = crate::results::load_all(&crate::bundle::root()).unwrap();
        let (none, no_partials) = (BTreeMap::new(), Partials::new());
        let s = sources(&all, &none, &no_partials);
        let book = all.iter().find(|r| r.slug == super::super::BOOK_GPU).unwrap();
        let x = book.run("step06-double-buffer", HEADLINE).unwrap();
        assert_eq!(value("step06-double-buffer_4096_pct", &s).unwrap(), format!("{:.1}%", x.pct_of_cublas));
        assert_eq!(value("step06-double-buffer_4096_gflops", &s).unwrap(), format!("{:.0} GFLOP/s", x.gflops));
        // A range over the recorded cubes, and a ratio of two steps.
        let range = value("step06-double-buffer_2048-8192_pct", &s).unwrap();
        assert!(range.ends_with('%') && range.contains('-'), "{range}");
        let y = book.run("step01-naive", HEADLINE).unwrap();
        assert_eq!(
            value("step06-double-buffer_4096_x_step01-naive", &s).unwrap(),
            format!("{}x", ratio(x.gflops / y.gflops))
        );
        // Another GPU by its slug, and the same step on two GPUs.
        let other = all.iter().find(|r| r.slug != book.slug).unwrap();
        let z = other.run("step06-double-buffer", HEADLINE).unwrap();
        assert_eq!(
            value(&format!("{}_step06-double-buffer_4096_pct", other.slug), &s).unwrap(),
            format!("{:.1}%", z.pct_of_cublas)
        );
        assert_eq!(
            value(&format!("step06-double-buffer_4096_x_{}", other.slug), &s).unwrap(),
            format!("{}x", ratio(x.gflops / z.gflops))
        );
        assert_eq!(value("gpu_name", &s).unwrap(), book.sweep.gpu.name);
        // What cannot be computed says why.
        for (name, why) in [
            ("step06-double-buffer_4096_speed", "no metric `speed`"),
            ("step99-none_4096_pct", "not a step of the registry"),
            ("step06-double-buffer_4095_pct", "has no run"),
            ("step06-double-buffer_4096_fastest", "has no `fastest`"),
            ("step06-double-buffer_profile_time", "no profile"),
            ("gpu_colour", "no GPU field"),
            ("partials_step11-cluster-persistent-fp16_4096_tflops", "no results/partials/"),
            ("promotion_signed_256_plain", "no results/fp8-promotion/"),
            ("pct", "not a value name"),
        ] {
            let e = value(name, &s).unwrap_err();
            assert!(e.contains(why), "{name}: {e}");
        }
    }

    #[test]
    fn values_of_the_partials_sweep() {
        let root = crate::bundle::root();
        let (all, partials) =
            (crate::results::load_all(&root).unwrap(), super::super::partials::load_all(&root).unwrap());
        let none = BTreeMap::new();
        let s = sources(&all, &none, &partials);
        let p = &partials[super::super::BOOK_GPU];
        let (whole, part) = ("step11-cluster-persistent-fp16", "step11-cluster-persistent-fp16-no-multicast");
        let x = super::super::partials::run(p, part, HEADLINE).unwrap();
        let y = super::super::partials::run(p, whole, HEADLINE).unwrap();
        assert_eq!(
            value(&format!("partials_{part}_4096_tflops"), &s).unwrap(),
            format!("{:.1} TFLOP/s", x.gflops / 1e3)
        );
        assert_eq!(
            value(&format!("partials_{whole}_4096_x_{part}"), &s).unwrap(),
            format!("{}x", ratio(y.gflops / x.gflops))
        );
        let e = value(&format!("partials_{whole}-nothing_4096_tflops"), &s).unwrap_err();
        assert!(e.contains("neither a registry id"), "{e}");
    }

    #[test]
    fn only_the_values_a_chapter_includes_are_written() {
        let dir = std::env::temp_dir().join(format!("book-values-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("generated")).unwrap();
        std::fs::write(
            dir.join("step.md"),
            "Runs at {{#include generated/values.md:step01-naive_4096_pct}} of cuBLAS.\n",
        )
        .unwrap();
        let all = crate::results::load_all(&crate::bundle::root()).unwrap();
        let (none, no_partials) = (BTreeMap::new(), Partials::new());
        let text = file(&dir, &sources(&all, &none, &no_partials)).unwrap();
        assert_eq!(text.matches("ANCHOR: ").count(), 1, "{text}");
        assert!(
            text.contains("ANCHOR: step01-naive_4096_pct\n") && text.contains("ANCHOR_END: step01-naive_4096_pct\n")
        );
        std::fs::write(dir.join("step.md"), "{{#include generated/values.md:step01-naive_4096_nope}}\n").unwrap();
        let e = file(&dir, &sources(&all, &none, &no_partials)).unwrap_err();
        assert!(e.contains("step.md:1") && e.contains("no metric `nope`"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
