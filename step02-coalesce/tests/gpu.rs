fn main() -> std::process::ExitCode {
    common::tools::testing::main(&step02_coalesce::STEP)
}
