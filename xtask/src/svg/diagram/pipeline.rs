//! Step 9: the producer and the consumers of the mbarrier ring.

use super::draw::*;
use crate::svg::geometry::Geometry;
use common::Precision;
use svg::Document;
use svg::node::element::{Circle, Group, Polygon, Polyline};

/// True for a kernel whose pipeline is synchronised by mbarriers (step 9: producer and consumer
/// warpgroups), not by one `__syncthreads` per K-tile.
pub(super) fn uses_mbarriers(g: &Geometry) -> bool {
    g.step.kernel.code.contains("mbar_wait(")
}

/// A line with an arrowhead at its last point, through `points`.
pub(super) fn arrow(points: &[(f64, f64)], colour: &str) -> Group {
    let path: Vec<String> = points.iter().map(|(x, y)| format!("{x},{y}")).collect();
    let (x1, y1) = points[points.len() - 2];
    let (x2, y2) = points[points.len() - 1];
    let len = ((x2 - x1).powi(2) + (y2 - y1).powi(2)).sqrt().max(1e-9);
    let (ux, uy) = ((x2 - x1) / len, (y2 - y1) / len);
    let r = |v: f64| (v * 10.0).round() / 10.0;
    let (bx, by) = (x2 - 11.0 * ux, y2 - 11.0 * uy);
    let head = format!(
        "{},{} {},{} {},{}",
        r(x2),
        r(y2),
        r(bx - 6.0 * uy),
        r(by + 6.0 * ux),
        r(bx + 6.0 * uy),
        r(by - 6.0 * ux)
    );
    // The line stops inside the head, so that its end does not poke out of the point.
    let mut shaft = path;
    shaft.pop();
    shaft.push(format!("{},{}", r(x2 - 8.0 * ux), r(y2 - 8.0 * uy)));
    Group::new()
        .add(
            Polyline::new()
                .set("points", shaft.join(" "))
                .set("fill", "none")
                .set("stroke", colour)
                .set("stroke-width", 3),
        )
        .add(Polygon::new().set("points", head).set("fill", colour))
}

/// A numbered marker: a dark disc with the number in white.
pub(super) fn number_mark(x: f64, y: f64, n: usize) -> Group {
    Group::new().add(Circle::new().set("cx", x).set("cy", y).set("r", 11).set("fill", INK)).add(
        text(x, y + 5.5, format!("{n}"))
            .set("font-size", SMALL)
            .set("font-weight", "bold")
            .set("fill", "white")
            .set("text-anchor", "middle"),
    )
}

/// A box with bold text and smaller lines under it, centred.
pub(super) fn labelled_box(x: f64, y: f64, w: f64, h: f64, fill: &str, bold: &str, small: &[String]) -> Group {
    let mut gr = Group::new()
        .add(rect(x, y, w, h, fill).set("rx", 6).set("stroke", INK).set("stroke-width", 1.5))
        .add(text(x + w / 2.0, y + 22.0, bold).set("font-weight", "bold").set("text-anchor", "middle"));
    for (i, l) in small.iter().enumerate() {
        gr = gr.add(
            text(x + w / 2.0, y + 42.0 + 18.0 * i as f64, l.as_str())
                .set("font-size", SMALL)
                .set("text-anchor", "middle"),
        );
    }
    gr
}

/// A step whose K loop runs on mbarriers with a producer (steps 10-13): its warpgroups, one
/// producer and BM / 64 consumers (`CONSUMERS` in the kernel), the ring of STAGES buffers with
/// their `full` and `empty` barriers, and the five moves of a K-tile through it: the producer's
/// TMA copy completing `full`, the consumers' wait on `full`, their wgmma, their arrival on
/// `empty` in every block of the cluster (`release`), and the producer's wait on `empty` before
/// it reuses the buffer. Step 9, one warpgroup that copies and multiplies, gets none.
pub(super) fn pipeline(g: &Geometry) -> Result<Option<Document>, String> {
    if !uses_mbarriers(g) || g.launch.threads_per_block() <= 128 {
        return Ok(None);
    }
    let [bm, bn, bk, stages] = g.defines(["BM", "BN", "BK", "STAGES"])?;
    let cluster = g.define("CLUSTER").unwrap_or(1);
    let warpgroups = g.launch.threads_per_block() as usize / 128;
    let consumers = bm / 64;
    if warpgroups != consumers + 1 {
        return Err(format!("{}: {warpgroups} warpgroups for BM = {bm}", g.step.id()));
    }
    // The kernel's A_BYTES = BM rows of 128 B; B_BYTES = BN x BK elements, two planes for 3xTF32.
    let planes = if g.step.precision == Precision::Tf32x3 { 2 } else { 1 };
    let stage_bytes = bm * 128 + bn * bk * g.step.precision.input().bytes() * planes;
    let (producer_c, consumer_c, full_c, empty_c) = (WARP[1], WARP[0], WARP[4], WARP[2]);

    // Columns: the full barriers, the buffers, the empty barriers; the cluster's other blocks.
    let (full_x, full_w) = (16.0, 76.0);
    let (buf_x, buf_w) = (full_x + full_w + 26.0, 154.0);
    let (empty_x, empty_w) = (buf_x + buf_w + 26.0, 86.0);
    let right = empty_x + empty_w;
    let (peer_x, peer_w) = (right + 28.0, 536.0 - 16.0 - right - 28.0);
    // Rows: producer, ring, consumers, then the numbered notes.
    let (prod_y, prod_h) = (126.0, 60.0);
    let (ring_y, row_h) = (prod_y + prod_h + 60.0, 40.0);
    let ring_bottom = ring_y + row_h * stages as f64 - 6.0;
    let (cons_y, cons_h) = (ring_bottom + 60.0, 96.0);
    let notes_y = cons_y + cons_h + 40.0;
    let copy_peers = if cluster > 2 { format!("blocks 1-{}", cluster - 1) } else { "block 1".into() };
    let notes: Vec<(usize, Vec<String>)> = vec![
        (
            1,
            vec![
                format!("TMA: tile t's A ({bm} x {bk}) and B ({bk} x {bn}) into"),
                format!("buffer t % {stages}, each block copying {} of B's", bn / cluster),
                "columns for the whole cluster (multicast);".into(),
                format!("the {} KiB complete on full", stage_bytes / 1024),
            ],
        ),
        (2, vec!["the consumers wait until full".into()]),
        (3, vec![format!("each multiplies its 64 x {bn} of C (wgmma)")]),
        (
            4,
            vec![
                "when those wgmma are done, each consumer arrives on".into(),
                format!(
                    "empty in {}: empty completes at {} arrivals",
                    if cluster == 2 { "both blocks".to_string() } else { format!("all {cluster} blocks") },
                    consumers * cluster
                ),
            ],
        ),
        (5, vec![format!("the producer waits on empty, then copies tile t + {stages}")]),
    ];
    let note_lines: usize = notes.iter().map(|n| n.1.len()).sum();
    let (w, h) = (536.0, notes_y + 22.0 * note_lines as f64 + 16.0);

    let mut doc = heading(
        document(w as u32, h as u32),
        &[
            &format!("{}: one block ({})", g.step.name, g.step.precision),
            &format!("BM = {bm}: 1 producer + {consumers} consumer warpgroups"),
            &format!("a ring of STAGES = {stages} buffers, 2 mbarriers each"),
            &format!("CLUSTER = {cluster} blocks share each B tile"),
        ],
    );
    // The producer.
    doc = doc.add(labelled_box(
        full_x,
        prod_y,
        right - full_x,
        prod_h,
        "#fbe3cc",
        "warpgroup 0: producer",
        &["one thread issues every TMA copy".into()],
    ));
    // The ring: per buffer its full barrier, the buffer, its empty barrier.
    let pill = |x: f64, y: f64, w: f64, fill: &str, label: String| {
        Group::new()
            .add(rect(x, y, w, row_h - 6.0, fill).set("rx", (row_h - 6.0) / 2.0))
            .add(text(x + w / 2.0, y + row_h * 0.55, label).set("font-size", SMALL).set("text-anchor", "middle"))
    };
    for s in 0..stages {
        let y = ring_y + row_h * s as f64;
        let tile = if s == 0 { "tile t".to_string() } else { format!("tile t+{s}") };
        doc = doc
            .add(pill(full_x, y, full_w, "#cfe8c9", format!("full {s}")))
            .add(rect(buf_x, y, buf_w, row_h - 6.0, FAINT).set("stroke", INK).set("stroke-width", 1))
            .add(
                text(buf_x + buf_w / 2.0, y + row_h * 0.55, format!("buffer {s}: {tile}"))
                    .set("font-size", SMALL)
                    .set("text-anchor", "middle"),
            )
            .add(pill(empty_x, y, empty_w, "#f6d0d0", format!("empty {s}")))
            .add(arrow(
                &[(buf_x - 2.0, y + (row_h - 6.0) / 2.0), (full_x + full_w + 1.0, y + (row_h - 6.0) / 2.0)],
                full_c,
            ));
    }
    // The consumers, side by side.
    let cw = (right - full_x - 8.0 - 8.0 * (consumers as f64 - 1.0)) / consumers as f64;
    doc = doc.add(rect(full_x, cons_y, right - full_x, cons_h, "#dbe5f1").set("rx", 6));
    for c in 0..consumers {
        let x = full_x + 4.0 + (cw + 8.0) * c as f64;
        doc = doc.add(labelled_box(
            x,
            cons_y + 4.0,
            cw,
            cons_h - 8.0,
            "white",
            &format!("warpgroup {}", c + 1),
            &["consumer".into(), format!("C rows {}-{}", 64 * c, 64 * c + 63)],
        ));
        // Every consumer waits on full (2), multiplies the buffer (3) and arrives on empty (4).
        let at = |f: f64| x + cw * f;
        let (full_mid, buf_mid, empty_mid) = (full_x + full_w / 2.0, buf_x + buf_w / 2.0, empty_x + empty_w / 2.0);
        doc = doc
            .add(arrow(&[(full_mid, ring_bottom), (at(0.2), cons_y - 2.0)], full_c))
            .add(arrow(&[(buf_mid, ring_bottom), (at(0.5), cons_y - 2.0)], consumer_c))
            .add(arrow(&[(at(0.8), cons_y), (empty_mid, ring_bottom + 2.0)], empty_c));
    }
    // The moves, numbered as in the notes: 1 copy, 2 wait full, 3 wgmma, 4 arrive empty, 5 wait empty.
    let (full_mid, buf_mid, empty_mid) = (full_x + full_w / 2.0, buf_x + buf_w / 2.0, empty_x + empty_w / 2.0);
    doc = doc
        .add(arrow(&[(buf_mid, prod_y + prod_h), (buf_mid, ring_y - 2.0)], producer_c))
        .add(number_mark(buf_mid + 22.0, (prod_y + prod_h + ring_y) / 2.0, 1))
        .add(number_mark(full_mid, (ring_bottom + cons_y) / 2.0, 2))
        .add(number_mark(buf_mid, (ring_bottom + cons_y) / 2.0, 3))
        .add(number_mark(empty_mid, (ring_bottom + cons_y) / 2.0, 4))
        .add(arrow(&[(empty_mid, ring_y - 6.0), (empty_mid, prod_y + prod_h + 2.0)], empty_c))
        .add(number_mark(empty_mid + 22.0, (prod_y + prod_h + ring_y) / 2.0, 5));
    // The other blocks of the cluster: B from this producer, arrivals from these consumers.
    if cluster > 1 {
        let peer_mid = peer_x + peer_w / 2.0;
        doc = doc
            .add(
                rect(peer_x, ring_y, peer_w, ring_bottom - ring_y, "#f6f6f6")
                    .set("stroke", INK)
                    .set("stroke-dasharray", "6 4")
                    .set("rx", 6),
            )
            .add(text(peer_mid, ring_y + 26.0, copy_peers).set("font-weight", "bold").set("text-anchor", "middle"));
        for (i, l) in ["of the cluster:", "its own ring,", "producer and", "consumers"].iter().enumerate() {
            doc = doc.add(
                text(peer_mid, ring_y + 50.0 + 19.0 * i as f64, *l)
                    .set("font-size", SMALL)
                    .set("text-anchor", "middle"),
            );
        }
        doc = doc
            .add(arrow(
                &[(right, prod_y + prod_h / 2.0), (peer_mid, prod_y + prod_h / 2.0), (peer_mid, ring_y - 2.0)],
                producer_c,
            ))
            .add(number_mark(peer_mid + 22.0, (prod_y + prod_h + ring_y) / 2.0, 1))
            .add(arrow(
                &[(right, cons_y + cons_h / 2.0), (peer_mid, cons_y + cons_h / 2.0), (peer_mid, ring_bottom + 2.0)],
                empty_c,
            ))
            .add(number_mark(peer_mid + 22.0, (ring_bottom + cons_y) / 2.0, 4));
    }
    // The notes.
    let mut y = notes_y;
    for (n, lines) in notes {
        doc = doc.add(number_mark(28.0, y - 6.0, n));
        for l in lines {
            doc = doc.add(text(48.0, y, l).set("font-size", SMALL));
            y += 22.0;
        }
    }
    Ok(Some(doc))
}
