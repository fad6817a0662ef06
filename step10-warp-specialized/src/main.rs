fn main() -> std::process::ExitCode {
    common::cli::main_variants(&step10_warp_specialized::VARIANTS)
}
