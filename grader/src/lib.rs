//! The lab grader of the ladder, and the handout that makes a student copy.
//!
//! A submission is hostile code. It is never compiled or run in the grader's own process: the
//! parent checks its text ([`policy`]), copies it alone into a fresh folder, and hands it to
//! children that confine themselves ([`confine`]) and report on a channel the submission
//! cannot write ([`protocol`]). Timed runs are verified like every case ([`gpu`]); a budget bounds
//! the whole grading, and the card ([`report`]) is written whatever the submission does.
//!
//! - `handout STEP --out DIR`: a student copy ([`handout`]).
//! - `grade STEP FILE.cu [--hidden FILE] [--json OUT] [--staff FILE] [--timeout SECS]
//!   [--budget SECS] [--perf-shape S] [--no-gpu]`: the score card ([`grade`]).
//! - `grade-class STEP --submissions DIR --out DIR [--slurm | --collect]`: a whole class
//!   ([`class`]).

mod cases;
mod children;
pub mod class;
mod confine;
mod gpu;
pub mod grade;
pub mod handout;
mod policy;
mod protocol;
pub mod report;
mod stages;
pub mod submission;

use common::{Shape, Step};
use std::path::{Path, PathBuf};

/// The grader's commands, flattened into `cargo xtask` and the `grader` binary alike.
#[derive(clap::Subcommand)]
pub enum Command {
    /// A student copy of the repository with a step's kernel as a skeleton
    Handout(handout::HandoutArgs),
    /// Grade a submitted kernel: compiled alone, run in confined child processes, timed on verified runs
    Grade(grade::GradeArgs),
    /// Grade a folder of submissions (one file or folder per student): here on every GPU, or as a Slurm job array
    GradeClass(class::ClassArgs),
    /// One task of a Slurm job array of grade-class
    #[command(hide = true)]
    GradeClassTask(class::TaskArgs),
    /// The grader's child process that compiles the submission
    #[command(hide = true)]
    GradeCompile(children::ChildArgs),
    /// The grader's child process that runs the cases, one a line on stdin
    #[command(hide = true)]
    GradeCases(children::ChildArgs),
    /// The grader's child process that times the submission
    #[command(hide = true)]
    GradePerf(children::ChildArgs),
    /// The grader's child process that times the reference solution and cuBLAS
    #[command(hide = true)]
    GradeReference(children::ChildArgs),
}

/// The lab kernels the grader's tests grade: `labs/cheats/*.cu` and the broken kernels,
/// embedded at build time.
pub mod labs {
    include!(concat!(env!("OUT_DIR"), "/lab_kernels.rs"));
}

/// The grader's command line on its own, for programs that act as the grader's children too
/// (the `grader` binary, and test binaries that grade).
#[derive(clap::Parser)]
#[command(name = "grader", version, about = "Grade lab submissions of the SGEMM ladder, or make a student handout")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// When this process was started as one of the grader's commands (`grade`, `handout` or a
/// child), runs it and returns the exit code; `None` otherwise. Test binaries call it first,
/// so that the children the grader starts from them (`current_exe`) work.
pub fn dispatch() -> Option<std::process::ExitCode> {
    use clap::Parser;
    let first = std::env::args().nth(1)?;
    let ours = [
        "grade",
        "handout",
        "grade-class",
        "grade-class-task",
        "grade-compile",
        "grade-cases",
        "grade-perf",
        "grade-reference",
    ];
    if !ours.contains(&first.as_str()) {
        return None;
    }
    common::tools::cli::program_start();
    Some(match run(Cli::parse().command) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    })
}

/// Runs one of the grader's commands.
pub fn run(command: Command) -> Result<(), String> {
    match command {
        Command::Handout(args) => handout::handout(args),
        Command::Grade(args) => grade::grade(args),
        Command::GradeClass(args) => class::grade_class(args),
        Command::GradeClassTask(args) => class::grade_task(args),
        Command::GradeCompile(args) => children::compile_child(args),
        Command::GradeCases(args) => children::cases_child(args),
        Command::GradePerf(args) => children::perf_child(args),
        Command::GradeReference(args) => children::reference_child(args),
    }
}

/// A step of the registry by id (`step07-wmma-tf32`), crate name or number (`5`, `05`).
pub fn step_key(key: &str) -> Result<&'static Step, String> {
    steps::find(key).ok_or_else(|| {
        let ids: Vec<String> = steps::ALL.iter().map(Step::id).collect();
        format!("no step {key:?}; the steps are {}", ids.join(", "))
    })
}

/// `MxNxK`, or `S` for SxSxS.
pub fn shape(text: &str) -> Result<Shape, String> {
    Shape::parse(text).map_err(|e| e.to_string())
}

/// The workspace root (this crate lives one level below it).
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("grader is inside the workspace").to_path_buf()
}
