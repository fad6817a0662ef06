//! Step 11: the persistent grid's schedule, the jobs of C wave by wave.

use super::draw::*;
use crate::results::Results;
use crate::svg::geometry::Geometry;
use common::Shape;
use svg::Document;
use svg::node::element::Polyline;

/// The jobs of one shape as common/include/hopper.cuh's `Schedule` deals them out: `jobs` jobs of
/// `rows` x `cols` (a cluster's CLUSTER tiles of BM x BN each), the first `whole` of them whole
/// in waves of `clusters`, then either halves of BN / 2 columns (`units` counts jobs and halves)
/// or a tail of `tail` jobs whose K-tiles every cluster shares (stream-K).
#[derive(Debug, PartialEq)]
pub(super) struct Plan {
    pub(super) rows: usize,
    pub(super) cols: usize,
    pub(super) jobs: usize,
    pub(super) whole: usize,
    pub(super) units: usize,
    pub(super) tail: usize,
    pub(super) clusters: usize,
    group: usize,
}

impl Plan {
    /// `Schedule`'s constructor for the kernel of `g` at `shape` on `clusters` clusters.
    pub(super) fn new(g: &Geometry, shape: &Shape, clusters: usize) -> Result<Plan, String> {
        let [bm, bn, bk, cm, group, halves] = g.defines(["BM", "BN", "BK", "CLUSTER", "GROUP", "HALVES"])?;
        let max_partials = g.constant("MAX_PARTIALS").ok_or("no MAX_PARTIALS in hopper.cuh")?;
        let (rows, cols) = (shape.m.div_ceil(bm).div_ceil(cm), shape.n.div_ceil(bn));
        let (jobs, tiles) = (rows * cols, shape.k.div_ceil(bk));
        let t = jobs % clusters;
        let mut whole = if halves == 1 && 2 * t <= clusters { jobs - t } else { jobs };
        let mut tail = 0;
        if whole == jobs && sharing_pays(t, tiles, clusters, clusters * cm * (bm / 64) <= max_partials) {
            tail = t;
            whole = jobs - t;
        }
        let units = if tail > 0 { whole } else { whole + 2 * (jobs - whole) };
        Ok(Plan { rows, cols, jobs, whole, units, tail, clusters, group })
    }

    /// `job_origin`: job j's (row, column) of jobs, numbered down a group of GROUP rows, column
    /// by column, the odd groups right to left.
    pub(super) fn origin(&self, job: usize) -> (usize, usize) {
        let (g, cols) = (self.group, self.cols);
        let group = job / (g * cols);
        let first = group * g;
        let height = g.min(self.rows - first);
        let in_group = job % (g * cols);
        let col = if group % 2 == 1 { cols - 1 - in_group / height } else { in_group / height };
        (first + in_group % height, col)
    }

    /// Whole waves before the last, uneven one.
    pub(super) fn waves(&self) -> usize {
        self.whole / self.clusters
    }
}

/// `Schedule`'s test for sharing a last wave of `t` jobs out along K: only where that saves each
/// cluster 20 K-tiles (the partial sums cost about 14), the partial sums have their slots
/// (`slots`), and each cluster gets two of the wave's K-tiles or more.
pub(super) fn sharing_pays(t: usize, tiles: usize, clusters: usize, slots: bool) -> bool {
    saves_20(t, tiles, clusters, slots) && t * tiles >= 2 * clusters
}

/// The part of that test step 14's `Jobs` keeps for a last wave shared with the wave before it.
pub(super) fn saves_20(t: usize, tiles: usize, clusters: usize, slots: bool) -> bool {
    t > 0 && (clusters - t) * tiles >= 20 * clusters && slots
}

/// The clusters the GPU of `book` holds at once for the launch of `g`: one block per SM while
/// a block needs more than half of an SM's shared memory (its datasheet's, less the 1 KiB CUDA
/// keeps per block), CLUSTER blocks a cluster.
fn resident_clusters(g: &Geometry, book: &Results) -> Result<usize, String> {
    let gpu = &book.sweep.gpu;
    let per_sm = crate::book::hardware::shared_kib_per_sm(&gpu.name)
        .ok_or_else(|| format!("no datasheet of the {}", gpu.name))?;
    let per_block = g.launch.dynamic_smem_bytes as usize + 1024;
    let blocks = (per_sm as usize * 1024 / per_block).max(1);
    Ok(gpu.sms as usize * blocks / g.define("CLUSTER").unwrap_or(1))
}

/// One shape's jobs at (x, y), `cell` pixels each: the whole waves in two alternating shades,
/// the last, uneven wave in red (its halves split), its shared-out jobs hatched purple, groups
/// of GROUP rows outlined, and the path of the first wave through them.
fn panel(mut doc: Document, plan: &Plan, (x, y): (f64, f64), cell: f64) -> Document {
    let wave_fill = |w: usize| if w % 2 == 0 { "#c3d5ea" } else { "#6f95c4" };
    let at = |(r, c): (usize, usize)| (x + c as f64 * cell, y + r as f64 * cell);
    let full = plan.waves() * plan.clusters;
    for job in 0..plan.jobs {
        let (cx, cy) = at(plan.origin(job));
        let cell_rect =
            |x: f64, w: f64, fill: &str| rect(x, cy, w, cell, fill).set("stroke", "white").set("stroke-width", 0.5);
        doc = if job < full {
            doc.add(cell_rect(cx, cell, wave_fill(job / plan.clusters)))
        } else if plan.tail > 0 {
            doc.add(cell_rect(cx, cell, WARP[6]))
                .add(line(cx + 1.0, cy + cell - 1.0, cx + cell - 1.0, cy + 1.0, "white").set("stroke-width", 1.5))
        } else if plan.units > plan.whole {
            doc.add(cell_rect(cx, cell / 2.0, WARP[2])).add(cell_rect(cx + cell / 2.0, cell / 2.0, WARP[2]))
        } else {
            doc.add(cell_rect(cx, cell, WARP[2]))
        };
    }
    for first in (0..plan.rows).step_by(plan.group) {
        let h = plan.group.min(plan.rows - first) as f64 * cell;
        doc = doc.add(
            rect(x, y + first as f64 * cell, plan.cols as f64 * cell, h, "none")
                .set("stroke", INK)
                .set("stroke-width", 2),
        );
    }
    let path: Vec<String> = (0..plan.clusters.min(plan.jobs))
        .map(|j| {
            let (cx, cy) = at(plan.origin(j));
            format!("{:.1},{:.1}", cx + cell / 2.0, cy + cell / 2.0)
        })
        .collect();
    doc.add(
        Polyline::new().set("points", path.join(" ")).set("fill", "none").set("stroke", INK).set("stroke-width", 1.5),
    )
}

/// One shape's jobs and what happens to its last wave, in words.
fn summary(name: &str, plan: &Plan) -> String {
    let left = plan.jobs - plan.waves() * plan.clusters;
    let what = if plan.tail > 0 {
        "shared out along K".to_string()
    } else if plan.units > plan.whole {
        format!("{} halves", 2 * (plan.jobs - plan.whole))
    } else if left > 0 {
        format!("a whole wave, {} clusters idle", plan.clusters - left)
    } else {
        "none".into()
    };
    format!("{name}: {} jobs, {} waves + {left}: {what}", plan.jobs, plan.waves())
}

/// Step 11's persistent grid on the book's GPU: for three shapes, C's jobs (a cluster's tiles)
/// coloured by the wave of clusters that runs them, in groups of GROUP rows taken column by
/// column (the line: the first wave's order), and how the last wave is evened out: halves at
/// 4096 x 11008 x 4096, stream-K at 8192³, and at 4096³ neither.
pub(super) fn schedule(g: &Geometry, book: &Results) -> Result<Document, String> {
    let clusters = resident_clusters(g, book)?;
    let shapes = [Shape::cube(4096), Shape::cube(8192), Shape::new(4096, 11008, 4096)];
    let plans: Vec<Plan> = shapes.iter().map(|s| Plan::new(g, s, clusters)).collect::<Result<_, _>>()?;
    let [bm, bn, cm, group] = g.defines(["BM", "BN", "CLUSTER", "GROUP"])?;
    let (left, w) = (16.0, 540.0);
    // 4096³ and 8192³ side by side, the wide shape under them, each summed up in a line.
    let small = 8.0;
    let top = 190.0;
    let lines_y = top + plans[1].rows as f64 * small + 30.0;
    let wide_cell = ((w - 2.0 * left) / plans[2].cols as f64).floor();
    let wide_y = lines_y + 3.0 * 22.0 + 20.0;
    let legend_y = wide_y + plans[2].rows as f64 * wide_cell + 34.0;
    let h = legend_y + 80.0;
    let mut doc = heading(
        document(w as u32, h as u32),
        &[
            &format!("{}: jobs, wave by wave", g.step.name),
            &format!("{clusters} clusters on the {}; a job: {cm} x {bm} x {bn}", book.sweep.gpu.name),
            &format!("of C; groups of {group} rows, column by column (line:"),
            "wave 0); shades: alternate waves; red: the last,",
            "uneven wave; purple: shared out along K (stream-K)",
        ],
    );
    let x2 = left + plans[0].cols as f64 * small + 40.0;
    let names = ["4096³", "8192³", "4096 x 11008 x 4096"];
    for (i, (plan, (x, y, cell))) in
        plans.iter().zip([(left, top, small), (x2, top, small), (left, wide_y, wide_cell)]).enumerate()
    {
        doc = doc
            .add(text(x, y - 10.0, names[i]).set("font-size", SMALL).set("font-weight", "bold"))
            .add(text(left, lines_y + 22.0 * i as f64, summary(names[i], plan)).set("font-size", SMALL));
        doc = panel(doc, plan, (x, y), cell);
    }
    Ok(doc
        .add(
            text(left, legend_y, "a cluster takes jobs c, c + clusters, ...; the ring runs on").set("font-size", SMALL),
        )
        .add(
            text(left, legend_y + 20.0, "from job to job; odd groups go right to left, odd waves")
                .set("font-size", SMALL),
        )
        .add(
            text(left, legend_y + 40.0, "through K backwards: each starts on what L2 still holds")
                .set("font-size", SMALL),
        ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shapes the book discusses, on the 66 clusters of a 132-SM Hopper GPU: what the
    /// schedule does with the last wave.
    #[test]
    fn the_last_wave_of_each_shape() {
        let g = Geometry::of(steps::by_id("step11-cluster-persistent-fp16").unwrap());
        let plan = |m, n, k| Plan::new(&g, &Shape::new(m, n, k), 66).unwrap();
        let square = plan(4096, 4096, 4096);
        assert_eq!((square.jobs, square.waves(), square.tail, square.units), (256, 3, 0, 256), "a whole last wave");
        let wide = plan(4096, 11008, 4096);
        assert_eq!((wide.jobs, wide.whole, wide.units), (688, 660, 716), "28 jobs as 56 halves");
        let big = plan(8192, 8192, 8192);
        assert_eq!((big.jobs, big.tail, big.whole), (1024, 34, 990), "stream-K");
        // Every job has one place, and the first wave covers groups of 8 rows column by column.
        let mut seen = vec![false; big.jobs];
        for j in 0..big.jobs {
            let (r, c) = big.origin(j);
            assert!(!std::mem::replace(&mut seen[r * big.cols + c], true), "job {j} twice");
        }
        assert_eq!((big.origin(0), big.origin(7), big.origin(8)), ((0, 0), (7, 0), (0, 1)));
        // The odd groups run right to left.
        assert_eq!(big.origin(8 * big.cols), (8, big.cols - 1));
    }
}
