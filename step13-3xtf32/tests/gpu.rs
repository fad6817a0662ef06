fn main() -> std::process::ExitCode {
    common::testing::main_variants(&step13_3xtf32::VARIANTS)
}
