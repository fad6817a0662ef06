//! `cargo xtask <task>`: project tasks that are programs rather than shell scripts.
//!
//! - `bundle [--out DIR]`: builds every test, bench and step binary (release) into a
//!   self-contained folder with `run.sh`, for a GPU machine that has the NVIDIA driver and
//!   the CUDA 13 toolkit but no Rust.
//! - `ptxas [--arch sm_90]`: registers, shared memory and spills of every kernel variant.
//! - `cubin STEP [--shape S] [--arch A] [--kernel F] --out FILE`: the CUBIN, for `cuobjdump -sass`.
//! - `sweep [--out FILE] [--steps LIST] [--shapes LIST]`: every step and cuBLAS on a sweep of
//!   shapes (needs a GPU), written to `results/<gpu>.json`.
//! - `book [--check]`: the book's tables and charts from the recorded results; `--check` fails
//!   on stale generated files, kernels changed since their results, and broken includes.
//! - `handout STEP --out DIR`, `grade STEP FILE.cu [...]`: lab assignments (see `lab.rs`).

mod book;
mod bundle;
mod cubin;
mod lab;
mod ptxas;
mod svg;
mod sweep;

use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask bundle [--out DIR] | ptxas [--arch sm_XY] | cubin STEP [--shape S] [--arch A] [--kernel F] --out FILE | sweep [--out FILE] [--steps LIST] [--shapes LIST] | book [--check] | handout STEP --out DIR [--keep-later-steps] | grade STEP FILE.cu [--hidden FILE] [--json OUT] [--timeout SECS] [--perf-shape S]";

fn main() -> ExitCode {
    common::compile::disable_compute_cache();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("bundle") => bundle::run(&args[1..]),
        Some("ptxas") => ptxas::run(&args[1..]),
        Some("cubin") => cubin::run(&args[1..]),
        Some("sweep") => sweep::run(&args[1..]),
        Some("book") => book::run(&args[1..]),
        Some("handout") => lab::handout(&args[1..]),
        Some("grade") => lab::grade(&args[1..]),
        // The grader's child processes: one case, or the timing, per process.
        Some("grade-case") => lab::grade_case(&args[1..]),
        Some("grade-perf") => lab::grade_perf(&args[1..]),
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
