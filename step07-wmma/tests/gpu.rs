fn main() -> std::process::ExitCode {
    common::testing::main_variants(&step07_wmma::VARIANTS)
}
