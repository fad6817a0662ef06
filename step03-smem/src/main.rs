fn main() -> std::process::ExitCode {
    common::cli::main(&step03_smem::STEP)
}
