fn main() -> std::process::ExitCode {
    common::tools::cli::main_variants(&step14_fp8::VARIANTS)
}
