fn main() -> std::process::ExitCode {
    common::tools::cli::main_variants(&step08_mma_ldmatrix::VARIANTS)
}
