fn main() -> std::process::ExitCode {
    common::cli::main_variants(&step09_wgmma_tma::VARIANTS)
}
