//! The GPU bundle: every executable the GPU machine needs, built here, copied into one
//! folder with a script that runs them. Kernels and headers are embedded in the binaries.

use std::path::{Path, PathBuf};
use std::process::Command;

const RUN_SH: &str = include_str!("run.sh");

/// The workspace root (xtask lives one level below it).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask is inside the workspace").to_path_buf()
}

/// Runs `cargo <args> --message-format=json` and returns (package, target kind, target name, executable).
fn cargo_executables(args: &[&str]) -> Result<Vec<(String, String, String, PathBuf)>, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(args)
        .arg("--message-format=json-render-diagnostics")
        .current_dir(root())
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo {} failed", args.join(" ")));
    }
    let mut found = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        let Some(exe) = msg["executable"].as_str() else { continue };
        let package = msg["package_id"].as_str().unwrap_or_default();
        // package_id looks like "path+file:///.../step01-naive#0.1.0"
        let package = package.rsplit('/').next().unwrap_or(package).split(['#', '@']).next().unwrap_or(package);
        let kind = msg["target"]["kind"][0].as_str().unwrap_or("bin").to_string();
        let name = msg["target"]["name"].as_str().unwrap_or("unknown").to_string();
        found.push((package.to_string(), kind, name, PathBuf::from(exe)));
    }
    Ok(found)
}

pub fn run(out: &Path) -> Result<(), String> {
    // Relative to the workspace, wherever cargo xtask was started.
    let out = root().join(out);
    let _ = std::fs::remove_dir_all(&out);
    let mut all = cargo_executables(&["test", "--workspace", "--exclude", "xtask", "--release", "--no-run"])?;
    let benches = cargo_executables(&["bench", "--workspace", "--exclude", "xtask", "--no-run"])?;
    all.extend(benches.into_iter().filter(|(_, kind, _, _)| kind == "bench"));
    // The step binaries, the examples (tuning tools) and the xtask tool itself (for `sweep`).
    all.extend(cargo_executables(&["build", "--workspace", "--release", "--bins", "--examples"])?);
    let mut bytes = 0u64;
    for (package, kind, name, exe) in &all {
        let (folder, file) = match kind.as_str() {
            "bench" => ("benches", package.clone()),
            "bin" => ("bin", name.clone()),
            "example" => ("examples", name.clone()),
            // Unit tests of a library carry the package name; integration tests add theirs.
            "lib" => ("tests", format!("{package}-unit")),
            _ => ("tests", format!("{package}-{name}")),
        };
        let dest = out.join(folder).join(file);
        std::fs::create_dir_all(dest.parent().unwrap()).map_err(|e| e.to_string())?;
        std::fs::copy(exe, &dest).map_err(|e| format!("copy {}: {e}", exe.display()))?;
        bytes += std::fs::metadata(&dest).map(|m| m.len()).unwrap_or(0);
    }
    let script = out.join("run.sh");
    std::fs::write(&script, RUN_SH).map_err(|e| e.to_string())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())?;
    }
    println!("bundle: {} executables, {:.1} MiB in {}", all.len(), bytes as f64 / (1 << 20) as f64, out.display());
    println!("on the GPU machine: {}/run.sh [tests|bench|all]", out.display());
    Ok(())
}
