//! The book's diagrams, drawn with the `svg` crate from each step's real geometry
//! ([`Geometry`]: its launch at 4096³, the defines and constants its kernel is built with, and
//! the shared arrays it declares). Where a diagram needs a kernel's index math (which lane
//! touches which address, which cluster takes which job), that math is mirrored here once, next
//! to the diagram, naming the kernel code it copies, and tested against what the book says of it.
//!
//! [`DIAGRAMS`] is the one list of them: each is drawn because a chapter shows it.

mod banks;
mod descriptor;
mod draw;
mod fragments;
mod multicast;
mod phases;
mod pipeline;
mod promotion;
mod schedule;
mod slices;
mod split;
mod staging;
mod swap;
mod swizzle;
mod tail;
mod thread_tiles;
mod timeline;
mod walk;
mod warp_access;
mod warp_tiles;
mod waves;

use crate::results::Results;
use crate::svg::geometry::Geometry;
use std::collections::BTreeMap;
use svg::Document;
use swizzle::*;

/// What a diagram draws.
#[derive(Clone, Copy, Debug)]
enum Drawn {
    /// The addresses one warp touches in A, B and C (coalescing).
    WarpAccess,
    /// The B tile over the 32 shared-memory banks (the conflict and its padding).
    Banks,
    /// The tiles of A and B a block walks along K, into shared memory.
    TileWalk,
    /// A thread's register tiles and its float4 loads.
    ThreadTiles,
    /// The K loop in time: barriers, or cp.async stages.
    Timeline,
    /// The block tile in warp tiles, and those in fragments.
    WarpTiles,
    /// Which lane holds which element of an `mma.sync` tile.
    Fragments,
    /// Which lane gives which row address to `ldmatrix`, over the swizzled tile.
    Ldmatrix,
    /// The XOR-swizzled shared layout each fragment load reads.
    Swizzle,
    /// The 128-byte swizzle in which the TMA writes a tile and `wgmma` reads it.
    TmaSwizzle,
    /// The ring's mbarriers in time: phases and parities.
    Phases,
    /// A `wgmma` operand's shared-memory descriptor.
    Descriptor,
    /// The producer, the consumers and the ring of a warp-specialized block.
    Pipeline,
    /// The blocks of a cluster and the B boxes each multicasts.
    Multicast,
    /// The persistent grid's jobs, wave by wave.
    Schedule,
    /// The epilogue through staging buffers and TMA stores.
    Staging,
    /// 3xTF32's split of a value into two TF32 numbers.
    Split,
    /// FP8's narrow sums promoted into FP32 every K-tile, two consumers taking turns.
    Promotion,
    /// Where a consumer promotes: two sets of registers with the consumers free, or one in turns.
    Turns,
    /// The last waves of jobs: step 11's schedule, and step 14's two waves shared.
    Tail,
    /// Where the SMs start reading B at a decode shape: even shares of all K-tiles, or slices.
    Slices,
    /// A and B swapped for a small M: C^T = B^T A^T, and the tile it fills.
    Swap,
    /// How many tiles 64, 128 and 192 rows of N make at decode shapes, against the SMs.
    Waves,
}

/// Every diagram: the registry entry it is drawn for (a registry id, or a step's name for its
/// first precision), what it draws, and the file's name, `<entry>-<suffix>.svg`.
const DIAGRAMS: &[(&str, Drawn, &str)] = &[
    ("step01-naive", Drawn::WarpAccess, "warp"),
    ("step02-coalesce", Drawn::WarpAccess, "warp"),
    ("step03-smem", Drawn::Banks, "banks"),
    ("step03-smem", Drawn::TileWalk, "walk"),
    ("step04-bankfree", Drawn::Banks, "banks"),
    ("step05-threadtile-float4", Drawn::ThreadTiles, "tiles"),
    ("step05-threadtile-float4", Drawn::Timeline, "timeline"),
    ("step06-double-buffer", Drawn::Timeline, "timeline"),
    ("step07-wmma-fp16", Drawn::WarpTiles, "tiles"),
    ("step07-wmma-fp64", Drawn::WarpTiles, "tiles"),
    ("step07-wmma-fp16", Drawn::Timeline, "timeline"),
    ("step08-mma-ldmatrix-fp16", Drawn::WarpTiles, "tiles"),
    ("step08-mma-ldmatrix-fp16", Drawn::Timeline, "timeline"),
    ("step08-mma-ldmatrix", Drawn::Fragments, "fragments"),
    ("step08-mma-ldmatrix", Drawn::Ldmatrix, "ldmatrix"),
    ("step08-mma-ldmatrix", Drawn::Swizzle, "swizzle"),
    ("step09-wgmma-tma", Drawn::TmaSwizzle, "swizzle"),
    ("step09-wgmma-tma", Drawn::Phases, "phases"),
    ("step09-wgmma-tma", Drawn::Descriptor, "descriptor"),
    ("step10-warp-specialized", Drawn::Pipeline, "pipeline"),
    ("step11-cluster-persistent", Drawn::Pipeline, "pipeline"),
    ("step11-cluster-persistent", Drawn::Multicast, "multicast"),
    ("step11-cluster-persistent", Drawn::Schedule, "schedule"),
    ("step12-epilogue", Drawn::Staging, "staging"),
    ("step13-3xtf32", Drawn::Split, "split"),
    ("step14-fp8", Drawn::Promotion, "promotion"),
    ("step14-fp8", Drawn::Turns, "turns"),
    ("step14-fp8", Drawn::Tail, "tail"),
    ("step15-skinny", Drawn::Schedule, "schedule"),
    ("step15-skinny", Drawn::Swap, "swap"),
    ("step15-skinny", Drawn::Slices, "slices"),
    ("step15-skinny", Drawn::Waves, "waves"),
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

/// One diagram for the registry entry `step`; `book`: the results of the book's GPU, for what
/// depends on the GPU (the clusters it holds).
fn draw(step: &'static common::Step, what: Drawn, book: &Results) -> Result<Document, String> {
    let g = Geometry::of(step);
    let none = || format!("{}: no {what:?} diagram fits it", step.id());
    Ok(match what {
        Drawn::WarpAccess => warp_access::warp_access(&g)?,
        Drawn::Banks => banks::banks(&g)?,
        Drawn::TileWalk => walk::tile_walk(&g)?,
        Drawn::ThreadTiles => thread_tiles::thread_tiles(&g)?,
        Drawn::Timeline => timeline::timeline(&g)?.ok_or_else(none)?,
        Drawn::WarpTiles => warp_tiles::warp_tiles(&g)?.ok_or_else(none)?,
        Drawn::Fragments => fragments::mma_fragments(step)?,
        Drawn::Ldmatrix => fragments::ldmatrix_addresses(step)?,
        Drawn::Swizzle => step08_swizzle(step),
        Drawn::TmaSwizzle => swizzle_128b(),
        Drawn::Phases => phases::barrier_phases(&g)?,
        Drawn::Descriptor => descriptor::descriptors(&g)?,
        Drawn::Pipeline => pipeline::pipeline(&g)?.ok_or_else(none)?,
        Drawn::Multicast => multicast::multicast(&g)?,
        Drawn::Schedule => schedule::schedule(&g, book)?,
        Drawn::Staging => staging::staging(&g)?,
        Drawn::Split => {
            let x3 = steps::variants(step.name).into_iter().find(|s| s.precision == common::Precision::Tf32x3);
            split::split_diagram(x3.ok_or_else(none)?)?
        }
        Drawn::Promotion | Drawn::Turns => {
            let name = &book.sweep.gpu.name;
            let fp16 = crate::book::hardware::tensor_fp16_per_sm_clock(name)
                .ok_or_else(|| format!("no datasheet for {name} (xtask/src/book/hardware.rs)"))?;
            match what {
                Drawn::Turns => {
                    let block =
                        steps::variants(step.name).into_iter().find(|s| s.precision == common::Precision::Fp8Block);
                    promotion::turns(&g, &Geometry::of(block.ok_or_else(none)?), 2 * fp16 as usize)?
                }
                _ => promotion::promotion(&g, 2 * fp16 as usize)?,
            }
        }
        Drawn::Tail => tail::tail()?,
        Drawn::Slices => slices::slices_diagram(book)?,
        Drawn::Swap => swap::swap(&g)?,
        Drawn::Waves => waves::waves(book)?,
    })
}

/// Every diagram of [`DIAGRAMS`], path relative to `book/src/generated/`, and the one that is
/// drawn from the PTX ISA's definition alone (the swizzle of step 7's "What comes next").
pub fn generate(book: &Results) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    let mut put = |name: String, doc: Document| out.insert(format!("diagrams/{name}.svg"), format!("{doc}\n"));
    for &(entry, what, suffix) in DIAGRAMS {
        let step = steps::by_id(entry)
            .or_else(|| steps::ALL.iter().find(|s| s.name == entry))
            .ok_or_else(|| format!("{entry} is not in the registry"))?;
        put(format!("{entry}-{suffix}"), draw(step, what, book)?);
    }
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
        assert!(all["diagrams/step03-smem-walk.svg"].contains("128 K-tiles of 32 at K = 4096"));
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
    fn the_hopper_rungs_get_their_pictures() {
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
            assert!(d.contains(s), "step 11 pipeline: no {s:?}");
        }
        assert!(!d.contains("empty 4"));
        // Step 10 has no cluster, and says so.
        let d = &all["diagrams/step10-warp-specialized-pipeline.svg"];
        assert!(
            d.contains("no cluster") && d.contains("2 arrivals") && !d.contains("multicast") && !d.contains("CLUSTER")
        );
        for (file, says) in [
            ("step09-wgmma-tma-phases", "STAGES = 2 buffers of 40 KiB"),
            ("step09-wgmma-tma-descriptor", "SBO = 1024 B"),
            ("step09-wgmma-tma-descriptor", "LBO = 8192 B"),
            ("step11-cluster-persistent-multicast", "4 boxes"),
            ("step11-cluster-persistent-schedule", "66 clusters"),
            ("step11-cluster-persistent-schedule", "56 halves"),
            ("step11-cluster-persistent-schedule", "shared out along K"),
            ("step12-epilogue-staging", "8 chunks of 64 rows x 32"),
            ("step13-3xtf32-split", "big = x &amp; 0xffffe000"),
            ("step14-fp8-promotion", "4 wgmma m64n128k32"),
            ("step14-fp8-promotion", "64 x 128 x 128 x 2 FLOPs at 8192"),
            ("step14-fp8-promotion", "256 cycles; green, its promotion: 64 FMAs"),
            ("step14-fp8-tail", "step 11's rule: 14 waves + 4, the last whole"),
            ("step14-fp8-tail", "a cluster: 449-450 K-tiles"),
            ("step15-skinny-slices", "right: 128 SMs start on 2 rows of B; the slices take"),
            ("step15-skinny-slices", "28 and 36 K-tiles, each cut 4 K-tiles before the even one"),
            ("step15-skinny-slices", "64 tiles of C^T (columns, 64 of N each)"),
            ("step15-skinny-swap", "tile 128 x 256:"),
            ("step15-skinny-waves", "16 x 4096 x 4096: 64 rows, 2 slices a tile"),
            ("step15-skinny-waves", "256 x 11008 x 4096: 192 rows"),
            ("step15-skinny-waves", "1024 x 1024 x 1024: 64 rows"),
            ("step15-skinny-swap", "16 rows of 128 exist"),
        ] {
            let d = &all[&format!("diagrams/{file}.svg")];
            assert!(d.contains(says), "{file}: no {says:?}");
        }
    }
}
