fn main() -> std::process::ExitCode {
    common::tools::testing::main(&step04_bankfree::STEP)
}
