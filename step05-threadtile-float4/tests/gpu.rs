fn main() -> std::process::ExitCode {
    common::testing::main(&step05_threadtile_float4::STEP)
}
