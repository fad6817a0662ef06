fn main() -> std::process::ExitCode {
    common::tools::cli::main(&step06_double_buffer::STEP)
}
