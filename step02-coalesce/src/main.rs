fn main() -> std::process::ExitCode {
    common::cli::main(&step02_coalesce::STEP)
}
