fn main() -> std::process::ExitCode {
    common::tools::cli::main(&step01_naive::STEP)
}
