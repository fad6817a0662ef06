//! Embeds the kernels the all-kernels test compiles besides the steps' own: the experiment
//! variants kept in `notes/experiments/<step>/*.cu` and the roof kernel of steps 3 and 4.
//! The test binary then needs no source tree (it runs from a bundle on a GPU node).

use std::fmt::Write;
use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("steps is inside the workspace").to_path_buf();
    let experiments = root.join("notes/experiments");
    println!("cargo:rerun-if-changed={}", experiments.display());
    let mut files = Vec::new();
    for step in std::fs::read_dir(&experiments).into_iter().flatten().flatten() {
        println!("cargo:rerun-if-changed={}", step.path().display());
        for file in std::fs::read_dir(step.path()).into_iter().flatten().flatten() {
            let path = file.path();
            if path.extension().is_some_and(|e| e == "cu") {
                files.push((step.file_name().to_string_lossy().into_owned(), path));
            }
        }
    }
    files.sort();
    let mut out = String::from("/// (step, file name, source) of every experiment kernel, sorted.\n");
    out += "pub static EXPERIMENTS: &[(&str, &str, &str)] = &[\n";
    for (step, path) in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let name = path.file_name().unwrap().to_string_lossy();
        writeln!(out, "    ({step:?}, {name:?}, include_str!({:?})),", path.display().to_string()).unwrap();
    }
    out += "];\n";
    std::fs::write(Path::new(&std::env::var("OUT_DIR").unwrap()).join("experiments.rs"), out).unwrap();
}
