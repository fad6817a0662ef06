//! `cargo xtask cubin STEP [--shape MxNxK] [--arch sm_90] [--kernel FILE.cu] [--define NAME=VALUE]... --out FILE`:
//! writes the CUBIN the harness would load for that shape, to read with `cuobjdump -sass` (no GPU
//! needed).

use common::harness::compile::{Compiled, KernelSource, compile};
use common::{Launch, Shape};
use std::path::PathBuf;
use std::sync::Arc;

/// Which kernel to build, as the harness would for a shape (shared by `cubin` and `mix`).
#[derive(clap::Args)]
pub struct Target {
    /// The step: id, crate name or number (e.g. 06, step08-mma-ldmatrix-3xtf32)
    #[arg(value_parser = crate::step_key)]
    step: &'static common::Step,
    /// The shape whose launch picks the kernel variant
    #[arg(long, value_name = "MxNxK", value_parser = crate::shape, default_value = "4096")]
    shape: Shape,
    /// The architecture to compile for (steps built for one architecture use theirs)
    #[arg(long, default_value = "sm_90")]
    arch: String,
    /// Another .cu file, compiled with the step's defines (an experiment)
    #[arg(long, value_name = "FILE.cu")]
    kernel: Option<PathBuf>,
    /// Add or replace a compile-time define (repeatable); the tile sizes may then differ from
    /// the launch the harness would use, so the result is for reading, not running
    #[arg(long, value_name = "NAME=VALUE", value_parser = common::tools::cli::parse_define)]
    define: Vec<(String, i64)>,
}

/// A kernel built for reading: its source, launch (with the extra defines), arch and CUBIN.
pub struct Built {
    pub source: KernelSource,
    pub launch: Launch,
    pub arch: String,
    pub compiled: Arc<Compiled>,
}

impl Target {
    pub fn build(self) -> Result<Built, String> {
        let source = match self.kernel {
            Some(path) => KernelSource::from_file_over(&path, &self.step.kernel).map_err(|e| e.to_string())?,
            None => self.step.kernel.clone(),
        };
        let extra = common::tools::cli::static_defines(self.define);
        let launch = common::harness::launch::with_defines((self.step.launch)(&self.shape), &extra);
        let arch = self.step.arch.map_or(self.arch, str::to_string);
        let compiled = compile(&source, &launch.defines, &arch).map_err(|e| e.to_string())?;
        Ok(Built { source, launch, arch, compiled })
    }
}

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    target: Target,
    /// Where to write the CUBIN
    #[arg(long)]
    out: PathBuf,
}

pub fn run(Args { target, out }: Args) -> Result<(), String> {
    let Built { source, launch, arch, compiled } = target.build()?;
    std::fs::write(&out, &compiled.cubin).map_err(|e| format!("{}: {e}", out.display()))?;
    println!("{} ({arch}, {:?}) -> {}\n{}", source.name, launch.defines, out.display(), compiled.log.trim_end());
    Ok(())
}
