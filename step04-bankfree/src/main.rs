fn main() -> std::process::ExitCode {
    common::tools::cli::main(&step04_bankfree::STEP)
}
