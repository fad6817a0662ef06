fn main() -> std::process::ExitCode {
    common::cli::main(&step04_bankfree::STEP)
}
