fn main() -> std::process::ExitCode {
    common::cli::main_variants(&step12_epilogue::VARIANTS)
}
