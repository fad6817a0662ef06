//! The GPU: opened once per process, checked before anything can panic inside cudarc.

use crate::{Error, Result};
use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, CudaStream, PinnedHostSlice};
use std::sync::Arc;

/// Environment variable naming the GPU ordinal to use (default 0).
pub const DEVICE_ENV: &str = "SGEMM_DEVICE";

/// An opened GPU with the facts the harness reports and the roofline needs.
pub struct Gpu {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub ordinal: usize,
    pub name: String,
    pub sms: u32,
    pub cc: (i32, i32),
    /// e.g. 13000 for CUDA 13.0.
    pub driver_version: i32,
    /// SM clock in kHz as the driver reports it (the boost clock).
    pub clock_khz: u32,
    /// Memory clock in kHz and bus width in bits, for the datasheet bandwidth.
    pub mem_clock_khz: u32,
    pub bus_width_bits: u32,
    pub l2_bytes: u32,
    pub max_smem_per_block_optin: u32,
    /// Page-locked host memory that large copies go through ([`Gpu::upload`], [`Gpu::download`]).
    staging: std::sync::Mutex<Option<PinnedHostSlice<u8>>>,
}

/// Size of the page-locked buffer large copies are staged through: copies from and to ordinary
/// (pageable) host memory run at a fraction of the bus's speed, and on some virtual machines at
/// a tenth of it.
const STAGING_BYTES: usize = 32 << 20;

/// Whether libcuda can be loaded. cudarc panics on first use when it cannot, so ask first.
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// Whether libnvrtc can be loaded (by name, or from a pip install: [`crate::harness::toolkit`]).
pub fn nvrtc_present() -> bool {
    crate::harness::toolkit::nvrtc_present()
}

/// Whether libcublas can be loaded.
pub fn cublas_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { cudarc::cublas::sys::is_culib_present() }
}

fn selected_ordinal() -> Result<usize> {
    match std::env::var(DEVICE_ENV) {
        Ok(v) => v
            .trim()
            .parse()
            .map_err(|_| Error::BadInput(format!("{DEVICE_ENV}={v:?} is not a GPU ordinal (0, 1, ...)"))),
        Err(_) => Ok(0),
    }
}

/// Lets the stream-ordered allocator keep the memory the harness frees, instead of handing it
/// back to the driver at every synchronization: verifying and timing a 4096^3 problem allocates
/// and frees a gigabyte per run, and mapping it anew each time costs seconds.
fn keep_freed_memory(ctx: &CudaContext) -> Result<()> {
    use cudarc::driver::sys;
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    let mut threshold = u64::MAX;
    // SAFETY: queries the device's default pool and sets one of its attributes from a valid u64.
    unsafe {
        sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()).result()?;
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            &mut threshold as *mut u64 as *mut std::ffi::c_void,
        )
        .result()?;
    }
    Ok(())
}

impl Gpu {
    /// The process's GPU, opened on first use; every later call gets the same one (or the
    /// same error).
    pub fn shared() -> Result<Arc<Gpu>> {
        static GPU: std::sync::OnceLock<Result<Arc<Gpu>>> = std::sync::OnceLock::new();
        GPU.get_or_init(|| Gpu::open().map(Arc::new)).clone()
    }

    /// Opens GPU 0, or the one named by `SGEMM_DEVICE`.
    pub fn open() -> Result<Gpu> {
        if !driver_present() {
            return Err(Error::NoDriver);
        }
        let count = CudaContext::device_count().map_err(|e| {
            Error::NoDevice(format!("the driver reports {e} (is the GPU visible to this machine or container?)"))
        })?;
        let ordinal = selected_ordinal()?;
        if count == 0 {
            return Err(Error::NoDevice(
                "the driver is installed but sees no GPU (check nvidia-smi and CUDA_VISIBLE_DEVICES)".into(),
            ));
        }
        if ordinal >= count as usize {
            return Err(Error::NoDevice(format!(
                "{DEVICE_ENV}={ordinal} but this machine has {count} GPU(s): use 0..{}",
                count - 1
            )));
        }
        let ctx = CudaContext::new(ordinal)?;
        // One stream, used in order: cudarc's cross-stream event tracking would only add
        // an event record to every launch we time.
        // SAFETY: all work in this harness goes to the one default stream.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.default_stream();
        keep_freed_memory(&ctx)?;
        let attr = |a: Attr| ctx.attribute(a).map(|v| v as u32);
        let mut driver_version = 0;
        // SAFETY: writes one int.
        unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut driver_version) }.result()?;
        Ok(Gpu {
            name: ctx.name()?,
            sms: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            cc: ctx.compute_capability()?,
            clock_khz: attr(Attr::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)?,
            mem_clock_khz: attr(Attr::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?,
            bus_width_bits: attr(Attr::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?,
            l2_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
            max_smem_per_block_optin: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            driver_version,
            staging: Default::default(),
            ordinal,
            stream,
            ctx,
        })
    }

    /// Copies `bytes` to the device address `dst`, through the page-locked buffer. Returns when
    /// the copy is done.
    pub fn upload(&self, bytes: &[u8], dst: u64) -> Result<()> {
        let mut staging = self.staging()?;
        let buf = staging.as_mut().expect("made by staging()").as_mut_slice()?;
        for (i, chunk) in bytes.chunks(STAGING_BYTES).enumerate() {
            buf[..chunk.len()].copy_from_slice(chunk);
            // SAFETY: the source is page-locked memory of this context, the destination is
            // `chunk.len()` bytes of a live allocation (the caller's), and the buffer is not
            // refilled before the copy has finished (synchronized below).
            unsafe {
                cudarc::driver::result::memcpy_htod_async(
                    dst + (i * STAGING_BYTES) as u64,
                    &buf[..chunk.len()],
                    self.stream.cu_stream(),
                )?;
            }
            self.stream.synchronize()?;
        }
        Ok(())
    }

    /// Copies `out.len()` bytes from the device address `src` into `out`, through the
    /// page-locked buffer.
    pub fn download(&self, src: u64, out: &mut [u8]) -> Result<()> {
        let mut staging = self.staging()?;
        let buf = staging.as_mut().expect("made by staging()").as_mut_slice()?;
        for (i, chunk) in out.chunks_mut(STAGING_BYTES).enumerate() {
            // SAFETY: as in upload, in the other direction; the stream is synchronized before
            // the buffer is read.
            unsafe {
                cudarc::driver::result::memcpy_dtoh_async(
                    &mut buf[..chunk.len()],
                    src + (i * STAGING_BYTES) as u64,
                    self.stream.cu_stream(),
                )?;
            }
            self.stream.synchronize()?;
            chunk.copy_from_slice(&buf[..chunk.len()]);
        }
        Ok(())
    }

    fn staging(&self) -> Result<std::sync::MutexGuard<'_, Option<PinnedHostSlice<u8>>>> {
        let mut staging = self.staging.lock().unwrap_or_else(|p| p.into_inner());
        if staging.is_none() {
            // SAFETY: the buffer is written before it is read (upload) or copied into (download).
            *staging = Some(unsafe { self.ctx.alloc_pinned_with_flags::<u8>(STAGING_BYTES, 0) }?);
        }
        Ok(staging)
    }

    /// The NVRTC target for this exact GPU, e.g. `sm_90`.
    pub fn arch(&self) -> String {
        format!("sm_{}{}", self.cc.0, self.cc.1)
    }

    /// Errors unless this GPU is at least compute capability `needs`.
    pub fn require_cc(&self, needs: (i32, i32), what: &str) -> Result<()> {
        if self.cc < needs {
            return Err(Error::ArchTooOld { needs, has: self.cc, what: what.into() });
        }
        Ok(())
    }

    /// Errors unless this GPU is exactly compute capability `cc`: code built for an
    /// architecture-specific target (`sm_90a`) runs on that architecture alone.
    pub fn require_exact_cc(&self, cc: (i32, i32), arch: &str, what: &str) -> Result<()> {
        if self.cc != cc {
            return Err(Error::WrongArch { needs: cc, arch: arch.into(), has: self.cc, what: what.into() });
        }
        Ok(())
    }

    /// FP32 lanes per SM, by architecture (from NVIDIA's tuning guides).
    pub fn fp32_lanes_per_sm(&self) -> u32 {
        match self.cc {
            (7, _) => 64,
            (8, 0) => 64,
            _ => 128,
        }
    }

    /// Datasheet FP32 (SIMT, FMA = 2 FLOPs) peak at the reported boost clock, FLOP/s.
    pub fn peak_fp32_flops(&self) -> f64 {
        self.sms as f64 * self.fp32_lanes_per_sm() as f64 * 2.0 * self.clock_khz as f64 * 1e3
    }

    /// Datasheet DRAM bandwidth (double data rate), bytes/s.
    pub fn peak_dram_bytes(&self) -> f64 {
        2.0 * self.mem_clock_khz as f64 * 1e3 * self.bus_width_bits as f64 / 8.0
    }

    /// e.g. "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, driver CUDA 13.0)".
    pub fn describe(&self) -> String {
        format!(
            "{} (sm_{}{}, {} SMs, driver CUDA {}.{})",
            self.name,
            self.cc.0,
            self.cc.1,
            self.sms,
            self.driver_version / 1000,
            (self.driver_version % 1000) / 10
        )
    }
}

/// Waits for the stream and turns an asynchronous kernel fault into an error naming the kernel.
pub fn sync(gpu: &Gpu, what: &str) -> Result<()> {
    gpu.stream.synchronize().map_err(|e| Error::Cuda(format!("{what} failed while running: {e}")))
}
