fn main() -> std::process::ExitCode {
    common::cli::main(&step01_naive::STEP)
}
