//! No typed figures: a percentage, a FLOP/s figure or a speedup in a chapter's prose must come
//! from a generated source, a named value (`values.rs`) or a generated table, never from the
//! keyboard, where it would drift from the results it claims. `cargo xtask book --check` finds
//! every such figure outside code (fenced blocks and `code spans`), includes and HTML comments,
//! reports them all, and fails on those in the chapters listed in `book/figures.txt`.
//!
//! A figure that is not a measurement says so with a comment right after it, naming one of
//! [`NOT_MEASURED`]: `Prediction: 60-70%<!-- predicted --> of cuBLAS`. Datasheet constants are
//! not among them: they live in one generated table (`hardware.rs`), and the GPU's own readings
//! are named values.

use std::path::{Path, PathBuf};

/// Why a figure may be typed: it is not a measurement. The whole allowance.
pub const NOT_MEASURED: &[(&str, &str)] = &[
    ("predicted", "a prediction, written before the measurement it is compared with"),
    ("arithmetic", "computed from the problem's sizes or a model, not measured"),
    ("target", "a goal or a threshold (100% of cuBLAS; a question's 10%)"),
    ("external", "a figure of another project's kernel, which no tool here measures; its source named beside it"),
];

/// The file that lists the chapters the check fails on, one a line (`#` starts a comment).
pub const CHECKED: &str = "figures.txt";

/// A typed figure: where, and the figure as written.
#[derive(Debug, PartialEq)]
pub struct Finding {
    pub page: PathBuf,
    pub line: usize,
    pub figure: String,
}

/// What the check found, in every chapter.
pub struct Report {
    findings: Vec<Finding>,
    checked: Vec<PathBuf>,
}

/// Reads `book/figures.txt` and every chapter of `book/src` (not `generated/`).
pub fn check(book: &Path) -> Result<Report, String> {
    let list = book.join(CHECKED);
    let text = std::fs::read_to_string(&list).map_err(|e| format!("{}: {e}", list.display()))?;
    let src = book.join("src");
    // Pages are named from the repository's root: book/src/step06.md.
    let root = book.parent().unwrap_or(book);
    let mut checked = Vec::new();
    for name in text.lines().map(|l| l.split('#').next().unwrap_or_default().trim()).filter(|l| !l.is_empty()) {
        let page = src.join(name);
        if !page.is_file() {
            return Err(format!("{}: {name} is not a chapter of {}", list.display(), src.display()));
        }
        checked.push(page.strip_prefix(root).unwrap_or(&page).to_path_buf());
    }
    let mut pages = Vec::new();
    super::checks::collect_md(&src, &mut pages);
    let mut findings = Vec::new();
    for page in pages.into_iter().filter(|p| !p.starts_with(src.join("generated"))) {
        let text = std::fs::read_to_string(&page).map_err(|e| format!("{}: {e}", page.display()))?;
        let name = page.strip_prefix(root).unwrap_or(&page).to_path_buf();
        findings.extend(typed_figures(&text).into_iter().map(|(line, figure)| Finding {
            page: name.clone(),
            line,
            figure,
        }));
    }
    Ok(Report { findings, checked })
}

impl Report {
    fn is_checked(&self, f: &Finding) -> bool {
        self.checked.contains(&f.page)
    }

    /// One line per figure in the chapters the check does not fail on yet.
    pub fn report(&self) {
        let pending: Vec<&Finding> = self.findings.iter().filter(|f| !self.is_checked(f)).collect();
        if pending.is_empty() {
            return;
        }
        println!("typed figures in chapters not yet in book/{CHECKED} (not failed):");
        for f in pending {
            println!("  {}:{}: {}", f.page.display(), f.line, f.figure);
        }
    }

    /// The figures of the checked chapters, each a problem.
    pub fn failures(&self) -> Vec<String> {
        self.findings
            .iter()
            .filter(|f| self.is_checked(f))
            .map(|f| {
                format!(
                    "{}:{}: {} is typed: make it a named value (generated/values.md), or mark why it is not a measurement",
                    f.page.display(),
                    f.line,
                    f.figure
                )
            })
            .collect()
    }

    pub fn summary(&self) -> String {
        let pending = self.findings.iter().filter(|f| !self.is_checked(f)).count();
        format!("no typed figure in the {} chapters of book/{CHECKED} ({pending} in the others)", self.checked.len())
    }
}

/// The typed figures of a chapter: (line, figure).
pub fn typed_figures(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let (mut fenced, mut comment) = (false, false);
    for (i, raw) in text.lines().enumerate() {
        let t = raw.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let (prose, still_in_comment) = prose_of(raw, comment);
        comment = still_in_comment;
        out.extend(figures_in(&prose).into_iter().map(|f| (i + 1, f)));
    }
    out
}

/// The line without its code spans, includes and comments; a comment that follows a figure
/// right away is kept as `<!--kind-->` for [`figures_in`]. `comment`: the line starts inside one.
fn prose_of(line: &str, mut comment: bool) -> (String, bool) {
    let mut out = String::new();
    let mut rest = line;
    while !rest.is_empty() {
        if comment {
            match rest.find("-->") {
                Some(end) => {
                    rest = &rest[end + 3..];
                    comment = false;
                }
                None => rest = "",
            }
        } else if let Some(after) = rest.strip_prefix("<!--") {
            let end = after.find("-->");
            let body = after[..end.unwrap_or(after.len())].trim();
            if NOT_MEASURED.iter().any(|(k, _)| *k == body) {
                out.push_str(&format!("<!--{body}-->"));
            }
            match end {
                Some(end) => rest = &after[end + 3..],
                None => {
                    comment = true;
                    rest = "";
                }
            }
        } else if rest.starts_with("{{#") {
            rest = rest.find("}}").map_or("", |e| &rest[e + 2..]);
            out.push(' ');
        } else if rest.starts_with('`') {
            // A code span ends at the next run of as many backticks.
            let ticks = rest.len() - rest.trim_start_matches('`').len();
            let body = &rest[ticks..];
            rest = body.find(&"`".repeat(ticks)).map_or("", |e| &body[e + ticks..]);
            out.push(' ');
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    (out, comment)
}

/// The figures of one line of prose: a number or a range of two (`95-96`, `1.37-1.41`) followed
/// by `%`, by `x` (a speedup: `1.35x`, not `16x8`), by a FLOP/s unit, or by `times as` / `times
/// faster` / `times slower`; unless a not-measured mark follows it.
fn figures_in(prose: &str) -> Vec<String> {
    let chars: Vec<char> = prose.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts = chars[i].is_ascii_digit()
            && (i == 0 || !(chars[i - 1].is_alphanumeric() || matches!(chars[i - 1], '.' | '_' | '^' | ',' | '-')));
        if !starts {
            i += 1;
            continue;
        }
        let mut end = number_end(&chars, i);
        // A range: 95-96, 1.37–1.41, 6 to 12.
        for sep in ["-", "–", " to "] {
            let sep: Vec<char> = sep.chars().collect();
            let at = end;
            if chars[at..].starts_with(&sep) && chars.get(at + sep.len()).is_some_and(char::is_ascii_digit) {
                end = number_end(&chars, at + sep.len());
                break;
            }
        }
        let rest: String = chars[end..].iter().collect();
        let unit = figure_unit(&rest);
        if let Some(unit) = unit {
            let after = rest[unit.len()..].trim_start();
            let marked = NOT_MEASURED.iter().any(|(k, _)| after.starts_with(&format!("<!--{k}-->")));
            if !marked {
                let number: String = chars[i..end].iter().collect();
                out.push(format!("{number}{unit}"));
            }
        }
        i = end.max(i + 1);
    }
    out
}

/// The end of the number starting at `i`: digits, thousands commas and one decimal point.
fn number_end(chars: &[char], mut i: usize) -> usize {
    let digit_at = |j: usize| chars.get(j).is_some_and(char::is_ascii_digit);
    while i < chars.len() {
        if chars[i].is_ascii_digit()
            || (matches!(chars[i], ',' | '.') && digit_at(i + 1) && digit_at(i.wrapping_sub(1)))
        {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// The unit that makes the number before `rest` a figure, as written (with its spaces).
fn figure_unit(rest: &str) -> Option<&str> {
    let spaced = rest.len() - rest.trim_start().len();
    let word = &rest[spaced..];
    for unit in ["%", "\\%", "GFLOP/s", "TFLOP/s", "PFLOP/s", "FLOP/s", "GFLOPS", "TFLOPS"] {
        if word.starts_with(unit) {
            return Some(&rest[..spaced + unit.len()]);
        }
    }
    if rest.starts_with('x') && !rest[1..].starts_with(|c: char| c.is_alphanumeric()) {
        return Some("x");
    }
    [" times as", " times faster", " times slower"].into_iter().find(|phrase| rest.starts_with(phrase))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<String> {
        typed_figures(text).into_iter().map(|(_, f)| f).collect()
    }

    #[test]
    fn figures_in_prose_are_found() {
        assert_eq!(
            found("Step 6 runs at 95-96% of cuBLAS, 1.37x step 5 and 48,917 GFLOP/s; 2.2-2.5 times as fast."),
            ["95-96%", "1.37x", "48,917 GFLOP/s", "2.2-2.5 times as"]
        );
        assert_eq!(found("a 6x gain, 4.5 \\% of it, 66.9 TFLOP/s"), ["6x", "4.5 \\%", "66.9 TFLOP/s"]);
    }

    #[test]
    fn what_is_not_a_typed_figure() {
        // Sizes, hex, identifiers, exponents, code, includes and comments.
        let text = "A 16x8 tile of 128 x 128, 3xTF32, 0x1000, sm_90, 2^-19, 4096³ and `95%`.\n\
                    {{#include generated/values.md:step06-double-buffer_4096_pct}} of cuBLAS\n\
                    ```console\nncu 95% 1.5x\n```\n\
                    <!-- 12% in a comment\n   still 13% -->\n";
        assert!(found(text).is_empty(), "{:?}", found(text));
    }

    #[test]
    fn a_mark_says_why_a_figure_is_not_measured() {
        assert!(found("Prediction: 60-70%<!-- predicted --> of cuBLAS, 6.6x <!--arithmetic--> fewer").is_empty());
        // Only the kinds of NOT_MEASURED, and only right after the figure.
        assert_eq!(found("60%<!-- measured --> and 7% of it <!--target-->"), ["60%", "7%"]);
    }

    #[test]
    fn lines_are_counted_through_code_and_comments() {
        let text = "one\n```\n1%\n```\n<!--\n2%\n-->\nthree 3%\n";
        assert_eq!(typed_figures(text), [(8, "3%".to_string())]);
    }

    #[test]
    fn the_checked_chapters_are_read_from_their_list() {
        let dir = std::env::temp_dir().join(format!("book-figures-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src/generated")).unwrap();
        std::fs::write(dir.join("src/a.md"), "at 95% of it\n").unwrap();
        std::fs::write(dir.join("src/b.md"), "at 96% of it\n").unwrap();
        std::fs::write(dir.join("src/generated/t.md"), "| 97% |\n").unwrap();
        std::fs::write(dir.join(CHECKED), "# the list\na.md\n").unwrap();
        let report = check(&dir).unwrap();
        let failures = report.failures();
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(failures[0].contains("a.md:1: 95% is typed"), "{failures:?}");
        assert!(report.summary().contains("1 in the others"), "{}", report.summary());
        std::fs::write(dir.join(CHECKED), "c.md\n").unwrap();
        assert!(check(&dir).err().unwrap().contains("c.md is not a chapter"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
