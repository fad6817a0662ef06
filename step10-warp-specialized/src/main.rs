fn main() -> std::process::ExitCode {
    common::tools::cli::main_variants(&step10_warp_specialized::VARIANTS)
}
