//! The one registry of steps: benches, tools, recorded results and the book all read it.
//! Adding a step is one new crate and one line here (one per precision for steps 7-13).

use common::Step;

/// Every step of the ladder, in order; a step with several precisions has one entry each.
pub static ALL: &[Step] = &[
    step01_naive::STEP,
    step02_coalesce::STEP,
    step03_smem::STEP,
    step04_bankfree::STEP,
    step05_threadtile_float4::STEP,
    step06_double_buffer::STEP,
    step07_wmma::FP16,
    step07_wmma::TF32,
    step07_wmma::FP64,
    step08_mma_ldmatrix::FP16,
    step08_mma_ldmatrix::BF16,
    step08_mma_ldmatrix::TF32,
    step08_mma_ldmatrix::FP64,
    step08_mma_ldmatrix::TF32X3,
    step09_wgmma_tma::FP16,
    step09_wgmma_tma::BF16,
    step10_warp_specialized::FP16,
    step10_warp_specialized::BF16,
    step11_cluster_persistent::FP16,
    step11_cluster_persistent::BF16,
    step12_epilogue::FP16,
    step12_epilogue::BF16,
    step12_epilogue::FP16_C16,
    step12_epilogue::BF16_C16,
    step13_3xtf32::TF32,
    step13_3xtf32::TF32X3,
    step14_fp8::FP8,
    step14_fp8::FP8_C32,
    step14_fp8::FP8_BLOCK,
    step14_fp8::FP8_BLOCK_C32,
    step15_skinny::FP16,
    step15_skinny::BF16,
    step15_skinny::FP16_C16,
    step15_skinny::BF16_C16,
];

/// Kernels kept beside the steps, embedded at build time so that no tool reads the source
/// tree at run time.
pub mod kernels {
    use common::KernelSource;

    include!(concat!(env!("OUT_DIR"), "/experiments.rs"));

    /// The experiment kernels of one step (`notes/experiments/<step>/*.patch`, applied).
    pub fn experiments(step: &str) -> Vec<KernelSource> {
        of(EXPERIMENTS, "notes/experiments", step)
    }

    /// The staff's worked answers that are kernels (`labs/solutions/<step>/*.patch`, applied).
    pub fn solutions(step: &str) -> Vec<KernelSource> {
        of(SOLUTIONS, "labs/solutions", step)
    }

    /// The kernels of `table` that vary `step`'s, each with the headers of the step's kernel.
    fn of(table: &[(&str, &str, &'static str)], dir: &str, step: &str) -> Vec<KernelSource> {
        let Some(base) = crate::ALL.iter().find(|s| s.name == step) else { return Vec::new() };
        table
            .iter()
            .filter(|(s, _, _)| *s == step)
            .map(|(s, file, code)| base.kernel.with_code(format!("{dir}/{s}/{file}"), *code))
            .collect()
    }

    /// The roof kernel of steps 3 and 4: their inner loops without the global loads.
    pub const ROOF: KernelSource = KernelSource {
        name: std::borrow::Cow::Borrowed("step04-bankfree/examples/roof.cu"),
        code: std::borrow::Cow::Borrowed(include_str!("../../step04-bankfree/examples/roof.cu")),
        headers: &[],
    };
}

/// The step whose id (`step07-wmma-tf32`), crate name (`step05-threadtile-float4`) or number
/// (`5`, `05`, `step05`) is `key`; for a step with several precisions, the first of them.
pub fn find(key: &str) -> Option<&'static Step> {
    variants(key).into_iter().next()
}

/// The registry entry whose id is exactly `id` (`step12-epilogue-fp16-c16`), as recorded files name it.
pub fn by_id(id: &str) -> Option<&'static Step> {
    ALL.iter().find(|s| s.id() == id)
}

/// Every registry entry `key` names: the one with that id, or all precisions of a step.
pub fn variants(key: &str) -> Vec<&'static Step> {
    if let Some(exact) = by_id(key.trim()) {
        return vec![exact];
    }
    let key = key.trim().trim_start_matches("step");
    ALL.iter()
        .filter(|s| {
            let name = s.name.trim_start_matches("step");
            name == key || name.split('-').next().and_then(|n| n.parse::<u32>().ok()) == key.parse::<u32>().ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The crate names of the steps, in order, each once.
    fn names() -> Vec<&'static str> {
        let mut names: Vec<&'static str> = ALL.iter().map(|s| s.name).collect();
        names.dedup();
        names
    }

    #[test]
    fn registry_is_in_order_and_findable() {
        for (i, name) in names().into_iter().enumerate() {
            assert!(name.starts_with(&format!("step{:02}-", i + 1)), "{name} out of order");
            assert_eq!(find(name).unwrap().name, name);
            assert_eq!(find(&format!("{}", i + 1)).unwrap().name, name);
        }
        assert!(find("99").is_none());
        let mut ids: Vec<String> = ALL.iter().map(Step::id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), ALL.len(), "ids are unique");
        assert_eq!(variants("7").len(), 3);
        assert_eq!(find("step07-wmma-tf32").unwrap().precision, common::Precision::Tf32);
    }
}
