//! The clock watch and the energy counter on a real GPU: NVML answers for the GPU the harness
//! opened, with a clock the GPU can have and a counter that moves. Ignored (with the reason)
//! where there is no GPU.

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

/// NVML's energy counter rises while the GPU draws power (an idle H100 or H200 draws tens of
/// watts), and moves often enough (every 100 ms on an H200) for a window of a second to open and
/// close at its steps.
fn energy_counter_rises() -> Result<(), Failed> {
    use common::timing::clocks::{energy_mj, energy_step_ms};
    let gpu = &Gpu::shared()?;
    let before = energy_mj(gpu)?;
    std::thread::sleep(std::time::Duration::from_millis(300));
    let after = energy_mj(gpu)?;
    let step = energy_step_ms(gpu, std::time::Duration::from_millis(300))?;
    println!("{}: {} mJ in 300 ms, the counter moving every {step:?} ms", gpu.name, after.saturating_sub(before));
    match step {
        // The references' energy windows open and close at the counter's steps, a second apart:
        // a step of a quarter of that leaves each window several.
        Some(ms) if after > before && ms <= 250.0 => Ok(()),
        _ => {
            Err(format!("the energy counter of {} rose {before} -> {after} mJ, moving every {step:?} ms", gpu.name)
                .into())
        }
    }
}

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let missing = Gpu::shared().err();
    if let Some(why) = &missing {
        eprintln!("note: the clock watch's GPU test is ignored: {why}");
    }
    let trials = vec![
        Trial::test("clock_watch_reads_the_gpu", watch_reads_the_gpu).with_ignored_flag(missing.is_some()),
        Trial::test("energy_counter_rises", energy_counter_rises).with_ignored_flag(missing.is_some()),
    ];
    libtest_mimic::run(&args, trials).exit_code()
}
