//! The clock watch on a real GPU: NVML answers for the GPU the harness opened, with a clock
//! the GPU can have. Ignored (with the reason) where there is no GPU.

use common::harness::device::Gpu;
use common::timing::clocks::Watch;
use libtest_mimic::{Arguments, Failed, Trial};
use std::process::ExitCode;

fn watch_reads_the_gpu() -> Result<(), Failed> {
    let gpu = Gpu::shared()?;
    let watch = Watch::start(&gpu);
    std::thread::sleep(common::timing::clocks::PERIOD * 10);
    let clocks = watch.stop()?;
    if clocks.samples < 3 || clocks.min_mhz < 100 || clocks.max_mhz > 5000 || clocks.mean_watts <= 0.0 {
        return Err(format!("implausible readings of {}: {}", gpu.name, clocks.describe()).into());
    }
    println!("{}: {}", gpu.name, clocks.describe());
    Ok(())
}

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let missing = Gpu::shared().err();
    if let Some(why) = &missing {
        eprintln!("note: the clock watch's GPU test is ignored: {why}");
    }
    let trial = Trial::test("clock_watch_reads_the_gpu", watch_reads_the_gpu).with_ignored_flag(missing.is_some());
    libtest_mimic::run(&args, vec![trial]).exit_code()
}
