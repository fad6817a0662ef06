fn main() -> std::process::ExitCode {
    common::cli::main_variants(&step08_mma_ldmatrix::VARIANTS)
}
