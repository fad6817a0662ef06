fn main() -> std::process::ExitCode {
    common::testing::main_variants(&step10_warp_specialized::VARIANTS)
}
