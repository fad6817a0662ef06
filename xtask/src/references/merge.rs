//! `--merge`: a run's figures added to the file it finishes.

use super::{PRECISIONS, References, Row, Torch, Watched, parse_precision};
use common::{Precision, Shape};
use std::collections::BTreeMap;

/// `new`, with the rows of `old` for the (shape, precision) pairs `new` was not asked to time.
/// Both must come from the same timing. A top rung whose kernel changed since `old` was written
/// ([`changed`]) keeps none of its old rows: they timed another kernel, so its precision's rows
/// are those of the runs since (the shapes left out are timed again by later `--merge` runs).
pub(super) fn merged(
    old: &References,
    mut new: References,
    timed: &[(Shape, Precision)],
) -> Result<References, String> {
    if old.timing != new.timing || old.cublas_version != new.cublas_version {
        return Err(format!(
            "the file was timed otherwise ({}, cuBLAS {}); run without --merge",
            old.timing, old.cublas_version
        ));
    }
    let changed = changed(old, &new.kernel_hashes);
    // The shapes and precisions whose old rows timed a changed rung (and not another rung of the
    // precision, as step 12's FP16 beside step 15's at other shapes).
    let stale: Vec<(u64, u64, u64, &str)> = old
        .rows
        .iter()
        .filter(|r| changed.iter().any(|(rung, p)| *rung == r.who && p.label() == r.precision))
        .map(|r| (r.m, r.n, r.k, r.precision.as_str()))
        .collect();
    // Whether this run timed a shape and precision again, or its old rows timed a changed kernel.
    let retimed = |m: u64, n: u64, k: u64, precision: &str| {
        stale.contains(&(m, n, k, precision))
            || timed
                .iter()
                .any(|(s, p)| (s.m, s.n, s.k) == (m as usize, n as usize, k as usize) && p.label() == precision)
    };
    let is_timed = |r: &Row| retimed(r.m, r.n, r.k, &r.precision);
    let mut rows: Vec<Row> = old.rows.iter().filter(|r| !is_timed(r)).cloned().collect();
    rows.append(&mut new.rows);
    let mut verdict: Vec<Row> = old.verdict.iter().filter(|r| !is_timed(r)).cloned().collect();
    verdict.append(&mut new.verdict);
    // In the file's order: its shapes as they first appear, then the precisions in the ladder's.
    let mut shapes: Vec<(u64, u64, u64)> = Vec::new();
    for r in old.rows.iter().chain(&rows) {
        if !shapes.contains(&(r.m, r.n, r.k)) {
            shapes.push((r.m, r.n, r.k));
        }
    }
    let order = |r: &Row| {
        let shape = shapes.iter().position(|&s| s == (r.m, r.n, r.k));
        (shape, PRECISIONS.iter().position(|p| p.label() == r.precision).unwrap_or(PRECISIONS.len()))
    };
    rows.sort_by_key(order);
    verdict.sort_by_key(order);
    (new.rows, new.verdict) = (rows, verdict);
    for (rung, hash) in &old.kernel_hashes {
        new.kernel_hashes.entry(rung.clone()).or_insert_with(|| hash.clone());
    }
    let mut wrong = old.wrong.clone();
    wrong.extend(new.wrong.iter().filter(|w| !old.wrong.contains(w)).cloned());
    new.wrong = wrong;
    new.torch = match (old.torch.clone(), new.torch.take()) {
        (Some(old), Some(run)) => Some(torch_merged(old, run)),
        (old, run) => run.or(old),
    };
    // The kernels the old rows timed, but for the changed ones, whose rehashes are void.
    new.rehashed = old.rehashed.iter().filter(|r| !changed.iter().any(|(rung, _)| *rung == r.step)).cloned().collect();
    let mut clocks: Vec<Watched> =
        old.clocks.iter().filter(|w| !retimed(w.m, w.n, w.k, &w.precision)).cloned().collect();
    clocks.append(&mut new.clocks);
    new.clocks = clocks;
    let mut energy: Vec<_> = old.energy.iter().filter(|e| !is_timed(&e.row)).cloned().collect();
    energy.append(&mut new.energy);
    new.energy = energy;
    new.energy_step_ms = new.energy_step_ms.or(old.energy_step_ms);
    Ok(new)
}

/// `old` without its rows of `pairs` (`--void`): figures of a top rung launched otherwise than its
/// rule now launches it at those shapes (the rule changed, not the kernel, so no hash says so);
/// a later `--merge` times them again.
pub(super) fn voided(old: &References, pairs: &[(Shape, Precision)]) -> Result<References, String> {
    let none = References {
        rows: vec![],
        verdict: vec![],
        wrong: vec![],
        clocks: vec![],
        energy: vec![],
        torch: None,
        ..old.clone()
    };
    merged(old, none, pairs)
}

/// `file` with the pairs `other` timed since it was copied from `file` (`--take`): those whose rows
/// differ between the two. For references timed on two GPUs of one host at once, each process
/// merging into its own copy of the file; the pairs' other figures (verdict, clock, energy) come
/// with them.
pub(super) fn taken(file: &References, other: &References) -> Result<References, String> {
    if file.gpu != other.gpu {
        return Err(format!("the other file was measured on {}, not on {}", other.gpu, file.gpu));
    }
    let key = |r: &Row| (r.m, r.n, r.k, r.precision.clone());
    let pair_rows = |f: &References, k: &(u64, u64, u64, String)| -> Vec<Row> {
        f.rows.iter().filter(|r| key(r) == *k).cloned().collect()
    };
    // A pair the other copy timed with today's kernels: each rung's recorded hash is its kernel's
    // now (a copy that left a rung's rows from before another change holds them under the old hash).
    let stale_rungs: Vec<&String> = other
        .kernel_hashes
        .iter()
        .filter(|(who, hash)| steps::by_id(who).is_some_and(|s| s.kernel.hash() != **hash))
        .map(|(who, _)| who)
        .collect();
    let today = |k: &(u64, u64, u64, String)| pair_rows(other, k).iter().all(|r| !stale_rungs.contains(&&r.who));
    let mut keys: Vec<(u64, u64, u64, String)> = Vec::new();
    for r in &other.rows {
        let k = key(r);
        if !keys.contains(&k) && pair_rows(file, &k) != pair_rows(other, &k) && today(&k) {
            keys.push(k);
        }
    }
    let timed = keys
        .iter()
        .map(|(m, n, k, p)| Ok((Shape::new(*m as usize, *n as usize, *k as usize), parse_precision(p)?)))
        .collect::<Result<Vec<_>, String>>()?;
    let has = |r: &Row| keys.contains(&key(r));
    // The hashes of the rungs the taken pairs timed; the other copy's hashes of rungs it did not
    // time again are the file's from before (or older), not a change.
    let mut hashes = file.kernel_hashes.clone();
    for r in other.rows.iter().filter(|r| has(r)) {
        if let Some(hash) = other.kernel_hashes.get(&r.who) {
            hashes.insert(r.who.clone(), hash.clone());
        }
    }
    let new = References {
        kernel_hashes: hashes,
        rows: other.rows.iter().filter(|r| has(r)).cloned().collect(),
        verdict: other.verdict.iter().filter(|r| has(r)).cloned().collect(),
        clocks: other.clocks.iter().filter(|w| keys.contains(&(w.m, w.n, w.k, w.precision.clone()))).cloned().collect(),
        energy: other.energy.iter().filter(|e| has(&e.row)).cloned().collect(),
        torch: None,
        ..other.clone()
    };
    let mut both = merged(file, new, &timed)?;
    both.tool = tools_joined(&file.tool, &other.tool);
    Ok(both)
}

/// torch.matmul's figures of the file and of the run: the run's rows, and the file's for the shapes
/// and precisions the run's torch.json does not time (each says which dates it holds).
fn torch_merged(old: Torch, mut run: Torch) -> Torch {
    let again = |r: &Row| run.rows.iter().any(|n| (n.m, n.n, n.k, &n.precision) == (r.m, r.n, r.k, &r.precision));
    let mut rows: Vec<Row> = old.rows.into_iter().filter(|r| !again(r)).collect();
    if !rows.is_empty() {
        // The file's dates as the book lists them ("a, b and c"), the run's among them.
        let date = {
            let mut dates: Vec<&str> = old.date.split(", ").flat_map(|d| d.split(" and ")).collect();
            dates.push(&run.date);
            dates.sort();
            dates.dedup();
            crate::results::and_list(&dates)
        };
        run.date = date;
        run.tool = tools_joined(&old.tool, &run.tool);
    }
    rows.append(&mut run.rows);
    Torch { rows, ..run }
}

/// The file's and the run's tool lines as one. Two lines of the same script, each with the range
/// of idle times before its samples, become that script with the union of the ranges; any other
/// run's line is added once (a run that merges one torch.json shape by shape meets its own line in
/// the file from the second shape on).
fn tools_joined(old: &str, run: &str) -> String {
    const IDLE: &str = "; idle before each sample ";
    let idle = |tool: &str| -> Option<(String, u64, u64)> {
        let (script, range) = tool.split_once(IDLE)?;
        let (lo, hi) = range.strip_suffix(" us")?.split_once('-')?;
        Some((script.to_string(), lo.parse().ok()?, hi.parse().ok()?))
    };
    match (idle(old), idle(run)) {
        (Some((a, lo, hi)), Some((b, l, h))) if a == b => format!("{a}{IDLE}{}-{} us", lo.min(l), hi.max(h)),
        _ if old.contains(run) => old.to_string(),
        _ => format!("{old}; {run}"),
    }
}

/// The top rungs of `hashes` whose kernel `old` names with another hash, with the precision of
/// their rows (FP8 with a BF16 or an FP32 C: the rows of FP8).
pub(super) fn changed(old: &References, hashes: &BTreeMap<String, String>) -> Vec<(String, Precision)> {
    hashes
        .iter()
        .filter(|(rung, hash)| old.kernel_hashes.get(*rung).is_some_and(|h| h != *hash))
        .filter_map(|(rung, _)| {
            let step = steps::ALL.iter().find(|s| s.id() == *rung)?;
            Some((rung.clone(), step.precision.arithmetic()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::references::tests::{file, row};
    use common::timing::clocks::Clocks;

    /// `--void` drops every row of the pairs named, and nothing else.
    #[test]
    fn a_void_drops_the_pairs_named() {
        let at = |m: u64, precision: &str| Row {
            m,
            precision: precision.into(),
            ..row("cublasGemmEx", "fp32", "one at a time", 1.0)
        };
        let old = References {
            verdict: vec![at(1, "bf16"), at(8, "bf16")],
            ..file(vec![at(1, "bf16"), at(1, "fp16"), at(8, "bf16")])
        };
        let pair = [(Shape::new(1, 64, 64), Precision::Bf16)];
        let v = voided(&old, &pair).unwrap();
        let left = |rows: &[Row]| rows.iter().map(|r| (r.m, r.precision.clone())).collect::<Vec<_>>();
        assert_eq!(left(&v.rows), [(1, "fp16".to_string()), (8, "bf16".into())]);
        assert_eq!(left(&v.verdict), [(8, "bf16".to_string())]);
        assert_eq!((v.tool, v.date, v.kernel_hashes), (old.tool, old.date, old.kernel_hashes));
    }

    /// `--take` adds what the other copy timed since, and only that.
    #[test]
    fn a_take_adds_the_pairs_the_other_copy_timed() {
        let at = |m: u64, precision: &str, ms: f64| Row {
            m,
            precision: precision.into(),
            ms,
            ..row("cublasGemmEx", "fp32", "one at a time", 1.0)
        };
        let base =
            References { verdict: vec![at(1, "bf16", 1.0)], ..file(vec![at(1, "bf16", 1.0), at(8, "fp16", 2.0)]) };
        // This copy timed 16 x 64 x 64 in BF16; the other, 8 x 64 x 64 in FP16 again.
        let ours =
            merged(&base, file(vec![at(16, "bf16", 3.0)]), &[(Shape::new(16, 64, 64), Precision::Bf16)]).unwrap();
        let theirs = References { verdict: vec![at(8, "fp16", 4.0)], ..base.clone() };
        let theirs = References { rows: vec![at(1, "bf16", 1.0), at(8, "fp16", 4.0)], ..theirs };
        let both = taken(&ours, &theirs).unwrap();
        let left = |rows: &[Row]| rows.iter().map(|r| (r.m, r.ms)).collect::<Vec<_>>();
        assert_eq!(left(&both.rows), [(1, 1.0), (8, 4.0), (16, 3.0)]);
        assert_eq!(left(&both.verdict), [(1, 1.0), (8, 4.0)]);
        // Nothing new: the file as it was. Another GPU's file: refused.
        assert_eq!(taken(&ours, &ours).unwrap().rows, ours.rows);
        assert!(taken(&ours, &References { gpu: "another".into(), ..theirs.clone() }).is_err());
        // A pair whose rung the other copy holds under a hash not its kernel's today (left from
        // before a change it did not time again): not taken.
        let rung = "step12-epilogue-fp16";
        let old = References {
            kernel_hashes: [(rung.to_string(), "0000000000000000".to_string())].into(),
            rows: vec![at(1, "bf16", 1.0), at(8, "fp16", 4.0), Row { who: rung.into(), ..at(8, "fp16", 5.0) }],
            ..theirs
        };
        assert_eq!(left(&taken(&ours, &old).unwrap().rows), left(&ours.rows));
    }

    #[test]
    fn a_merge_keeps_what_the_run_did_not_time() {
        let file = |rows: Vec<Row>, hash: &str| References {
            kernel_hashes: [("step12-epilogue-fp16".to_string(), hash.to_string())].into(),
            ..file(rows)
        };
        let with = |precision: &str, tflops: f64| Row {
            precision: precision.into(),
            ..row("cublasGemmEx", "fp32", "back to back", tflops)
        };
        let old = file(vec![with("fp16", 1.0), with("tf32", 2.0), with("3xtf32", 3.0)], "a");
        let timed = [(Shape::cube(64), Precision::Tf32x3)];
        let new = file(vec![with("3xtf32", 4.0)], "a");
        let m = merged(&old, new.clone(), &timed).unwrap();
        let kept: Vec<(String, f64)> = m.rows.iter().map(|r| (r.precision.clone(), r.tflops)).collect();
        assert_eq!(kept, [("fp16".to_string(), 1.0), ("tf32".into(), 2.0), ("3xtf32".into(), 4.0)]);
        // The verdict timing likewise: the old file's of what the run did not time, the run's of what it did.
        let old = References { verdict: vec![with("3xtf32", 5.0), with("fp16", 6.0), with("tf32", 7.0)], ..old };
        let new = References { verdict: vec![with("3xtf32", 8.0)], ..new };
        let m = merged(&old, new.clone(), &timed).unwrap();
        let kept: Vec<(String, f64)> = m.verdict.iter().map(|r| (r.precision.clone(), r.tflops)).collect();
        assert_eq!(kept, [("fp16".to_string(), 6.0), ("tf32".into(), 7.0), ("3xtf32".into(), 8.0)]);
        // And the clock: the old file's of what the run did not time, the run's of what it did.
        let watched = |precision: &str, mhz: u32| {
            let s = common::timing::clocks::Sample { mhz, milliwatts: 1, reasons: 0 };
            Watched { m: 64, n: 64, k: 64, precision: precision.into(), clocks: Clocks::from_samples(&[s]).unwrap() }
        };
        let old = References { clocks: vec![watched("fp16", 1), watched("3xtf32", 2)], ..old };
        let new = References { clocks: vec![watched("3xtf32", 3)], ..new };
        let m = merged(&old, new.clone(), &timed).unwrap();
        let kept: Vec<(String, u32)> = m.clocks.iter().map(|w| (w.precision.clone(), w.clocks.min_mhz)).collect();
        assert_eq!(kept, [("fp16".to_string(), 1), ("3xtf32".into(), 3)]);
        // And the energy, with the counter's step of the run (or the file's, if the run had none).
        let spent = |precision: &str, joules: f64| crate::references::energy::Spent {
            row: with(precision, 1.0),
            joules,
            watts: 1.0,
            mean_mhz: 1.0,
            runs: 1,
            seconds: 1.0,
        };
        let old =
            References { energy: vec![spent("fp16", 1.0), spent("3xtf32", 2.0)], energy_step_ms: Some(5.0), ..old };
        let new = References { energy: vec![spent("3xtf32", 3.0)], ..new };
        let m = merged(&old, new.clone(), &timed).unwrap();
        let kept: Vec<(String, f64)> = m.energy.iter().map(|e| (e.row.precision.clone(), e.joules)).collect();
        assert_eq!((kept, m.energy_step_ms), (vec![("fp16".to_string(), 1.0), ("3xtf32".into(), 3.0)], Some(5.0)));
        // Another kernel: the cases that timed the rung lose their old rows wherever the run did
        // not time them again; the other precisions, and the precision's cases that timed another
        // rung, keep theirs.
        let by = |who: &str, m: u64, tflops: f64| Row { m, ..row(who, "fp32", "one at a time", tflops) };
        let old = References {
            rows: vec![
                Row { precision: "fp16".into(), ..by("step12-epilogue-fp16", 64, 1.0) },
                Row { precision: "fp16".into(), ..by("cublasGemmEx", 64, 1.5) },
                Row { precision: "fp16".into(), ..by("step15-skinny-fp16", 1, 1.7) },
                with("tf32", 2.0),
            ],
            ..old
        };
        let m = merged(&old, file(vec![with("3xtf32", 9.0)], "b"), &timed).unwrap();
        let kept: Vec<(String, u64, f64)> = m.rows.iter().map(|r| (r.precision.clone(), r.m, r.tflops)).collect();
        assert_eq!(kept, [("tf32".to_string(), 64, 2.0), ("3xtf32".into(), 64, 9.0), ("fp16".into(), 1, 1.7)]);
        assert_eq!(m.kernel_hashes["step12-epilogue-fp16"], "b");
        // An FP8 rung with an FP32 C is FP8's rows.
        let fp8 = |hash: &str| References {
            kernel_hashes: [("step14-fp8-fp8-block-c32".to_string(), hash.to_string())].into(),
            ..old.clone()
        };
        assert_eq!(
            changed(&fp8("a"), &fp8("b").kernel_hashes),
            [("step14-fp8-fp8-block-c32".to_string(), Precision::Fp8Block)]
        );
        assert!(changed(&fp8("a"), &fp8("a").kernel_hashes).is_empty());
        // torch.matmul's rows: the run's, and the file's that the run's torch.json does not time.
        let torch = |date: &str, rows: Vec<Row>| Torch {
            tool: format!("torch-matmul.py {date}"),
            date: date.into(),
            gpu: "GPU".into(),
            torch: "2".into(),
            cuda: "13".into(),
            rows,
        };
        let before = References { torch: Some(torch("d1", vec![with("fp8", 1.0), with("fp16", 2.0)])), ..old.clone() };
        let run = References { torch: Some(torch("d2", vec![with("fp16", 3.0)])), ..new.clone() };
        let t = merged(&before, run, &timed).unwrap().torch.unwrap();
        let kept: Vec<(String, f64)> = t.rows.iter().map(|r| (r.precision.clone(), r.tflops)).collect();
        assert_eq!((kept, t.date.as_str()), (vec![("fp8".to_string(), 1.0), ("fp16".into(), 3.0)], "d1 and d2"));
        assert_eq!(t.tool, "torch-matmul.py d1; torch-matmul.py d2");
        // The same torch.json merged again (the run's next shape): its line is not repeated.
        let after = References { torch: Some(t), ..old.clone() };
        let next = References { torch: Some(torch("d2", vec![with("fp32", 4.0)])), ..new.clone() };
        let t = merged(&after, next, &timed).unwrap().torch.unwrap();
        assert_eq!((t.tool.as_str(), t.date.as_str()), ("torch-matmul.py d1; torch-matmul.py d2", "d1 and d2"));
        // The script's idle times, run after run: one line with the union of their ranges.
        let idle = |range: &str| format!("scripts/torch-matmul.py; idle before each sample {range} us");
        assert_eq!(tools_joined(&idle("80-506"), &idle("40-205")), idle("40-506"));
        assert_eq!(tools_joined(&idle("40-506"), &idle("40-205")), idle("40-506"));
        assert_eq!(tools_joined("a.py", &idle("1-2")), format!("a.py; {}", idle("1-2")));
        // Another timing is another run.
        let other = References { timing: "other".into(), ..new };
        assert!(merged(&old, other, &timed).is_err());
    }
}
