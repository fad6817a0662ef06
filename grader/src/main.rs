//! `grader`: the lab grader on its own (the same commands as `cargo xtask grade` and
//! `cargo xtask handout`), for course machines that have the bundle but no Rust.

use clap::Parser;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "grader", version, about = "Grade lab submissions of the SGEMM ladder, or make a student handout")]
struct Cli {
    #[command(subcommand)]
    command: grader::Command,
}

fn main() -> ExitCode {
    common::cli::program_start();
    match grader::run(Cli::parse().command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
