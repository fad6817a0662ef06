//! The runner: compiles, loads and launches one step's kernel (or another `.cu` with the same
//! geometry) with the common signature `sgemm(M, N, K, alpha, A, B, beta, C)`.

use crate::harness::compile::{KernelSource, Resources, compile};
use crate::harness::device::Gpu;
use crate::harness::host::{HostCall, Loaded, Workspace};
use crate::harness::launch::Launch;
use crate::harness::matrix::{DeviceMatrix, check_storage};
use crate::harness::precision::Elem;
use crate::harness::problem::{Gemm, Shape};
use crate::harness::step::{ENTRY, Step};
use crate::{Error, Result};
use cudarc::driver::sys::CUfunction_attribute as FnAttr;
use cudarc::driver::{LaunchConfig, PushKernelArg};
use std::collections::HashMap;
use std::sync::Arc;

/// What in a kernel's text waits for the launch before it: the PTX instruction, or hopper.cuh's
/// function around it. A kernel with neither is never launched early (`PDL=1` is dropped).
const WAITS: [&str; 2] = ["griddepcontrol.wait", "wait_for_launch_before("];

/// A launch geometry computed by a closure (see [`Runner::with_launch`]).
pub type LaunchFn = Box<dyn Fn(&Shape) -> Launch>;

/// Compiles, loads and launches one step's kernel (or an override `.cu` with the same
/// geometry) on one GPU. Each variant is compiled once per process.
pub struct Runner {
    pub gpu: Arc<Gpu>,
    pub step: Step,
    pub kernel: KernelSource,
    loaded: HashMap<Vec<(&'static str, i64)>, Loaded>,
    /// Replaces the step's launch geometry (tuning tools try other tiles this way).
    launch_override: Option<LaunchFn>,
    /// Scratch buffers of steps with their own host code.
    workspace: Workspace,
}

impl Runner {
    /// A runner for `step`, optionally with the kernel replaced by another `.cu` file.
    pub fn new(gpu: &Arc<Gpu>, step: &Step, kernel_override: Option<KernelSource>) -> Result<Self> {
        gpu.require_cc(step.min_cc, &step.id())?;
        if let Some(arch) = step.arch {
            gpu.require_exact_cc(step.min_cc, arch, &step.id())?;
        }
        Ok(Runner {
            gpu: gpu.clone(),
            step: step.clone(),
            kernel: kernel_override.unwrap_or_else(|| step.kernel.clone()),
            loaded: HashMap::new(),
            launch_override: None,
            workspace: Workspace::default(),
        })
    }

    /// The grid the step's host code launched last, where it chose its own (steps 11 to 13 launch
    /// no more clusters than the GPU runs at once, whatever the number of tiles).
    pub fn launched_grid(&self) -> Option<(u32, u32, u32)> {
        self.workspace.grid()
    }

    /// The same runner with another launch geometry (and defines) than the step's.
    pub fn with_launch(mut self, launch: impl Fn(&Shape) -> Launch + 'static) -> Self {
        self.launch_override = Some(Box::new(launch));
        self
    }

    /// The same runner with compile-time defines added to or replacing those of the step's launch
    /// (an experiment's `--define`); none leaves it as it is. Where the step's launch follows tile
    /// defines ([`Step::follow`]), they size the launch too.
    pub fn with_defines(self, defines: &[(&'static str, i64)]) -> Self {
        if defines.is_empty() {
            return self;
        }
        let (launch, follow, extra) = (self.step.launch, self.step.follow, defines.to_vec());
        self.with_launch(move |s| {
            let base = match follow {
                Some(follow) => follow(s, &extra),
                None => launch(s),
            };
            crate::harness::launch::with_defines(base, &extra)
        })
    }

    /// The launch for `shape`, checked against CUDA's limits and the index range.
    pub fn launch_for(&self, shape: &Shape) -> Result<Launch> {
        shape.check_32bit()?;
        let launch = match &self.launch_override {
            Some(f) => f(shape),
            None => (self.step.launch)(shape),
        };
        launch.check(shape)?;
        Ok(launch)
    }

    /// Compiles and loads the variant `launch` needs (cached).
    pub fn load(&mut self, launch: &Launch) -> Result<&Loaded> {
        if !self.loaded.contains_key(&launch.defines) {
            let compiled = compile(&self.kernel, &launch.defines, &self.step.target(self.gpu.cc))?;
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
            let waits = WAITS.iter().any(|w| self.kernel.code.contains(w));
            self.loaded.insert(launch.defines.clone(), Loaded { module, function, resources, log, waits });
        }
        Ok(&self.loaded[&launch.defines])
    }

    /// Enqueues C = alpha*A*B + beta*C. Does nothing for an empty C (M or N == 0).
    pub fn run(&mut self, gemm: &Gemm, a: &DeviceMatrix, b: &DeviceMatrix, c: &mut DeviceMatrix) -> Result<()> {
        let s = gemm.shape;
        if a.len != s.m * s.k || b.len != s.k * s.n || c.len != s.m * s.n {
            return Err(Error::BadInput(format!("buffers do not match shape {s}")));
        }
        let p = self.step.precision;
        check_storage(p, a, b, c)?;
        let launch = self.launch_for(&s)?;
        if s.is_empty() {
            return Ok(());
        }
        let gpu = self.gpu.clone();
        self.load(&launch)?;
        let loaded = &self.loaded[&launch.defines];
        if let Some(host) = self.step.host {
            let workspace = &mut self.workspace;
            let precision = self.step.precision;
            return host(&mut HostCall { precision, gpu: &gpu, loaded, launch: &launch, gemm, a, b, c, workspace });
        }
        let function = &loaded.function;
        let (m, n, k) = (s.m as i32, s.n as i32, s.k as i32);
        let (pa, pb, pc) = (a.ptr(&gpu), b.ptr(&gpu), c.ptr(&gpu));
        let cfg = LaunchConfig {
            grid_dim: launch.grid,
            block_dim: launch.block,
            shared_mem_bytes: launch.dynamic_smem_bytes,
        };
        let mut args = gpu.stream.launch_builder(function);
        // alpha and beta have C's type: double for FP64, float otherwise.
        let (alpha64, beta64) = (gemm.alpha as f64, gemm.beta as f64);
        args.arg(&m).arg(&n).arg(&k);
        if p.scalar() == Elem::F64 {
            args.arg(&alpha64)
        } else {
            args.arg(&gemm.alpha)
        };
        args.arg(&pa).arg(&pb);
        if p.scalar() == Elem::F64 {
            args.arg(&beta64)
        } else {
            args.arg(&gemm.beta)
        };
        args.arg(&pc);
        // SAFETY: the arguments match the common signature; buffer sizes were checked above,
        // and the kernel's bounds are what the test suite verifies.
        unsafe { args.launch(cfg) }?;
        Ok(())
    }
}
