fn main() -> std::process::ExitCode {
    common::tools::cli::main(&step03_smem::STEP)
}
