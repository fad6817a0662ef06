fn main() -> std::process::ExitCode {
    common::testing::main_variants(&step11_cluster_persistent::VARIANTS)
}
