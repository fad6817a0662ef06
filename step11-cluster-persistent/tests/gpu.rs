fn main() -> std::process::ExitCode {
    common::tools::testing::main_variants(&step11_cluster_persistent::VARIANTS)
}
