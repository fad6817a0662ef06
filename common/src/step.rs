//! A step of the ladder, as its crate declares it, and the runner that compiles, loads and
//! launches it with the common signature `sgemm(M, N, K, alpha, A, B, beta, C)`.

use crate::compile::{KernelSource, Resources, compile};
use crate::device::Gpu;
use crate::problem::{Gemm, Shape};
use crate::{Error, Result};
use cudarc::driver::sys::CUfunction_attribute as FnAttr;
use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};
use std::collections::HashMap;
use std::sync::Arc;

/// The entry point every kernel defines (`extern "C"`, so the name is not mangled).
pub const ENTRY: &str = "sgemm";

/// One rung of the ladder. Each step crate exports one of these as `STEP`; the registry
/// crate `steps` lists them all.
#[derive(Clone, Debug)]
pub struct Step {
    /// The crate name, e.g. `step01-naive`.
    pub name: &'static str,
    /// One line: the idea this step adds.
    pub idea: &'static str,
    pub kernel: KernelSource,
    /// The launch geometry and compile-time defines for a shape, stated once, beside the kernel.
    pub launch: fn(&Shape) -> Launch,
    /// The oldest GPU the kernel runs on.
    pub min_cc: (i32, i32),
}

/// How to launch a kernel for one shape: grid, block, dynamic shared memory and the
/// compile-time defines (tile sizes, fast-path switches) the kernel is built with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub dynamic_smem_bytes: u32,
    pub defines: Vec<(&'static str, i64)>,
}

impl Launch {
    pub fn new(grid: (usize, usize, usize), block: (u32, u32, u32)) -> Launch {
        // Sizes beyond u32 saturate and are rejected by `check`.
        let clamp = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
        Launch {
            grid: (clamp(grid.0), clamp(grid.1), clamp(grid.2)),
            block,
            dynamic_smem_bytes: 0,
            defines: Vec::new(),
        }
    }

    pub fn define(mut self, name: &'static str, value: i64) -> Launch {
        self.defines.push((name, value));
        self
    }

    pub fn threads_per_block(&self) -> u32 {
        self.block.0 * self.block.1 * self.block.2
    }

    /// CUDA's launch limits, checked before a broken grid reaches the driver.
    pub fn check(&self, shape: &Shape) -> Result<()> {
        let (x, y, z) = self.grid;
        if x > i32::MAX as u32 || y > 65535 || z > 65535 {
            return Err(Error::BadInput(format!(
                "shape {shape} needs a grid of {x}x{y}x{z} blocks, beyond CUDA's limit of (2^31-1)x65535x65535"
            )));
        }
        if self.threads_per_block() == 0 || self.threads_per_block() > 1024 {
            return Err(Error::BadInput(format!("a block of {:?} threads is not launchable", self.block)));
        }
        Ok(())
    }
}

/// ceil(a / b), the number of tiles of size `b` that cover `a`.
pub const fn ceil_div(a: usize, b: usize) -> usize {
    a.div_ceil(b)
}

/// A device matrix of f32, never zero bytes (the driver rejects empty allocations). A guarded
/// matrix has `guard` extra elements before and after it, filled with [`GUARD_BITS`], so that a
/// kernel writing outside its matrix is caught even without compute-sanitizer.
pub struct DeviceMatrix {
    pub data: CudaSlice<f32>,
    pub len: usize,
    pub guard: usize,
}

/// The bit pattern of the guard zones: a NaN no kernel computes by accident.
pub const GUARD_BITS: u32 = 0x7fba_dbad;

impl DeviceMatrix {
    pub fn from_host(gpu: &Gpu, host: &[f32]) -> Result<Self> {
        Self::guarded(gpu, host, 0)
    }

    /// `host` on the GPU with `guard` sentinel elements on each side.
    pub fn guarded(gpu: &Gpu, host: &[f32], guard: usize) -> Result<Self> {
        let total = host.len() + 2 * guard;
        let mut data = alloc(gpu, total)?;
        if total > 0 {
            let sentinel = f32::from_bits(GUARD_BITS);
            let mut padded = vec![sentinel; total];
            padded[guard..guard + host.len()].copy_from_slice(host);
            gpu.stream.memcpy_htod(&padded, &mut data.slice_mut(..total))?;
        }
        Ok(DeviceMatrix { data, len: host.len(), guard })
    }

    pub fn download(&self, gpu: &Gpu) -> Result<Vec<f32>> {
        let mut host = vec![0f32; self.len];
        if self.len > 0 {
            gpu.stream.memcpy_dtoh(&self.data.slice(self.guard..self.guard + self.len), &mut host)?;
        }
        Ok(host)
    }

    /// How many guard elements before and after the matrix no longer hold the sentinel.
    pub fn guard_damage(&self, gpu: &Gpu) -> Result<(usize, usize)> {
        if self.guard == 0 {
            return Ok((0, 0));
        }
        let mut all = vec![0f32; self.len + 2 * self.guard];
        gpu.stream.memcpy_dtoh(&self.data.slice(..all.len()), &mut all)?;
        let bad = |zone: &[f32]| zone.iter().filter(|v| v.to_bits() != GUARD_BITS).count();
        Ok((bad(&all[..self.guard]), bad(&all[self.guard + self.len..])))
    }

    /// The raw device address of the first element, passed to kernels and cuBLAS.
    pub fn ptr(&self, gpu: &Gpu) -> u64 {
        self.data.device_ptr(&gpu.stream).0 + 4 * self.guard as u64
    }
}

fn alloc(gpu: &Gpu, len: usize) -> Result<CudaSlice<f32>> {
    let bytes = len.max(1) * 4;
    // SAFETY: every element is written (upload or kernel) before it is read back.
    unsafe { gpu.stream.alloc::<f32>(len.max(1)) }
        .map_err(|e| Error::Cuda(format!("cannot allocate {:.1} MiB on the GPU: {e}", bytes as f64 / (1 << 20) as f64)))
}

/// A kernel variant compiled and loaded for one set of defines.
pub struct Loaded {
    pub function: CudaFunction,
    /// Registers, static shared memory and local memory as the driver reports them for the
    /// loaded function; spill bytes from the ptxas report.
    pub resources: Resources,
    /// NVRTC's log (warnings and the ptxas report).
    pub log: String,
}

/// Compiles, loads and launches one step's kernel (or an override `.cu` with the same
/// geometry) on one GPU. Each variant is compiled once per process.
pub struct Runner {
    pub gpu: Arc<Gpu>,
    pub step: Step,
    pub kernel: KernelSource,
    loaded: HashMap<Vec<(&'static str, i64)>, Loaded>,
}

impl Runner {
    /// A runner for `step`, optionally with the kernel replaced by another `.cu` file.
    pub fn new(gpu: &Arc<Gpu>, step: &Step, kernel_override: Option<KernelSource>) -> Result<Self> {
        gpu.require_cc(step.min_cc, step.name)?;
        Ok(Runner {
            gpu: gpu.clone(),
            step: step.clone(),
            kernel: kernel_override.unwrap_or_else(|| step.kernel.clone()),
            loaded: HashMap::new(),
        })
    }

    /// The launch for `shape`, checked against CUDA's limits and the index range.
    pub fn launch_for(&self, shape: &Shape) -> Result<Launch> {
        shape.check_32bit()?;
        let launch = (self.step.launch)(shape);
        launch.check(shape)?;
        Ok(launch)
    }

    /// Compiles and loads the variant `launch` needs (cached).
    pub fn load(&mut self, launch: &Launch) -> Result<&Loaded> {
        if !self.loaded.contains_key(&launch.defines) {
            let compiled = compile(&self.kernel, &launch.defines, &self.gpu.arch())?;
            let module = self.gpu.ctx.load_module(cudarc::nvrtc::Ptx::from_binary(compiled.cubin.clone()))?;
            let function = module.load_function(ENTRY).map_err(|e| {
                Error::BadInput(format!("{} has no `extern \"C\" __global__ void {ENTRY}(...)`: {e}", self.kernel.name))
            })?;
            let total_smem = launch.dynamic_smem_bytes + function.shared_size_bytes()? as u32;
            if total_smem > self.gpu.max_smem_per_block_optin {
                return Err(Error::BadInput(format!(
                    "{} needs {total_smem} bytes of shared memory per block; this GPU allows {}",
                    self.kernel.name, self.gpu.max_smem_per_block_optin
                )));
            }
            if launch.dynamic_smem_bytes > 48 * 1024 {
                function.set_attribute(
                    FnAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    launch.dynamic_smem_bytes as i32,
                )?;
            }
            let resources = Resources {
                registers: function.num_regs()? as u32,
                smem_bytes: function.shared_size_bytes()? as u32,
                stack_bytes: function.local_size_bytes()? as u32,
                ..compiled.resources
            };
            let log = compiled.log.clone();
            self.loaded.insert(launch.defines.clone(), Loaded { function, resources, log });
        }
        Ok(&self.loaded[&launch.defines])
    }

    /// Enqueues C = alpha*A*B + beta*C. Does nothing for an empty C (M or N == 0).
    pub fn run(&mut self, gemm: &Gemm, a: &DeviceMatrix, b: &DeviceMatrix, c: &mut DeviceMatrix) -> Result<()> {
        let s = gemm.shape;
        if a.len != s.m * s.k || b.len != s.k * s.n || c.len != s.m * s.n {
            return Err(Error::BadInput(format!("buffers do not match shape {s}")));
        }
        let launch = self.launch_for(&s)?;
        if s.is_empty() {
            return Ok(());
        }
        let gpu = self.gpu.clone();
        let function = &self.load(&launch)?.function;
        let (m, n, k) = (s.m as i32, s.n as i32, s.k as i32);
        let (pa, pb, pc) = (a.ptr(&gpu), b.ptr(&gpu), c.ptr(&gpu));
        let cfg = LaunchConfig {
            grid_dim: launch.grid,
            block_dim: launch.block,
            shared_mem_bytes: launch.dynamic_smem_bytes,
        };
        let mut args = gpu.stream.launch_builder(function);
        args.arg(&m).arg(&n).arg(&k).arg(&gemm.alpha).arg(&pa).arg(&pb).arg(&gemm.beta).arg(&pc);
        // SAFETY: the arguments match the common signature; buffer sizes were checked above,
        // and the kernel's bounds are what the test suite verifies.
        unsafe { args.launch(cfg) }?;
        Ok(())
    }
}
