fn main() -> std::process::ExitCode {
    common::testing::main(&step04_bankfree::STEP)
}
