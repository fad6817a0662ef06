fn main() -> std::process::ExitCode {
    common::cli::main_variants(&step07_wmma::VARIANTS)
}
