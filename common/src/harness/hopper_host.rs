//! What the host code of the Hopper rungs (steps 9-13) shares: their tiles and launch, the tensor
//! maps of A, B and C (with padded copies where the TMA cannot address a row), the size of a
//! persistent grid, and the launch of `sgemm` with its tensor maps.

use crate::Result;
use crate::harness::hopper::{
    self, L2_PROMOTION, TMA_ALIGN, TensorMap, arg, copy_pitched, max_active_clusters, tensor_map, tensor_map_promoted,
};
use crate::harness::host::HostCall;
use crate::harness::launch::{Launch, ceil_div};
use crate::harness::precision::{Elem, Precision};
use crate::harness::problem::Shape;

/// Block tile, pipeline depth and cluster of the Hopper rungs (steps 9-13), passed to their
/// kernels as compile-time defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HopperTiles {
    /// C tile of a block: BM rows (64 per consumer warpgroup) by BN columns (one wgmma's N).
    pub bm: usize,
    pub bn: usize,
    /// Buffers in the ring between the copies and the products.
    pub stages: usize,
    /// Blocks per cluster, along M, sharing each B tile by multicast (1: none).
    pub cluster: usize,
    /// Cluster rows per group of a persistent grid's tile order (1: row by row).
    pub group: usize,
}

impl std::fmt::Display for HopperTiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let HopperTiles { bm, bn, stages, cluster, group } = self;
        write!(f, "{bm}x{bn}, {stages} stages, cluster {cluster}, group {group}")
    }
}

impl HopperTiles {
    /// K of one tile in precision `p`: one 128-byte row (64 halves, 32 floats), the TMA's widest
    /// swizzle.
    pub fn bk(p: Precision) -> usize {
        128 / p.input().bytes()
    }

    /// Bytes of one ring buffer: an A tile (BM rows of 128 bytes) and `planes` B tiles (BN rows of
    /// 128 bytes each; 3xTF32 keeps two).
    pub fn stage_bytes(&self, planes: usize) -> usize {
        128 * (self.bm + self.bn * planes)
    }

    /// Whether a persistent kernel may cut the jobs of its last wave into two halves of BN / 2
    /// columns: when each half still gives every block of the cluster whole 64-column boxes of B.
    pub fn halves(&self) -> bool {
        (self.bn / 2) % (64 * self.cluster) == 0
    }

    /// How many jobs C holds, a job being a cluster's share of C: CLUSTER vertically adjacent BM x BN
    /// tiles (the rows of tiles rounded up to whole clusters).
    pub fn jobs(&self, s: &Shape) -> usize {
        ceil_div(ceil_div(s.m, self.bm), self.cluster) * ceil_div(s.n, self.bn)
    }

    /// The launch of a kernel with these tiles: `grid` blocks of `threads`, the ring of STAGES
    /// buffers of `planes` B tiles plus `extra_smem` bytes of dynamic shared memory (and 1 KiB to
    /// align the ring to the swizzle's 1024-byte period). Defines PREC, BM, BN, BK, STAGES, CLUSTER,
    /// GROUP and VEC (rows of an FP32 C are 8-byte aligned: N is even).
    pub fn launch(
        &self,
        s: &Shape,
        p: Precision,
        grid: (usize, usize, usize),
        threads: u32,
        planes: usize,
        extra_smem: usize,
    ) -> Launch {
        let mut launch = Launch::new(grid, (threads, 1, 1))
            .define("PREC", p.code())
            .define("BM", self.bm as i64)
            .define("BN", self.bn as i64)
            .define("BK", Self::bk(p) as i64)
            .define("STAGES", self.stages as i64)
            .define("CLUSTER", self.cluster as i64)
            .define("GROUP", self.group as i64)
            .define("VEC", (s.n % 2 == 0) as i64);
        launch.dynamic_smem_bytes = (self.stages * self.stage_bytes(planes) + extra_smem + 1024) as u32;
        launch
    }
}

impl crate::harness::launch::Tiles for HopperTiles {
    /// These tiles with an experiment's defines of BM, BN, STAGES, CLUSTER and GROUP applied (a
    /// tuner's `--define BM=192`: the launch's threads and shared memory follow the compiled tile).
    fn following(self, defines: &[crate::harness::launch::Define]) -> Self {
        let mut t = self;
        for &(name, value) in defines {
            let Ok(v) = usize::try_from(value) else { continue };
            match name {
                "BM" => t.bm = v,
                "BN" => t.bn = v,
                "STAGES" => t.stages = v,
                "CLUSTER" => t.cluster = v,
                "GROUP" => t.group = v,
                _ => {}
            }
        }
        t
    }
}

/// A row-major matrix of `rows` rows of `cols` elements at `ptr` as the TMA can address it: the
/// matrix itself when its rows are 16-byte aligned, else a copy with padded rows (workspace
/// buffer `name`, copied in when `copy_in`). Returns the address and the row pitch in bytes.
pub fn aligned_rows(
    call: &mut HostCall<'_>,
    name: &'static str,
    ptr: u64,
    rows: usize,
    cols: usize,
    elem: Elem,
    copy_in: bool,
) -> Result<(u64, usize)> {
    let w = elem.bytes();
    // At least one element: K = 0 reads nothing, but a tensor map still needs a pitch.
    let pitch = cols.max(1).div_ceil(TMA_ALIGN / w) * TMA_ALIGN;
    if pitch == cols * w {
        return Ok((ptr, pitch));
    }
    let copy = call.workspace.buffer(call.gpu, name, pitch * rows)?;
    if copy_in {
        copy_pitched(call.gpu, ptr, cols * w, copy, pitch, cols * w, rows)?;
    }
    Ok((copy, pitch))
}

// ANCHOR: input_map
/// The tensor map of an input of precision `p`, its misses bringing `l2` bytes into L2 (the TMA's
/// promotion): TF32 is FP32 in memory that the TMA rounds as it loads it ([`tensor_map_promoted`]);
/// every other input arrives as it is.
fn input_map(
    p: Precision,
    at: u64,
    dims: &[usize],
    pitches: &[usize],
    boxes: &[usize],
    l2: usize,
) -> Result<TensorMap> {
    tensor_map_promoted(p.input(), p == Precision::Tf32, at, dims, pitches, boxes, l2)
}
// ANCHOR_END: input_map

/// The rows of a tensor map's boxes: `rows`, or what an experiment's `--define NAME=n` asks for
/// (1 to 256, the TMA's limit).
fn box_rows(call: &HostCall<'_>, name: &str, rows: usize) -> Result<usize> {
    match call.launch.value(name) {
        None => Ok(rows),
        Some(r @ 1..=256) => Ok(r as usize),
        Some(r) => Err(crate::Error::BadInput(format!("{name}={r}: a TMA box has 1 to 256 rows"))),
    }
}

/// A's tensor map as the rungs load it: K-major as it is, boxes of BK x `rows`, or as an
/// experiment's `--define A_BOX_ROWS=n` makes them (n rows: the blocks of a cluster each loading
/// a share of a tile, `notes/experiments/step15-skinny/swap-split.patch`). A miss brings 256 bytes
/// into L2, or an experiment's `--define A_PROMOTION=n`. Made once per buffer and shape, then
/// reused (cuBLAS keeps its plans too).
pub fn a_map(call: &mut HostCall<'_>, rows: usize, bk: usize) -> Result<TensorMap> {
    let Shape { m, k, .. } = call.gemm.shape;
    let p = call.precision;
    let rows = box_rows(call, "A_BOX_ROWS", rows)?;
    let promotion = promotion(call, "A_PROMOTION")?;
    let (a, pitch) = aligned_rows(call, "A with aligned rows", call.a.ptr(call.gpu), m, k, p.input(), true)?;
    let key = vec![0, a, m as u64, k as u64, rows as u64, bk as u64, p.code() as u64, promotion as u64];
    call.workspace.tensor_map(key, || input_map(p, a, &[k, m], &[pitch], &[bk, rows], promotion))
}

/// The bytes a miss of an operand's loads brings into L2: every rung's 256, or the launch's define
/// `name` (A_PROMOTION, B_PROMOTION).
fn promotion(call: &HostCall<'_>, name: &str) -> Result<usize> {
    match call.launch.value(name) {
        None => Ok(L2_PROMOTION),
        Some(v) => usize::try_from(v).map_err(|_| crate::Error::BadInput(format!("{name}={v}: bytes, not negative"))),
    }
}

/// B's tensor map as the rungs load it: N-major as it is, boxes of 128 bytes (64 halves or 32
/// floats) x BK, or as an experiment's `--define B_BOX_COLS=n` and `--define B_BOX_ROWS=n` make
/// them (n columns, swizzled across their 2n or 4n bytes; n rows of K, two K-tiles in one box:
/// `notes/experiments/step15-skinny/tall-boxes.patch`); or, stored K-major (FP8, N x K), boxes of
/// BK x 64 rows of N. A miss brings 256 bytes into L2, or the launch's `B_PROMOTION` bytes (step
/// 15's rule gives 128 where B streams; an experiment's `--define B_PROMOTION=n`). An experiment's
/// `--define B_MAP_3D=1` describes N-major B in three dimensions instead (a box's columns, the boxes
/// along N, K), as cuBLAS's kernels load it: the same boxes, asked for with three coordinates
/// (`notes/experiments/step15-skinny/pairs-3d.patch`).
pub fn b_map(call: &mut HostCall<'_>, bk: usize) -> Result<TensorMap> {
    let Shape { n, k, .. } = call.gemm.shape;
    let p = call.precision;
    let (rows, cols) = if p.b_k_major() { (n, k) } else { (k, n) };
    let (b, pitch) = aligned_rows(call, "B with aligned rows", call.b.ptr(call.gpu), rows, cols, p.input(), true)?;
    let box_cols = call.launch.value("B_BOX_COLS").map_or(128 / p.input().bytes(), |c| c.max(0) as usize);
    let box_rows = box_rows(call, "B_BOX_ROWS", bk)?;
    let promotion = promotion(call, "B_PROMOTION")?;
    let three = call.launch.value("B_MAP_3D") == Some(1);
    let (dims, pitches, boxes) = b_layout(p, (rows, cols, pitch), bk, (box_cols, box_rows), three)?;
    let key = vec![
        1,
        b,
        n as u64,
        k as u64,
        box_rows as u64,
        p.code() as u64,
        box_cols as u64,
        promotion as u64,
        three as u64,
    ];
    call.workspace.tensor_map(key, || input_map(p, b, &dims, &pitches, &boxes, promotion))
}

/// A tensor map's dimensions, the pitches of all but the first, and its boxes.
type Layout = (Vec<usize>, Vec<usize>, Vec<usize>);

/// B's map as [`Layout`]: (`rows`, `cols`, `pitch`) as stored, BK x 64 boxes where B is K-major,
/// else boxes of `boxes` (columns, rows); with `three`, N-major B as a box's columns, the boxes
/// along N, and K, which needs N to be a multiple of a box's columns.
fn b_layout(
    p: Precision,
    stored: (usize, usize, usize),
    bk: usize,
    boxes: (usize, usize),
    three: bool,
) -> Result<Layout> {
    let ((rows, cols, pitch), (box_cols, box_rows)) = (stored, boxes);
    if p.b_k_major() {
        return Ok((vec![cols, rows], vec![pitch], vec![bk, 64]));
    }
    if !three {
        return Ok((vec![cols, rows], vec![pitch], vec![box_cols, box_rows]));
    }
    if box_cols == 0 || cols % box_cols != 0 {
        return Err(crate::Error::BadInput(format!(
            "B_MAP_3D=1: N = {cols} is not a multiple of the box's {box_cols}"
        )));
    }
    Ok((vec![box_cols, cols / box_cols, rows], vec![box_cols * p.input().bytes(), pitch], vec![box_cols, 1, box_rows]))
}

/// C's tensor map as steps 12-15 store it, boxes of 128 bytes x `rows` rows (64; step 15's
/// transposed chunks are as tall as its narrow tile). When C's rows are not 16-byte aligned the map
/// describes a padded copy instead (copied in first when beta reads C), returned as (address,
/// pitch) for [`copy_back`].
pub fn c_map(call: &mut HostCall<'_>, rows: usize) -> Result<(TensorMap, Option<(u64, usize)>)> {
    let Shape { m, n, .. } = call.gemm.shape;
    let elem = call.precision.output();
    let c = call.c.ptr(call.gpu);
    let (at, pitch) = aligned_rows(call, "C with aligned rows", c, m, n, elem, call.gemm.beta != 0.0)?;
    let key = vec![2, at, m as u64, n as u64, rows as u64];
    let map =
        call.workspace.tensor_map(key, || tensor_map(elem, at, &[n, m], &[pitch], &[128 / elem.bytes(), rows]))?;
    Ok((map, (at != c).then_some((at, pitch))))
}

/// The launch of steps 12 and 13, whose kernels reach C through its tensor map: C's map, a
/// persistent cluster launch with A's and B's maps, and C copied back when its rows needed padding.
/// C's boxes are 64 rows, or an experiment's `--define C_BOX_ROWS=n` (a kernel whose warps store
/// their own rows: `notes/experiments/step14-fp8/before-wide/warp-stores.patch`).
pub fn launch_through_c(call: &mut HostCall<'_>, a: &TensorMap, b: &TensorMap) -> Result<()> {
    let rows = box_rows(call, "C_BOX_ROWS", 64)?;
    let (c, padded) = c_map(call, rows)?;
    let grid = persistent_grid(call)?;
    launch_sgemm(call, (a, b), Some(&c), grid)?;
    copy_back(call, padded)
}

/// Copies the kernel's result from the padded copy [`c_map`] made, if it made one, into C.
pub fn copy_back(call: &HostCall<'_>, padded: Option<(u64, usize)>) -> Result<()> {
    let Some((at, pitch)) = padded else { return Ok(()) };
    let Shape { m, n, .. } = call.gemm.shape;
    let row = n * call.precision.output().bytes();
    copy_pitched(call.gpu, at, pitch, call.c.ptr(call.gpu), row, row, m)
}

/// How many clusters of the launch's CLUSTER blocks the GPU runs at once (asked once per kernel),
/// or fewer where an experiment caps them ([`capped`]).
pub fn resident_clusters(call: &mut HostCall<'_>) -> Result<u32> {
    let (f, launch, gpu) = (&call.loaded.function, call.launch, call.gpu);
    let (smem, cluster) = (launch.dynamic_smem_bytes, launch.value("CLUSTER").unwrap_or(1) as u32);
    let key = vec![f.cu_function() as u64, smem as u64, cluster as u64];
    let resident = call.workspace.count(key, || max_active_clusters(gpu, f, launch.block, smem, (cluster, 1, 1)))?;
    Ok(capped(resident, launch))
}

/// `resident`, or at most an experiment's `--define GRID_CLUSTERS=n`: a persistent launch on the
/// clusters of n SMs' worth, to tell what a grid's size does from what its kernel does.
fn capped(resident: u32, launch: &Launch) -> u32 {
    launch.value("GRID_CLUSTERS").map_or(resident, |cap| resident.min(cap.clamp(1, u32::MAX as i64) as u32))
}

/// A persistent grid along x: as many clusters as the GPU runs at once, each looping over jobs; no
/// more than the launch's jobs (its grid), or halves of jobs when the kernel cuts the last wave's
/// (HALVES).
pub fn persistent_grid(call: &mut HostCall<'_>) -> Result<(u32, u32, u32)> {
    let resident = resident_clusters(call)?;
    let (launch, cluster) = (call.launch, call.launch.value("CLUSTER").unwrap_or(1) as u32);
    let jobs = launch.grid.0 / cluster;
    let clusters =
        if launch.value("HALVES") == Some(1) && 2 * jobs <= resident { 2 * jobs } else { jobs.min(resident) };
    let grid = (clusters * cluster, 1, 1);
    call.workspace.record_grid(grid);
    Ok(grid)
}

// ANCHOR: run
/// One GEMM of steps 9 and 10: the tensor maps of A and B, then one block per tile of C.
pub fn run_tiles(call: &mut HostCall<'_>) -> Result<()> {
    let (bm, bk) = (call.launch.value("BM").unwrap_or(0) as usize, HopperTiles::bk(call.precision));
    let (a, b) = (a_map(call, bm, bk)?, b_map(call, bk)?);
    launch_sgemm(call, (&a, &b), None, call.launch.grid)
}

/// One GEMM of step 11: the tensor maps of A and B, then a persistent cluster launch.
pub fn run_persistent(call: &mut HostCall<'_>) -> Result<()> {
    let (bm, bk) = (call.launch.value("BM").unwrap_or(0) as usize, HopperTiles::bk(call.precision));
    let (a, b) = (a_map(call, bm, bk)?, b_map(call, bk)?);
    let grid = persistent_grid(call)?;
    launch_sgemm(call, (&a, &b), None, grid)
}
// ANCHOR_END: run

/// Launches the step's `sgemm(M, N, K, alpha, A's map, B's map, beta, C)` on `grid` in clusters of
/// the launch's CLUSTER blocks along x; with `c_map`, C's tensor map takes C's place (steps 12-14).
/// An FP8 precision's kernel (step 14) takes the addresses of A's and B's scales after C.
pub fn launch_sgemm(
    call: &HostCall<'_>,
    maps: (&TensorMap, &TensorMap),
    c_map: Option<&TensorMap>,
    grid: (u32, u32, u32),
) -> Result<()> {
    let Shape { m, n, k } = call.gemm.shape;
    let (mi, ni, ki) = (m as i32, n as i32, k as i32);
    let (alpha, beta, c) = (call.gemm.alpha, call.gemm.beta, call.c.ptr(call.gpu));
    let c = c_map.map_or(arg(&c), arg);
    let mut args = vec![arg(&mi), arg(&ni), arg(&ki), arg(&alpha), arg(maps.0), arg(maps.1), arg(&beta), c];
    let scales = [call.a.scales_ptr(call.gpu), call.b.scales_ptr(call.gpu)];
    if call.precision.scaling().is_some() {
        if scales.contains(&0) {
            return Err(crate::Error::BadInput(format!(
                "{} needs A and B quantized with their scales",
                call.precision
            )));
        }
        args.extend([arg(&scales[0]), arg(&scales[1])]);
    }
    let (f, launch) = (&call.loaded.function, call.launch);
    let cluster = launch.value("CLUSTER").unwrap_or(1) as u32;
    // A kernel whose text never waits (a student's skeleton, an experiment without the wait) is
    // launched plainly: started early, it could read C before the launch ahead has written it.
    let early = launch.value(PDL) == Some(1) && call.loaded.waits;
    hopper::launch(call.gpu, f, grid, launch.block, launch.dynamic_smem_bytes, (cluster, 1, 1), early, &mut args)
}

/// The define that makes a launch a programmatic dependent one (`PDL=1`, step 15's rule): a kernel
/// that waits for the launch before it (`wait_for_launch_before`, hopper.cuh) may start early; one
/// that does not is launched plainly.
pub const PDL: &str = "PDL";

/// Bytes of one staging buffer of C in steps 12 and 13 (`CHUNK_BYTES` of hopper.cuh): 64 rows of
/// 128 bytes, one TMA box.
pub const CHUNK_BYTES: usize = 64 * 128;

#[cfg(test)]
mod tests {
    use super::*;

    /// A tuner's experiment that defines a tile size gets a launch of that size; other defines and
    /// negative values leave the tiles as they were.
    #[test]
    fn an_experiments_tile_defines_move_its_launch() {
        use crate::harness::launch::Tiles;
        let t = HopperTiles { bm: 128, bn: 128, stages: 5, cluster: 2, group: 8 };
        assert_eq!(t.following(&[("BM", 192), ("STAGES", 3), ("CARRY", 1)]), HopperTiles { bm: 192, stages: 3, ..t });
        assert_eq!(t.following(&[("GROUP", -1), ("C_BOX_ROWS", 16)]), t);
    }

    /// B's map in two dimensions as stored, or (an experiment's B_MAP_3D) in three with the same
    /// boxes, refused where N is not a whole number of boxes; K-major FP8 keeps its BK x 64 boxes.
    #[test]
    fn b_maps_in_two_or_three_dimensions() {
        let (p, stored) = (Precision::F16, (4096, 11008, 22016));
        assert_eq!(b_layout(p, stored, 64, (64, 32), false).unwrap(), (vec![11008, 4096], vec![22016], vec![64, 32]));
        let three = b_layout(p, stored, 64, (64, 32), true).unwrap();
        assert_eq!(three, (vec![64, 172, 4096], vec![128, 22016], vec![64, 1, 32]));
        assert!(b_layout(p, (4096, 11000, 22000), 64, (64, 32), true).is_err());
        let fp8 = b_layout(Precision::Fp8, (11008, 4096, 4096), 128, (128, 128), true).unwrap();
        assert_eq!(fp8, (vec![4096, 11008], vec![4096], vec![128, 64]));
    }

    /// GRID_CLUSTERS only ever lowers the count, and a nonsense cap still leaves one cluster.
    #[test]
    fn an_experiment_caps_the_clusters() {
        let launch = Launch::new((128, 1, 1), (256, 1, 1));
        assert_eq!(capped(132, &launch), 132);
        assert_eq!(capped(132, &launch.clone().define("GRID_CLUSTERS", 128)), 128);
        assert_eq!(capped(132, &launch.clone().define("GRID_CLUSTERS", 200)), 132);
        assert_eq!(capped(132, &launch.define("GRID_CLUSTERS", -5)), 1);
    }
}
