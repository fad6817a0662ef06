fn main() -> std::process::ExitCode {
    common::testing::main(&step06_double_buffer::STEP)
}
