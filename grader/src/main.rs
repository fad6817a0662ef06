//! `grader`: the lab grader on its own (the same commands as `cargo xtask grade` and
//! `cargo xtask handout`), for course machines that have the bundle but no Rust.

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    common::tools::cli::program_start();
    match grader::run(grader::Cli::parse().command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
