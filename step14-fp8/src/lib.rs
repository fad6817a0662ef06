//! Step 14: FP8. A and B in e4m3 (B K-major, N x K), the tensor cores' narrow sums promoted into
//! FP32 every 128 of K, where the scales enter: one per tensor, or DeepSeek-V3's fine-grained
//! ones (a scale per row of A per 128 of K, one per 128 x 128 block of B). C in BF16 or FP32;
//! sm_90a only.

use common::harness::hopper_host::{CHUNK_BYTES, HopperTiles};
use common::{Launch, Precision, Shape};

// ANCHOR: tiles
/// 128 x 128 tiles: a consumer holds its 64 x 128 FP32 sums and two K-tiles' 64 x 128 beside
/// them (192 registers a thread); six buffers of 32 KiB and the staging of C fill the SM. With an
/// FP32 C five, and two more staging buffers a consumer in the sixth's room, so that a tile's
/// four chunks leave in one round. With block scales five, and the consumers' rings of scales in
/// the sixth's room; and where [`wide`] says, the consumers take turns with one K-tile's sums
/// each, which leaves room for tiles 192 wide (64 x 192 twice: 192 registers) in four buffers of
/// 40 KiB.
pub const fn tiles(p: Precision) -> HopperTiles {
    match (block(p), p.output().bytes()) {
        (true, _) => HopperTiles { bm: 128, bn: 192, stages: 4, cluster: 2, group: 8 },
        (false, 4) => HopperTiles { bm: 128, bn: 128, stages: 5, cluster: 2, group: 8 },
        (false, _) => HopperTiles { bm: 128, bn: 128, stages: 6, cluster: 2, group: 8 },
    }
}

/// Staging buffers of C a consumer, as kernel.cu's CBUF counts them: three for a 192-wide tile
/// (block scales, where the consumers take turns), four for a 128-wide tile of FP32 with the
/// tensors' scales, else two.
const fn staging_buffers(p: Precision, bn: usize) -> usize {
    match (block(p), bn % 128 != 0, p.output().bytes() == 4 && bn == 128) {
        (true, true, _) => 3,
        (false, _, true) => 4,
        _ => 2,
    }
}

/// Whether block scales take 192-wide tiles at `s`: where those make four waves of clusters or
/// more on 132 SMs (the tiles' stores and their overhang past N then weigh little), or one wave
/// where 128-wide tiles would make two. Elsewhere (2048³ and below) 128-wide tiles in two sets
/// are faster (`notes/step14.md`, "Wider tiles in turns").
pub fn wide(s: &Shape) -> bool {
    let wave = 132 / 2;
    let clusters = |bn: usize| s.m.div_ceil(128).div_ceil(2) * s.n.div_ceil(bn);
    clusters(192) >= 4 * wave || (clusters(128) > wave && clusters(192) <= wave)
}

/// A consumer's ring of block scales, as kernel.cu lays it out: its slots (one a K-tile) and their
/// bytes.
pub const SCALE_SLOTS: usize = 16;
pub const SCALE_SLOT_BYTES: usize = 512;
pub const SCALE_RING_BYTES: usize = SCALE_SLOTS * SCALE_SLOT_BYTES;

const fn block(p: Precision) -> bool {
    matches!(p.scaling(), Some(common::harness::precision::Scaling::Block))
}
// ANCHOR_END: tiles

// ANCHOR: launch
/// Step 12's launch: a persistent grid of clusters, the staging buffers of C per consumer that
/// kernel.cu's CBUF counts, and with block scales each consumer's ring of them.
pub fn launch_with(s: &Shape, p: Precision, t: HopperTiles) -> Launch {
    // The block scales' 192-wide tiles where they pay, else the 128-wide ones. Tiles that are not
    // the step's own (a tuner's candidate, an experiment's defines) are launched as they are.
    let narrow = HopperTiles { bn: 128, stages: 5, ..t };
    let t = if block(p) && t == tiles(p) && !wide(s) { narrow } else { t };
    let consumers = t.bm / 64;
    let staging = consumers * staging_buffers(p, t.bn) * CHUNK_BYTES;
    let rings = if block(p) { consumers * SCALE_RING_BYTES } else { 0 };
    t.launch(s, p, (t.jobs(s) * t.cluster, 1, 1), 128 * (consumers + 1) as u32, 1, staging + rings)
}
// ANCHOR_END: launch

common::precision_steps! {
    idea: "FP8 inputs (B K-major) with scales, the tensor cores' narrow sums promoted into FP32 every 128 of K",
    hopper: step12_epilogue::run,
    headers: &[step10_warp_specialized::WARPGROUPS, step11_cluster_persistent::SCHEDULE, step12_epilogue::EPILOGUE],
    follows_defines: true,
    precisions: { FP8 = Fp8, FP8_C32 = Fp8C32, FP8_BLOCK = Fp8Block, FP8_BLOCK_C32 = Fp8BlockC32 },
}

#[cfg(test)]
mod tests {
    /// The host leaves each consumer the ring of scales that the kernel lays out.
    #[test]
    fn the_ring_is_the_kernels() {
        let ring = format!("constexpr int SLOTS = {}, SLOT_BYTES = {},", super::SCALE_SLOTS, super::SCALE_SLOT_BYTES);
        assert!(include_str!("kernel.cu").contains(&ring), "kernel.cu has no `{ring}`");
    }

    /// The host leaves each consumer the staging buffers of C that the kernel uses: three where the
    /// consumers take turns (block scales, a tile not a multiple of 128 wide), four for a 128-wide
    /// tile of FP32 with the tensors' scales, else two.
    #[test]
    fn the_staging_is_the_kernels() {
        use super::{CHUNK_BYTES, FP8, FP8_C32, staging_buffers};
        use common::Precision::{Fp8, Fp8Block, Fp8BlockC32, Fp8C32};
        let kernel = include_str!("kernel.cu");
        let rule = "#define CBUF (TURNS ? 3 : !P::block && sizeof(P::out_t) == 4 && BN == 128 ? 4 : 2)";
        for rule in ["#define TURNS (P::block && BN % 128 != 0)", rule] {
            assert!(kernel.contains(rule), "kernel.cu has no `{rule}`");
        }
        let counts = [(Fp8, 128, 2), (Fp8C32, 128, 4), (Fp8C32, 256, 2), (Fp8Block, 192, 3), (Fp8BlockC32, 128, 2)];
        for (p, bn, n) in counts {
            assert_eq!(staging_buffers(p, bn), n, "{p:?} {bn} wide");
        }
        let s = common::Shape::new(4096, 4096, 4096);
        let follow = FP8.follow.expect("step 14 follows its tile defines");
        let per_tensor_192 = follow(&s, &[("BN", 192), ("STAGES", 4)]);
        assert_eq!(per_tensor_192.dynamic_smem_bytes as usize, 4 * 128 * (128 + 192) + 2 * 2 * CHUNK_BYTES + 1024);
        // An FP32 C: five buffers of tiles, and four staging buffers in the sixth's room.
        let c32 = (FP8_C32.launch)(&s);
        assert_eq!(c32.value("STAGES"), Some(5));
        assert_eq!(c32.dynamic_smem_bytes as usize, 5 * 128 * (128 + 128) + 2 * 4 * CHUNK_BYTES + 1024);
        assert_eq!(c32.dynamic_smem_bytes, (FP8.launch)(&s).dynamic_smem_bytes);
    }

    /// The rule of the block scales' tile width, at the sweep's and the target's shapes.
    #[test]
    fn block_scales_widen_where_the_tiles_fill_the_gpu() {
        let at = |m, n, k| super::wide(&common::Shape::new(m, n, k));
        for (m, n, k, wide) in [
            (1024, 1024, 1024, false),
            (2048, 2048, 2048, false),
            (4096, 4096, 4096, true),
            (8192, 8192, 8192, true),
            (4096, 11008, 4096, true),
            (4096, 7168, 16384, true),
            (16, 11008, 4096, true),
            (16, 4096, 4096, false),
        ] {
            assert_eq!(at(m, n, k), wide, "{m}x{n}x{k}");
        }
        let launch = |m| (super::FP8_BLOCK.launch)(&common::Shape::new(m, m, m));
        assert_eq!((launch(2048).value("BN"), launch(4096).value("BN")), (Some(128), Some(192)));
        assert_eq!((super::FP8.launch)(&common::Shape::new(8192, 8192, 8192)).value("BN"), Some(128));
    }

    /// An experiment's tile defines size the step's launch (grid, threads, shared memory) as they
    /// size its kernel, so that the step binary and the tests can run a wider tile.
    #[test]
    fn the_launch_follows_tile_defines() {
        let s = common::Shape::new(4096, 4096, 4096);
        let follow = super::FP8_BLOCK.follow.expect("step 14 follows its tile defines");
        let narrow = follow(&s, &[("BN", 128), ("STAGES", 5)]);
        assert_eq!((narrow.value("BN"), narrow.value("STAGES"), narrow.value("BM")), (Some(128), Some(5), Some(128)));
        let staging_and_rings = 2 * 2 * super::CHUNK_BYTES + 2 * super::SCALE_RING_BYTES;
        assert_eq!(narrow.dynamic_smem_bytes as usize, 5 * 128 * (128 + 128) + staging_and_rings + 1024);
        assert_eq!(narrow.grid, ((4096 / 128) * (4096 / 128) / 2 * 2, 1, 1), "one cluster a job of two tiles");
        assert_eq!(follow(&s, &[]), (super::FP8_BLOCK.launch)(&s), "no defines: the step's own launch");
        // The 192-wide tile: four buffers of 40 KiB, three staging buffers a consumer.
        let wide = (super::FP8_BLOCK.launch)(&s);
        assert_eq!(wide.value("BN"), Some(192));
        let three = 2 * 3 * super::CHUNK_BYTES + 2 * super::SCALE_RING_BYTES;
        assert_eq!(wide.dynamic_smem_bytes as usize, 4 * 128 * (128 + 192) + three + 1024);
    }
}
