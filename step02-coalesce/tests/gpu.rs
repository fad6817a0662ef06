fn main() -> std::process::ExitCode {
    common::testing::main(&step02_coalesce::STEP)
}
