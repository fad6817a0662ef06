//! `cargo xtask book [--check]`: the book's tables and charts, made from the recorded results
//! alone (`results/<gpu>.json`) into `book/src/generated/<gpu>/`, and its diagrams, made from
//! the steps' launch geometry (`book/src/generated/diagrams/`, see `diagram.rs`). With `--check` nothing is
//! written; it fails when a generated file is stale, when a kernel changed after its recorded
//! results (source hash), or when an `{{#include}}` of the book or its anchor does not resolve.

use crate::references::References;
use crate::results::{HEADLINE, Results, number, shape_name};
use common::Precision;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Every generated file, path relative to `book/src/generated/`, and its contents: from each
/// GPU's sweep, and from its references file (`results/references/<gpu>.json`) where it has one.
pub fn generate(
    all: &[Results],
    references: &BTreeMap<String, References>,
) -> Result<BTreeMap<String, String>, String> {
    let mut out = crate::svg::diagram::generate()?;
    for (slug, refs) in references {
        out.insert(format!("{slug}/references.md"), crate::references::targets(refs));
        out.insert(format!("{slug}/references-all.md"), crate::references::every(refs));
        out.insert(format!("{slug}/references-verdicts.md"), crate::references::verdicts(refs));
    }
    for r in all {
        let dir = &r.slug;
        out.insert(format!("{dir}/summary.md"), summary(r));
        out.insert(format!("{dir}/ladder.md"), ladder(r));
        out.insert(format!("{dir}/sweep.md"), sweep(r));
        for step in r.steps() {
            out.insert(format!("{dir}/{step}.md"), per_step(r, step));
        }
        for (id, _) in r.tensor_steps() {
            out.insert(format!("{dir}/{id}.md"), per_step(r, &id));
        }
        out.insert(format!("{dir}/tensor.md"), tensor(r));
        out.insert(format!("{dir}/climb.md"), climb(r));
        out.insert(format!("{dir}/gflops.svg"), crate::svg::chart::gflops(r));
        out.insert(format!("{dir}/scaling.svg"), crate::svg::chart::scaling(r));
        out.insert(format!("{dir}/roofline.svg"), crate::svg::chart::roofline(r));
    }
    Ok(out)
}

/// What limits each rung of the Hopper climb next, as its chapter's profile and tuner runs show
/// (the chapters give the runs); keyed by crate name.
const LIMITS_NEXT: &[(&str, &str)] = &[
    ("step08-mma-ldmatrix", "every thread copies and loads fragments: the copies' own instructions and stalls"),
    (
        "step09-wgmma-tma",
        "one warpgroup copies and multiplies: it waits for each tile's loads (Nsight Compute: long-scoreboard stalls, the tensor pipe busy 57% at 4096³ on an H200)",
    ),
    (
        "step10-warp-specialized",
        "each block loads its own B tile and stops the tensor cores for its last wave and its epilogue",
    ),
    (
        "step11-cluster-persistent",
        "the epilogue: consumers store C from registers before the next tile's products start",
    ),
    (
        "step12-epilogue",
        "the epilogue, which both consumers of a block run at once while the tensor pipe waits: its writes, TMA stores and proxy fences (3% of the busiest SM's cycles at 4096³, 7.5% with an FP32 C); ping-pong consumers would hide it, but their half-size tiles need 1.67 times the shared-memory bytes per product, which the SM does not have; back to back it runs at the 700 W limit at cuBLAS's clock, so energy per GEMM is its time",
    ),
];

/// The Hopper climb at 4096³ in FP16 (FP32 C): each rung from step 8, its rate, its gain on the
/// rung before, its share of the fastest cuBLAS configuration of the same sweep, and what limits
/// it next.
fn climb(r: &Results) -> String {
    let mut s = String::from(
        "| rung | the idea | TFLOP/s | gain | % of the fastest cuBLAS | what limits it next |\n|---|---|---:|---:|---:|---|\n",
    );
    let mut prev: Option<f64> = None;
    for step in steps::ALL.iter().filter(|s| s.precision == Precision::F16 && number(s.name) >= "08") {
        let Some(x) = r.run(&step.id(), HEADLINE) else { continue };
        let gain = prev.map_or("-".to_string(), |p| format!("{:.2}x", x.gflops / p));
        let fastest = x.pct_of_fastest_cublas.map_or("-".to_string(), |v| format!("{v:.1}%"));
        let next = LIMITS_NEXT.iter().find(|(n, _)| *n == step.name).map_or("", |(_, t)| t);
        let _ = writeln!(s, "| {} | {} | {:.1} | {gain} | {fastest} | {next} |", step.name, step.idea, x.gflops / 1e3);
        prev = Some(x.gflops);
    }
    s
}

fn summary(r: &Results) -> String {
    let cublas = r.sgemm_run(HEADLINE).map(|x| x.cublas_gflops).unwrap_or(f64::NAN);
    format!(
        "Measured on one **{}** (compute capability {}, {} SMs, driver CUDA {}), NVRTC {}, cuBLAS {} ({}), \
         on {} with `cargo xtask sweep`; every run verified against cuBLAS and a float64 CPU reference.\n\n\
         | ceiling | value |\n|---|---:|\n\
         | FP32 SIMT peak (132 SMs x 128 lanes x 2 x clock, from the device) | {:.1} TFLOP/s |\n\
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
        r.sweep.gpu.peak_fp32_gflops / 1e3,
        cublas / 1e3,
        r.sweep.gpu.peak_dram_gbs,
        r.sweep.gpu.measured_copy_gbs,
    )
}

fn ladder(r: &Results) -> String {
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
fn tensor(r: &Results) -> String {
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

fn sweep(r: &Results) -> String {
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
fn gflops_row(r: &Results, steps: &[&str], shape: (u64, u64, u64), pct_digits: usize) -> (String, f64) {
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

fn per_step(r: &Results, step: &str) -> String {
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

/// The README's results table: GFLOP/s (% of cuBLAS) per step at the large squares.
fn readme_table(r: &Results) -> String {
    let steps = r.steps();
    let mut s = format!(
        "`cargo xtask sweep` on one {} ({} SMs, driver CUDA {}, cuBLAS {} with TF32 off), {}, alpha 1,\n\
         beta 0: GFLOP/s, with the percentage of cuBLAS measured in the same run. Generated from\n\
         [`results/{}.json`](results/{}.json) by `cargo xtask book`.\n\n| shape |",
        r.sweep.gpu.name,
        r.sweep.gpu.sms,
        r.sweep.gpu.driver_cuda_version,
        r.sweep.cublas_version,
        r.dates(|s| r.steps().contains(&s)),
        r.slug,
        r.slug,
    );
    for st in &steps {
        let _ = write!(s, " step{} |", number(st));
    }
    s += " cuBLAS |\n|---|";
    s += &"---:|".repeat(steps.len() + 1);
    s += "\n";
    for n in [1024u64, 2048, 4096, 8192] {
        let (row, cublas) = gflops_row(r, &steps, (n, n, n), 1);
        if cublas.is_finite() {
            let _ = writeln!(s, "{row} {cublas:.0} |");
        }
    }
    let mut names: Vec<&str> = steps::ALL.iter().filter(|s| s.precision != Precision::F32).map(|s| s.name).collect();
    names.dedup();
    if !names.is_empty() {
        s += "\nThe tensor-core steps, against cuBLAS in the same precision (3xTF32: against cuBLAS SGEMM):\n";
    }
    for name in names {
        let _ = write!(s, "\n- step{}: {}", number(name), tensor_readme_line(r, name));
    }
    s
}

/// One sentence for a step's README: its rate at 2048³-8192³ on this GPU.
fn step_readme_line(r: &Results, step: &str) -> String {
    let mut parts = Vec::new();
    for n in [2048u64, 4096, 8192] {
        if let Some(x) = r.run(step, (n, n, n)) {
            parts.push(format!(
                "{:.0} GFLOP/s at {} ({:.1}% of cuBLAS)",
                x.gflops,
                shape_name((n, n, n)),
                x.pct_of_cublas
            ));
        }
    }
    format!(
        "On one {} ({} sweep, `results/{}.json`): {}.\n",
        r.sweep.gpu.name,
        r.dates(|s| s == step),
        r.slug,
        parts.join(", ")
    )
}

/// One sentence for a tensor-core step's README: each precision at 4096³ against cuBLAS in that
/// precision (and the fastest cuBLAS configuration, where more than one was measured).
fn tensor_readme_line(r: &Results, name: &str) -> String {
    let parts: Vec<String> = r
        .tensor_steps()
        .iter()
        .filter(|(id, _)| id.starts_with(name))
        .filter_map(|(id, p)| {
            r.run(id, HEADLINE).map(|x| {
                let reference =
                    if *p == Precision::Tf32x3 { "cuBLAS SGEMM".to_string() } else { format!("cuBLAS {p}") };
                let fastest =
                    x.pct_of_fastest_cublas.map_or(String::new(), |v| format!(", {v:.1}% of the fastest cuBLAS"));
                format!("{p} {:.1} TFLOP/s ({:.1}% of {reference}{fastest})", x.gflops / 1e3, x.pct_of_cublas)
            })
        })
        .collect();
    format!(
        "on one {} ({} sweep, `results/{}.json`), at 4096³: {}.\n",
        r.sweep.gpu.name,
        r.dates(|s| s.starts_with(name)),
        r.slug,
        parts.join(", ")
    )
}

/// Replaces the text between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`.
fn fill(text: &str, name: &str, content: &str) -> Option<String> {
    let open = format!("<!-- generated:{name} -->\n");
    let close = format!("<!-- /generated:{name} -->");
    let start = text.find(&open)? + open.len();
    let end = start + text[start..].find(&close)?;
    Some(format!("{}{}{}", &text[..start], content, &text[end..]))
}

/// The READMEs with their generated regions refilled from the primary results file.
pub fn readmes(root: &Path, all: &[Results]) -> Vec<(PathBuf, String)> {
    let Some(r) = all.iter().find(|r| r.slug.contains("h100")).or(all.first()) else { return Vec::new() };
    let mut out = Vec::new();
    let readme = root.join("README.md");
    if let Some(text) = std::fs::read_to_string(&readme).ok().and_then(|t| fill(&t, "results", &readme_table(r))) {
        out.push((readme, text));
    }
    let mut tensor: Vec<&str> = steps::ALL.iter().filter(|s| s.precision != Precision::F32).map(|s| s.name).collect();
    tensor.dedup();
    for name in tensor {
        let path = root.join(name).join("README.md");
        let line = tensor_readme_line(r, name);
        let line = format!("{}{}", line[..1].to_uppercase(), &line[1..]);
        if let Some(text) = std::fs::read_to_string(&path).ok().and_then(|t| fill(&t, "measured", &line)) {
            out.push((path, text));
        }
    }
    for step in r.steps() {
        let path = root.join(step).join("README.md");
        if let Some(text) =
            std::fs::read_to_string(&path).ok().and_then(|t| fill(&t, "measured", &step_readme_line(r, step)))
        {
            out.push((path, text));
        }
    }
    out
}

/// Kernel sources that changed after the results were recorded, and registry steps with no results.
pub fn stale_hashes(all: &[Results]) -> Vec<String> {
    let mut problems = Vec::new();
    for r in all {
        for step in steps::ALL {
            match r.sweep.kernel_hashes.get(&step.id()).map(String::as_str) {
                Some(h) if h == step.kernel.hash() => {}
                Some(_) => problems.push(format!(
                    "{}: {} changed after these results were recorded; re-run `cargo xtask sweep` on that GPU",
                    r.slug,
                    step.id()
                )),
                None => problems.push(format!(
                    "{}: no recorded results for {}; run `cargo xtask sweep` on that GPU",
                    r.slug,
                    step.id()
                )),
            }
        }
    }
    problems
}

/// Top rungs whose kernel changed after a references file timed them: its verdicts would
/// describe a kernel that no longer exists.
pub fn stale_reference_hashes(all: &std::collections::BTreeMap<String, crate::references::References>) -> Vec<String> {
    let mut problems = Vec::new();
    for (slug, refs) in all {
        for (rung, hash) in &refs.kernel_hashes {
            match steps::by_id(rung) {
                Some(step) if step.kernel.hash() == *hash => {}
                Some(_) => problems.push(format!(
                    "references/{slug}: {rung} changed after it was timed; re-run `cargo xtask references` on that GPU \
                     (or `cargo xtask rehash` after an edit that leaves its machine code)"
                )),
                None => problems.push(format!("references/{slug}: {rung} is not a step of the registry")),
            }
        }
    }
    problems
}

/// Every `{{#include path[:anchor]}}` in the book resolves to a file, and its anchor exists.
pub fn broken_includes(book_src: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let mut pages = Vec::new();
    collect_md(book_src, &mut pages);
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap_or_default();
        for (i, part) in text.split("{{#include ").enumerate().skip(1) {
            let Some(end) = part.find("}}") else { continue };
            let spec = part[..end].trim();
            // path, path:anchor, or path:start:end (line numbers, either may be empty)
            let mut parts = spec.split(':');
            let path = parts.next().unwrap_or_default();
            let anchor = parts.next().filter(|a| !a.is_empty() && !a.chars().all(|c| c.is_ascii_digit()));
            let file = page.parent().unwrap_or(book_src).join(path);
            let where_ = format!("{} (include {i})", page.display());
            match std::fs::read_to_string(&file) {
                Err(_) => problems.push(format!("{where_}: {path} does not exist")),
                Ok(body) => {
                    if let Some(a) = anchor {
                        let starts =
                            body.contains(&format!("ANCHOR: {a}\n")) || body.contains(&format!("ANCHOR: {a}\r\n"));
                        if !starts || !body.contains(&format!("ANCHOR_END: {a}")) {
                            problems.push(format!("{where_}: {path} has no anchor `{a}`"));
                        }
                    }
                }
            }
        }
    }
    problems
}

/// Chapters whose exercises and worked answers (`labs/solutions/<chapter>.md`, `**N.**` each)
/// differ in number: an exercise added without its answer, or an answer left from one removed.
/// A copy without `labs/` (a student's handout) has nothing to compare.
pub fn unanswered_exercises(book_src: &Path, solutions: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    if !solutions.is_dir() {
        return problems;
    }
    let mut pages = Vec::new();
    collect_md(book_src, &mut pages);
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap_or_default();
        let Some((_, rest)) = text.split_once("\n## Exercises\n") else { continue };
        let section = rest.split("\n## ").next().unwrap_or_default();
        // "3. " opens an exercise, "**3.**" an answer.
        let numbered = |line: &str, mark: &str| {
            let digits = line.chars().take_while(char::is_ascii_digit).count();
            digits > 0 && line[digits..].starts_with(mark)
        };
        let exercises = section.lines().filter(|l| numbered(l, ". ")).count();
        let answers_file = solutions.join(page.file_name().unwrap_or_default());
        let answers = std::fs::read_to_string(&answers_file).unwrap_or_default();
        let answered = answers.lines().filter(|l| l.strip_prefix("**").is_some_and(|r| numbered(r, ".**"))).count();
        if answered != exercises {
            problems.push(format!(
                "{}: {exercises} exercises, {answered} worked answers in {}",
                page.display(),
                answers_file.display()
            ));
        }
    }
    problems
}

/// Files under `generated` that `files` (paths relative to it) no longer contains: the output of
/// a diagram or a step that is gone.
fn orphans(generated: &Path, files: &BTreeMap<String, String>) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() { walk(&p, out) } else { out.push(p) }
        }
    }
    let mut all = Vec::new();
    walk(generated, &mut all);
    all.into_iter()
        .filter(|p| {
            p.strip_prefix(generated).is_ok_and(|rel| !files.contains_key(&rel.to_string_lossy().replace('\\', "/")))
        })
        .collect()
}

fn collect_md(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect_md(&p, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}

pub fn run(check: bool) -> Result<(), String> {
    let root = crate::bundle::root();
    let all = crate::results::load_all(&root)?;
    let references = crate::references::load_all(&root)?;
    let generated = root.join("book/src/generated");
    let files = generate(&all, &references)?;
    let mut problems = stale_hashes(&all);
    problems.extend(stale_reference_hashes(&references));
    let readmes = readmes(&root, &all);
    if check {
        let generated_files = files.iter().map(|(rel, body)| (generated.join(rel), body.clone()));
        for (path, body) in generated_files.chain(readmes.iter().cloned()) {
            if std::fs::read_to_string(&path).ok().as_deref() != Some(body.as_str()) {
                problems.push(format!("{} is stale: run `cargo xtask book`", path.display()));
            }
        }
        for path in orphans(&generated, &files) {
            problems.push(format!("{} is no longer generated: run `cargo xtask book` to remove it", path.display()));
        }
        problems.extend(broken_includes(&root.join("book/src")));
        problems.extend(unanswered_exercises(&root.join("book/src"), &root.join("labs/solutions")));
        if problems.is_empty() {
            println!(
                "book: {} generated files and {} READMEs up to date, includes resolve, kernel hashes match, every exercise answered",
                files.len(),
                readmes.len()
            );
            return Ok(());
        }
        return Err(problems.join("\n"));
    }
    for (rel, body) in &files {
        let path = generated.join(rel);
        std::fs::create_dir_all(path.parent().unwrap_or(&generated)).map_err(|e| e.to_string())?;
        std::fs::write(&path, body).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    for path in orphans(&generated, &files) {
        std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    for (path, body) in &readmes {
        std::fs::write(path, body).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    println!("book: wrote {} files under {} and refreshed {} READMEs", files.len(), generated.display(), readmes.len());
    for p in &problems {
        eprintln!("warning: {p}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A references file that timed `rung` with `hash`.
    fn timed(rung: &str, hash: &str) -> std::collections::BTreeMap<String, crate::references::References> {
        let file = serde_json::json!({
            "schema": 1, "tool": "t", "date": "d", "gpu": "G", "cublas_version": 1,
            "kernel_hashes": { rung: hash }, "torch": null, "rows": [], "wrong": []
        });
        [("g".to_string(), serde_json::from_value(file).unwrap())].into()
    }

    #[test]
    fn an_exercise_without_its_answer_is_a_problem() {
        let dir = std::env::temp_dir().join(format!("book-exercises-{}", std::process::id()));
        let (book, solutions) = (dir.join("src"), dir.join("solutions"));
        std::fs::create_dir_all(&book).unwrap();
        std::fs::create_dir_all(&solutions).unwrap();
        let chapter = "# Step\n\n## Exercises\n\n1. One.\n2. Two,\n   on two lines.\n\n**Try it.** 3. is not one.\n";
        std::fs::write(book.join("step.md"), chapter).unwrap();
        std::fs::write(solutions.join("step.md"), "**1.** The first.\n\n**2.** The second.\n").unwrap();
        assert!(unanswered_exercises(&book, &solutions).is_empty());
        std::fs::write(book.join("step.md"), chapter.replace("**Try it.**", "3. Three.\n\n**Try it.**")).unwrap();
        let problems = unanswered_exercises(&book, &solutions);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("3 exercises, 2 worked answers"), "{problems:?}");
        // A handout has no labs/: nothing to compare.
        assert!(unanswered_exercises(&book, &dir.join("absent")).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn references_of_a_changed_rung_are_stale() {
        let step = steps::by_id("step12-epilogue-fp16").unwrap();
        assert!(stale_reference_hashes(&timed(&step.id(), &step.kernel.hash())).is_empty());
        let changed = stale_reference_hashes(&timed(&step.id(), "0000000000000000"));
        assert!(
            changed.len() == 1 && changed[0].contains("step12-epilogue-fp16 changed after it was timed"),
            "{changed:?}"
        );
        let gone = stale_reference_hashes(&timed("step99-gone-fp16", "0000000000000000"));
        assert!(gone.len() == 1 && gone[0].contains("not a step of the registry"), "{gone:?}");
    }
}
