fn main() -> std::process::ExitCode {
    common::tools::testing::main(&step01_naive::STEP)
}
