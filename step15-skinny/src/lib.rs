//! Step 15: skinny shapes. For a small M, A and B swap places: the kernel computes C^T = B^T A^T,
//! so that N fills wgmma's 64 rows and M is a narrow tile (16 to 128), and a cluster on every SM
//! shares the few tiles' K-tiles out (stream-K). Larger shapes run step 12's kernel and launch.
//! FP16 and BF16, each with an FP32 or a 16-bit C; sm_90a only.

use common::harness::compile::Header;
use common::harness::hopper_host::{self, CHUNK_BYTES, HopperTiles};
use common::harness::host::HostCall;
use common::{Launch, Precision, Result, Shape};

/// How one shape is multiplied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Step 12's tiles and launch, unchanged.
    Step12,
    /// A and B swapped: tiles of C^T of 128 rows of N by `bn` rows of M, `stages` ring buffers.
    Swapped { bn: usize, stages: usize },
}

// ANCHOR: rule
/// The rule, as a table: a shape whose M is at most the first column and no larger than its N is
/// multiplied swapped, with the narrow tile and the ring of that row (the first row that holds).
/// The ring fills the shared memory left beside two staging buffers of C per consumer; a narrow
/// tile leaves room for more buffers, which keep more of B in flight.
pub const RULE: &[(usize, Plan)] = &[
    (16, Plan::Swapped { bn: 16, stages: 8 }),
    (32, Plan::Swapped { bn: 32, stages: 8 }),
    (64, Plan::Swapped { bn: 64, stages: 8 }),
    (256, Plan::Swapped { bn: 128, stages: 6 }),
];

/// The plan the rule picks for `s`: swapped where M is small and N is not, else step 12's.
pub fn plan(s: &Shape) -> Plan {
    let row = RULE.iter().find(|(most, _)| s.m <= *most && s.m <= s.n);
    row.map_or(Plan::Step12, |&(_, plan)| plan)
}
// ANCHOR_END: rule

// ANCHOR: tiles
/// Step 12's tiles, for the shapes the rule leaves to it.
pub const fn tiles(p: Precision) -> HopperTiles {
    step12_epilogue::tiles(p)
}
// ANCHOR_END: tiles

// ANCHOR: launch
/// Step 12's launch, or the swapped product's: 128 rows of N (two consumers) by the narrow tile,
/// clusters of one block (no multicast: the narrow tile of A is small), no half jobs, and boxes of C
/// as tall as the tile. The launch's grid is the product's tiles; the host launches a cluster on
/// every SM instead (`run`).
pub fn launch_with(s: &Shape, p: Precision, t: HopperTiles) -> Launch {
    let Plan::Swapped { bn, stages } = plan(s) else {
        return step12_epilogue::launch_with(s, p, t).define("SWAP", 0);
    };
    let t = HopperTiles { bm: 128, bn, stages, cluster: 1, ..t };
    let consumers = t.bm / 64;
    let product = Shape::new(s.n, s.m, s.k);
    t.launch(s, p, (t.jobs(&product), 1, 1), 128 * (consumers + 1) as u32, 1, consumers * 2 * CHUNK_BYTES)
        .define("HALVES", 0)
        .define("SWAP", 1)
}
// ANCHOR_END: launch

// ANCHOR: host
/// One GEMM: step 12's, or the swapped product's: A's boxes as tall as the narrow tile, C's boxes
/// as tall as its chunks, and a cluster on every SM, so that the schedule shares the K-tiles of
/// few tiles out among all of them (stream-K).
pub fn run(call: &mut HostCall<'_>) -> Result<()> {
    if call.launch.value("SWAP") != Some(1) {
        return step12_epilogue::run(call);
    }
    let (bn, bk) = (call.launch.value("BN").unwrap_or(0) as usize, HopperTiles::bk(call.precision));
    let (a, b) = (hopper_host::a_map(call, bn, bk)?, hopper_host::b_map(call, bk)?);
    let (c, padded) = hopper_host::c_map(call, bn.min(64))?;
    let grid = (hopper_host::resident_clusters(call)?, 1, 1);
    call.workspace.record_grid(grid);
    hopper_host::launch_sgemm(call, (&a, &b), Some(&c), grid)?;
    hopper_host::copy_back(call, padded)
}
// ANCHOR_END: host

/// This step's swapped wgmma and the transposed epilogue of C^T.
pub const SKINNY: Header = common::step_header!("skinny.cuh");

common::precision_steps! {
    idea: "for a small M, A and B swap places so that N fills wgmma's rows; a cluster on every SM shares the K-tiles out",
    hopper: run,
    headers: &[step10_warp_specialized::WARPGROUPS, step11_cluster_persistent::SCHEDULE, step12_epilogue::EPILOGUE, SKINNY],
    precisions: { FP16 = F16, BF16 = Bf16, FP16_C16 = F16C16, BF16_C16 = Bf16C16 },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule at the decode shapes and the squares: every row of the table is used, and the
    /// squares run step 12's launch unchanged.
    #[test]
    fn the_rule_picks_by_shape() {
        let narrow = |bn, stages| Plan::Swapped { bn, stages };
        let expected = [
            (1, narrow(16, 8)),
            (8, narrow(16, 8)),
            (16, narrow(16, 8)),
            (32, narrow(32, 8)),
            (64, narrow(64, 8)),
            (128, narrow(128, 6)),
            (256, narrow(128, 6)),
        ];
        for (n, k) in [(11008, 4096), (4096, 11008), (4096, 4096)] {
            for &(m, want) in &expected {
                assert_eq!(plan(&Shape::new(m, n, k)), want, "{m}x{n}x{k}");
            }
        }
        for size in [1024, 2048, 4096] {
            let s = Shape::cube(size);
            assert_eq!(plan(&s), Plan::Step12, "{s}");
            for p in [Precision::F16, Precision::Bf16C16] {
                let ours = launch_with(&s, p, tiles(p));
                let step12 = step12_epilogue::launch_with(&s, p, step12_epilogue::tiles(p));
                assert_eq!(ours, step12.define("SWAP", 0), "{s} {p}");
            }
        }
        // A tall product stays unswapped: M above N.
        assert_eq!(plan(&Shape::new(200, 100, 64)), Plan::Step12);
    }

    /// Every swapped launch fits the SM's 227 KiB of shared memory, and its grid counts the
    /// product's tiles: 128 rows of N by the narrow tile.
    #[test]
    fn swapped_launches_fit() {
        for &(m, _) in RULE {
            let s = Shape::new(m, 11008, 4096);
            let launch = launch_with(&s, Precision::F16, tiles(Precision::F16));
            assert!(launch.dynamic_smem_bytes <= 227 * 1024, "{s}: {} bytes", launch.dynamic_smem_bytes);
            let bn = launch.value("BN").unwrap() as usize;
            assert_eq!(launch.grid.0 as usize, 11008usize.div_ceil(128) * m.div_ceil(bn), "{s}");
            assert_eq!(
                (launch.value("SWAP"), launch.value("CLUSTER"), launch.value("HALVES")),
                (Some(1), Some(1), Some(0))
            );
        }
    }
}
