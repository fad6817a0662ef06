fn main() -> std::process::ExitCode {
    common::cli::main_variants(&step11_cluster_persistent::VARIANTS)
}
