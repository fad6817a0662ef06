//! The book's diagrams, drawn with the `svg` crate from each step's real geometry
//! ([`Geometry`]: its launch at 4096³ and the shared arrays its kernel declares). Where a
//! diagram needs a kernel's index math (which lane touches which address), that math is
//! mirrored here once, next to the diagram, with the kernel lines it copies.
//!
//! Every registered step gets the diagrams that fit it; a step added later gets the generic
//! ones from its defines alone: the K loop in time (a pipeline of barriers per tile), or the
//! producer and consumers of a pipeline on mbarriers, and warp and fragment tiles.

mod banks;
mod draw;
mod pipeline;
mod swizzle;
mod thread_tiles;
mod timeline;
mod warp_access;
mod warp_tiles;

use crate::svg::geometry::Geometry;
use banks::*;
use pipeline::*;
use std::collections::BTreeMap;
use svg::Document;
use swizzle::*;
use thread_tiles::*;
use timeline::*;
use warp_access::*;
use warp_tiles::*;

/// The diagrams drawn for one step's idea alone, beyond those every step with the geometry
/// gets (the K loop in time, warp and fragment tiles, the mbarrier pipeline).
#[derive(Clone, Copy)]
enum Drawn {
    /// The addresses one warp touches in A, B and C (coalescing).
    WarpAccess,
    /// The B tile over the 32 shared-memory banks (the conflict and its padding).
    Banks,
    /// A thread's register tiles and its float4 loads.
    ThreadTiles,
    /// The XOR-swizzled shared layout `ldmatrix` reads.
    Swizzle,
    /// The 128-byte swizzle in which the TMA writes a tile and `wgmma` reads it.
    TmaSwizzle,
}

/// The one table of which step gets which of them.
const STEP_DIAGRAMS: &[(&str, Drawn)] = &[
    ("step01-naive", Drawn::WarpAccess),
    ("step02-coalesce", Drawn::WarpAccess),
    ("step03-smem", Drawn::Banks),
    ("step04-bankfree", Drawn::Banks),
    ("step05-threadtile-float4", Drawn::ThreadTiles),
    ("step08-mma-ldmatrix", Drawn::Swizzle),
    ("step09-wgmma-tma", Drawn::TmaSwizzle),
];

/// The 128-byte XOR swizzle of 16-byte chunks, as the PTX ISA defines it: the layout step 8
/// writes and `ldmatrix` reads, and the layout the TMA writes and `wgmma` reads (step 9 on).
fn swizzle_128b() -> Document {
    let ldmatrix = SwizzlePanel {
        kind: "ldmatrix".into(),
        xor: Xor::RowMod8,
        reads: (0..8).map(|r| (r, 0)).collect(),
        users: String::new(),
    };
    swizzle(
        &[
            "8 rows of 128 B in 16-byte chunks",
            "chunk c of row r stored at c ^ x(r);",
            "columns: chunk positions, 4 banks each",
        ],
        &[ldmatrix],
    )
}

/// Every diagram of every registered step, path relative to `book/src/generated/`. Diagrams of a
/// step's geometry are drawn per registry entry (`<id>-...`); those that the precision does not
/// change, once per step from its first entry (`<name>-...`).
pub fn generate(_book: &crate::results::Results) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    let mut put = |name: String, doc: Document| out.insert(format!("diagrams/{name}.svg"), format!("{doc}\n"));
    for (i, step) in steps::ALL.iter().enumerate() {
        let g = Geometry::of(step);
        let id = step.id();
        let first = i == 0 || steps::ALL[i - 1].name != step.name;
        for &(name, diagram) in STEP_DIAGRAMS.iter().filter(|(name, _)| *name == step.name) {
            match diagram {
                Drawn::WarpAccess => put(format!("{id}-warp"), warp_access(&g)?),
                Drawn::Banks => put(format!("{id}-banks"), banks(&g)?),
                Drawn::ThreadTiles => put(format!("{id}-tiles"), thread_tiles(&g)?),
                Drawn::Swizzle | Drawn::TmaSwizzle if !first => None,
                Drawn::Swizzle => put(format!("{name}-swizzle"), step08_swizzle(step)),
                Drawn::TmaSwizzle => put(format!("{name}-swizzle"), swizzle_128b()),
            };
        }
        if let Some(d) = timeline(&g)? {
            put(format!("{id}-timeline"), d);
        }
        if let Some(d) = warp_tiles(&g)? {
            put(format!("{id}-tiles"), d);
        }
        if let (true, Some(d)) = (first, pipeline(&g)?) {
            put(format!("{}-pipeline", step.name), d);
        }
    }
    // The building blocks of step 8 on, drawn from their definitions (PTX ISA), not from a step.
    put("mma-m16n8-accumulator".into(), accumulator_lanes());
    put("swizzle-128b".into(), swizzle_128b());
    Ok(out)
}

#[cfg(test)]
mod tests {
    /// The book GPU's results, which the schedule is drawn for.
    pub(super) fn book() -> crate::results::Results {
        let all = crate::results::load_all(&crate::bundle::root()).unwrap();
        all.into_iter().find(|r| r.slug == crate::book::BOOK_GPU).unwrap()
    }

    #[test]
    fn every_step_has_a_stable_diagram() {
        let all = super::generate(&book()).unwrap();
        assert_eq!(all, super::generate(&book()).unwrap(), "byte-stable output");
        for step in steps::ALL {
            assert!(all.keys().any(|k| k.contains(step.name)), "no diagram for {}", step.name);
        }
        assert!(all["diagrams/step03-smem-banks.svg"].contains("32 lanes in one bank: 32 passes"));
        assert!(all["diagrams/step04-bankfree-banks.svg"].contains("32 lanes in 32 banks: one pass"));
        assert!(all["diagrams/step01-naive-warp.svg"].contains("A: 32 sectors"));
        assert!(all["diagrams/step02-coalesce-warp.svg"].contains("B: 4 sectors"));
    }

    #[test]
    fn step08_swizzle_spreads_every_access() {
        let all = super::generate(&book()).unwrap();
        let d = &all["diagrams/step08-mma-ldmatrix-swizzle.svg"];
        // ldmatrix: 8 rows in one position unswizzled, 8 positions swizzled; the 32- and 64-bit
        // loads: 4 rows in two positions, then 8 positions.
        for s in
            ["8 passes", "8 rows in banks 0-3", "4 passes", "4 rows in banks 0-7", "x(r) = r % 8", "x(r) = 2 (r % 4)"]
        {
            assert!(d.contains(s), "step 8 swizzle: no {s:?}");
        }
        assert_eq!(d.matches("8 chunks in 32 banks").count(), 2);
        assert!(d.contains("A in fp16 bf16 tf32 3xtf32, B in fp16 bf16"));
        assert!(d.contains("A in fp64, B in tf32 fp64 3xtf32"));
        // Once per step, not per precision.
        assert_eq!(all.keys().filter(|k| k.contains("swizzle") && k.contains("step08")).count(), 1);
    }

    #[test]
    fn the_hopper_rungs_get_their_pipelines_and_no_barrier_timeline() {
        let all = super::generate(&book()).unwrap();
        let d = &all["diagrams/step11-cluster-persistent-pipeline.svg"];
        for s in [
            "BM = 128: 1 producer + 2 consumer warpgroups",
            "STAGES = 4",
            "CLUSTER = 2",
            "empty 3",
            "full 3",
            "4 arrivals",
        ] {
            assert!(d.contains(s), "step 9 pipeline: no {s:?}");
        }
        assert!(!d.contains("empty 4"));
        assert!(all["diagrams/step10-warp-specialized-pipeline.svg"].contains("CLUSTER = 1"));
        for step in ["step09", "step10", "step11", "step12", "step13"] {
            let timeline = |k: &&String| k.starts_with(&format!("diagrams/{step}")) && k.ends_with("-timeline.svg");
            assert!(!all.keys().any(|k| timeline(&k)), "{step} has a barrier timeline");
        }
        // Step 9 has no producer; steps 10-13 one each.
        assert_eq!(all.keys().filter(|k| k.contains("pipeline")).count(), 4);
        // The cp.async steps keep theirs.
        assert!(all.contains_key("diagrams/step08-mma-ldmatrix-fp16-timeline.svg"));
    }
}
