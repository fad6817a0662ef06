//! `--merge`: a run's figures added to the file it finishes.

use super::{PRECISIONS, References, Row, Watched};
use common::{Precision, Shape};

/// `new`, with the rows of `old` for the (shape, precision) pairs `new` was not asked to time.
/// Both must come from the same top-rung kernels and the same timing.
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
    for (rung, hash) in &new.kernel_hashes {
        if old.kernel_hashes.get(rung).is_some_and(|h| h != hash) {
            return Err(format!("{rung}'s kernel changed since the file was written; run without --merge"));
        }
    }
    // Whether this run timed a shape and precision again.
    let retimed = |m: u64, n: u64, k: u64, precision: &str| {
        timed.iter().any(|(s, p)| (s.m, s.n, s.k) == (m as usize, n as usize, k as usize) && p.label() == precision)
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
    if new.torch.is_none() {
        new.torch = old.torch.clone();
    }
    // The kernels are the ones the old rows timed (checked above), so their rehashes still hold.
    new.rehashed = old.rehashed.clone();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::references::tests::{file, row};
    use common::timing::clocks::Clocks;

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
        // Another kernel, or another timing, is another run.
        assert!(merged(&old, file(vec![], "b"), &timed).unwrap_err().contains("kernel changed"));
        let other = References { timing: "other".into(), ..new };
        assert!(merged(&old, other, &timed).is_err());
    }
}
