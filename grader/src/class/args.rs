//! What `grade-class` is told: its command line.

use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct ClassArgs {
    /// The step: id, crate name or number (e.g. 05)
    #[arg(value_parser = crate::step_key)]
    pub step: &'static common::Step,
    /// The submissions: one `.cu` file or one folder per student
    #[arg(long, value_name = "DIR")]
    pub submissions: Option<PathBuf>,
    /// Where the cards, the CSV and the report go
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Hidden cases, one `M N K alpha beta` per line
    #[arg(long, value_name = "FILE")]
    pub hidden: Option<PathBuf>,
    /// Time limit of each case, in seconds
    #[arg(long, value_name = "SECS", default_value_t = 30, allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,
    /// Time limit of each submission's grading, in seconds
    #[arg(long, value_name = "SECS", default_value_t = 120, allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub budget: u64,
    /// The shape the speed is measured at
    #[arg(long, value_name = "MxNxK", value_parser = crate::shape, default_value = "4096")]
    pub perf_shape: common::Shape,
    /// Only the checks that need no GPU (include policy, confined compile)
    #[arg(long)]
    pub no_gpu: bool,
    /// The GPUs to grade on, one worker each (default: every GPU of this machine)
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub gpus: Vec<usize>,
    /// Grade again students who already have a card
    #[arg(long)]
    pub regrade: bool,
    /// Grade only this student (an id from roster.json; repeatable)
    #[arg(long, value_name = "ID")]
    pub only: Vec<String>,
    /// Submit a Slurm job array instead of grading here
    #[arg(long)]
    pub slurm: bool,
    /// With --slurm: at most this many tasks at once
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..))]
    pub throttle: u32,
    /// With --slurm: another sbatch option, e.g. --sbatch=--partition=gpu (repeatable)
    #[arg(long = "sbatch", value_name = "OPTION", allow_hyphen_values = true)]
    pub sbatch: Vec<String>,
    /// Merge what a Slurm job array left in --out into the CSV and the report
    #[arg(long, conflicts_with_all = ["slurm", "submissions"])]
    pub collect: bool,
}
