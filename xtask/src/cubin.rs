//! `cargo xtask cubin STEP [--shape MxNxK] [--arch sm_90] [--kernel FILE.cu] --out FILE`: writes the
//! CUBIN the harness would load for that shape, to read with `cuobjdump -sass` (no GPU needed).

use common::Shape;
use common::compile::{KernelSource, compile};
use std::path::PathBuf;

pub fn run(args: &[String]) -> Result<(), String> {
    let mut it = args.iter();
    let step = it.next().and_then(|k| steps::find(k)).ok_or("cubin needs a step (e.g. 06)")?;
    let (mut shape, mut arch, mut kernel, mut out) = (Shape::cube(4096), "sm_90".to_string(), None, None);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--shape" => shape = Shape::parse(value).map_err(|e| e.to_string())?,
            "--arch" => arch = value.clone(),
            "--kernel" => kernel = Some(PathBuf::from(value)),
            "--out" => out = Some(PathBuf::from(value)),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    let source = match kernel {
        Some(path) => KernelSource::from_file(&path).map_err(|e| e.to_string())?,
        None => step.kernel.clone(),
    };
    let launch = (step.launch)(&shape);
    let compiled = compile(&source, &launch.defines, &arch).map_err(|e| e.to_string())?;
    let out = out.ok_or("cubin needs --out FILE")?;
    std::fs::write(&out, &compiled.cubin).map_err(|e| format!("{}: {e}", out.display()))?;
    println!("{} ({arch}, {:?}) -> {}\n{}", source.name, launch.defines, out.display(), compiled.log.trim_end());
    Ok(())
}
