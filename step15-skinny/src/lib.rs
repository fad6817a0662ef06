//! Step 15: skinny shapes. For a small M, A and B swap places: the kernel computes C^T = B^T A^T,
//! so that N fills wgmma's 64 rows and M is a narrow tile (8 to 128); a tile has 64, 128 or 192
//! rows of N, whichever brings the count of tiles near the SMs', and a cluster on every SM takes
//! them, or where they are too few, their K-tiles in slices (split-K), the clusters of one moment
//! reading the same rows of B. Larger shapes run step 12's kernel and launch.
//! FP16 and BF16, each with an FP32 or a 16-bit C; sm_90a only.

use common::harness::compile::Header;
use common::harness::hopper_host::{self, CHUNK_BYTES, HopperTiles, PDL};
use common::harness::host::HostCall;
use common::{Launch, Precision, Result, Shape};

/// How one shape is multiplied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Step 12's tiles and launch, unchanged.
    Step12,
    /// A and B swapped: tiles of C^T of `bm` rows of N (64 per consumer) by `bn` rows of M,
    /// `stages` ring buffers.
    Swapped { bm: usize, bn: usize, stages: usize },
}

// ANCHOR: rule
/// The narrow tile of M, as a table: the width of the first row whose M is at least the shape's.
/// Eight wide (wgmma's narrowest) up to M = 8: faster than sixteen wide where N = K = 4096, level
/// at the other decode shapes (`tune15`; `notes/step15.md`, "Next: tiles eight wide on 64 rows").
pub const WIDTHS: &[(usize, usize)] = &[(8, 8), (16, 16), (32, 32), (64, 64), (usize::MAX, 128)];

/// SMs of the GPUs the rule was measured on (an H100 SXM's and an H200's: 132).
pub const SMS: usize = 132;

/// The plan the rule picks for `s`. Swapped where M is small (at most 256) or the problem is, so
/// that step 12's 128 x 256 tiles would fill at most half of the SMs, and M is no larger than N;
/// else step 12's. The rows of N a tile follow from how many tiles there are: 64 (one consumer,
/// twice the tiles) where tiles of 128 rows would number at most half of the SMs, 192 (three consumers)
/// where 128 rows would make a wave and a bit but 192 make one wave, else 128. The ring is as deep
/// as the shared memory holds beside the staging buffers of C, and no deeper than `RINGS` allows.
pub fn plan(s: &Shape) -> Plan {
    let step12_tiles = s.m.div_ceil(128) * s.n.div_ceil(256);
    if s.m > s.n || (s.m > 256 && step12_tiles > SMS / 2) {
        return Plan::Step12;
    }
    let bn = WIDTHS.iter().find(|(most, _)| s.m <= *most).map_or(128, |&(_, bn)| bn);
    let tiles = |bm| swapped_tiles(s, bm, bn);
    let bm = match tiles(128) {
        t if t <= SMS / 2 => 64,
        t if t > SMS && tiles(192) <= SMS => 192,
        _ => 128,
    };
    let most = RINGS.iter().find(|(k, _)| s.k <= *k).map_or(usize::MAX, |&(_, stages)| stages);
    Plan::Swapped { bm, bn, stages: deepest_ring(bm, bn).min(most) }
}

/// The height of the groups in which step 11's order walks the tiles (`GROUP`): 16 where a column of
/// tiles (the rows of N, `s.n / bm`) numbers more than 8 and at most 16 and each tile keeps its K
/// whole (`sliced`: cut into slices), so that one group is a whole column and the units that share
/// a tile of A run on consecutive blocks, which the GPU places side by side; else step 12's 8
/// (with 8 rows or fewer, 8 and 16 give the same order). At 1024³ 16 was 2-3 points of cuBLAS
/// faster one at a time and 3.7 back to back, in two processes, where at 256 x 4096 x 4096 (64
/// rows) it lost 1.5-2; with slices, whose units at one moment are one slice of every tile, it was
/// level at 512 x 1024 x 1024 (two) and lost 2 at 200 x 1024 x 4096 (three) (`notes/step15.md`,
/// "The tiles' order by groups of rows, measured", "Groups of 16 at the other shapes they reach,
/// measured").
pub fn group(s: &Shape, bm: usize, sliced: bool) -> usize {
    if !sliced && (9..=16).contains(&s.n.div_ceil(bm)) { 16 } else { 8 }
}

/// The deepest ring, as a table by K: the most buffers of the first row whose K is at least the
/// shape's. Shallower than what fits: 6 buffers beat the deepest ring by 2.5-8 points of cuBLAS at
/// M <= 64 x 11008 x 4096, and 8 beat 6 where K = 11008 (`tune15 --only "rule's plan"`;
/// `notes/step15.md`, "Next: a shallower ring").
pub const RINGS: &[(usize, usize)] = &[(4096, 6), (usize::MAX, 8)];

/// L2 of the GPU the rule's row for it was measured on (an H200's 60 MB; an H100 SXM has 50).
pub const L2_BYTES: usize = 60 << 20;

/// Whether B streams through the kernel, marked to leave L2 first (and A to stay): where B is
/// larger than L2, no run could find it there again. Where it fits (32 MiB at N = K = 4096) a
/// timed run finds part of it in L2 from the run before, which evict-first would give up
/// (`notes/step15.md`, "Next: which priority pays").
pub fn streams(s: &Shape, p: Precision) -> bool {
    s.n * s.k * p.input().bytes() > L2_BYTES
}

/// The bytes a miss of B's loads brings into L2 where B streams: 128, not every rung's 256 (the
/// TMA's L2 promotion, set on the host's map of B; the kernel's machine code is the same). With 256
/// the stream of B ran 4-6% slower at M <= 16 where B is 90 MB, and level where B fits in L2
/// (`notes/step15.md`, "Next: what a miss of B brings into L2"); the same bytes come from DRAM
/// either way, and 256 makes L2 answer more lookups ("The record with B's promotion at 128 bytes").
pub const STREAM_PROMOTION: usize = 128;

/// Tiles of C^T at `s` swapped, each `bm` rows of N by `bn` of M.
pub fn swapped_tiles(s: &Shape, bm: usize, bn: usize) -> usize {
    s.n.div_ceil(bm) * s.m.div_ceil(bn)
}

/// Ring buffers of a swapped tile that fit the SM's 227 KiB of shared memory, beside two staging
/// buffers of C per consumer and the 1 KiB that aligns the ring; at most 16.
pub const fn deepest_ring(bm: usize, bn: usize) -> usize {
    let ring = 227 * 1024 - 1024 - bm / 64 * 2 * CHUNK_BYTES;
    let stages = ring / (128 * (bm + bn));
    if stages < 16 { stages } else { 16 }
}

/// How many slices `Slices` (skinny.cuh) cuts each tile's K into, on a GPU with `clusters` SMs,
/// for the book's table and the rule's groups: the fewest that give at least half of them a unit,
/// with slices of at least four K-tiles and a slot for every partial slice. The kernel computes it
/// from its grid.
pub fn slices(s: &Shape, p: Precision, clusters: usize) -> usize {
    let Plan::Swapped { bm, bn, .. } = plan(s) else { return 1 };
    slices_of(s, p, bm, bn, clusters)
}

/// [`slices`] for tiles of `bm` rows of N by `bn` of M, whichever plan has them.
fn slices_of(s: &Shape, p: Precision, bm: usize, bn: usize, clusters: usize) -> usize {
    let (tiles, ktiles) = (swapped_tiles(s, bm, bn), s.k.div_ceil(HopperTiles::bk(p)));
    let want = clusters.div_ceil(2 * tiles.max(1)).min(8);
    let fits = |n: usize| ktiles / n >= 4 && (n - 1) * tiles * (bm / 64) <= SLICE_SLOTS;
    (2..=want).take_while(|&n| fits(n)).last().unwrap_or(1)
}

/// Slots of partial sums `Slices` has (skinny.cuh's SLICE_SLOTS: three times step 11's 288).
const SLICE_SLOTS: usize = 3 * 288;

/// How many K-tiles before the even cut each cut between slices lies, as a table by the narrow
/// tile: the skew of the first row whose width is at least the plan's. A wider tile leaves more
/// partial sums to save and read back; each row is the fastest skew of its widths in
/// `tune15 --only skew` at the decode shapes (`notes/step15.md`).
pub const SKEWS: &[(usize, usize)] = &[(32, 4), (usize::MAX, 6)];

/// The skew of `plan`'s slices (0 where it has none: step 12's schedule).
pub fn skew(plan: Plan) -> usize {
    let Plan::Swapped { bn, .. } = plan else { return 0 };
    SKEWS.iter().find(|(most, _)| bn <= *most).map_or(0, |&(_, skew)| skew)
}

/// The first K-tile of slice `s` of `slices` over `ktiles`: the even cut, `skew` K-tiles earlier,
/// every slice keeping a K-tile at least (skinny.cuh's `Slices::cut`, for the book's diagram).
pub fn cut(s: usize, slices: usize, ktiles: usize, skew: usize) -> usize {
    let even = s * ktiles / slices;
    if s == 0 || s == slices { even } else { s.max(even.saturating_sub(skew)) }
}
// ANCHOR_END: rule

// ANCHOR: tiles
/// Step 15's tiles: step 12's for the shapes the rule leaves to it, and the step's two ideas, each
/// of which a partial rung leaves out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SkinnyTiles {
    pub step12: HopperTiles,
    /// A and B swapped where the rule says so.
    pub swap: bool,
    /// A cluster on every SM where the rule would swap, each taking slices of the few tiles'
    /// K-tiles (split-K); else the persistent grid of step 12.
    pub spread: bool,
}

impl common::harness::launch::Tiles for SkinnyTiles {}

/// Step 12's tiles, both ideas on.
pub const fn tiles(p: Precision) -> SkinnyTiles {
    SkinnyTiles { step12: step12_epilogue::tiles(p), swap: true, spread: true }
}
// ANCHOR_END: tiles

// ANCHOR: launch
/// Step 12's launch, or the swapped product's: 128 rows of N (two consumers) by the narrow tile,
/// clusters of one block (no multicast: the narrow tile of A is small), no half jobs. The launch's
/// grid is the product's tiles; with SPREAD the host launches a cluster on every SM instead (`run`).
pub fn launch_with(s: &Shape, p: Precision, t: SkinnyTiles) -> Launch {
    launch_plan(s, p, t, plan(s))
}

/// The launch of `plan` at `s`, whatever the rule says (the tuner tries other rows).
pub fn launch_plan(s: &Shape, p: Precision, t: SkinnyTiles, plan: Plan) -> Launch {
    let small = plan != Plan::Step12;
    let launch = match plan {
        Plan::Swapped { bm, bn, stages } if t.swap => {
            let skew = if t.spread { skew(plan) } else { 0 };
            let sliced = t.spread && slices_of(s, p, bm, bn, SMS) > 1;
            let t = HopperTiles { bm, bn, stages, cluster: 1, group: group(s, bm, sliced) };
            let consumers = t.bm / 64;
            let product = Shape::new(s.n, s.m, s.k);
            let staging = consumers * 2 * CHUNK_BYTES;
            let launch = t
                .launch(s, p, (t.jobs(&product), 1, 1), 128 * (consumers + 1) as u32, 1, staging)
                .define("HALVES", 0)
                .define("SWAP", 1)
                .define("SKEW", skew as i64);
            // Only where B streams, so that the launches of the other shapes stay as recorded.
            if streams(s, p) {
                launch.define("STREAM", 1).define("B_PROMOTION", STREAM_PROMOTION as i64)
            } else {
                launch
            }
        }
        _ => step12_epilogue::launch_with(s, p, t.step12).define("SWAP", 0),
    };
    let launch = launch.define("SPREAD", (small && t.spread) as i64);
    // A programmatic dependent launch without an early signal: back to back, the next launch starts
    // as this one's blocks exit, on an empty GPU, and its blocks wait in the kernel for this one's
    // writes (an early signal let them onto the SMs this one left idle, and lost: notes/step15.md).
    // Step 12's plan stays step 12's launch, so that no large shape differs from step 12.
    if small { launch.define(PDL, 1) } else { launch }
}
// ANCHOR_END: launch

// ANCHOR: host
/// One GEMM: the tensor maps (swapped, A's boxes as tall as the narrow tile and C's as its
/// chunks), then step 12's persistent grid or, with SPREAD, a cluster on every SM. Without SWAP
/// and SPREAD this is step 12's `run`.
pub fn run(call: &mut HostCall<'_>) -> Result<()> {
    let value = |name| call.launch.value(name).unwrap_or(0) as usize;
    let (swap, spread, bk) = (value("SWAP") == 1, value("SPREAD") == 1, HopperTiles::bk(call.precision));
    let (a_rows, c_rows) = if swap { (value("BN"), value("BN").min(64)) } else { (value("BM"), 64) };
    let (a, b) = (hopper_host::a_map(call, a_rows, bk)?, hopper_host::b_map(call, bk)?);
    let (c, padded) = hopper_host::c_map(call, c_rows)?;
    let grid = if spread {
        let grid = (hopper_host::resident_clusters(call)? * value("CLUSTER").max(1) as u32, 1, 1);
        call.workspace.record_grid(grid);
        grid
    } else {
        hopper_host::persistent_grid(call)?
    };
    hopper_host::launch_sgemm(call, (&a, &b), Some(&c), grid)?;
    hopper_host::copy_back(call, padded)
}
// ANCHOR_END: host

/// This step's swapped wgmma and the transposed epilogue of C^T.
pub const SKINNY: Header = common::step_header!("skinny.cuh");

// ANCHOR: partials
// The two ideas of this step, each measured alone at the skinny shapes (`cargo xtask sweep
// --partials`); at the others both partial rungs are step 12.
common::precision_steps! {
    idea: "for a small M, A and B swap places so that N fills wgmma's rows; a cluster on every SM shares the K-tiles out",
    hopper: run,
    headers: &[step10_warp_specialized::WARPGROUPS, step11_cluster_persistent::SCHEDULE, step12_epilogue::EPILOGUE, SKINNY],
    partials: {
        "no-split": "A and B swapped, on step 12's persistent grid: a block per tile, K not split" =>
            |t| SkinnyTiles { spread: false, ..t },
        "no-swap": "step 12's tiles, with a cluster on every SM taking slices of their K-tiles" =>
            |t| SkinnyTiles { swap: false, ..t },
    },
    precisions: { FP16 = F16, BF16 = Bf16, FP16_C16 = F16C16, BF16_C16 = Bf16C16 },
}
// ANCHOR_END: partials

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule at the decode shapes and the squares: the narrow tile follows M, the rows of N the
    /// count of tiles (64 at N = 4096, 128 at N = 11008, 192 at M = 256 there), the ring by K (6
    /// buffers, 8 at K = 11008, fewer where no more fit), and of the cubes only 1024³ is swapped;
    /// the others run step 12's launch unchanged.
    #[test]
    fn the_rule_picks_by_shape() {
        let swapped = |bm, bn, stages| Plan::Swapped { bm, bn, stages };
        for (n, k) in [(11008, 4096), (4096, 11008), (4096, 4096)] {
            for (m, bn) in [(1, 8), (8, 8), (16, 16), (32, 32), (64, 64), (128, 128), (256, 128)] {
                let (bm, stages) = match (n, m, bn) {
                    (11008, 256, _) => (192, 4),
                    (11008, ..) => (128, 6),
                    _ if k == 11008 => (64, 8),
                    _ => (64, 6),
                };
                assert_eq!(plan(&Shape::new(m, n, k)), swapped(bm, bn, stages), "{m}x{n}x{k}");
            }
        }
        assert_eq!(plan(&Shape::cube(1024)), swapped(64, 128, 6));
        for size in [2048, 4096] {
            let s = Shape::cube(size);
            assert_eq!(plan(&s), Plan::Step12, "{s}");
            for p in [Precision::F16, Precision::Bf16C16] {
                let ours = launch_with(&s, p, tiles(p));
                let step12 = step12_epilogue::launch_with(&s, p, step12_epilogue::tiles(p));
                assert_eq!(ours, step12.define("SWAP", 0).define("SPREAD", 0), "{s} {p}");
            }
        }
        // A tall product stays unswapped: M above N.
        assert_eq!(plan(&Shape::new(200, 100, 64)), Plan::Step12);
    }

    /// Groups of 16 rows of tiles where a column has 9 to 16 of them and K is whole (1024³), else
    /// step 12's 8: the decode shapes (64 rows or more), the smaller cubes and the tiles cut into
    /// slices keep the order they were recorded with.
    #[test]
    fn a_column_of_9_to_16_whole_tiles_is_one_group() {
        let p = Precision::F16C16;
        let group_of = |s: &Shape| launch_with(s, p, tiles(p)).value("GROUP");
        assert_eq!(group_of(&Shape::cube(1024)), Some(16));
        let sliced = [Shape::new(512, 1024, 1024), Shape::new(200, 1024, 4096)];
        for s in sliced.iter().chain(&[Shape::cube(512), Shape::cube(128), Shape::new(256, 4096, 4096)]) {
            assert_eq!(group_of(s), Some(8), "{s}");
        }
        for s in sliced {
            assert!(slices(&s, p, SMS) > 1 && matches!(plan(&s), Plan::Swapped { bm: 64, .. }), "{s}");
            assert_eq!(s.n.div_ceil(64), 16, "{s}");
        }
        assert_eq!(group_of(&Shape::new(64, 11008, 4096)), Some(8));
        assert_eq!(group_of(&Shape::new(16, 4096, 4096)), Some(8));
    }

    /// Every launch of a small shape's plan is a programmatic dependent one, and the kernel waits
    /// for the launch before it (without the wait the host launches it plainly); step 12's plan is
    /// not (above). Not the kernel in a student's handout (its root holds `.handout`): there it is a
    /// skeleton.
    #[test]
    fn every_small_launch_is_dependent_and_the_kernel_waits() {
        for s in
            [Shape::new(1, 11008, 4096), Shape::new(256, 4096, 11008), Shape::new(64, 4096, 4096), Shape::cube(1024)]
        {
            for p in [Precision::F16, Precision::Bf16C16] {
                assert_ne!(plan(&s), Plan::Step12, "{s}");
                assert_eq!(launch_with(&s, p, tiles(p)).value(PDL), Some(1), "{s} {p}");
            }
        }
        let handout = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.handout").exists();
        assert!(handout || FP16.kernel.code.contains("wait_for_launch_before();"));
    }

    /// B streams, marked evict-first, where it outgrows L2: the decode shapes' 90 MB weights, not
    /// N = K = 4096's 32 MiB nor the cubes; unswapped launches never (and name no STREAM).
    #[test]
    fn b_streams_where_it_outgrows_l2() {
        for p in [Precision::F16, Precision::Bf16C16] {
            for m in [1, 8, 16, 32, 64, 128, 256] {
                for (n, k, want) in [(11008, 4096, Some(1)), (4096, 11008, Some(1)), (4096, 4096, None)] {
                    let s = Shape::new(m, n, k);
                    let launch = launch_with(&s, p, tiles(p));
                    assert_eq!(launch.value("STREAM"), want, "{s} {p}");
                    assert_eq!(launch.value("B_PROMOTION"), want.map(|_| STREAM_PROMOTION as i64), "{s} {p}");
                }
            }
            assert_eq!(launch_with(&Shape::cube(1024), p, tiles(p)).value("STREAM"), None);
            assert_eq!(launch_with(&Shape::new(1024, 16384, 8192), p, tiles(p)).value("STREAM"), None);
        }
    }

    /// The slices at the decode shapes on 132 SMs (an H100 SXM's or an H200's): N = 11008's 86 or
    /// 116 tiles need none, nor M = 256's 128 at N = 4096; N = 4096's 64 tiles two.
    #[test]
    fn the_slices_give_half_the_sms_a_unit() {
        let p = Precision::F16C16;
        for m in [1, 8, 16, 32, 64, 128, 256] {
            for (n, k) in [(11008, 4096), (4096, 11008), (4096, 4096)] {
                let want = if n == 4096 && m < 256 { 2 } else { 1 };
                assert_eq!(slices(&Shape::new(m, n, k), p, SMS), want, "{m}x{n}x{k}");
            }
        }
        // Few K-tiles: slices of at least four.
        assert_eq!(slices(&Shape::new(16, 2048, 256), p, SMS), 1);
        assert_eq!(slices(&Shape::new(16, 2048, 512), p, SMS), 2);
        assert_eq!(slices(&Shape::cube(4096), p, SMS), 1);
    }

    /// The skew follows the narrow tile at the decode shapes, and only launches in slices have one.
    #[test]
    fn the_skew_follows_the_narrow_tile() {
        let p = Precision::F16C16;
        for (m, want) in [(1, 4), (8, 4), (16, 4), (32, 4), (64, 6), (128, 6)] {
            let s = Shape::new(m, 4096, 4096);
            assert_eq!(skew(plan(&s)), want, "{s}");
            assert_eq!(launch_with(&s, p, tiles(p)).value("SKEW"), Some(want as i64), "{s}");
            let alone = SkinnyTiles { spread: false, ..tiles(p) };
            assert_eq!(launch_with(&s, p, alone).value("SKEW"), Some(0), "{s}");
        }
        assert_eq!(skew(plan(&Shape::cube(4096))), 0);
        assert_eq!(launch_with(&Shape::cube(4096), p, tiles(p)).value("SKEW"), None);
        // Two slices of 64 K-tiles: 28 and 36. Three of 16: every slice keeps a K-tile.
        assert_eq!((0..=2).map(|s| cut(s, 2, 64, 4)).collect::<Vec<_>>(), [0, 28, 64]);
        assert_eq!((0..=3).map(|s| cut(s, 3, 16, 4)).collect::<Vec<_>>(), [0, 1, 6, 16]);
        assert_eq!((0..=3).map(|s| cut(s, 3, 16, 6)).collect::<Vec<_>>(), [0, 1, 4, 16]);
    }

    /// Every swapped launch fits the SM's 227 KiB of shared memory, and its grid counts the
    /// product's tiles: BM rows of N by the narrow tile, 64 rows to each consumer.
    #[test]
    fn swapped_launches_fit() {
        for bm in [64, 128, 192] {
            for &(_, bn) in WIDTHS {
                let plan = Plan::Swapped { bm, bn, stages: deepest_ring(bm, bn) };
                let s = Shape::new(bn, 11008, 4096);
                let launch = launch_plan(&s, Precision::F16, tiles(Precision::F16), plan);
                assert!(launch.dynamic_smem_bytes <= 227 * 1024, "{plan:?}: {} bytes", launch.dynamic_smem_bytes);
                assert!(deepest_ring(bm, bn) >= 4, "{plan:?}");
                assert_eq!(launch.grid.0 as usize, 11008usize.div_ceil(bm), "{plan:?}");
                assert_eq!(launch.block.0 as usize, 128 * (bm / 64 + 1), "{plan:?}");
                assert_eq!(
                    (launch.value("SWAP"), launch.value("SPREAD"), launch.value("CLUSTER"), launch.value("HALVES")),
                    (Some(1), Some(1), Some(1), Some(0))
                );
            }
        }
    }

    /// Each partial rung leaves one idea out at a skinny shape, and is the rung (step 12) at 4096³.
    #[test]
    fn each_partial_leaves_one_idea_out() {
        let ideas = |step: &common::Step, s: &Shape| {
            let launch = (step.launch)(s);
            (launch.value("SWAP"), launch.value("SPREAD"), launch.value("BN"))
        };
        let skinny = Shape::new(16, 11008, 4096);
        let partial = |name: &str| &FP16.partials.iter().find(|p| p.name == name).unwrap().step;
        assert_eq!(ideas(&FP16, &skinny), (Some(1), Some(1), Some(16)));
        assert_eq!(ideas(partial("no-split"), &skinny), (Some(1), Some(0), Some(16)));
        assert_eq!(ideas(partial("no-swap"), &skinny), (Some(0), Some(1), Some(256)));
        for p in FP16.partials {
            assert_eq!((p.step.launch)(&Shape::cube(4096)), (FP16.launch)(&Shape::cube(4096)), "{}", p.name);
        }
    }
}
