//! Partial rungs: `results/partials/<gpu>.json`, one sweep of a rung that adds two ideas, of the
//! rung before it, and of the rung with each idea left out (`cargo xtask sweep --steps 10,11
//! --partials`; `Sweep::partials`), so that each idea's gain compares runs of one sweep. The book
//! shows each such rung's as a table (`generated/<gpu>/partials-stepNN.md`), and the chapters'
//! prose names their figures (`partials_RUN_...`, `values.rs`). Staleness is checked as for the
//! sweeps: a kernel changed after the file recorded it fails `book --check`.

use crate::results::{Results, Run, number, shape_name};
use common::Step;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// The partials sweeps, by GPU slug.
pub type Partials = BTreeMap<String, Results>;

/// Every `results/partials/<gpu>.json` (none: an empty map); an error names the file.
pub fn load_all(root: &Path) -> Result<Partials, String> {
    let dir = root.join("results/partials");
    let Ok(files) = crate::results::json_files(&dir) else { return Ok(Partials::new()) };
    files
        .iter()
        .map(|p| {
            let slug = p.file_stem().unwrap_or_default().to_string_lossy().into_owned();
            Ok((slug.clone(), Results { slug, sweep: crate::results::read(p)? }))
        })
        .collect()
}

/// Kernels changed after their partials sweep.
pub fn stale(all: &Partials) -> Vec<String> {
    let mut problems = Vec::new();
    for (slug, r) in all {
        for (id, hash) in &r.sweep.kernel_hashes {
            let file = format!("results/partials/{slug}.json");
            match steps::by_id(id) {
                None => problems.push(format!("{file}: {id} is not a step of the registry")),
                Some(step) if step.kernel.hash() == *hash => {}
                Some(_) => problems.push(format!(
                    "{file}: {id} changed after this sweep: run `cargo xtask sweep --partials` of its steps on that GPU again"
                )),
            }
        }
    }
    problems
}

/// The run `name` names in a partials sweep at `shape`: a registry id (that rung, whole) or
/// `ID-PART`, the partial rung PART of ID (`step11-cluster-persistent-fp16-no-multicast`).
pub fn run<'a>(r: &'a Results, name: &str, shape: (u64, u64, u64)) -> Result<&'a Run, String> {
    let file = format!("results/partials/{}.json", r.slug);
    let found = if steps::by_id(name).is_some() {
        r.run(name, shape)
    } else {
        let (id, part) = split(name).ok_or_else(|| format!("{name} is neither a registry id nor ID-PARTIAL"))?;
        r.sweep.partials.iter().find(|x| x.step == id && x.partial.as_deref() == Some(part) && x.shape() == shape)
    };
    found.ok_or_else(|| format!("{file} has no run of {name} at {}", shape_name(shape)))
}

/// `ID-PART` as the registry id and the name of one of its partial rungs.
fn split(name: &str) -> Option<(String, &str)> {
    steps::ALL.iter().find_map(|s| {
        let id = s.id();
        let part = name.strip_prefix(&id)?.strip_prefix('-')?;
        s.partials.iter().any(|p| p.name == part).then_some((id, part))
    })
}

/// The rung before `step`: the registry's last entry of another step in its precision.
fn rung_before(step: &Step) -> Option<&'static Step> {
    let at = steps::ALL.iter().position(|s| s.id() == step.id())?;
    steps::ALL[..at].iter().rev().find(|s| s.precision == step.precision && s.name != step.name)
}

/// One table for each rung of the sweep that has partial runs, `partials-stepNN.md`.
pub fn tables(r: &Results) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for step in steps::ALL.iter().filter(|s| r.sweep.partials.iter().any(|x| x.step == s.id())) {
        out.insert(format!("partials-step{}.md", number(step.name)), table(r, step));
    }
    out
}

/// The rung before, each partial rung and the whole rung at each shape: TFLOP/s, % of the
/// fastest cuBLAS configuration timed beside the run, and the gain over the rung before.
fn table(r: &Results, step: &Step) -> String {
    let id = step.id();
    let before = rung_before(step);
    let short = |s: &Step| format!("step {}", number(s.name).trim_start_matches('0'));
    let mut rows: Vec<(String, String)> = Vec::new();
    if let Some(b) = before {
        rows.push((short(b), b.id()));
    }
    for p in step.partials {
        rows.push((format!("{} `{}`", short(step), p.name), format!("{id}-{}", p.name)));
    }
    rows.push((short(step), id.clone()));
    let mut dates: Vec<&str> =
        r.runs().chain(&r.sweep.partials).map(|x| x.date.as_deref().unwrap_or(&r.sweep.date)).collect();
    dates.sort();
    dates.dedup();
    let base = before.map_or(String::new(), |b| format!("x {}", short(b)));
    let mut s = format!(
        "One sweep on the {}, {} (`results/partials/{}.json`), precision `{}`: TFLOP/s, the percentage of the fastest cuBLAS \
         configuration timed beside each run, and the gain over {} at the same shape in this sweep.\n\n\
         | shape | rung | TFLOP/s | % of the fastest cuBLAS | {base} |\n|---|---|---:|---:|---:|\n",
        r.sweep.gpu.name,
        crate::results::and_list(&dates),
        r.slug,
        step.precision,
        before.map_or("the rung before".to_string(), short),
    );
    let mut shapes: Vec<(u64, u64, u64)> = r.sweep.partials.iter().filter(|x| x.step == id).map(Run::shape).collect();
    shapes.dedup();
    for shape in shapes {
        let base_run = before.and_then(|b| r.run(&b.id(), shape));
        for (i, (label, name)) in rows.iter().enumerate() {
            let Ok(x) = run(r, name, shape) else { continue };
            let cell = if i == 0 { shape_name(shape) } else { String::new() };
            let fastest = x.pct_of_fastest_cublas.map_or("-".to_string(), |v| format!("{v:.1}%"));
            let gain = base_run.map_or("-".to_string(), |b| format!("{:.2}x", x.gflops / b.gflops));
            let _ = writeln!(s, "| {cell} | {label} | {:.1} | {fastest} | {gain} |", x.gflops / 1e3);
        }
    }
    s += "\n";
    for p in step.partials {
        let _ = writeln!(s, "- `{}`: {}.", p.name, p.what);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_partials_make_a_table_and_their_runs_are_named() {
        let all = load_all(&crate::bundle::root()).unwrap();
        let r = all.get(super::super::BOOK_GPU).expect("the book GPU's partials sweep");
        let step = steps::ALL.iter().find(|s| !s.partials.is_empty()).unwrap();
        let part = step.partials[0].name;
        let t = &tables(r)[&format!("partials-step{}.md", number(step.name))];
        assert!(t.contains(&format!("| step 11 `{part}` |")) && t.contains("| 4096³ | step 10 |"), "{t}");
        let whole = run(r, &step.id(), (4096, 4096, 4096)).unwrap();
        assert!(t.contains(&format!("{:.1}", whole.gflops / 1e3)), "{t}");
        let named = run(r, &format!("{}-{part}", step.id()), (4096, 4096, 4096)).unwrap();
        assert_eq!(named.partial.as_deref(), Some(part));
        assert!(run(r, &format!("{}-nothing", step.id()), (4096, 4096, 4096)).unwrap_err().contains("neither"));
        assert!(run(r, &step.id(), (4095, 4095, 4095)).unwrap_err().contains("has no run"));
    }

    #[test]
    fn a_changed_kernel_makes_the_partials_stale() {
        let all = load_all(&crate::bundle::root()).unwrap();
        let r = all.get(super::super::BOOK_GPU).expect("the book GPU's partials sweep");
        let mut sweep = r.sweep.clone();
        assert!(stale(&[(r.slug.clone(), Results { slug: r.slug.clone(), sweep: sweep.clone() })].into()).is_empty());
        if let Some(h) = sweep.kernel_hashes.values_mut().next() {
            *h = "0000000000000000".into();
        }
        let problems = stale(&[(r.slug.clone(), Results { slug: r.slug.clone(), sweep })].into());
        assert!(problems.len() == 1 && problems[0].contains("changed after this sweep"), "{problems:?}");
    }
}
