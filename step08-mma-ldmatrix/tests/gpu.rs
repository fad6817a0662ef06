fn main() -> std::process::ExitCode {
    common::tools::testing::main_variants(&step08_mma_ldmatrix::VARIANTS)
}
