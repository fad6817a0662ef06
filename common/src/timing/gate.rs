//! The gate that keeps host time out of timed runs (the method of NVIDIA's nvbench): the
//! stream waits on a one-thread kernel while the host queues the start event, the run and the
//! stop event, then the host opens the gate and the three execute back to back. Without it the
//! start event fires as soon as it is queued on an idle stream, and the interval includes
//! the host code of the call: tens of microseconds for a launch with tensor maps, which a
//! 200 µs GEMM would feel as 10%.

use crate::harness::compile::helper_module;
use crate::harness::device::Gpu;
use crate::{Error, Result};
use cudarc::driver::sys;
use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};
use std::ffi::c_void;

/// How long the gate waits for the host before it opens by itself (and the run is an error).
const TIMEOUT_NS: u64 = 1_000_000_000;

/// A gate kernel loaded on one GPU and its flag in pinned, device-mapped host memory.
pub struct Gate {
    function: CudaFunction,
    /// The flag's host address (as an integer: the gate is shared between threads, and only
    /// ever touched through volatile reads and writes).
    host: usize,
    /// The same flag as the GPU addresses it.
    device: u64,
}

/// The gate of `gpu`, made once per process and GPU (the gate stands beside the device: the
/// device knows nothing of timing).
pub fn of(gpu: &Gpu) -> Result<&'static Gate> {
    use std::sync::{Mutex, OnceLock};
    static GATES: OnceLock<Mutex<Vec<(usize, &'static Gate)>>> = OnceLock::new();
    let mut gates = GATES.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, g)) = gates.iter().find(|(ordinal, _)| *ordinal == gpu.ordinal) {
        return Ok(g);
    }
    // Leaked on purpose: a gate lives as long as the process that times with it.
    let gate: &'static Gate = Box::leak(Box::new(Gate::new(gpu)?));
    gates.push((gpu.ordinal, gate));
    Ok(gate)
}

impl Gate {
    /// Compiles the gate for `gpu` and allocates its flag.
    pub fn new(gpu: &Gpu) -> Result<Gate> {
        let module = helper_module(gpu, "common/src/timing/gate.cu", include_str!("gate.cu"))?;
        let function = module.load_function("gate")?;
        gpu.ctx.bind_to_thread()?;
        let mut host: *mut c_void = std::ptr::null_mut();
        let mut device = 0;
        // SAFETY: a 4-byte pinned allocation in the current context, mapped into the GPU's
        // address space; freed in Drop.
        unsafe {
            sys::cuMemHostAlloc(&mut host, 4, sys::CU_MEMHOSTALLOC_DEVICEMAP).result()?;
            sys::cuMemHostGetDevicePointer_v2(&mut device, host, 0).result()?;
        }
        Ok(Gate { function, host: host as usize, device })
    }

    fn flag(&self) -> *mut i32 {
        self.host as *mut i32
    }

    /// Closes the gate and queues it: the stream's next work waits until [`Gate::open`].
    pub fn close(&self, gpu: &Gpu) -> Result<()> {
        // SAFETY: the flag is a live pinned allocation; the previous gate has finished (every
        // timed run synchronizes before the next closes the gate).
        unsafe { std::ptr::write_volatile(self.flag(), 0) };
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
        let mut args = gpu.stream.launch_builder(&self.function);
        args.arg(&self.device).arg(&TIMEOUT_NS);
        // SAFETY: the gate takes (int*, unsigned long long), given here.
        unsafe { args.launch(cfg) }?;
        Ok(())
    }

    /// Opens the gate: the queued work starts.
    pub fn open(&self) {
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        // SAFETY: as in close.
        unsafe { std::ptr::write_volatile(self.flag(), 1) };
    }

    /// After the queued work has finished: an error if the gate had to open itself, which
    /// means the host took more than a second to queue one run (a synchronous call inside it).
    pub fn check(&self) -> Result<()> {
        // SAFETY: as in close.
        if unsafe { std::ptr::read_volatile(self.flag()) } < 0 {
            return Err(Error::Cuda(
                "a timed run took the host over a second to queue: it must not wait for the GPU".into(),
            ));
        }
        Ok(())
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemHostAlloc in new; nothing runs the gate any more.
        unsafe {
            let _ = sys::cuMemFreeHost(self.host as *mut c_void);
        }
    }
}
