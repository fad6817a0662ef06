//! Embeds the lab kernels the grader's own tests grade (`labs/cheats/*.cu`, with the score a
//! correct grader gives each, and the broken kernels of `labs/broken/<step>/`: `.cu` files, and
//! `.patch` files, diffs against the step's kernel applied here to today's kernel, so that a diff
//! that no longer applies fails the build), so that the test binary needs no source tree (it runs
//! from a bundle on a GPU node).

#[path = "../common/src/harness/patch.rs"]
#[allow(dead_code)]
mod patch;

use std::fmt::Write;
use std::path::{Path, PathBuf};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("grader is inside the workspace").to_path_buf();
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let mut out =
        String::from("/// (folder, file name, source) of every lab kernel the grader's tests grade, sorted.\n");
    out += "pub static LAB_KERNELS: &[(&str, &str, &str)] = &[\n";
    // A handout has no labs/: the list is then empty.
    let broken = root.join("labs/broken");
    println!("cargo:rerun-if-changed={}", broken.display());
    let mut folders = vec!["labs/cheats".to_string()];
    for step in std::fs::read_dir(&broken).into_iter().flatten().flatten() {
        folders.push(format!("labs/broken/{}", step.file_name().to_string_lossy()));
    }
    let mut files = Vec::new();
    for folder in &folders {
        let dir = root.join(folder);
        println!("cargo:rerun-if-changed={}", dir.display());
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "cu" || e == "patch") {
                files.push((folder.clone(), path));
            }
        }
    }
    files.sort();
    for (folder, path) in files {
        println!("cargo:rerun-if-changed={}", path.display());
        let stem = path.file_stem().unwrap().to_string_lossy();
        let name = format!("{stem}.cu");
        let source = if path.extension().is_some_and(|e| e == "patch") {
            let step = folder.rsplit('/').next().unwrap();
            let kernel = root.join(step).join("src/kernel.cu");
            println!("cargo:rerun-if-changed={}", kernel.display());
            let base = std::fs::read_to_string(&kernel).unwrap_or_else(|e| panic!("{}: {e}", kernel.display()));
            let code = patch::apply(&base, &std::fs::read_to_string(&path).unwrap()).unwrap_or_else(|e| {
                panic!("{} no longer applies to {}: {e}; refresh it with `diff -u`", path.display(), kernel.display())
            });
            let applied = out_dir.join(format!("{step}-{name}"));
            std::fs::write(&applied, code).unwrap();
            applied
        } else {
            path
        };
        writeln!(out, "    ({folder:?}, {name:?}, include_str!({:?})),", source.display().to_string()).unwrap();
    }
    out += "];\n";
    std::fs::write(out_dir.join("lab_kernels.rs"), out).unwrap();
}
