fn main() -> std::process::ExitCode {
    common::testing::main(&step01_naive::STEP)
}
