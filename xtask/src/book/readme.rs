//! The READMEs' generated regions (`<!-- generated:NAME -->`), refilled from one results file,
//! the book's GPU's ([`super::hardware::BOOK_GPU`]) as the chapters are: the repository's README's
//! results, heading included, and the steps' READMEs.

use super::tables::gflops_row;
use crate::results::{HEADLINE, Results, number, shape_name};
use common::Precision;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The README's results section, its heading first: GFLOP/s (% of cuBLAS) per step at the large
/// squares.
fn readme_table(r: &Results) -> String {
    let steps = r.steps();
    let mut s = format!(
        "## Measured on an {}\n\n`cargo xtask sweep` on one {} ({} SMs, driver CUDA {}, cuBLAS {} with TF32 off), {}, alpha 1,\n\
         beta 0: GFLOP/s, with the percentage of cuBLAS measured in the same run. Generated from\n\
         [`results/{}.json`](results/{}.json) by `cargo xtask book`.\n\n| shape |",
        r.sweep.gpu.name,
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
        if let Some(line) = tensor_readme_line(r, name) {
            let _ = write!(s, "\n- step{}: {line}", number(name));
        }
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
/// precision (and the fastest cuBLAS configuration, where more than one was measured); none for a
/// step not swept at 4096³ on this GPU.
fn tensor_readme_line(r: &Results, name: &str) -> Option<String> {
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
    (!parts.is_empty()).then(|| {
        format!(
            "on one {} ({} sweep, `results/{}.json`), at 4096³: {}.\n",
            r.sweep.gpu.name,
            r.dates(|s| s.starts_with(name)),
            r.slug,
            parts.join(", ")
        )
    })
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
    let mut out = Vec::new();
    let readme = root.join("README.md");
    let book = all.iter().find(|r| r.slug == super::hardware::BOOK_GPU);
    if let Some(text) =
        book.and_then(|r| std::fs::read_to_string(&readme).ok().and_then(|t| fill(&t, "results", &readme_table(r))))
    {
        out.push((readme, text));
    }
    let Some(r) = book.or(all.first()) else { return out };
    let mut tensor: Vec<&str> = steps::ALL.iter().filter(|s| s.precision != Precision::F32).map(|s| s.name).collect();
    tensor.dedup();
    for name in tensor {
        let path = root.join(name).join("README.md");
        let Some(line) = tensor_readme_line(r, name) else { continue };
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
