fn main() -> std::process::ExitCode {
    common::tools::testing::main_variants(&step13_3xtf32::VARIANTS)
}
