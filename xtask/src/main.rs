//! `cargo xtask <task>`: project tasks that are programs rather than shell scripts. Run
//! `cargo xtask --help` for the list, `cargo xtask <task> --help` for one task's options.

mod book;
mod bundle;
mod cubin;
mod mix;
mod ptxas;
mod references;
mod rehash;
mod results;
mod svg;
mod sweep;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "xtask", bin_name = "cargo xtask", version, about = "Tasks of the SGEMM ladder")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Build every test, bench and step binary (release) into a self-contained folder with
    /// run.sh, for a GPU machine with the NVIDIA driver and CUDA 13 but no Rust
    Bundle {
        /// Where to put it
        #[arg(long, default_value = "dist/gpu-bundle")]
        out: PathBuf,
    },
    /// Registers, shared memory and spills of every kernel variant (needs only NVRTC)
    Ptxas {
        /// The architecture to compile for (sm_80, sm_90, ...; steps built for one use theirs)
        #[arg(long, default_value = "sm_90")]
        arch: String,
    },
    /// Write the CUBIN the harness would load for a shape, to read with `cuobjdump -sass`
    Cubin(cubin::Args),
    /// The instructions of a kernel's main loop per tensor-core instruction, from its SASS
    /// (needs NVRTC and nvdisasm, no GPU)
    Mix(mix::Args),
    /// Every step and cuBLAS on a sweep of shapes (needs a GPU), into results/<gpu>.json
    Sweep(sweep::Args),
    /// The top rung against every cuBLAS configuration and PyTorch, timed both ways (needs a
    /// GPU), into results/references/<gpu>.json
    References(references::Args),
    /// Keep the recorded results and references of steps whose source changed but whose machine
    /// code did not (an edit to a shared header they do not use, a comment; needs git and NVRTC, no
    /// GPU)
    Rehash(rehash::Args),
    /// The book's tables and charts from the recorded results
    Book {
        /// Change nothing; fail on stale generated files, kernels changed since their
        /// results or profiles, broken includes, and typed figures in the chapters of
        /// book/figures.txt (the others' are listed)
        #[arg(long)]
        check: bool,
    },
    /// The kernel hash of every step of the registry, one `id hash shape` a line: what a results
    /// file records, and what `scripts/profile.sh` writes beside each profile, and the shape it
    /// profiles the step at
    Hashes,
    /// The lab grader's commands (the `grader` crate)
    #[command(flatten)]
    Grader(grader::Command),
}

pub use grader::{shape, step_key};

fn main() -> ExitCode {
    common::tools::cli::program_start();
    let result = match Cli::parse().task {
        Task::Bundle { out } => bundle::run(&out),
        Task::Ptxas { arch } => ptxas::run(&arch),
        Task::Cubin(args) => cubin::run(args),
        Task::Mix(args) => mix::run(args),
        Task::Sweep(args) => sweep::run(args),
        Task::References(args) => references::run(args),
        Task::Rehash(args) => rehash::run(args),
        Task::Book { check } => book::run(check),
        Task::Hashes => {
            steps::ALL.iter().for_each(|s| println!("{} {} {}", s.id(), s.kernel.hash(), book::profiles::shape_of(s)));
            Ok(())
        }
        Task::Grader(command) => grader::run(command),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_flag_of_every_task_has_help_text() {
        for task in Cli::command().get_subcommands().filter(|c| !c.is_hide_set()) {
            for arg in task.get_arguments().filter(|a| !a.is_hide_set()) {
                assert!(arg.get_help().is_some(), "cargo xtask {} {} has no help text", task.get_name(), arg.get_id());
            }
        }
    }

    #[test]
    fn negative_scalars_and_typos() {
        let cli =
            Cli::try_parse_from(["xtask", "grade", "5", "x.cu", "--budget", "60", "--perf-shape", "2048"]).unwrap();
        let Task::Grader(grader::Command::Grade(a)) = cli.task else { panic!("not grade") };
        assert_eq!((a.budget, a.perf_shape), (60, common::Shape::cube(2048)));
        let negative =
            Cli::try_parse_from(["xtask", "grade", "5", "x.cu", "--timeout", "-1"]).err().unwrap().to_string();
        assert!(negative.contains("--timeout"), "{negative}");
        let typo = Cli::try_parse_from(["xtask", "bok"]).err().unwrap().to_string();
        assert!(typo.contains("tip: a similar subcommand exists: 'book'"), "{typo}");
        // An experiment timed as the top rung never writes the recorded results.
        let experiment = Cli::try_parse_from(["xtask", "references", "--define", "KREV=1"]).err().unwrap().to_string();
        assert!(experiment.contains("--out"), "{experiment}");
        assert!(Cli::try_parse_from(["xtask", "references", "--kernel", "x.patch", "--out", "x.json"]).is_ok());
        // A rehash names the commit the results were swept from.
        let rehash = Cli::try_parse_from(["xtask", "rehash"]).err().unwrap().to_string();
        assert!(rehash.contains("--from"), "{rehash}");
        let help = Cli::try_parse_from(["xtask", "--help"]).err().unwrap();
        assert_eq!(help.exit_code(), 0);
        assert!(help.to_string().contains("Usage: cargo xtask <COMMAND>"), "{help}");
    }
}
