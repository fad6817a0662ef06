//! Step 11: the blocks of a cluster, the halves of B each loads for both, and the job they share.

use super::draw::*;
use super::pipeline::{arrow, numbered_notes};
use crate::svg::geometry::Geometry;
use svg::Document;

/// Step 11's cluster: its CLUSTER blocks compute vertically adjacent BM x BN tiles of C (a job),
/// so they need the same B tile of each K-tile; it comes in boxes of 64 columns (`BOX_BYTES`
/// over `ROW`), and block r's producer loads boxes r * b to r * b + b - 1 (b = BN / 64 / CLUSTER)
/// with `.multicast::cluster`: each box lands in every block's buffer and completes every
/// block's full barrier. Each block loads its own A tile. As step11-cluster-persistent's producer
/// loop does it (`boxes`, `MULTICAST`).
pub(super) fn multicast(g: &Geometry) -> Result<Document, String> {
    let [bm, bn, bk, cluster] = g.defines(["BM", "BN", "BK", "CLUSTER"])?;
    let (boxes_bytes, row) = (g.constant("BOX_BYTES"), g.constant("ROW"));
    let box_cols = boxes_bytes.zip(row).map(|(b, r)| b / r).ok_or_else(|| format!("{}: no BOX_BYTES", g.step.id()))?;
    if cluster < 2 {
        return Err(format!("{}: no cluster to multicast to", g.step.id()));
    }
    let (boxes, per_block) = (bn / box_cols, bn / box_cols / cluster);
    let colour = |rank: usize| WARP[[0, 1, 4, 6][rank % 4]];
    let (left, w) = (16.0, 540.0);
    // Block 0 above the B tile, the other blocks below it: every multicast arrow goes straight
    // from its box to the same box of each block.
    let (box_x, box_w, box_h) = (left + 150.0, 88.0, 40.0);
    let (sm_h, gap) = (92.0, 54.0);
    let bx = |b: usize| box_x + b as f64 * box_w;
    let sm_y = |rank: usize| {
        if rank == 0 { 128.0 } else { 128.0 + sm_h + 2.0 * gap + box_h + (rank - 1) as f64 * (sm_h + 16.0) }
    };
    let b_y = 128.0 + sm_h + gap;
    let notes_y = sm_y(cluster - 1) + sm_h + 50.0;
    let h = notes_y + 22.0 * 6.0 + 10.0;
    let mut doc = heading(
        document(w as u32, h as u32),
        &[
            &format!("{}: a cluster of {cluster} blocks ({})", g.step.name, g.step.precision),
            &format!("one job: {cluster} tiles of {bm} x {bn} of C, one per block;"),
            &format!("B's tile of a K-tile ({bk} x {bn}): {boxes} boxes of {box_cols}"),
            &format!("columns; block r loads {per_block} of them for all"),
        ],
    );
    let mini = |doc: Document, x: f64, y: f64, fill: &str, label: String| {
        doc.add(rect(x + 2.0, y, box_w - 4.0, box_h, fill).set("stroke", "white")).add(
            text(x + box_w / 2.0, y + box_h * 0.64, label)
                .set("font-size", SMALL)
                .set("fill", "white")
                .set("text-anchor", "middle"),
        )
    };
    // The B tile of one K-tile as L2 holds it, each box in the colour of the block that loads it.
    doc = doc
        .add(text(left, b_y + 16.0, format!("B, {bk} x {bn},")).set("font-size", SMALL))
        .add(text(left, b_y + 36.0, "in L2").set("font-size", SMALL));
    for b in 0..boxes {
        doc = mini(doc, bx(b), b_y, colour(b / per_block), format!("box {b}"));
    }
    for rank in 0..cluster {
        let y = sm_y(rank);
        doc = doc
            .add(
                rect(left, y, w - 2.0 * left, sm_h, FAINT)
                    .set("stroke", colour(rank))
                    .set("stroke-width", 3)
                    .set("rx", 6),
            )
            .add(text(left + 10.0, y + 24.0, format!("block {rank}")).set("font-weight", "bold"))
            .add(
                text(left + 10.0, y + 46.0, format!("C rows {}-{}", rank * bm, rank * bm + bm - 1))
                    .set("font-size", SMALL),
            )
            .add(rect(left + 10.0, y + sm_h - 36.0, 116.0, 28.0, &lane_tint(rank * 31)))
            .add(
                text(left + 68.0, y + sm_h - 16.0, format!("its A, {bm} x {bk}"))
                    .set("font-size", SMALL)
                    .set("text-anchor", "middle"),
            );
        for b in 0..boxes {
            doc = mini(doc, bx(b), y + (sm_h - box_h) / 2.0, colour(b / per_block), format!("{b}"));
            // The box's multicast: from the B tile to this block.
            let (from, to) = if y < b_y {
                (b_y - 2.0, y + (sm_h + box_h) / 2.0 + 2.0)
            } else {
                (b_y + box_h + 2.0, y + (sm_h - box_h) / 2.0 - 2.0)
            };
            doc = doc.add(arrow(&[(bx(b) + box_w / 2.0, from), (bx(b) + box_w / 2.0, to)], colour(b / per_block)));
        }
    }
    let notes = vec![
        (
            1,
            vec![
                format!("block r's producer loads boxes {per_block}r to {per_block}r + {} (its", per_block - 1),
                "colour) with .multicast::cluster: each box lands in".into(),
                "every block and completes every block's full barrier".into(),
            ],
        ),
        (2, vec![format!("each block reads 1/{cluster} of B from L2, and its own A")]),
        (
            3,
            vec![
                format!("a consumer releases a buffer in all {cluster} blocks: one"),
                "arrival on each block's empty barrier".into(),
            ],
        ),
    ];
    Ok(numbered_notes(doc, notes_y, notes))
}
