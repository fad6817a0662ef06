fn main() -> std::process::ExitCode {
    common::tools::testing::main_variants(&step14_fp8::VARIANTS)
}
