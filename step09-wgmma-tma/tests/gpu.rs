fn main() -> std::process::ExitCode {
    common::tools::testing::main_variants(&step09_wgmma_tma::VARIANTS)
}
