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

/// The columns and rows of [`pipeline`]'s drawing.
struct Layout {
    full: (f64, f64),
    buf: (f64, f64),
    empty: (f64, f64),
    right: f64,
    peer: (f64, f64),
    prod: (f64, f64),
    ring_y: f64,
    row_h: f64,
    ring_bottom: f64,
    cons: (f64, f64),
}

impl Layout {
    fn new(stages: usize) -> Layout {
        // Columns: the full barriers, the buffers, the empty barriers; the cluster's other blocks.
        let full = (16.0, 76.0);
        let buf = (full.0 + full.1 + 26.0, 154.0);
        let empty = (buf.0 + buf.1 + 26.0, 86.0);
        let right = empty.0 + empty.1;
        let peer = (right + 28.0, WIDTH - 16.0 - right - 28.0);
        // Rows: producer, ring, consumers, then the numbered notes.
        let prod = (126.0, 60.0);
        let (ring_y, row_h) = (prod.0 + prod.1 + 60.0, 40.0);
        let ring_bottom = ring_y + row_h * stages as f64 - 6.0;
        Layout { full, buf, empty, right, peer, prod, ring_y, row_h, ring_bottom, cons: (ring_bottom + 60.0, 96.0) }
    }

    fn mid(c: (f64, f64)) -> f64 {
        c.0 + c.1 / 2.0
    }
}

const WIDTH: f64 = 536.0;

/// A step whose K loop runs on mbarriers with a producer (steps 10-13): its warpgroups, one
/// producer and BM / 64 consumers (`CONSUMERS` in the kernel), the ring of STAGES buffers with
/// their `full` and `empty` barriers, and the five moves of a K-tile through it: the producer's
/// TMA copy completing `full`, the consumers' wait on `full`, their wgmma, their arrival on
/// `empty` (in every block of the cluster, where there is one: `release`), and the producer's
/// wait on `empty` before it reuses the buffer. Step 9, one warpgroup that copies and
/// multiplies, gets none.
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
    let l = Layout::new(stages);
    let notes = pipeline_notes([bm, bn, bk, stages, cluster, consumers], stage_bytes);
    let note_lines: usize = notes.iter().map(|n| n.1.len()).sum();
    let notes_y = l.cons.0 + l.cons.1 + 40.0;
    let h = notes_y + 22.0 * note_lines as f64 + 16.0;
    let sharing = if cluster > 1 {
        format!("CLUSTER = {cluster} blocks share each B tile")
    } else {
        "no cluster: the block loads its own B tile".to_string()
    };
    let mut doc = heading(
        document(WIDTH as u32, h as u32),
        &[
            &format!("{}: one block ({})", g.step.name, g.step.precision),
            &format!("BM = {bm}: 1 producer + {consumers} consumer warpgroups"),
            &format!("a ring of STAGES = {stages} buffers, 2 mbarriers each"),
            &sharing,
        ],
    );
    doc = doc.add(labelled_box(
        l.full.0,
        l.prod.0,
        l.right - l.full.0,
        l.prod.1,
        "#fbe3cc",
        "warpgroup 0: producer",
        &["one thread issues every TMA copy".into()],
    ));
    doc = ring(doc, &l, stages);
    doc = consumer_boxes(doc, &l, consumers);
    if cluster > 1 {
        doc = peers(doc, &l, cluster);
    }
    Ok(Some(numbered_notes(doc, notes_y, notes)))
}

/// The numbered notes under [`pipeline`]'s drawing, for its tiles `[bm, bn, bk, stages,
/// cluster, consumers]`.
fn pipeline_notes(
    [bm, bn, bk, stages, cluster, consumers]: [usize; 6],
    stage_bytes: usize,
) -> Vec<(usize, Vec<String>)> {
    let copy = if cluster > 1 {
        vec![
            format!("TMA: tile t's A ({bm} x {bk}) and B ({bk} x {bn}) into"),
            format!("buffer t % {stages}, each block copying {} of B's", bn / cluster),
            "columns for the whole cluster (multicast);".into(),
            format!("the {} KiB complete on full", stage_bytes / 1024),
        ]
    } else {
        vec![
            format!("TMA: tile t's A ({bm} x {bk}) and B ({bk} x {bn}) into"),
            format!("buffer t % {stages}; the {} KiB complete on full", stage_bytes / 1024),
        ]
    };
    let arrive = if cluster > 1 {
        let blocks = if cluster == 2 { "both blocks".to_string() } else { format!("all {cluster} blocks") };
        vec![
            "when those wgmma are done, each consumer arrives on".into(),
            format!("empty in {blocks}: empty completes at {} arrivals", consumers * cluster),
        ]
    } else {
        vec![
            "when those wgmma are done, each consumer arrives on".into(),
            format!("empty: empty completes at {consumers} arrivals"),
        ]
    };
    vec![
        (1, copy),
        (2, vec!["the consumers wait until full".into()]),
        (3, vec![format!("each multiplies its 64 x {bn} of C (wgmma)")]),
        (4, arrive),
        (5, vec![format!("the producer waits on empty, then copies tile t + {stages}")]),
    ]
}

/// The ring: per buffer its full barrier, the buffer, its empty barrier; the producer's copy (1)
/// into it and its wait on empty (5).
fn ring(mut doc: Document, l: &Layout, stages: usize) -> Document {
    let (producer_c, full_c, empty_c) = (WARP[1], WARP[4], WARP[2]);
    let row_h = l.row_h;
    let pill = |x: f64, y: f64, w: f64, fill: &str, label: String| {
        Group::new()
            .add(rect(x, y, w, row_h - 6.0, fill).set("rx", (row_h - 6.0) / 2.0))
            .add(text(x + w / 2.0, y + row_h * 0.55, label).set("font-size", SMALL).set("text-anchor", "middle"))
    };
    for s in 0..stages {
        let y = l.ring_y + row_h * s as f64;
        let tile = if s == 0 { "tile t".to_string() } else { format!("tile t+{s}") };
        doc = doc
            .add(pill(l.full.0, y, l.full.1, "#cfe8c9", format!("full {s}")))
            .add(rect(l.buf.0, y, l.buf.1, row_h - 6.0, FAINT).set("stroke", INK).set("stroke-width", 1))
            .add(
                text(Layout::mid(l.buf), y + row_h * 0.55, format!("buffer {s}: {tile}"))
                    .set("font-size", SMALL)
                    .set("text-anchor", "middle"),
            )
            .add(pill(l.empty.0, y, l.empty.1, "#f6d0d0", format!("empty {s}")))
            .add(arrow(
                &[(l.buf.0 - 2.0, y + (row_h - 6.0) / 2.0), (l.full.0 + l.full.1 + 1.0, y + (row_h - 6.0) / 2.0)],
                full_c,
            ));
    }
    let (buf_mid, empty_mid) = (Layout::mid(l.buf), Layout::mid(l.empty));
    let between = (l.prod.0 + l.prod.1 + l.ring_y) / 2.0;
    doc.add(arrow(&[(buf_mid, l.prod.0 + l.prod.1), (buf_mid, l.ring_y - 2.0)], producer_c))
        .add(number_mark(buf_mid + 22.0, between, 1))
        .add(arrow(&[(empty_mid, l.ring_y - 6.0), (empty_mid, l.prod.0 + l.prod.1 + 2.0)], empty_c))
        .add(number_mark(empty_mid + 22.0, between, 5))
}

/// The consumers side by side, each waiting on full (2), multiplying the buffer (3) and arriving
/// on empty (4).
fn consumer_boxes(mut doc: Document, l: &Layout, consumers: usize) -> Document {
    let (consumer_c, full_c, empty_c) = (WARP[0], WARP[4], WARP[2]);
    let (cons_y, cons_h) = l.cons;
    let cw = (l.right - l.full.0 - 8.0 - 8.0 * (consumers as f64 - 1.0)) / consumers as f64;
    doc = doc.add(rect(l.full.0, cons_y, l.right - l.full.0, cons_h, "#dbe5f1").set("rx", 6));
    let (full_mid, buf_mid, empty_mid) = (Layout::mid(l.full), Layout::mid(l.buf), Layout::mid(l.empty));
    for c in 0..consumers {
        let x = l.full.0 + 4.0 + (cw + 8.0) * c as f64;
        doc = doc.add(labelled_box(
            x,
            cons_y + 4.0,
            cw,
            cons_h - 8.0,
            "white",
            &format!("warpgroup {}", c + 1),
            &["consumer".into(), format!("C rows {}-{}", 64 * c, 64 * c + 63)],
        ));
        let at = |f: f64| x + cw * f;
        doc = doc
            .add(arrow(&[(full_mid, l.ring_bottom), (at(0.2), cons_y - 2.0)], full_c))
            .add(arrow(&[(buf_mid, l.ring_bottom), (at(0.5), cons_y - 2.0)], consumer_c))
            .add(arrow(&[(at(0.8), cons_y), (empty_mid, l.ring_bottom + 2.0)], empty_c));
    }
    let between = (l.ring_bottom + cons_y) / 2.0;
    doc.add(number_mark(full_mid, between, 2))
        .add(number_mark(buf_mid, between, 3))
        .add(number_mark(empty_mid, between, 4))
}

/// The other blocks of the cluster: B from this producer (1), arrivals from these consumers (4).
fn peers(mut doc: Document, l: &Layout, cluster: usize) -> Document {
    let (producer_c, empty_c) = (WARP[1], WARP[2]);
    let peer_mid = Layout::mid(l.peer);
    let who = if cluster > 2 { format!("blocks 1-{}", cluster - 1) } else { "block 1".into() };
    doc = doc
        .add(
            rect(l.peer.0, l.ring_y, l.peer.1, l.ring_bottom - l.ring_y, "#f6f6f6")
                .set("stroke", INK)
                .set("stroke-dasharray", "6 4")
                .set("rx", 6),
        )
        .add(text(peer_mid, l.ring_y + 26.0, who).set("font-weight", "bold").set("text-anchor", "middle"));
    for (i, line) in ["of the cluster:", "its own ring,", "producer and", "consumers"].iter().enumerate() {
        doc = doc.add(
            text(peer_mid, l.ring_y + 50.0 + 19.0 * i as f64, *line)
                .set("font-size", SMALL)
                .set("text-anchor", "middle"),
        );
    }
    let (prod_mid, cons_mid) = (l.prod.0 + l.prod.1 / 2.0, l.cons.0 + l.cons.1 / 2.0);
    doc.add(arrow(&[(l.right, prod_mid), (peer_mid, prod_mid), (peer_mid, l.ring_y - 2.0)], producer_c))
        .add(number_mark(peer_mid + 22.0, (l.prod.0 + l.prod.1 + l.ring_y) / 2.0, 1))
        .add(arrow(&[(l.right, cons_mid), (peer_mid, cons_mid), (peer_mid, l.ring_bottom + 2.0)], empty_c))
        .add(number_mark(peer_mid + 22.0, (l.ring_bottom + l.cons.0) / 2.0, 4))
}

/// Numbered notes from `y` down: a mark, then the lines beside it.
pub(super) fn numbered_notes(mut doc: Document, mut y: f64, notes: Vec<(usize, Vec<String>)>) -> Document {
    for (n, lines) in notes {
        doc = doc.add(number_mark(28.0, y - 6.0, n));
        for l in lines {
            doc = doc.add(text(48.0, y, l).set("font-size", SMALL));
            y += 22.0;
        }
    }
    doc
}
