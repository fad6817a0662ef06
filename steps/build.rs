//! Embeds the kernels the all-kernels test compiles besides the steps' own: the experiments of
//! `notes/experiments/<step>/*.patch` and the staff's worked answers of `labs/solutions/<step>/*.patch`
//! (diffs against the step's kernel, applied here to today's kernel: a diff that no longer applies
//! fails the build, naming the hunk), and the roof kernel of steps 3 and 4. The test binary then needs no source tree (it runs from a bundle on a GPU node).

#[path = "../common/src/harness/patch.rs"]
#[allow(dead_code)]
mod patch;

use std::fmt::Write;
use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("steps is inside the workspace").to_path_buf();
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let mut out = String::new();
    // A handout has no labs/ and no notes/: both lists are then empty.
    for (dir, table, what) in
        [("notes/experiments", "EXPERIMENTS", "experiment"), ("labs/solutions", "SOLUTIONS", "worked answer")]
    {
        writeln!(out, "/// (step, file name, source) of every {what} kernel in `{dir}`, sorted.").unwrap();
        writeln!(out, "pub static {table}: &[(&str, &str, &str)] = &[").unwrap();
        for (step, path) in patches(&root.join(dir)) {
            let kernel = root.join(&step).join("src/kernel.cu");
            println!("cargo:rerun-if-changed={}", path.display());
            println!("cargo:rerun-if-changed={}", kernel.display());
            let base = std::fs::read_to_string(&kernel).unwrap_or_else(|e| panic!("{}: {e}", kernel.display()));
            let diff = std::fs::read_to_string(&path).unwrap();
            let code = patch::apply(&base, &diff).unwrap_or_else(|e| {
                panic!(
                    "{what} {} no longer applies to {}: {e}; refresh it with `diff -u`",
                    path.display(),
                    kernel.display()
                )
            });
            let name = path.file_stem().unwrap().to_string_lossy().into_owned() + ".cu";
            let applied = out_dir.join(format!("{table}-{step}-{name}"));
            std::fs::write(&applied, code).unwrap();
            writeln!(out, "    ({step:?}, {name:?}, include_str!({:?})),", applied.display().to_string()).unwrap();
        }
        out += "];\n";
    }
    std::fs::write(out_dir.join("experiments.rs"), out).unwrap();
}

/// (step folder name, path) of every `<dir>/<step>/*.patch`, sorted.
fn patches(dir: &Path) -> Vec<(String, std::path::PathBuf)> {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files = Vec::new();
    for step in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        println!("cargo:rerun-if-changed={}", step.path().display());
        for file in std::fs::read_dir(step.path()).into_iter().flatten().flatten() {
            let path = file.path();
            if path.extension().is_some_and(|e| e == "patch") {
                files.push((step.file_name().to_string_lossy().into_owned(), path));
            }
        }
    }
    files.sort();
    files
}
