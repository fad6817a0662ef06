//! The one registry of steps: benches, tools, recorded results and the book all read it.
//! Adding a step is one new crate and one line here.

use common::Step;

/// Every step of the ladder, in order.
pub static ALL: &[Step] = &[
    step01_naive::STEP,
    step02_coalesce::STEP,
    step03_smem::STEP,
    step04_bankfree::STEP,
    step05_threadtile_float4::STEP,
    step06_double_buffer::STEP,
];

/// The step whose crate name (`step05-threadtile-float4`) or number (`5`, `05`, `step05`) is `key`.
pub fn find(key: &str) -> Option<&'static Step> {
    let key = key.trim().trim_start_matches("step");
    ALL.iter().find(|s| {
        let name = s.name.trim_start_matches("step");
        name == key || name.split('-').next().and_then(|n| n.parse::<u32>().ok()) == key.parse::<u32>().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_is_in_order_and_findable() {
        for (i, s) in ALL.iter().enumerate() {
            assert!(s.name.starts_with(&format!("step{:02}-", i + 1)), "{} out of order", s.name);
            assert_eq!(find(s.name).unwrap().name, s.name);
            assert_eq!(find(&format!("{}", i + 1)).unwrap().name, s.name);
        }
        assert!(find("99").is_none());
    }
}
