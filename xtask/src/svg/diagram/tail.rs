//! Step 14: the last two waves shared. Where step 11's schedule leaves a last wave too small to
//! share out alone, kernel.cu's `Jobs` shares it out with the wave before it; this draws both
//! schedules' last waves at 4096 x 11008 x 4096, a cluster a row, from a mirror of that code.

use super::draw::*;
use super::schedule::{saves_20, sharing_pays};
use crate::svg::geometry::Geometry;
use common::Shape;
use svg::Document;

/// A cluster's piece of one job: K-tiles `k0..k1` of `job` (counted from the first shared job),
/// left as partial sums, or finishing the job after the `peers` pieces before it.
#[derive(Debug, PartialEq)]
pub(super) struct Piece {
    job: usize,
    k0: usize,
    k1: usize,
    partial: bool,
    peers: usize,
}

/// step 11's `Schedule` (without halves) and step 14's `Jobs` over it, for `jobs` jobs of
/// `tiles` K-tiles on `clusters` clusters: `whole` jobs in waves, then `tail` jobs shared out.
#[derive(Debug)]
pub(super) struct Tail {
    pub(super) jobs: usize,
    pub(super) tiles: usize,
    pub(super) clusters: usize,
    pub(super) whole: usize,
    pub(super) tail: usize,
}

impl Tail {
    /// The constructors: step 11's rule (each cluster two K-tiles of the last wave or more, and
    /// 20 saved), then `Jobs`'s (a smaller last wave with the one before it); `two_waves` false
    /// gives step 11's schedule alone. `slots_ok`: the grid's partial sums fit MAX_PARTIALS.
    pub(super) fn new(jobs: usize, tiles: usize, clusters: usize, slots_ok: bool, two_waves: bool) -> Tail {
        let t = jobs % clusters;
        let mut plan = Tail { jobs, tiles, clusters, whole: jobs, tail: 0 };
        if sharing_pays(t, tiles, clusters, slots_ok) {
            plan.tail = t;
        } else if two_waves && saves_20(t, tiles, clusters, slots_ok) && jobs > clusters && t * tiles < 2 * clusters {
            plan.tail = t + clusters;
        }
        plan.whole = jobs - plan.tail;
        plan
    }

    /// The first of cluster c's share of the tail's K-tiles, laid end to end (`begin`).
    fn begin(&self, c: usize) -> usize {
        c * self.tail * self.tiles / self.clusters
    }

    /// Cluster c's whole jobs (its waves before the tail).
    pub(super) fn own(&self, c: usize) -> usize {
        if c < self.whole { (self.whole - 1 - c) / self.clusters + 1 } else { 0 }
    }

    /// Cluster c's pieces of the tail, in the order `Jobs::wave` gives them: the last job's if
    /// it leaves a partial, the whole ones between, the first job's, which finishes it.
    pub(super) fn pieces(&self, c: usize) -> Vec<Piece> {
        let (b, e) = (self.begin(c), self.begin(c + 1));
        if self.tail == 0 || e <= b {
            return Vec::new();
        }
        let (first, last) = (b / self.tiles, (e - 1) / self.tiles);
        let leaves = e < (last + 1) * self.tiles;
        let n = last - first + 1;
        (0..n)
            .map(|p| {
                let job = if p == n - 1 {
                    first
                } else if leaves {
                    if p == 0 { last } else { first + p }
                } else {
                    first + 1 + p
                };
                let (k0, k1) = (b.max(job * self.tiles), e.min((job + 1) * self.tiles));
                let partial = k1 < (job + 1) * self.tiles;
                let mut peers = 0;
                if !partial {
                    while c > peers && self.begin(c - peers) > job * self.tiles {
                        peers += 1;
                    }
                }
                Piece { job, k0: k0 - job * self.tiles, k1: k1 - job * self.tiles, partial, peers }
            })
            .collect()
    }

    /// The K-tiles cluster c multiplies in all.
    pub(super) fn load(&self, c: usize) -> usize {
        self.own(c) * self.tiles + self.pieces(c).iter().map(|p| p.k1 - p.k0).sum::<usize>()
    }
}

/// The plan of step 14's block-scaled launch at `shape` on the 132 SMs of an H100 or H200.
fn plan_at(shape: &Shape, two_waves: bool) -> Result<Tail, String> {
    let step = steps::by_id("step14-fp8-fp8-block").ok_or("no step14-fp8-fp8-block in the registry")?;
    let launch = (step.launch)(shape);
    let get = |n: &str| launch.value(n).map(|v| v as usize).ok_or(format!("no {n} in step 14's launch"));
    let (bm, bn, cm) = (get("BM")?, get("BN")?, get("CLUSTER")?);
    let max_partials = Geometry::of(step).constant("MAX_PARTIALS").ok_or("no MAX_PARTIALS in hopper.cuh")?;
    let jobs = shape.m.div_ceil(bm).div_ceil(cm) * shape.n.div_ceil(bn);
    let clusters = 132 / cm;
    Ok(Tail::new(jobs, shape.k.div_ceil(128), clusters, clusters * cm * (bm / 64) <= max_partials, two_waves))
}

/// Both schedules' last K-tiles at 4096 x 11008 x 4096: a row a cluster, its K-tiles in time
/// from two waves before the end; the whole jobs in alternating shades, the shared pieces
/// purple (left as partial sums), blue (whole) or green (finishing a job), idle grey.
pub(super) fn tail() -> Result<Document, String> {
    let shape = Shape::new(4096, 11008, 4096);
    let plans = [plan_at(&shape, false)?, plan_at(&shape, true)?];
    let (left, right, row) = (16.0, 524.0, 3.0);
    let p = &plans[0];
    let end = (0..p.clusters).map(|c| p.load(c)).max().unwrap_or(0);
    let start = end - 3 * p.tiles;
    let x = |k: usize| left + (right - left) * (k - start) as f64 / (end - start) as f64;
    let panel_h = p.clusters as f64 * row;
    let mut doc = heading(
        document(540, (200.0 + 2.0 * (panel_h + 92.0) + 60.0) as u32),
        &[
            "step14-fp8: the last waves at 4096 x 11008 x 4096",
            &format!("{} jobs of 128 x 192 x 2 (block scales), {} K-tiles", p.jobs, p.tiles),
            &format!("each, on {} clusters: a row a cluster, its last", p.clusters),
            &format!("{} K-tiles; shades: whole jobs; grey: idle", end - start),
        ],
    );
    let mut y = 130.0;
    for (i, plan) in plans.iter().enumerate() {
        let loads: Vec<usize> = (0..plan.clusters).map(|c| plan.load(c)).collect();
        let (lo, hi) = (loads.iter().min().unwrap_or(&0), loads.iter().max().unwrap_or(&0));
        let title = match i {
            0 => format!(
                "step 11's rule: {} waves + {}, the last whole",
                plan.whole / plan.clusters,
                plan.jobs % plan.clusters
            ),
            _ => format!("shared with the wave before: {} waves + {} jobs", plan.whole / plan.clusters, plan.tail),
        };
        doc = doc
            .add(text(left, y, title).set("font-size", SMALL).set("font-weight", "bold"))
            .add(text(left, y + 20.0, format!("a cluster: {lo}-{hi} K-tiles")).set("font-size", SMALL));
        let top = y + 32.0;
        doc = doc.add(rect(x(start), top, right - left, panel_h, "#d9d9d9"));
        for c in 0..plan.clusters {
            let cy = top + c as f64 * row;
            for w in 0..plan.own(c) {
                let (k0, k1) = (w * plan.tiles, (w + 1) * plan.tiles);
                if k1 > start {
                    let fill = if w % 2 == 0 { "#c3d5ea" } else { "#6f95c4" };
                    doc = doc.add(rect(x(k0.max(start)), cy, x(k1) - x(k0.max(start)), row, fill));
                }
            }
            let mut k = plan.own(c) * plan.tiles;
            for piece in plan.pieces(c) {
                let n = piece.k1 - piece.k0;
                let fill = match (piece.partial, piece.peers) {
                    (true, _) => WARP[6],
                    (false, 0) => WARP[0],
                    _ => WARP[4],
                };
                doc = doc.add(rect(x(k), cy, x(k + n) - x(k), row, fill));
                k += n;
            }
        }
        for kt in (start..=end).step_by(plan.tiles) {
            doc = doc.add(line(x(kt), top, x(kt), top + panel_h + 6.0, INK).set("stroke-dasharray", "3 3")).add(
                text(x(kt), top + panel_h + 22.0, kt.to_string()).set("font-size", SMALL).set("text-anchor", "middle"),
            );
        }
        y = top + panel_h + 60.0;
    }
    let notes = [
        "purple: left as partial sums; blue: a whole job;",
        "green: finishing a job after the partials before it",
        "(K-tiles of a cluster, counted from its first job)",
    ];
    for (i, s) in notes.iter().enumerate() {
        doc = doc.add(text(left, y + 20.0 * i as f64, *s).set("font-size", SMALL));
    }
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every K-tile of every shared job in exactly one piece; a job's pieces are one finishing
    /// piece after its `peers` partial ones; a cluster leaves at most one partial, in its first
    /// piece, and finishes at most one job with peers, in its last; and the shares are even.
    fn check(plan: &Tail) {
        let mut covered = vec![Vec::new(); plan.tail];
        for c in 0..plan.clusters {
            let pieces = plan.pieces(c);
            assert!(pieces.len() <= 3, "cluster {c}: {pieces:?}");
            for (i, p) in pieces.iter().enumerate() {
                assert!(!p.partial || i == 0, "cluster {c}: a partial after its first piece");
                assert!(p.peers == 0 || i + 1 == pieces.len(), "cluster {c}: peers before its last piece");
                covered[p.job].push((p.k0, p.k1, p.partial, p.peers));
            }
        }
        for (job, mut pieces) in covered.into_iter().enumerate() {
            pieces.sort();
            let mut at = 0;
            for &(k0, k1, _, _) in &pieces {
                assert_eq!(k0, at, "job {job}: {pieces:?}");
                at = k1;
            }
            assert_eq!(at, plan.tiles, "job {job}: {pieces:?}");
            let finishing: Vec<_> = pieces.iter().filter(|p| !p.2).collect();
            assert_eq!(finishing.len(), 1, "job {job}: {pieces:?}");
            assert_eq!(finishing[0].3, pieces.len() - 1, "job {job}: {pieces:?}");
        }
        let loads: Vec<usize> = (0..plan.clusters).map(|c| plan.load(c)).collect();
        let (lo, hi) = (loads.iter().min().unwrap(), loads.iter().max().unwrap());
        assert!(hi - lo <= 1 || plan.tail == 0, "{lo}..{hi}");
        assert_eq!(loads.iter().sum::<usize>(), plan.jobs * plan.tiles);
    }

    /// At the shapes the notes and the suite name, on 66 clusters: where the two waves are
    /// shared, what the busiest cluster then multiplies, and that the pieces add up.
    #[test]
    fn the_last_two_waves_add_up() {
        let block = |m, n, k, two| plan_at(&Shape::new(m, n, k), two).unwrap();
        let wide = block(4096, 11008, 4096, true);
        assert_eq!((wide.jobs, wide.tail, wide.whole), (928, 70, 858));
        assert_eq!((0..66).map(|c| wide.load(c)).max(), Some(450));
        assert_eq!((0..66).map(|c| block(4096, 11008, 4096, false).load(c)).max(), Some(480));
        // 4096³ keeps step 11's one shared wave; the suite's own shape shares two.
        assert_eq!(block(4096, 4096, 4096, true).tail, 22);
        assert_eq!(block(1544, 7184, 2700, true).tail, 2 + 66);
        // Per tensor (128 x 128): 8192³ and the suite's shape.
        assert_eq!(Tail::new(2048, 64, 66, true, true).tail, 2 + 66);
        assert_eq!(Tail::new(399, 22, 66, true, true).tail, 3 + 66);
        // The suite's other shape: clusters 13 and 26 take the end of one job, a whole one and the
        // start of a third.
        let three = block(250, 51600, 3300, true);
        assert_eq!((0..66).filter(|&c| three.pieces(c).len() == 3).collect::<Vec<_>>(), [13, 26]);
        for plan in
            [wide, three, block(4096, 4096, 4096, true), block(1544, 7184, 2700, true), block(8192, 8192, 8192, true)]
        {
            check(&plan);
        }
        for (jobs, tiles) in [(2048, 64), (399, 22), (265, 21), (67, 40), (200, 3)] {
            check(&Tail::new(jobs, tiles, 66, true, true));
        }
    }
}
