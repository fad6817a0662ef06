//! What `cargo xtask book --check` checks beyond the generated files themselves: kernels changed
//! after their results, includes that do not resolve, exercises without worked answers, and
//! generated files nothing makes any more.

use crate::results::Results;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Kernel sources that changed after the results were recorded, and registry steps without results
/// on the book's GPU. Another GPU's file may predate a step (the H100's predates step 14): the book
/// shows that GPU's runs for the steps it has, and `notes` says which GPU measured what; a step
/// missing there is printed as a note, not a problem.
pub fn stale_hashes(all: &[Results], book_gpu: &str) -> Vec<String> {
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
                None if r.slug == book_gpu => problems.push(format!(
                    "{}: no recorded results for {}; run `cargo xtask sweep` on that GPU",
                    r.slug,
                    step.id()
                )),
                None => eprintln!("note: {} has no results for {} (measured before it)", r.slug, step.id()),
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

/// Every `{{#include path[:anchor]}}` in the book resolves to a file, and its anchor exists; every
/// generated picture it shows exists.
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
        // Pictures the book tool makes: a chapter that shows one it no longer draws.
        for (i, part) in text.split("](generated/").enumerate().skip(1) {
            let Some(end) = part.find(')') else { continue };
            let path = format!("generated/{}", &part[..end]);
            if !page.parent().unwrap_or(book_src).join(&path).is_file() {
                problems.push(format!("{} (picture {i}): {path} does not exist", page.display()));
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
pub(super) fn orphans(generated: &Path, files: &BTreeMap<String, String>) -> Vec<PathBuf> {
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

pub(super) fn collect_md(dir: &Path, out: &mut Vec<PathBuf>) {
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
    fn a_missing_include_anchor_or_picture_is_a_problem() {
        let dir = std::env::temp_dir().join(format!("book-includes-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("generated/diagrams")).unwrap();
        std::fs::write(dir.join("generated/values.md"), "ANCHOR: a\n1%\nANCHOR_END: a\n").unwrap();
        std::fs::write(dir.join("generated/diagrams/d.svg"), "<svg/>").unwrap();
        let page = "At {{#include generated/values.md:a}}.\n\n![d](generated/diagrams/d.svg)\n";
        std::fs::write(dir.join("p.md"), page).unwrap();
        assert!(broken_includes(&dir).is_empty(), "{:?}", broken_includes(&dir));
        std::fs::write(dir.join("p.md"), page.replace(":a}}", ":b}}").replace("d.svg", "gone.svg")).unwrap();
        let problems = broken_includes(&dir);
        assert!(
            problems.len() == 2
                && problems[0].contains("no anchor `b`")
                && problems[1].contains("gone.svg does not exist"),
            "{problems:?}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
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
