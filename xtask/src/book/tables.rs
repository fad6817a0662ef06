//! The book's tables, made from one GPU's recorded sweep (`results/<gpu>.json`).

use super::profiles::{Profile, Profiles};
use crate::results::{HEADLINE, Results, number, shape_name};
use common::Precision;
use std::fmt::Write;

/// What limits each rung of the Hopper climb next, in words, keyed by crate name; the bracketed
/// part quotes the rung's own profile (`{KEY}`: a counter of `profiles.rs`, FP16 at 4096³) and is
/// left out on a GPU without one.
const LIMITS_NEXT: &[(&str, &str)] = &[
    (
        "step08-mma-ldmatrix",
        "every thread copies tiles and loads fragments: their instructions [({instructions} warp instructions; \
         tensor pipe active {tensor-pipe})]",
    ),
    (
        "step09-wgmma-tma",
        "one warpgroup copies and multiplies, and waits for each tile's loads [(long scoreboard: \
         {stall-long-scoreboard} warps per issued instruction; tensor pipe active {tensor-pipe})]",
    ),
    (
        "step10-warp-specialized",
        "each block loads its own B tile and runs one tile: L2's traffic, the last wave and an epilogue per tile \
         while the tensor pipe waits [({l2-bytes} through L2; tensor pipe active {tensor-pipe})]",
    ),
    (
        "step11-cluster-persistent",
        "the epilogue: consumers store C from registers before the next tile's products start [(tensor pipe \
         active {tensor-pipe}; at a barrier: {stall-barrier} warps per issued instruction)]",
    ),
    (
        "step12-epilogue",
        "the epilogue, which both consumers of a block run at once while the tensor pipe waits: its writes, \
         TMA stores and proxy fences [(tensor pipe active {tensor-pipe}; at a barrier: {stall-barrier} warps per \
         issued instruction)]",
    ),
];

/// A [`LIMITS_NEXT`] line with its profile's figures, or without its bracketed part where the
/// profile or one of its counters is missing.
fn limits_next(template: &str, profile: Option<&Profile>) -> String {
    let (words, rest) = template.split_once('[').unwrap_or((template, ""));
    let (quoted, after) = rest.split_once(']').unwrap_or(("", rest));
    let mut figures = String::new();
    let mut parts = quoted.split('{');
    figures += parts.next().unwrap_or_default();
    for part in parts {
        let (key, text) = part.split_once('}').unwrap_or((part, ""));
        match profile.map(|p| p.value(key)) {
            Some(Ok(v)) => figures += &v,
            _ => return format!("{}{after}", words.trim_end()),
        }
        figures += text;
    }
    format!("{words}{figures}{after}")
}

/// The Hopper climb at 4096³ in FP16 (FP32 C), and step 14 in FP8 with the same C: each rung
/// from step 8, its rate, its gain on the rung before (only where both were measured in the same sweep: a ratio of two days' runs would
/// hold the GPU's drift between them), its share of the fastest cuBLAS configuration measured
/// beside it, and what limits it next (with its profile's counters where the GPU has them).
pub(super) fn climb(r: &Results, profiles: Option<&Profiles>) -> String {
    let mut s = String::from(
        "| rung | the idea | TFLOP/s | gain | % of the fastest cuBLAS | what limits it next |\n|---|---|---:|---:|---:|---|\n",
    );
    let mut prev: Option<&crate::results::Run> = None;
    let date = |x: &crate::results::Run| x.date.clone().unwrap_or_else(|| r.sweep.date.clone());
    let rungs = |s: &&common::Step| {
        (s.precision == Precision::F16 && number(s.name) >= "08") || s.precision == Precision::Fp8C32
    };
    for step in steps::ALL.iter().filter(rungs) {
        let Some(x) = r.run(&step.id(), HEADLINE) else { continue };
        let gain = match prev {
            Some(p) if date(p) == date(x) => format!("{:.2}x", x.gflops / p.gflops),
            _ => "-".to_string(),
        };
        let fastest = x.pct_of_fastest_cublas.map_or("-".to_string(), |v| format!("{v:.1}%"));
        let profile = profiles.and_then(|p| p.get(&step.id()));
        let next =
            LIMITS_NEXT.iter().find(|(n, _)| *n == step.name).map_or(String::new(), |(_, t)| limits_next(t, profile));
        let rung = match step.precision {
            Precision::F16 => step.name.to_string(),
            p => format!("{} ({p})", step.name),
        };
        let _ = writeln!(s, "| {rung} | {} | {:.1} | {gain} | {fastest} | {next} |", step.idea, x.gflops / 1e3);
        prev = Some(x);
    }
    s
}

pub(super) fn summary(r: &Results) -> String {
    let cublas = r.sgemm_run(HEADLINE).map(|x| x.cublas_gflops).unwrap_or(f64::NAN);
    format!(
        "Measured on one **{}** (compute capability {}, {} SMs, driver CUDA {}), NVRTC {}, cuBLAS {} ({}), \
         on {} with `cargo xtask sweep`; every run verified against cuBLAS and a float64 CPU reference.\n\n\
         | ceiling | value |\n|---|---:|\n\
         | FP32 SIMT peak ({} SMs x {:.0} lanes x 2 x clock, from the device) | {:.1} TFLOP/s |\n\
         | cuBLAS SGEMM at 4096³, same sweep | {:.1} TFLOP/s |\n\
         | DRAM bandwidth, datasheet (from the device) | {:.0} GB/s |\n\
         | device-to-device copy, measured (read + write) | {:.0} GB/s |\n",
        r.sweep.gpu.name,
        r.sweep.gpu.compute_capability,
        r.sweep.gpu.sms,
        r.sweep.gpu.driver_cuda_version,
        r.sweep.nvrtc_version,
        r.sweep.cublas_version,
        r.sweep.cublas_math,
        r.dates(|s| r.steps().contains(&s)),
        r.sweep.gpu.sms,
        r.sweep.gpu.peak_fp32_gflops / (2.0 * r.sweep.gpu.sm_clock_khz as f64 / 1e6 * r.sweep.gpu.sms as f64),
        r.sweep.gpu.peak_fp32_gflops / 1e3,
        cublas / 1e3,
        r.sweep.gpu.peak_dram_gbs,
        r.sweep.gpu.measured_copy_gbs,
    )
}

pub(super) fn ladder(r: &Results) -> String {
    let mut s = String::from(
        "| step | time (ms) | GFLOP/s | % of cuBLAS | x previous step | registers | shared memory (B) | spills (B) | error vs float64 |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut prev: Option<f64> = None;
    for step in r.steps() {
        let Some(x) = r.run(step, HEADLINE) else { continue };
        let t = x.time_ms;
        let speedup = prev.map(|p| format!("{:.2}x", p / t)).unwrap_or_else(|| "-".into());
        let _ = writeln!(
            s,
            "| {step} | {t:.3} | {:.0} | {:.1}% | {speedup} | {} | {} | {} | {:.1e} |",
            x.gflops,
            x.pct_of_cublas,
            x.registers,
            x.static_smem_bytes + x.dynamic_smem_bytes,
            x.spill_bytes,
            x.rel_err_vs_cpu,
        );
        prev = Some(t);
    }
    if let Some(x) = r.sgemm_run(HEADLINE) {
        let _ = writeln!(s, "| cuBLAS | {:.3} | {:.0} | 100% | | | | | |", x.cublas_ms, x.cublas_gflops);
    }
    s
}

/// The tensor-core steps (7-9) in every precision at the large squares and the MLP shape: their
/// rate against cuBLAS in the same precision (and, for FP16, BF16 and TF32, against the fastest
/// cuBLAS configuration measured in the same sweep) and against cuBLAS SGEMM (the FP32 steps'
/// reference; 3xTF32's own reference), and what each precision costs in accuracy.
pub(super) fn tensor(r: &Results) -> String {
    let mut s = String::from(
        "| step | precision | shape | time (ms) | TFLOP/s | cuBLAS, same precision (TFLOP/s) | % of cuBLAS | \
         % of the fastest cuBLAS | x cuBLAS SGEMM | error vs float64 of the rounded inputs | error vs exact FP32 product | \
         registers | shared memory (B) | spills (B) |\n\
         |---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let sgemm = |shape| r.sgemm_run(shape).map(|x| x.cublas_gflops);
    for (id, p) in r.tensor_steps() {
        for shape in [(1024, 1024, 1024), (2048, 2048, 2048), HEADLINE, (8192, 8192, 8192), (4096, 11008, 4096)] {
            let Some(x) = r.run(&id, shape) else { continue };
            let vs_sgemm = sgemm(shape).map_or("-".to_string(), |g| format!("{:.1}x", x.gflops / g));
            let fastest = x.pct_of_fastest_cublas.map_or("-".to_string(), |v| format!("{v:.1}%"));
            let _ = writeln!(
                s,
                "| {} | {p} | {} | {:.3} | {:.1} | {:.1} | {:.1}% | {fastest} | {vs_sgemm} | {:.1e} | {:.1e} | {} | {} | {} |",
                number(&id),
                shape_name(shape),
                x.time_ms,
                x.gflops / 1e3,
                x.cublas_gflops / 1e3,
                x.pct_of_cublas,
                x.rel_err_vs_cpu,
                x.rel_err_vs_exact,
                x.registers,
                x.static_smem_bytes + x.dynamic_smem_bytes,
                x.spill_bytes,
            );
        }
    }
    s += "\nErrors are relative Frobenius norms (alpha 1, beta 0; sampled rows at the largest shapes). \
          FP64's and 3xTF32's error vs the exact product is their error vs float64. 3xTF32's cuBLAS is SGEMM \
          (TF32 off). The fastest cuBLAS is the fastest of cublasGemmEx, cublasLt with a 32 MiB workspace and \
          its heuristic's first algorithm, and (FP16, BF16) cublasLt writing a 16-bit C.\n";
    s
}

pub(super) fn sweep(r: &Results) -> String {
    let steps = r.steps();
    let mut s = String::from("| shape |");
    for st in &steps {
        let _ = write!(s, " {} |", number(st));
    }
    s += " cuBLAS |\n|---|";
    s += &"---:|".repeat(steps.len() + 1);
    s += "\n";
    for shape in r.shapes() {
        let (row, cublas) = gflops_row(r, &steps, shape, 0);
        let _ = writeln!(s, "{row} {cublas:.0} |");
    }
    s += "\nGFLOP/s (% of cuBLAS in the same run), alpha 1, beta 0.\n";
    s
}

/// One row of a GFLOP/s table: "| shape | gflops (pct%) | ..." for `steps` (without the closing
/// cuBLAS cell), and the cuBLAS GFLOP/s of the row (NaN when no step ran at that shape).
pub(super) fn gflops_row(r: &Results, steps: &[&str], shape: (u64, u64, u64), pct_digits: usize) -> (String, f64) {
    let mut row = format!("| {} |", shape_name(shape));
    let mut cublas = f64::NAN;
    for st in steps {
        match r.run(st, shape) {
            Some(x) => {
                cublas = x.cublas_gflops;
                let _ = write!(row, " {:.0} ({:.pct_digits$}%) |", x.gflops, x.pct_of_cublas);
            }
            None => row += " - |",
        }
    }
    (row, cublas)
}

pub(super) fn per_step(r: &Results, step: &str) -> String {
    // A precision that rounds its inputs (FP16, BF16, TF32) has two errors: against the float64
    // product of the values it multiplies, and against the FP32 problem (what the precision costs).
    let rounds = steps::by_id(step).is_some_and(|s| s.precision.rounds_inputs());
    let (errors, align) = if rounds {
        ("error vs float64 of the rounded inputs | error vs the FP32 problem", "---:|---:")
    } else {
        ("error vs float64", "---:")
    };
    let mut s = format!(
        "| shape | time (ms) | GFLOP/s | cuBLAS GFLOP/s | % of cuBLAS | {errors} | registers | shared memory (B) | grid |\n\
         |---|---:|---:|---:|---:|{align}|---:|---:|---|\n",
    );
    // Which compile-time variant each shape ran, listed under the table.
    let mut variants: Vec<(String, Vec<String>)> = Vec::new();
    for shape in r.shapes() {
        let Some(x) = r.run(step, shape) else { continue };
        let grid: Vec<String> = x.grid.iter().map(|v| v.to_string()).collect();
        let error = if rounds {
            format!("{:.1e} | {:.1e}", x.rel_err_vs_cpu, x.rel_err_vs_exact)
        } else {
            format!("{:.1e}", x.rel_err_vs_cpu)
        };
        let _ = writeln!(
            s,
            "| {} | {:.3} | {:.0} | {:.0} | {:.1}% | {error} | {} | {} | {} |",
            shape_name(shape),
            x.time_ms,
            x.gflops,
            x.cublas_gflops,
            x.pct_of_cublas,
            x.registers,
            x.static_smem_bytes + x.dynamic_smem_bytes,
            grid.join("x"),
        );
        let defines: Vec<&str> = x.defines.iter().map(String::as_str).collect();
        let key = if defines.is_empty() { "no defines".to_string() } else { format!("`{}`", defines.join(" ")) };
        match variants.iter_mut().find(|(k, _)| *k == key) {
            Some((_, shapes)) => shapes.push(shape_name(shape)),
            None => variants.push((key, vec![shape_name(shape)])),
        }
    }
    s += "\nCompiled as:\n\n";
    for (key, shapes) in variants {
        let _ = writeln!(s, "- {key}: {}", shapes.join(", "));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_limits_a_rung_quotes_its_profile_or_only_words() {
        let t = "waits for loads [(tensor pipe active {tensor-pipe})], then stops";
        assert_eq!(limits_next(t, None), "waits for loads, then stops");
        let root = crate::bundle::root();
        let profiles = super::super::profiles::load_all(&root).unwrap();
        let p = profiles.get(super::super::BOOK_GPU).and_then(|p| p.get("step09-wgmma-tma-fp16")).unwrap();
        let v = p.value("tensor-pipe").unwrap();
        assert_eq!(limits_next(t, Some(p)), format!("waits for loads (tensor pipe active {v}), then stops"));
        assert_eq!(limits_next("a [({no-such-key})]", Some(p)), "a");
    }
}
