fn main() -> std::process::ExitCode {
    common::testing::main_variants(&step09_wgmma_tma::VARIANTS)
}
