fn main() -> std::process::ExitCode {
    common::tools::cli::main_variants(&step12_epilogue::VARIANTS)
}
