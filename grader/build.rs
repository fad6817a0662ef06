//! Embeds the lab kernels the grader's own tests grade (`labs/cheats/*.cu`, with the score a
//! correct grader gives each, and the broken kernels of `labs/broken/`), so that the test binary
//! needs no source tree (it runs from a bundle on a GPU node).

use std::fmt::Write;
use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("grader is inside the workspace").to_path_buf();
    let mut out =
        String::from("/// (folder, file name, source) of every lab kernel the grader's tests grade, sorted.\n");
    out += "pub static LAB_KERNELS: &[(&str, &str, &str)] = &[\n";
    let mut files = Vec::new();
    for folder in ["labs/cheats", "labs/broken/step04-bankfree"] {
        let dir = root.join(folder);
        println!("cargo:rerun-if-changed={}", dir.display());
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "cu") {
                files.push((folder, path));
            }
        }
    }
    files.sort();
    for (folder, path) in files {
        println!("cargo:rerun-if-changed={}", path.display());
        let name = path.file_name().unwrap().to_string_lossy();
        writeln!(out, "    ({folder:?}, {name:?}, include_str!({:?})),", path.display().to_string()).unwrap();
    }
    out += "];\n";
    std::fs::write(Path::new(&std::env::var("OUT_DIR").unwrap()).join("lab_kernels.rs"), out).unwrap();
}
