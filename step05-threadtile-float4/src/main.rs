fn main() -> std::process::ExitCode {
    common::tools::cli::main(&step05_threadtile_float4::STEP)
}
