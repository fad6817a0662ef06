fn main() -> std::process::ExitCode {
    common::tools::cli::main_variants(&step13_3xtf32::VARIANTS)
}
