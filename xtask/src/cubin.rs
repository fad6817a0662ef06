//! `cargo xtask cubin STEP [--shape MxNxK] [--arch sm_90] [--kernel FILE.cu] --out FILE`: writes the
//! CUBIN the harness would load for that shape, to read with `cuobjdump -sass` (no GPU needed).

use common::Shape;
use common::compile::{KernelSource, compile};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The step: id, crate name or number (e.g. 06)
    #[arg(value_parser = crate::step_key)]
    step: &'static common::Step,
    /// The shape whose launch picks the kernel variant
    #[arg(long, value_name = "MxNxK", value_parser = crate::shape, default_value = "4096")]
    shape: Shape,
    #[arg(long, default_value = "sm_90")]
    arch: String,
    /// Another .cu file, compiled with the step's defines
    #[arg(long, value_name = "FILE.cu")]
    kernel: Option<PathBuf>,
    /// Where to write the CUBIN
    #[arg(long)]
    out: PathBuf,
}

pub fn run(Args { step, shape, arch, kernel, out }: Args) -> Result<(), String> {
    let source = match kernel {
        Some(path) => KernelSource::from_file(&path).map_err(|e| e.to_string())?,
        None => step.kernel.clone(),
    };
    let launch = (step.launch)(&shape);
    let arch = step.arch.map_or(arch, str::to_string);
    let compiled = compile(&source, &launch.defines, &arch).map_err(|e| e.to_string())?;
    std::fs::write(&out, &compiled.cubin).map_err(|e| format!("{}: {e}", out.display()))?;
    println!("{} ({arch}, {:?}) -> {}\n{}", source.name, launch.defines, out.display(), compiled.log.trim_end());
    Ok(())
}
