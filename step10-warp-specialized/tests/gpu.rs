fn main() -> std::process::ExitCode {
    common::tools::testing::main_variants(&step10_warp_specialized::VARIANTS)
}
