fn main() -> std::process::ExitCode {
    common::tools::cli::main_variants(&step15_skinny::VARIANTS)
}
