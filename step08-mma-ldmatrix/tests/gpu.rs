fn main() -> std::process::ExitCode {
    common::testing::main_variants(&step08_mma_ldmatrix::VARIANTS)
}
