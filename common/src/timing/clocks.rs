//! The GPU's clock while figures are taken. A time says something about a kernel only if the GPU
//! ran it at the clock its own power allowed: a GPU slowed for heat (its cooling) or by its board
//! (HW slowdown, power brake) gives times that describe the machine. NVML, the driver's management
//! library (`libnvidia-ml`), reports the SM clock, the power and the reasons the clock is held below
//! its maximum, its *clock event reasons*. A [`Watch`] samples them every 20 ms on a thread of its
//! own while a timing runs, and sums them up as [`Clocks`], which the recorded results keep
//! (`cargo xtask sweep`, `cargo xtask references`).

use crate::harness::device::Gpu;
use cudarc::driver::sys::CUdevice_attribute as Attr;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often a [`Watch`] samples.
pub const PERIOD: Duration = Duration::from_millis(20);

/// NVML's clock event reasons (`nvmlClocksEventReason*` in `nvml.h`).
pub mod reason {
    /// The software power cap: the usual limit of a GPU under full load.
    pub const POWER_CAP: u64 = 0x4;
    /// The board slowed the clock (an external signal, or a power supply in trouble).
    pub const HW_SLOWDOWN: u64 = 0x8;
    /// The driver slowed the clock for the GPU's or the memory's temperature.
    pub const SW_THERMAL: u64 = 0x20;
    /// The hardware slowed the clock for its temperature.
    pub const HW_THERMAL: u64 = 0x40;
    /// The power supply asked for less power.
    pub const POWER_BRAKE: u64 = 0x80;
}

/// One reading of the GPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub mhz: u32,
    pub milliwatts: u32,
    pub reasons: u64,
}

/// A reading and when the watch took it.
pub type Timed = (Instant, Sample);

/// The summary of the readings of `samples` taken within one of `windows` (a contender's turns,
/// `runs::time_in_turn_windows`); none where none was.
pub fn within(samples: &[Timed], windows: &[(Instant, Instant)]) -> Option<Clocks> {
    let inside = |t: &Instant| windows.iter().any(|(from, to)| from <= t && t <= to);
    let kept: Vec<Sample> = samples.iter().filter(|(t, _)| inside(t)).map(|&(_, s)| s).collect();
    Clocks::from_samples(&kept)
}

/// The summary of all of `samples`, or why there is none.
pub fn summed(samples: &[Timed]) -> Result<Clocks, String> {
    let plain: Vec<Sample> = samples.iter().map(|&(_, s)| s).collect();
    Clocks::from_samples(&plain).ok_or_else(|| "NVML answered no sample".to_string())
}

/// The samples of one timing, summed up.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clocks {
    pub samples: u32,
    pub mean_mhz: f64,
    pub min_mhz: u32,
    pub max_mhz: u32,
    /// NVML's power reading (averaged by the driver), in watts.
    pub mean_watts: f64,
    /// Samples held by the power cap, the normal limit of a GPU at full work.
    pub power_cap: u32,
    /// Samples slowed for heat (software or hardware thermal slowdown).
    pub thermal: u32,
    /// Samples slowed by the board (HW slowdown or power brake).
    pub board: u32,
}

impl Clocks {
    /// The summary of `samples`; none for no samples.
    pub fn from_samples(samples: &[Sample]) -> Option<Clocks> {
        if samples.is_empty() {
            return None;
        }
        let n = samples.len() as f64;
        let count = |bits: u64| samples.iter().filter(|s| s.reasons & bits != 0).count() as u32;
        Some(Clocks {
            samples: samples.len() as u32,
            mean_mhz: samples.iter().map(|s| f64::from(s.mhz)).sum::<f64>() / n,
            min_mhz: samples.iter().map(|s| s.mhz).min().unwrap_or(0),
            max_mhz: samples.iter().map(|s| s.mhz).max().unwrap_or(0),
            mean_watts: samples.iter().map(|s| f64::from(s.milliwatts)).sum::<f64>() / n / 1e3,
            power_cap: count(reason::POWER_CAP),
            thermal: count(reason::SW_THERMAL | reason::HW_THERMAL),
            board: count(reason::HW_SLOWDOWN | reason::POWER_BRAKE),
        })
    }

    /// Why the figures taken under these clocks describe the machine rather than the kernels, if
    /// they do: any sample slowed for heat or by the board.
    pub fn held_back(&self) -> Option<String> {
        let mut why = Vec::new();
        if self.thermal > 0 {
            why.push(format!("thermal slowdown in {} of {} samples", self.thermal, self.samples));
        }
        if self.board > 0 {
            why.push(format!("HW slowdown or power brake in {} of {} samples", self.board, self.samples));
        }
        (!why.is_empty())
            .then(|| format!("{} (SM clock {:.0} MHz mean, {} lowest)", why.join(", "), self.mean_mhz, self.min_mhz))
    }

    /// e.g. "1,390 MHz mean (1,320-1,755), 690 W, power cap in 38 of 40 samples".
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{:.0} MHz mean ({}-{}), {:.0} W, power cap in {} of {} samples",
            self.mean_mhz, self.min_mhz, self.max_mhz, self.mean_watts, self.power_cap, self.samples
        );
        if let Some(why) = self.held_back() {
            s = format!("{s}; {why}");
        }
        s
    }
}

type Ret = i32;
type Device = *mut std::ffi::c_void;

/// The few NVML calls a [`Watch`] makes, loaded from the driver's library at run time.
struct Nvml {
    device: Device,
    clock: unsafe extern "C" fn(Device, u32, *mut u32) -> Ret,
    power: unsafe extern "C" fn(Device, *mut u32) -> Ret,
    reasons: unsafe extern "C" fn(Device, *mut u64) -> Ret,
    /// The energy the GPU has used since the driver loaded, in millijoules (Volta and later).
    energy: Option<unsafe extern "C" fn(Device, *mut u64) -> Ret>,
    _lib: libloading::Library,
}

// SAFETY: NVML's calls are thread-safe, and the device handle is a plain token valid in every
// thread until nvmlShutdown, which this process never calls.
unsafe impl Send for Nvml {}
// SAFETY: as above; the watches only read through the handle.
unsafe impl Sync for Nvml {}

const NVML_CLOCK_SM: u32 = 1;

impl Nvml {
    /// NVML, for the GPU `gpu` (found by its PCI address: NVML's numbering can differ from CUDA's).
    fn open(gpu: &Gpu) -> Result<Nvml, String> {
        let attr = |a: Attr| gpu.ctx.attribute(a).map_err(|e| e.to_string());
        let bus = format!(
            "{:08x}:{:02x}:{:02x}.0",
            attr(Attr::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)?,
            attr(Attr::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)?,
            attr(Attr::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)?
        );
        let name = if cfg!(windows) { "nvml.dll" } else { "libnvidia-ml.so.1" };
        // SAFETY: loading the driver's own library runs only its initialisers.
        let lib = unsafe { libloading::Library::new(name) }.map_err(|e| format!("{name} did not load ({e})"))?;
        // SAFETY: each symbol is looked up with the signature `nvml.h` gives it.
        unsafe {
            let get = |sym: &str| format!("{name} has no {sym}");
            let init = *lib.get::<unsafe extern "C" fn() -> Ret>(b"nvmlInit_v2\0").map_err(|_| get("nvmlInit_v2"))?;
            let by_bus = *lib
                .get::<unsafe extern "C" fn(*const std::ffi::c_char, *mut Device) -> Ret>(
                    b"nvmlDeviceGetHandleByPciBusId_v2\0",
                )
                .map_err(|_| get("nvmlDeviceGetHandleByPciBusId_v2"))?;
            let clock = *lib
                .get::<unsafe extern "C" fn(Device, u32, *mut u32) -> Ret>(b"nvmlDeviceGetClockInfo\0")
                .map_err(|_| get("nvmlDeviceGetClockInfo"))?;
            let power = *lib
                .get::<unsafe extern "C" fn(Device, *mut u32) -> Ret>(b"nvmlDeviceGetPowerUsage\0")
                .map_err(|_| get("nvmlDeviceGetPowerUsage"))?;
            // The name since driver 535; the older one is the same call.
            let reasons = match lib
                .get::<unsafe extern "C" fn(Device, *mut u64) -> Ret>(b"nvmlDeviceGetCurrentClocksEventReasons\0")
            {
                Ok(f) => *f,
                Err(_) => *lib
                    .get::<unsafe extern "C" fn(Device, *mut u64) -> Ret>(
                        b"nvmlDeviceGetCurrentClocksThrottleReasons\0",
                    )
                    .map_err(|_| get("nvmlDeviceGetCurrentClocksEventReasons"))?,
            };
            let energy = lib
                .get::<unsafe extern "C" fn(Device, *mut u64) -> Ret>(b"nvmlDeviceGetTotalEnergyConsumption\0")
                .ok()
                .map(|f| *f);
            let rc = init();
            if rc != 0 {
                return Err(format!("nvmlInit_v2 returned {rc}"));
            }
            let c_bus = std::ffi::CString::new(bus.clone()).map_err(|e| e.to_string())?;
            let mut device: Device = std::ptr::null_mut();
            let rc = by_bus(c_bus.as_ptr(), &mut device);
            if rc != 0 {
                return Err(format!("NVML does not see the GPU at PCI address {bus} (error {rc})"));
            }
            Ok(Nvml { device, clock, power, reasons, energy, _lib: lib })
        }
    }

    fn sample(&self) -> Option<Sample> {
        let (mut mhz, mut milliwatts, mut reasons) = (0u32, 0u32, 0u64);
        // SAFETY: each call writes one value through a pointer to a local.
        let ok = unsafe {
            (self.clock)(self.device, NVML_CLOCK_SM, &mut mhz) == 0
                && (self.power)(self.device, &mut milliwatts) == 0
                && (self.reasons)(self.device, &mut reasons) == 0
        };
        ok.then_some(Sample { mhz, milliwatts, reasons })
    }
}

/// NVML for the process's GPU, opened once: a sweep starts a [`Watch`] for every run.
fn shared_nvml(gpu: &Gpu) -> Result<Arc<Nvml>, String> {
    static NVML: std::sync::OnceLock<Result<Arc<Nvml>, String>> = std::sync::OnceLock::new();
    NVML.get_or_init(|| Nvml::open(gpu).map(Arc::new)).clone()
}

/// The energy `gpu` has used since its driver loaded, in millijoules (NVML's counter, which a
/// GPU older than Volta does not keep): read before and after some work, the difference is what
/// the work cost, at whatever granularity the GPU updates the counter ([`energy_step_ms`]).
pub fn energy_mj(gpu: &Gpu) -> Result<u64, String> {
    let nvml = shared_nvml(gpu)?;
    let read = nvml.energy.ok_or("this GPU's NVML keeps no energy counter")?;
    let mut mj = 0u64;
    // SAFETY: writes one value through a pointer to a local.
    let rc = unsafe { read(nvml.device, &mut mj) };
    if rc != 0 {
        return Err(format!("nvmlDeviceGetTotalEnergyConsumption returned {rc}"));
    }
    Ok(mj)
}

/// How often the energy counter moves, in milliseconds: the mean time between its changes over
/// `over`, read as fast as the host can: a window read at arbitrary times is off by up to this much
/// at each end, which is why the references' energy windows open and close at its steps. None if
/// it did not move twice.
pub fn energy_step_ms(gpu: &Gpu, over: Duration) -> Result<Option<f64>, String> {
    let start = std::time::Instant::now();
    let (mut last, mut changes) = (energy_mj(gpu)?, Vec::new());
    while start.elapsed() < over {
        let now = energy_mj(gpu)?;
        if now != last {
            changes.push(start.elapsed());
            last = now;
        }
    }
    Ok(match (changes.first(), changes.last()) {
        (Some(a), Some(b)) if changes.len() >= 2 => Some((*b - *a).as_secs_f64() * 1e3 / (changes.len() - 1) as f64),
        _ => None,
    })
}

/// Samples the GPU's clock every [`PERIOD`] from [`Watch::start`] to [`Watch::stop`].
pub struct Watch {
    stop: Arc<AtomicBool>,
    /// The sampling thread, or why nothing is sampled (no NVML, or NVML without this GPU).
    thread: Option<Result<std::thread::JoinHandle<Vec<Timed>>, String>>,
}

impl Watch {
    /// Starts sampling `gpu` (the process's one GPU). Without NVML it samples nothing, and
    /// [`Watch::stop`] says why.
    pub fn start(gpu: &Gpu) -> Watch {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = shared_nvml(gpu).map(|nvml| {
            std::thread::spawn(move || {
                let mut samples = Vec::new();
                while !flag.load(Ordering::Relaxed) {
                    samples.extend(nvml.sample().map(|s| (Instant::now(), s)));
                    std::thread::sleep(PERIOD);
                }
                samples
            })
        });
        Watch { stop, thread: Some(thread) }
    }

    /// The samples' summary, or why there is none.
    pub fn stop(self) -> Result<Clocks, String> {
        summed(&self.stop_timed()?)
    }

    /// The samples with when each was taken (for [`within`]), or why there are none.
    pub fn stop_timed(mut self) -> Result<Vec<Timed>, String> {
        self.stop.store(true, Ordering::Relaxed);
        let thread = self.thread.take().expect("taken only here")?;
        thread.join().map_err(|_| "the clock's sampling thread panicked".to_string())
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The line a program prints under its timing table: the clock over `over` ("the timing"), or a
/// warning where heat or the board held the GPU back, or why the clock was not recorded.
pub fn report(clocks: &Result<Clocks, String>, over: &str) -> String {
    match clocks {
        Ok(c) => match c.held_back() {
            None => format!("the GPU's clock over {over}: {}", c.describe()),
            Some(why) => format!(
                "warning: the GPU was slowed for heat or by its board over {over} ({why}): these times describe the machine more than the kernel"
            ),
        },
        Err(why) => format!("the GPU's clock over {over} was not recorded: {why}"),
    }
}

/// The error a tool ends with when some of its figures were timed while heat or the board held
/// the GPU back (`cases` names them; none: no error). The figures are kept and shown, never judged.
pub fn refuse_held_back(cases: &[String]) -> Result<(), String> {
    if cases.is_empty() {
        return Ok(());
    }
    Err(format!(
        "the GPU was slowed for heat or by its board while {} {} timed: those figures describe the machine \
         and are not judged; time them again on a GPU that is not (--merge keeps the rest)",
        cases.join(", "),
        if cases.len() == 1 { "was" } else { "were" }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(mhz: u32, reasons: u64) -> Sample {
        Sample { mhz, milliwatts: 700_000, reasons }
    }

    #[test]
    fn a_gpu_at_its_power_cap_is_not_held_back() {
        let c = Clocks::from_samples(&[s(1400, reason::POWER_CAP), s(1380, reason::POWER_CAP), s(1755, 0)]).unwrap();
        assert_eq!((c.samples, c.min_mhz, c.max_mhz, c.power_cap, c.thermal, c.board), (3, 1380, 1755, 2, 0, 0));
        assert!((c.mean_mhz - 1511.67).abs() < 0.01 && (c.mean_watts - 700.0).abs() < 1e-9);
        assert_eq!(c.held_back(), None);
        assert_eq!(c.describe(), "1512 MHz mean (1380-1755), 700 W, power cap in 2 of 3 samples");
    }

    #[test]
    fn heat_or_the_board_holds_it_back() {
        let hot = Clocks::from_samples(&[s(345, reason::SW_THERMAL), s(1400, reason::POWER_CAP)]).unwrap();
        assert_eq!(hot.held_back().unwrap(), "thermal slowdown in 1 of 2 samples (SM clock 872 MHz mean, 345 lowest)");
        let braked = Clocks::from_samples(&[s(900, reason::POWER_BRAKE | reason::HW_SLOWDOWN)]).unwrap();
        assert!(braked.held_back().unwrap().starts_with("HW slowdown or power brake in 1 of 1 samples"));
        assert!(Clocks::from_samples(&[s(1, reason::HW_THERMAL)]).unwrap().describe().contains("thermal slowdown"));
    }

    #[test]
    fn held_back_figures_end_the_tool_with_their_names() {
        assert_eq!(refuse_held_back(&[]), Ok(()));
        let one = refuse_held_back(&["4096x4096x4096 fp16".into()]).unwrap_err();
        assert!(one.contains("while 4096x4096x4096 fp16 was timed"), "{one}");
        assert!(refuse_held_back(&["a".into(), "b".into()]).unwrap_err().contains("while a, b were timed"));
    }

    #[test]
    fn a_contender_gets_the_samples_of_its_own_turns() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let samples: Vec<Timed> =
            [(10, 1900), (30, 1500), (50, 1400), (70, 1800)].map(|(ms, mhz)| (at(ms), s(mhz, 0))).into();
        let mine = within(&samples, &[(at(20), at(40)), (at(60), at(80))]).unwrap();
        assert_eq!((mine.samples, mine.min_mhz, mine.max_mhz), (2, 1500, 1800));
        assert_eq!(within(&samples, &[(at(0), at(5))]), None);
    }

    #[test]
    fn no_samples_no_summary() {
        assert_eq!(Clocks::from_samples(&[]), None);
    }
}
