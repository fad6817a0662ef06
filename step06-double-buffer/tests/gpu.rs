fn main() -> std::process::ExitCode {
    common::tools::testing::main(&step06_double_buffer::STEP)
}
