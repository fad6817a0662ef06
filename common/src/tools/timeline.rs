//! A kernel's blocks in time: for a kernel with the timeline probe
//! (`notes/experiments/step15-skinny/timeline.patch`), every block of every launch, the SM it ran
//! on, and when it entered, was ready, began its first K-tile and ended (`%globaltimer`). Launches
//! one at a time (the host waits for each) or back to back, after one checked launch; writes every
//! record as CSV and prints each launch's span, the gap before it, and how many of its blocks with
//! work ran on an SM where the launch before had a block without.

use crate::harness::compile::KernelSource;
use crate::harness::device::{Gpu, sync};
use crate::harness::runner::Runner;
use crate::verify::check::Prepared;
use crate::verify::reference::Cublas;
use crate::{Error, Gemm, Precision, Result, Shape, Step, harness::data};
use std::path::PathBuf;

/// The probe's record of one block, as `BlockTime` in the patch lays it out (56 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockTime {
    pub block: u32,
    pub sm: u32,
    pub entry: u64,
    pub ready: u64,
    /// 0 where the block had no K-tile.
    pub first: u64,
    pub exit: u64,
    pub entry_clock: u64,
    pub exit_clock: u64,
}

const RECORD_BYTES: usize = 56;

impl BlockTime {
    /// The records in `bytes`, one after the other.
    pub fn parse(bytes: &[u8]) -> Vec<BlockTime> {
        let u32_at = |r: &[u8], i: usize| u32::from_le_bytes(r[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |r: &[u8], i: usize| u64::from_le_bytes(r[i..i + 8].try_into().expect("8 bytes"));
        bytes
            .chunks_exact(RECORD_BYTES)
            .map(|r| BlockTime {
                block: u32_at(r, 0),
                sm: u32_at(r, 4),
                entry: u64_at(r, 8),
                ready: u64_at(r, 16),
                first: u64_at(r, 24),
                exit: u64_at(r, 32),
                entry_clock: u64_at(r, 40),
                exit_clock: u64_at(r, 48),
            })
            .collect()
    }
}

/// One launch's line of the summary: nanoseconds from the first launch's first entry.
#[derive(Debug, PartialEq)]
pub struct LaunchSpan {
    pub first_entry: u64,
    pub last_ready: u64,
    pub last_exit: u64,
    /// From the launch before's last exit to this one's first entry (negative: they overlap).
    pub gap: Option<i64>,
    pub working: usize,
    /// Blocks with work on an SM where the launch before had a block without.
    pub on_idle_sms: usize,
}

/// The spans of `launches` (each launch's records), in order.
pub fn spans(launches: &[Vec<BlockTime>]) -> Vec<LaunchSpan> {
    let t0 = launches.iter().flatten().map(|r| r.entry).min().unwrap_or(0);
    let mut out: Vec<LaunchSpan> = Vec::new();
    for (i, l) in launches.iter().enumerate() {
        let idle_before: Vec<u32> =
            if i == 0 { Vec::new() } else { launches[i - 1].iter().filter(|r| r.first == 0).map(|r| r.sm).collect() };
        let first_entry = l.iter().map(|r| r.entry).min().unwrap_or(t0) - t0;
        let last_exit = l.iter().map(|r| r.exit).max().unwrap_or(t0) - t0;
        out.push(LaunchSpan {
            first_entry,
            last_ready: l.iter().map(|r| r.ready).max().unwrap_or(t0) - t0,
            last_exit,
            gap: out.last().map(|before| first_entry as i64 - before.last_exit as i64),
            working: l.iter().filter(|r| r.first != 0).count(),
            on_idle_sms: l.iter().filter(|r| r.first != 0 && idle_before.contains(&r.sm)).count(),
        });
    }
    out
}

/// A kernel's blocks in time, from a kernel with the timeline probe: the SM of every block of every
/// launch and when it entered, was ready, began its first K-tile and ended.
#[derive(clap::Parser)]
#[command(name = "timeline", version)]
struct Args {
    /// The shape, MxNxK or S
    #[arg(value_parser = crate::tools::cli::parse_shape)]
    shape: Shape,
    /// The precision (one of the step's)
    #[arg(value_parser = |s: &str| Precision::parse(s).ok_or_else(|| format!("`{s}` is not a precision")))]
    precision: Precision,
    /// The kernel with the probe: a .cu file, or a .patch of notes/experiments
    #[arg(long, value_name = "FILE")]
    kernel: PathBuf,
    /// Add or replace a compile-time define (repeatable), e.g. --define PDL=1
    #[arg(long, value_name = "NAME=VALUE", value_parser = crate::tools::cli::parse_define)]
    define: Vec<(String, i64)>,
    /// Launches recorded, after one checked launch
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=64))]
    runs: u32,
    /// Queue the launches back to back (default: the host waits for each before the next)
    #[arg(long)]
    back_to_back: bool,
    /// Where to write every record as CSV
    #[arg(long, value_name = "FILE.csv")]
    out: PathBuf,
}

fn run(variants: &[Step], a: &Args) -> Result<()> {
    let step = variants
        .iter()
        .find(|s| s.precision == a.precision)
        .ok_or_else(|| Error::BadInput(format!("{} has no {} variant", variants[0].name, a.precision)))?;
    let kernel = KernelSource::from_file_over(&a.kernel, &step.kernel)?;
    let defines = crate::tools::cli::static_defines(a.define.iter().cloned());
    let gpu = Gpu::shared()?;
    let cublas = Cublas::new(&gpu)?;
    let prepared = Prepared::new(&gpu, &cublas, &Gemm::new(a.shape, 1.0, 0.0), a.precision, data::fresh_seed())?;
    let mut runner = Runner::new(&gpu, step, Some(kernel))?.with_defines(&defines);
    let verified = prepared.check(&mut runner)?;
    println!("{} on {}", verified.report(&runner.kernel.name), gpu.describe());
    if !verified.passed() {
        return Err(Error::BadInput("the kernel computed a wrong product: no timeline".into()));
    }
    let module = runner.load(&runner.launch_for(&a.shape)?)?.module.clone();
    let missing = |e| Error::BadInput(format!("{} has no timeline probe (timeline.patch): {e:?}", a.kernel.display()));
    let mut done = module.get_global("timeline_done", &gpu.stream).map_err(missing)?;
    gpu.stream.memcpy_htod(&[0u8; 4], &mut done)?;
    let mut c = prepared.fresh_c(&gpu, 0)?;
    for _ in 0..a.runs {
        runner.run(&prepared.gemm, &prepared.a, &prepared.b, &mut c)?;
        if !a.back_to_back {
            sync(&gpu, "a recorded launch")?;
        }
    }
    sync(&gpu, "the recorded launches")?;
    let count = u32::from_le_bytes(gpu.stream.clone_dtoh(&done)?.try_into().expect("4 bytes")) as usize;
    let ring = module.get_global("timeline", &gpu.stream).map_err(missing)?;
    let bytes = gpu.stream.clone_dtoh(&ring)?;
    let blocks = runner.launched_grid().map_or(0, |g| (g.0 * g.1 * g.2) as usize);
    if blocks == 0 || count != blocks * a.runs as usize || count * RECORD_BYTES > bytes.len() {
        return Err(Error::BadInput(format!(
            "{count} records for {} launches of {blocks} blocks (the ring holds {})",
            a.runs,
            bytes.len() / RECORD_BYTES
        )));
    }
    let records = BlockTime::parse(&bytes[..count * RECORD_BYTES]);
    let mut csv = String::from("launch,block,sm,entry_ns,ready_ns,first_ns,exit_ns,entry_clock,exit_clock\n");
    for (i, r) in records.iter().enumerate() {
        csv += &format!(
            "{},{},{},{},{},{},{},{},{}\n",
            i / blocks,
            r.block,
            r.sm,
            r.entry,
            r.ready,
            r.first,
            r.exit,
            r.entry_clock,
            r.exit_clock
        );
    }
    std::fs::write(&a.out, csv).map_err(|e| Error::BadInput(format!("{}: {e}", a.out.display())))?;
    let how = if a.back_to_back { "back to back" } else { "one at a time" };
    println!("{} launches of {blocks} blocks, {how}; ns from the first entry:", a.runs);
    println!("| launch | first entry | last ready | last exit | gap before | blocks with work | on SMs idle before |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    let launches: Vec<Vec<BlockTime>> = records.chunks(blocks).map(<[BlockTime]>::to_vec).collect();
    for (i, s) in spans(&launches).iter().enumerate() {
        let gap = s.gap.map_or("-".to_string(), |g| g.to_string());
        println!(
            "| {i} | {} | {} | {} | {gap} | {} | {} |",
            s.first_entry, s.last_ready, s.last_exit, s.working, s.on_idle_sms
        );
    }
    Ok(())
}

/// The `main` of a step's timeline tool (`examples/timeline.rs`).
pub fn main(variants: &[Step]) -> std::process::ExitCode {
    let args: Args = clap::Parser::parse();
    crate::tools::cli::tool_main(|| run(variants, &args))
}

#[cfg(test)]
mod tests {
    use super::{BlockTime, RECORD_BYTES, spans};

    fn record(block: u32, sm: u32, entry: u64, first: u64, exit: u64) -> BlockTime {
        BlockTime { block, sm, entry, ready: entry + 1, first, exit, entry_clock: 7, exit_clock: 9 }
    }

    #[test]
    fn records_read_back_as_the_probe_lays_them_out() {
        let r = record(3, 17, 1000, 1500, 2000);
        let mut bytes = Vec::new();
        for v in [r.block, r.sm] {
            bytes.extend(v.to_le_bytes());
        }
        for v in [r.entry, r.ready, r.first, r.exit, r.entry_clock, r.exit_clock] {
            bytes.extend(v.to_le_bytes());
        }
        assert_eq!(bytes.len(), RECORD_BYTES);
        assert_eq!(BlockTime::parse(&bytes), vec![r]);
    }

    #[test]
    fn spans_count_gaps_and_blocks_moved_onto_idle_sms() {
        // Launch 0: SM 1 works, SM 2 idle. Launch 1 overlaps it by 50 ns, its work on SM 2.
        let launches = vec![
            vec![record(0, 1, 100, 150, 1000), record(1, 2, 100, 0, 120)],
            vec![record(0, 2, 950, 1100, 2000), record(1, 1, 1010, 0, 1020)],
        ];
        let s = spans(&launches);
        assert_eq!((s[0].first_entry, s[0].last_exit, s[0].gap, s[0].working), (0, 900, None, 1));
        assert_eq!((s[1].first_entry, s[1].gap, s[1].on_idle_sms), (850, Some(-50), 1));
    }
}
