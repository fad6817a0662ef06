//! Energy per GEMM at the power cap. A GPU held at its power cap draws the cap whatever it runs,
//! so the energy of one GEMM is about the cap times its time, and the faster kernel is the
//! thriftier one too; what the cap does not fix is the clock, which falls as the work a cycle
//! draws more power. Both are measured, not inferred: each contender of the verdict runs back to
//! back for a window that opens and closes at steps of NVML's energy counter while the clock is
//! watched, in rounds whose order turns as the timings' turns do.

use super::{References, Row};
use common::harness::device::{Gpu, sync};
use common::timing::clocks::{Watch, energy_mj};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// The least time each contender runs back to back in a round, between two steps of the counter.
pub const WINDOW: Duration = Duration::from_millis(1000);
/// Rounds, each starting one contender further on.
pub const ROUNDS: usize = 2;
/// Untimed runs before each window, for the clock to follow the work (`time_in_turn` says why).
const SETTLE: Duration = Duration::from_millis(200);
/// The least time of runs queued between two waits for the GPU, so that the waits (and the GPU's
/// idling in them) are a sliver of the window even for a GEMM of microseconds.
const BATCH: Duration = Duration::from_millis(2);

/// What the windows of a GEMM's energy are labelled as a timing (its `Row`'s method).
pub const METHOD: &str = "energy windows";

/// One contender's energy at one shape.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Spent {
    /// The contender, its shape and C, and its mean time a GEMM over the windows.
    pub row: Row,
    /// Joules per GEMM: the counter's rise over the windows divided by the runs in them.
    pub joules: f64,
    /// Mean power over the windows, in watts.
    pub watts: f64,
    /// Mean SM clock over the windows (the clock watch), in MHz.
    pub mean_mhz: f64,
    pub runs: u64,
    pub seconds: f64,
}

impl Spent {
    /// Useful work per joule: 2MNK floating-point operations a GEMM.
    pub fn gflop_per_joule(&self) -> f64 {
        let r = &self.row;
        2.0 * (r.m * r.n * r.k) as f64 / self.joules / 1e9
    }
}

/// What the windows of one contender add up to.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tally {
    pub millijoules: u64,
    pub runs: u64,
    pub seconds: f64,
    /// Sum over the windows of the window's mean clock times its length, in MHz seconds.
    pub mhz_seconds: f64,
}

impl Tally {
    /// Joules per run, watts and the mean clock; none for no runs or no time.
    pub fn figures(&self) -> Option<(f64, f64, f64)> {
        (self.runs > 0 && self.seconds > 0.0).then(|| {
            let joules = self.millijoules as f64 / 1e3;
            (joules / self.runs as f64, joules / self.seconds, self.mhz_seconds / self.seconds)
        })
    }
}

/// The contenders `which` (indices into `runs`), each run back to back for [`WINDOW`] in
/// [`ROUNDS`] turns, with the energy counter read and the clock watched around each window.
pub fn measure(
    gpu: &Gpu,
    runs: &mut [Box<dyn FnMut() -> common::Result<()> + '_>],
    which: &[usize],
) -> Result<Vec<Tally>, String> {
    let e = |e: common::Error| e.to_string();
    let mut tallies = vec![Tally::default(); which.len()];
    for round in 0..ROUNDS {
        for i in (0..which.len()).map(|i| (i + round) % which.len()) {
            let run = &mut runs[which[i]];
            let mut batch = 1usize;
            let mut batch_run = |batch: usize| -> Result<(), String> {
                (0..batch).try_for_each(|_| run()).map_err(e)?;
                sync(gpu, "a run of the energy window").map_err(e)
            };
            // Settling, the batch grows until one takes BATCH.
            let settle = Instant::now();
            while settle.elapsed() < SETTLE {
                let t = Instant::now();
                batch_run(batch)?;
                if t.elapsed() < BATCH {
                    batch = (batch * 2).min(1 << 16);
                }
            }
            // The counter moves in steps (every 100 ms on an H200), so the window opens at a step
            // and closes at the first step after WINDOW: its energy is then the counter's rise to
            // within a batch at each end, where fixed edges would be off by up to a step.
            let mut run_batch = || batch_run(batch);
            let watch = Watch::start(gpu);
            let (before, _) = until_step(gpu, energy_mj(gpu)?, &mut run_batch)?;
            let (start, mut n) = (Instant::now(), 0u64);
            while start.elapsed() < WINDOW {
                run_batch()?;
                n += batch as u64;
            }
            let (after, batches) = until_step(gpu, energy_mj(gpu)?, &mut run_batch)?;
            n += batches * batch as u64;
            let seconds = start.elapsed().as_secs_f64();
            let mhz = watch.stop()?.mean_mhz;
            let t = &mut tallies[i];
            t.millijoules += after.saturating_sub(before);
            t.runs += n;
            t.seconds += seconds;
            t.mhz_seconds += mhz * seconds;
        }
    }
    Ok(tallies)
}

/// Runs batches until the energy counter moves off `from`: its new value and the batches run.
fn until_step(gpu: &Gpu, from: u64, run: &mut dyn FnMut() -> Result<(), String>) -> Result<(u64, u64), String> {
    let (since, mut batches) = (Instant::now(), 0u64);
    loop {
        run()?;
        batches += 1;
        match energy_mj(gpu)? {
            now if now != from => return Ok((now, batches)),
            _ if since.elapsed() > WINDOW => return Err("the energy counter stopped moving in an energy window".into()),
            _ => {}
        }
    }
}

/// The energy table of a references file: each rung beside the fastest cuBLAS configuration of
/// its C type, per shape and precision.
pub fn table(r: &References) -> String {
    if r.energy.is_empty() {
        return format!(
            "{} has no energy figures yet: `cargo xtask references` measures them for each contender of the verdict.\n",
            r.gpu
        );
    }
    let mut s = format!(
        "{}, {}: each contender of the verdict back to back in {} rounds, a window each of at least {} ms \
         that opens and closes at a step of NVML's energy counter{}.\n\n",
        r.gpu,
        r.date,
        ROUNDS,
        WINDOW.as_millis(),
        r.energy_step_ms.map_or(String::new(), |ms| format!(" (it moved every {ms:.0} ms)"))
    );
    s += "| shape | precision | C | contender | J per GEMM | GFLOP/J | W | MHz | J against the rung |\n";
    s += "|---|---|---|---|---:|---:|---:|---:|---:|\n";
    // The case of a figure: every contender's energy is set against its case's rung.
    let case = |x: &Spent| (x.row.m, x.row.n, x.row.k, x.row.precision.clone(), x.row.c.clone());
    for e in &r.energy {
        let rung = r.energy.iter().find(|x| case(x) == case(e) && x.row.who.starts_with("step"));
        let ratio = rung.map_or("-".to_string(), |x| format!("{:.3}", e.joules / x.joules));
        let _ = writeln!(
            s,
            "| {}x{}x{} | {} | {} | {} | {:.4} | {:.0} | {:.0} | {:.0} | {ratio} |",
            e.row.m,
            e.row.n,
            e.row.k,
            e.row.precision,
            e.row.c,
            e.row.who,
            e.joules,
            e.gflop_per_joule(),
            e.watts,
            e.mean_mhz
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tally_divides_the_energy_by_the_runs_and_the_time() {
        let t = Tally { millijoules: 1_360_000, runs: 1000, seconds: 2.0, mhz_seconds: 2.0 * 1400.0 };
        let (joules, watts, mhz) = t.figures().unwrap();
        assert!((joules - 1.36).abs() < 1e-12 && (watts - 680.0).abs() < 1e-9 && (mhz - 1400.0).abs() < 1e-9);
        assert_eq!(Tally::default().figures(), None);
    }

    #[test]
    fn work_per_joule_counts_two_flops_a_multiply_add() {
        let row = Row {
            m: 4096,
            n: 4096,
            k: 4096,
            precision: "fp8".into(),
            who: "step14-fp8-fp8".into(),
            c: "bf16".into(),
            method: METHOD.into(),
            ms: 0.12,
            tflops: 1145.0,
            rel_err_vs_exact: None,
            defines: Vec::new(),
        };
        let spent = Spent { row, joules: 0.0825, watts: 680.0, mean_mhz: 1400.0, runs: 1, seconds: 1.0 };
        assert!((spent.gflop_per_joule() - 2.0 * 4096f64.powi(3) / 0.0825 / 1e9).abs() < 1e-6);
    }
}
