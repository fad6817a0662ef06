//! `cargo xtask book [--check]`: the book's tables and charts, made from the recorded results
//! alone (`results/<gpu>.json`, `results/references/<gpu>.json`, `results/profiles/<gpu>/`,
//! `results/partials/<gpu>.json`, `results/fp8-promotion/<gpu>.json`) into `book/src/generated/<gpu>/`, the same for the book's GPU
//! ([`BOOK_GPU`]) in `book/src/generated/book-gpu/`, which the chapters include, the named values
//! the chapters' prose includes (`generated/values.md`, see `values.rs`), the diagrams, made from
//! the steps' launch geometry (`generated/diagrams/`, see `svg/diagram`), and the diffs that make
//! the Hopper rungs, from their kernels (`generated/diffs/`, see `diffs.rs`). With `--check`
//! nothing is written; it fails when a generated file is stale, when a kernel changed after its
//! recorded results, profiles or partials (source hash), when an `{{#include}}` of the book or its
//! anchor does not resolve, and when a chapter of `book/figures.txt` types a figure that no
//! generated source backs (see `figures.rs`).

mod checks;
mod diffs;
mod figures;
pub mod hardware;
mod partials;
pub mod profiles;
mod promotion;
mod readme;
mod tables;
mod values;

use crate::references::References;
use crate::results::Results;
pub use hardware::BOOK_GPU;
use std::collections::BTreeMap;
use std::path::Path;

/// Where the book GPU's generated files are written a second time, under a name that does not
/// change with [`BOOK_GPU`], for the chapters to include.
pub const BOOK_GPU_DIR: &str = "book-gpu";

/// Every generated file, path relative to `book/src/generated/`, and its contents: from each
/// GPU's sweep, its references file and its profiles where it has them; the book GPU's again in
/// [`BOOK_GPU_DIR`]; and the named values the chapters under `book_src` include.
pub fn generate(
    book_src: &Path,
    all: &[Results],
    references: &BTreeMap<String, References>,
    profiles: &BTreeMap<String, profiles::Profiles>,
    partials: &partials::Partials,
    promotion: &promotion::Promotions,
) -> Result<BTreeMap<String, String>, String> {
    let book = all.iter().find(|r| r.slug == BOOK_GPU).ok_or_else(|| {
        format!(
            "no results/{BOOK_GPU}.json: the book's GPU (BOOK_GPU in xtask/src/book/hardware.rs) has no recorded sweep"
        )
    })?;
    let mut out = crate::svg::diagram::generate(book)?;
    out.extend(diffs::files()?);
    for r in all {
        let files = gpu_files(r, references.get(&r.slug), profiles.get(&r.slug));
        for (rel, body) in files {
            if r.slug == BOOK_GPU {
                out.insert(format!("{BOOK_GPU_DIR}/{rel}"), body.clone());
            }
            out.insert(format!("{}/{rel}", r.slug), body);
        }
    }
    for (slug, p) in partials {
        for (rel, body) in partials::tables(p) {
            if *slug == BOOK_GPU {
                out.insert(format!("{BOOK_GPU_DIR}/{rel}"), body.clone());
            }
            out.insert(format!("{slug}/{rel}"), body);
        }
    }
    for (slug, p) in promotion {
        if *slug == BOOK_GPU {
            out.insert(format!("{BOOK_GPU_DIR}/fp8-promotion.md"), promotion::table(p));
        }
        out.insert(format!("{slug}/fp8-promotion.md"), promotion::table(p));
    }
    out.insert("hardware.md".into(), hardware::table(all));
    let sources = values::Sources { all, profiles, partials, promotion };
    out.insert(values::FILE.into(), values::file(book_src, &sources)?);
    Ok(out)
}

/// One GPU's files, paths relative to its directory.
fn gpu_files(
    r: &Results,
    refs: Option<&References>,
    profiles: Option<&profiles::Profiles>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some(refs) = refs {
        out.insert("references.md".into(), crate::references::targets(refs));
        out.insert("references-all.md".into(), crate::references::every(refs));
        out.insert("references-verdicts.md".into(), crate::references::verdicts(refs));
        out.insert("references-energy.md".into(), crate::references::energy_table(refs));
        out.insert("references-decode.md".into(), crate::references::decode(refs));
    }
    out.insert("summary.md".into(), tables::summary(r));
    out.insert("ladder.md".into(), tables::ladder(r));
    out.insert("sweep.md".into(), tables::sweep(r));
    for step in r.steps() {
        out.insert(format!("{step}.md"), tables::per_step(r, step));
    }
    for (id, _) in r.tensor_steps() {
        out.insert(format!("{id}.md"), tables::per_step(r, &id));
    }
    // The profile tables of the GPUs that have profiles, and the book's (where they are due).
    if profiles.is_some() || r.slug == BOOK_GPU {
        for step in steps::ALL {
            out.insert(format!("profile-{}.md", step.id()), profiles::table(&r.sweep.gpu.name, step, profiles));
        }
    }
    out.insert("tensor.md".into(), tables::tensor(r));
    out.insert("climb.md".into(), tables::climb(r, profiles));
    out.insert("gflops.svg".into(), crate::svg::chart::gflops(r));
    out.insert("scaling.svg".into(), crate::svg::chart::scaling(r));
    let decode = crate::svg::chart::decode(r);
    if !decode.is_empty() {
        out.insert("decode.svg".into(), decode);
    }
    out.insert("roofline.svg".into(), crate::svg::roofline::roofline(r));
    out
}

pub fn run(check: bool) -> Result<(), String> {
    let root = crate::bundle::root();
    let book_src = root.join("book/src");
    let all = crate::results::load_all(&root)?;
    let references = crate::references::load_all(&root)?;
    let profiles = profiles::load_all(&root)?;
    let partials = partials::load_all(&root)?;
    let promotion = promotion::load_all(&root)?;
    let generated = book_src.join("generated");
    let files = generate(&book_src, &all, &references, &profiles, &partials, &promotion)?;
    let mut problems = checks::stale_hashes(&all, BOOK_GPU);
    problems.extend(checks::stale_reference_hashes(&references));
    problems.extend(profiles::stale(&profiles));
    problems.extend(partials::stale(&partials));
    let readmes = readme::readmes(&root, &all);
    let figures = figures::check(&root.join("book"))?;
    if check {
        let generated_files = files.iter().map(|(rel, body)| (generated.join(rel), body.clone()));
        for (path, body) in generated_files.chain(readmes.iter().cloned()) {
            if std::fs::read_to_string(&path).ok().as_deref() != Some(body.as_str()) {
                problems.push(format!("{} is stale: run `cargo xtask book`", path.display()));
            }
        }
        for path in checks::orphans(&generated, &files) {
            problems.push(format!("{} is no longer generated: run `cargo xtask book` to remove it", path.display()));
        }
        problems.extend(checks::broken_includes(&book_src));
        problems.extend(checks::unanswered_exercises(&book_src, &root.join("labs/solutions")));
        figures.report();
        problems.extend(figures.failures());
        if problems.is_empty() {
            println!(
                "book: {} generated files and {} READMEs up to date, includes resolve, kernel hashes match, every exercise answered, {}",
                files.len(),
                readmes.len(),
                figures.summary()
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
    for path in checks::orphans(&generated, &files) {
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
