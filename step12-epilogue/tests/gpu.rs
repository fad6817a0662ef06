fn main() -> std::process::ExitCode {
    common::tools::testing::main_variants(&step12_epilogue::VARIANTS)
}
