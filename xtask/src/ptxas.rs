//! `cargo xtask ptxas [--arch sm_90]`: registers, shared memory and spills of every kernel
//! variant in the registry, from NVRTC's ptxas report (no GPU needed, only libnvrtc).

use common::harness::compile::compile;
use common::{Launch, Shape};

/// Shapes whose launches pick each step's variants (the fast path and the edge path).
const PROBES: [Shape; 2] = [Shape::cube(4096), Shape::new(1000, 1001, 999)];

pub fn run(arch: &str) -> Result<(), String> {
    println!("| step | defines | threads | registers | static smem (B) | spills (B) |\n|---|---|---:|---:|---:|---:|");
    for step in steps::ALL {
        let mut seen: Vec<Launch> = Vec::new();
        for shape in PROBES {
            let launch = (step.launch)(&shape);
            if seen.iter().any(|l| l.defines == launch.defines) {
                continue;
            }
            // A step built for one architecture (sm_90a) compiles for that one.
            let c = compile(&step.kernel, &launch.defines, step.arch.unwrap_or(arch)).map_err(|e| e.to_string())?;
            let defines: Vec<String> = launch.defines.iter().map(|(n, v)| format!("{n}={v}")).collect();
            let r = c.resources;
            println!(
                "| {} | {} | {} | {} | {} | {} |",
                step.name,
                defines.join(" "),
                launch.threads_per_block(),
                r.registers,
                r.smem_bytes,
                r.spills()
            );
            seen.push(launch);
        }
    }
    Ok(())
}
