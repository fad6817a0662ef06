fn main() -> std::process::ExitCode {
    common::tools::testing::main_variants(&step07_wmma::VARIANTS)
}
