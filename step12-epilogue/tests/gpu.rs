fn main() -> std::process::ExitCode {
    common::testing::main_variants(&step12_epilogue::VARIANTS)
}
