//! What a step's own host code gets (step 9's tensor maps and cluster launch): the loaded
//! kernel, the launch, the problem and its buffers, and scratch memory kept between runs.

use crate::Result;
use crate::harness::compile::Resources;
use crate::harness::device::Gpu;
use crate::harness::launch::Launch;
use crate::harness::matrix::{DeviceMatrix, alloc};
use crate::harness::precision::Precision;
use crate::harness::problem::Gemm;
use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, DevicePtr};
use std::collections::HashMap;
use std::sync::Arc;

/// A step's own host code for one GEMM (see [`Step::host`](crate::Step::host)).
pub type HostFn = fn(&mut HostCall<'_>) -> Result<()>;

/// Everything a step's host code gets for one run: the compiled module, the launch the step's
/// geometry chose for this shape, the problem and its buffers, and scratch memory kept between runs.
pub struct HostCall<'a> {
    pub precision: Precision,
    pub gpu: &'a Gpu,
    pub loaded: &'a Loaded,
    pub launch: &'a Launch,
    pub gemm: &'a Gemm,
    pub a: &'a DeviceMatrix,
    pub b: &'a DeviceMatrix,
    pub c: &'a mut DeviceMatrix,
    pub workspace: &'a mut Workspace,
}

/// Device buffers a step's host code reuses from run to run (copies of A and B in another
/// layout, say), so that timed runs allocate nothing.
#[derive(Default)]
pub struct Workspace {
    buffers: HashMap<&'static str, CudaSlice<u8>>,
    /// Step 9's tensor maps, by what they were made from.
    tensor_maps: HashMap<Vec<u64>, crate::harness::hopper::TensorMap>,
    /// Counts the driver was asked for once (step 9's resident clusters), by what they depend on.
    counts: HashMap<Vec<u64>, u32>,
    /// The grid the host code last worked out for itself (a persistent grid), for the step binary
    /// to show beside the launch's when they differ.
    grid: Option<(u32, u32, u32)>,
}

impl Workspace {
    /// The device address of buffer `name`, at least `bytes` long (grown when too small; the
    /// contents are whatever the last run left).
    pub fn buffer(&mut self, gpu: &Gpu, name: &'static str, bytes: usize) -> Result<u64> {
        if self.buffers.get(name).is_none_or(|b| b.len() < bytes) {
            self.buffers.insert(name, alloc(gpu, bytes)?);
        }
        Ok(self.buffers[name].device_ptr(&gpu.stream).0)
    }

    /// The tensor map `make` builds from the values in `key`, made once and then reused: a
    /// tensor map costs microseconds of host time, which a timed run of a small GEMM would feel.
    pub fn tensor_map(
        &mut self,
        key: Vec<u64>,
        make: impl FnOnce() -> Result<crate::harness::hopper::TensorMap>,
    ) -> Result<crate::harness::hopper::TensorMap> {
        cached(&mut self.tensor_maps, key, make)
    }

    /// The count `make` asks the driver for, by the values in `key`, asked once.
    pub fn count(&mut self, key: Vec<u64>, make: impl FnOnce() -> Result<u32>) -> Result<u32> {
        cached(&mut self.counts, key, make)
    }

    /// Records the grid the host code chose for its launch.
    pub fn record_grid(&mut self, grid: (u32, u32, u32)) {
        self.grid = Some(grid);
    }

    /// The grid the host code last chose, if it chose one.
    pub fn grid(&self) -> Option<(u32, u32, u32)> {
        self.grid
    }
}

/// The value stored under `key`, made by `make` on first use.
fn cached<T: Copy>(map: &mut HashMap<Vec<u64>, T>, key: Vec<u64>, make: impl FnOnce() -> Result<T>) -> Result<T> {
    if let Some(v) = map.get(&key) {
        return Ok(*v);
    }
    let v = make()?;
    map.insert(key, v);
    Ok(v)
}

/// A kernel variant compiled and loaded for one set of defines.
pub struct Loaded {
    /// The module, for steps whose host code launches other entry points of their `.cu` too.
    pub module: Arc<CudaModule>,
    /// The entry point `sgemm`.
    pub function: CudaFunction,
    /// Registers, static shared memory and local memory as the driver reports them for the
    /// loaded function; spill bytes from the ptxas report.
    pub resources: Resources,
    /// NVRTC's log (warnings and the ptxas report).
    pub log: String,
    /// Whether the kernel's text waits for the launch before it (`griddepcontrol.wait`, or
    /// hopper.cuh's `wait_for_launch_before`): only such a kernel is launched as a programmatic
    /// dependent launch where its launch says `PDL=1`.
    pub waits: bool,
}
