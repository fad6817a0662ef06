fn main() -> std::process::ExitCode {
    common::tools::testing::main(&step03_smem::STEP)
}
