//! The diff that makes a rung (`generated/diffs/`): for pairs of consecutive rungs whose kernels
//! are related, a unified diff of the later rung's kernel against the earlier's
//! (`step10-step11.diff`), of one region of both (an anchor: `step12-step13-kernel.diff`), or of a
//! header the later rung adds, a new file (`step09-step10-warpgroups.diff`); [`DIFFS`] lists them.
//! A chapter shows one in a ```` ```diff ```` block by `{{#include generated/diffs/...}}` instead
//! of pasting code, and `cargo xtask book --check` keeps it current with the kernels.
//!
//! The texts are the registry's (what NVRTC compiles), less what would hide the idea: a file's
//! opening comment (it describes its rung as a whole, which the chapter does), the book's
//! `ANCHOR` lines, and changes of indentation alone (a block moved under an `if` is shown as the
//! lines that changed, not as all of them; unchanged lines show the later rung's indentation).

use crate::results::number;
use std::collections::BTreeMap;
use std::fmt::Write;

/// What a diff compares.
pub enum Part {
    /// The two kernel files.
    Kernel,
    /// The region of both kernels between `ANCHOR: name` and `ANCHOR_END: name`.
    Region(&'static str),
    /// A header the later rung owns (`step_header!`), against nothing.
    NewHeader(&'static str),
}

/// The diffs the chapters show: (earlier rung, later rung, what is compared), crate names. Steps
/// 13 and 14 add whole functions beside step 12's kernel; their diffs are the kernel function
/// alone (step 14 builds on step 12, as step 13 does). Step 15 builds on step 12 too.
pub const DIFFS: &[(&str, &str, Part)] = &[
    ("step09-wgmma-tma", "step10-warp-specialized", Part::Kernel),
    ("step09-wgmma-tma", "step10-warp-specialized", Part::NewHeader("warpgroups.cuh")),
    ("step10-warp-specialized", "step11-cluster-persistent", Part::Kernel),
    ("step11-cluster-persistent", "step12-epilogue", Part::Kernel),
    ("step12-epilogue", "step13-3xtf32", Part::Region("kernel")),
    ("step12-epilogue", "step14-fp8", Part::Region("kernel")),
    ("step12-epilogue", "step15-skinny", Part::Kernel),
    ("step12-epilogue", "step15-skinny", Part::NewHeader("skinny.cuh")),
];

/// Unchanged lines shown around each change: enough to find the place in the kernel, few enough
/// that a change of a few lines reads as one.
const CONTEXT: usize = 2;

/// The diffs, by path relative to `generated/`.
pub fn files() -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for (a, b, part) in DIFFS {
        let step = |name: &str| steps::find(name).ok_or_else(|| format!("diffs: {name} is not a step of the registry"));
        let (from, to) = (&step(a)?.kernel, &step(b)?.kernel);
        let pair = format!("diffs/step{}-step{}", number(a), number(b));
        let (file, diff) = match part {
            Part::Kernel => {
                (format!("{pair}.diff"), unified((&from.name, lines(&from.code)), (&to.name, lines(&to.code))))
            }
            Part::Region(anchor) => {
                let missing = |name: &str| format!("diffs: {name} has no anchor `{anchor}`");
                let old = region(&from.code, anchor).ok_or_else(|| missing(&from.name))?;
                let new = region(&to.code, anchor).ok_or_else(|| missing(&to.name))?;
                (format!("{pair}-{anchor}.diff"), unified((&from.name, old), (&to.name, new)))
            }
            Part::NewHeader(name) => {
                let h = to.headers.iter().find(|h| h.name == *name && h.path.starts_with(&format!("{b}/")));
                let h = h.ok_or_else(|| format!("diffs: {b} owns no header {name}"))?;
                let stem = name.split('.').next().unwrap_or(name);
                (format!("{pair}-{stem}.diff"), unified(("/dev/null", Vec::new()), (h.path, lines(h.text))))
            }
        };
        out.insert(file, diff);
    }
    Ok(out)
}

/// The lines between `ANCHOR: name` and its end, each with its line number in the file.
fn region<'a>(text: &'a str, name: &str) -> Option<Vec<(usize, &'a str)>> {
    let all: Vec<(usize, &str)> = text.lines().enumerate().map(|(i, l)| (i + 1, l)).collect();
    let start = all.iter().position(|(_, l)| l.trim() == format!("// ANCHOR: {name}"))?;
    let end = start + all[start..].iter().position(|(_, l)| l.trim() == format!("// ANCHOR_END: {name}"))?;
    Some(all[start + 1..end].iter().copied().filter(|(_, l)| !l.contains("ANCHOR")).collect())
}

/// The lines a diff compares: without the opening comment and the anchors, each with its line
/// number in the file.
fn lines(text: &str) -> Vec<(usize, &str)> {
    let opening = text.lines().take_while(|l| l.trim_start().starts_with("//")).count();
    text.lines().enumerate().skip(opening).filter(|(_, l)| !l.contains("ANCHOR")).map(|(i, l)| (i + 1, l)).collect()
}

/// A line as the comparison sees it: its words, whatever the spaces between them.
fn words(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    /// The same line in both: indices into the earlier and the later text.
    Same(usize, usize),
    Gone(usize),
    New(usize),
}

/// A longest common subsequence of the two texts' lines, as the edit that turns one into the
/// other (removals before additions within a change). The kernels are a few hundred lines: the
/// full table is small.
fn edit(a: &[String], b: &[String]) -> Vec<Op> {
    let (n, m) = (a.len(), b.len());
    let mut longest = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            longest[i][j] =
                if a[i] == b[j] { longest[i + 1][j + 1] + 1 } else { longest[i + 1][j].max(longest[i][j + 1]) };
        }
    }
    let (mut i, mut j, mut ops) = (0, 0, Vec::new());
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push(Op::Same(i, j));
            (i, j) = (i + 1, j + 1);
        } else if i < n && (j == m || longest[i + 1][j] >= longest[i][j + 1]) {
            ops.push(Op::Gone(i));
            i += 1;
        } else {
            ops.push(Op::New(j));
            j += 1;
        }
    }
    ops
}

/// The unified diff of the old lines (a name and its numbered lines) against the new,
/// [`CONTEXT`] lines around each change; hunk headers give the files' own line numbers.
fn unified((old_name, a): (&str, Vec<(usize, &str)>), (new_name, b): (&str, Vec<(usize, &str)>)) -> String {
    let key = |t: &[(usize, &str)]| t.iter().map(|(_, l)| words(l)).collect::<Vec<_>>();
    let ops = edit(&key(&a), &key(&b));
    let mut s = format!("--- {old_name}\n+++ {new_name}\n");
    let changed: Vec<usize> = (0..ops.len()).filter(|&k| !matches!(ops[k], Op::Same(..))).collect();
    let mut k = 0;
    while k < changed.len() {
        // One hunk: changes whose unchanged gap is at most twice the context.
        let mut last = k;
        while last + 1 < changed.len() && changed[last + 1] - changed[last] <= 2 * CONTEXT + 1 {
            last += 1;
        }
        let (start, end) = (changed[k].saturating_sub(CONTEXT), (changed[last] + CONTEXT + 1).min(ops.len()));
        let hunk = &ops[start..end];
        let old_lines = hunk.iter().filter(|o| !matches!(o, Op::New(_))).count();
        let new_lines = hunk.iter().filter(|o| !matches!(o, Op::Gone(_))).count();
        // Where the hunk starts in each file (after the lines before it, for an empty side).
        let at = |side: &[(usize, &str)], index: Option<usize>, before: usize| {
            index.map_or_else(|| side.get(before.wrapping_sub(1)).map_or(0, |l| l.0), |i| side[i].0)
        };
        let first_old = hunk.iter().find_map(|o| match o {
            Op::Same(i, _) | Op::Gone(i) => Some(*i),
            Op::New(_) => None,
        });
        let first_new = hunk.iter().find_map(|o| match o {
            Op::Same(_, j) | Op::New(j) => Some(*j),
            Op::Gone(_) => None,
        });
        let before = |side_new: bool| {
            ops[..start]
                .iter()
                .filter(|o| if side_new { !matches!(o, Op::Gone(_)) } else { !matches!(o, Op::New(_)) })
                .count()
        };
        let _ = writeln!(
            s,
            "@@ -{},{old_lines} +{},{new_lines} @@",
            at(&a, first_old, before(false)),
            at(&b, first_new, before(true))
        );
        for op in hunk {
            let _ = match *op {
                Op::Same(_, j) => writeln!(s, " {}", b[j].1),
                Op::Gone(i) => writeln!(s, "-{}", a[i].1),
                Op::New(j) => writeln!(s, "+{}", b[j].1),
            };
        }
        k = last + 1;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_with_its_context() {
        let old = "// the old rung\nint a;\nint b;\nint c;\nint d;\nint e;\nint f;\nint g;\n";
        let new = "// the new rung, a longer comment\n// on two lines\nint a;\nint b;\nint c;\nint D;\nint e;\nint f;\nint g;\n";
        let d = unified(("old.cu", lines(old)), ("new.cu", lines(new)));
        assert_eq!(
            d,
            "--- old.cu\n+++ new.cu\n@@ -3,5 +4,5 @@\n int b;\n int c;\n-int d;\n+int D;\n int e;\n int f;\n"
        );
    }

    #[test]
    fn indentation_and_anchors_are_not_changes() {
        let old = "x();\n// ANCHOR: loop\nfor (;;) {\n    y();\n}\n// ANCHOR_END: loop\n";
        let new = "x();\nif (p) {\n    for (;;) {\n        y();\n    }\n}\n";
        let d = unified(("a", lines(old)), ("b", lines(new)));
        // The loop kept, at its new indentation; only the `if` and its brace are new.
        assert_eq!(d, "--- a\n+++ b\n@@ -1,4 +1,6 @@\n x();\n+if (p) {\n     for (;;) {\n         y();\n     }\n+}\n");
    }

    #[test]
    fn a_new_file_and_far_apart_changes() {
        let d = unified(("/dev/null", Vec::new()), ("h.cuh", lines("// what it is\n#pragma once\nint x;\n")));
        assert_eq!(d, "--- /dev/null\n+++ h.cuh\n@@ -0,0 +2,2 @@\n+#pragma once\n+int x;\n");
        let old: String = (0..20).map(|i| format!("line {i};\n")).collect();
        let new = old.replace("line 2;", "line two;").replace("line 17;", "line seventeen;");
        assert_eq!(unified(("a", lines(&old)), ("b", lines(&new))).matches("\n@@ ").count(), 2);
        // A region: its lines alone, numbered as in the file.
        let text = "a;\n// ANCHOR: r\nb;\n// ANCHOR: inner\nc;\n// ANCHOR_END: inner\n// ANCHOR_END: r\nd;\n";
        assert_eq!(region(text, "r").unwrap(), [(3, "b;"), (5, "c;")]);
        assert!(region(text, "none").is_none());
    }

    #[test]
    fn every_rung_pair_has_its_kernel_diff() {
        let files = files().unwrap();
        assert_eq!(files.len(), DIFFS.len());
        for name in
            ["diffs/step10-step11.diff", "diffs/step12-step13-kernel.diff", "diffs/step09-step10-warpgroups.diff"]
        {
            let d = &files[name];
            assert!(d.starts_with("--- ") && d.contains("\n@@ -"), "{name}:\n{d}");
            assert!(!d.contains("ANCHOR"), "{name}");
        }
    }
}
