fn main() -> std::process::ExitCode {
    common::tools::cli::main_variants(&step07_wmma::VARIANTS)
}
