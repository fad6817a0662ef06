fn main() -> std::process::ExitCode {
    common::cli::main(&step06_double_buffer::STEP)
}
