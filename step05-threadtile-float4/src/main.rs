fn main() -> std::process::ExitCode {
    common::cli::main(&step05_threadtile_float4::STEP)
}
