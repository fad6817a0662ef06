fn main() -> std::process::ExitCode {
    common::tools::cli::main_variants(&step09_wgmma_tma::VARIANTS)
}
