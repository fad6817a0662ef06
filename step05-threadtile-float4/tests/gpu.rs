fn main() -> std::process::ExitCode {
    common::tools::testing::main(&step05_threadtile_float4::STEP)
}
