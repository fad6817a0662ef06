fn main() -> std::process::ExitCode {
    common::testing::main(&step03_smem::STEP)
}
