fn main() -> std::process::ExitCode {
    common::tools::cli::main_variants(&step11_cluster_persistent::VARIANTS)
}
