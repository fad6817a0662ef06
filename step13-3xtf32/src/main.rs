fn main() -> std::process::ExitCode {
    common::cli::main_variants(&step13_3xtf32::VARIANTS)
}
