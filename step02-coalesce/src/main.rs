fn main() -> std::process::ExitCode {
    common::tools::cli::main(&step02_coalesce::STEP)
}
