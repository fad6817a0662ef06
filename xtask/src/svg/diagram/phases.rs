//! Step 9: the `full` barriers of the ring in time, phase by phase.

use super::draw::*;
use super::pipeline::{arrow, number_mark, numbered_notes, uses_mbarriers};
use crate::svg::geometry::Geometry;
use svg::Document;

/// When each K-tile's copy is issued, lands and is multiplied, in units of one tile's products,
/// for a ring of `stages` buffers whose copies take `latency` from issue to the last byte, as
/// step09-wgmma-tma/src/kernel.cu runs it: thread 0 issues the first `stages` copies at once; the
/// warpgroup waits for tile t's buffer, issues its wgmma, and once tile t - 1's products are done
/// (`wgmma_wait<1>`) thread 0 refills that buffer with tile t - 1 + stages. (issue, land, start, end) per tile.
fn schedule(stages: usize, tiles: usize, latency: f64) -> Vec<(f64, f64, f64, f64)> {
    let mut out: Vec<(f64, f64, f64, f64)> = Vec::new();
    for t in 0..tiles {
        let issue = if t < stages {
            0.0
        } else {
            // Refilled at iteration t + 1 - stages, after its wait and tile t - stages's products.
            let (_, land_next, _, _) = out[t + 1 - stages];
            land_next.max(out[t - stages].3)
        };
        let land = issue + latency;
        let start = if t == 0 { land } else { land.max(out[t - 1].3) };
        out.push((issue, land, start, start + 1.0));
    }
    out
}

/// Step 9's ring in time: thread 0's arrival with the stage's bytes and its copies, each `full`
/// barrier's parity bit (it flips as each phase completes, when a copy's last byte lands), the
/// warpgroup's wait for the parity of the phase it needs and its wgmma, and the release that
/// lets thread 0 refill a buffer. Schematic: a copy is drawn as 1.6 tiles' products long.
pub(super) fn barrier_phases(g: &Geometry) -> Result<Document, String> {
    if !uses_mbarriers(g) {
        return Err(format!("{}: no mbarriers", g.step.id()));
    }
    let [bm, bn, stages] = g.defines(["BM", "BN", "STAGES"])?;
    if stages < 2 {
        return Err(format!("{}: a ring of {stages} buffer", g.step.id()));
    }
    let stage_kib = (bm + bn) * 128 / 1024;
    let shown = 3 * stages;
    let times = schedule(stages, shown, 1.6);
    let span = times.last().map_or(1.0, |t| t.3);
    let (label_w, left, row_h, top) = (108.0, 12.0, 44.0, 130.0);
    let unit = (540.0 - label_w - left - 12.0) / span;
    let x = |t: f64| left + label_w + unit * t;
    let rows: Vec<String> = std::iter::once("thread 0".to_string())
        .chain((0..stages).map(|s| format!("full[{s}]")))
        .chain(["wgmma".into()])
        .collect();
    let y = |r: usize| top + row_h * r as f64;
    let wgmma_row = rows.len() - 1;
    let notes_y = y(rows.len()) + 58.0;
    let notes = vec![
        (
            1,
            vec![
                format!("thread 0 arrives on full[t % {stages}] with expect_tx"),
                format!("({stage_kib} KiB to come), then asks the TMA for tile t"),
            ],
        ),
        (
            2,
            vec![
                "the TMA's bytes complete_tx; the last completes the".into(),
                "phase, and the barrier's parity bit flips".into(),
            ],
        ),
        (
            3,
            vec![
                format!("the warpgroup waits on full[t % {stages}] for the phase of"),
                format!("parity (t / {stages}) % 2 to complete, then issues wgmma"),
            ],
        ),
        (
            4,
            vec![
                "wgmma_wait<1>: tile t - 1's products are done, so".into(),
                format!("thread 0 refills its buffer with tile t - 1 + {stages}"),
            ],
        ),
    ];
    let h = notes_y + 22.0 * notes.iter().map(|n| n.1.len()).sum::<usize>() as f64 + 14.0;
    let mut doc = heading(
        document(540, h as u32),
        &[
            &format!("{}: the ring's barriers in time", g.step.name),
            &format!("STAGES = {stages} buffers of {stage_kib} KiB, a full barrier each;"),
            &format!("tile t: buffer t % {stages}, its barrier's phase t / {stages};"),
            "strip: the parity bit; bar: bytes in flight",
        ],
    );
    for (r, name) in rows.iter().enumerate() {
        doc = doc.add(text(left + 30.0, y(r) + row_h * 0.62, name.as_str()).set("font-size", SMALL)).add(rect(
            x(0.0),
            y(r) + 4.0,
            unit * span,
            row_h - 8.0,
            "#f6f6f6",
        ));
    }
    let buffer_colour = |s: usize| WARP[[0, 1, 4, 6][s % 4]];
    // Each barrier's parity bit, from one completion (a copy's last byte) to the next, and under
    // it the bytes in flight.
    for s in 0..stages {
        let (yy, hh) = (y(1 + s) + 6.0, row_h - 12.0);
        let mut from = 0.0;
        for (p, t) in (s..shown).step_by(stages).enumerate() {
            let (issue, land, _, _) = times[t];
            doc = doc.add(bit_segment(x(from), x(land), yy, hh, p % 2)).add(rect(
                x(issue),
                yy + hh - 7.0,
                x(land) - x(issue),
                7.0,
                buffer_colour(s),
            ));
            from = land;
        }
        doc = doc.add(bit_segment(x(from), x(span), yy, hh, (shown / stages) % 2));
    }
    for (t, &(issue, land, start, _)) in times.iter().enumerate() {
        let s = t % stages;
        let colour = buffer_colour(s);
        doc = doc.add(rect(x(issue), y(0) + 8.0, 3.0, row_h - 16.0, colour)).add(
            text(x(issue) + 6.0 + 14.0 * (t % stages) as f64, y(0) + row_h * 0.62, format!("{t}"))
                .set("font-size", SMALL)
                .set("fill", colour)
                .set("font-weight", "bold"),
        );
        let prev_end = if t == 0 { 0.0 } else { times[t - 1].3 };
        if start > prev_end + 1e-9 {
            doc = doc.add(rect(x(prev_end), y(wgmma_row) + 8.0, x(start) - x(prev_end), row_h - 16.0, "#f4b6b6"));
        }
        doc = doc.add(rect(x(start) + 1.0, y(wgmma_row) + 6.0, unit - 2.0, row_h - 12.0, colour).set("rx", 4)).add(
            text(x(start) + unit / 2.0, y(wgmma_row) + row_h * 0.62, format!("{t}"))
                .set("font-size", SMALL)
                .set("fill", "white")
                .set("text-anchor", "middle"),
        );
        // Where the warpgroup's wait ends as the phase completes, a line from the completion.
        if (start - land).abs() < 1e-9 {
            doc = doc.add(
                line(x(land), y(1 + s) + row_h - 6.0, x(land), y(wgmma_row) + 6.0, INK).set("stroke-dasharray", "3 3"),
            );
        }
    }
    // The first refill, released by tile 0's products.
    let refill = times[stages].0;
    doc = doc
        .add(arrow(&[(x(refill), y(wgmma_row) + 4.0), (x(refill), y(0) + row_h - 6.0)], WARP[2]))
        .add(number_mark(x(refill) + 14.0, y(0) + row_h + 2.0, 4));
    for (n, r) in [(1, 0), (2, 1), (3, wgmma_row)] {
        doc = doc.add(number_mark(left + 12.0, y(r) + row_h / 2.0, n));
    }
    let axis = y(rows.len()) + 8.0;
    doc = doc
        .add(line(x(0.0), axis, x(span), axis, INK))
        .add(text(x(span), axis + 22.0, "time →").set("font-size", SMALL).set("text-anchor", "end"))
        .add(text(left, axis + 22.0, "red: waiting; schematic lengths").set("font-size", SMALL));
    Ok(numbered_notes(doc, notes_y, notes))
}

/// A stretch of a barrier's strip with its parity bit: light for 0, darker for 1, the bit
/// written at its start where it fits.
fn bit_segment(x0: f64, x1: f64, y: f64, h: f64, bit: usize) -> svg::node::element::Group {
    let tint = if bit == 0 { "#e3ecf6" } else { "#b9cde6" };
    let mut gr =
        svg::node::element::Group::new().add(rect(x0, y, (x1 - x0).max(0.0), h - 7.0, tint).set("stroke", "white"));
    if x1 - x0 > 18.0 {
        gr = gr.add(text(x0 + 6.0, y + h * 0.55, format!("{bit}")).set("font-size", SMALL));
    }
    gr.add(line(x1, y - 3.0, x1, y + h + 1.0, INK).set("stroke-width", 2))
}

#[cfg(test)]
mod tests {
    use super::schedule;

    #[test]
    fn a_buffer_is_refilled_only_after_its_products() {
        for stages in [2, 3, 4] {
            let t = schedule(stages, 12, 1.6);
            for i in stages..12 {
                // Tile i reuses the buffer of tile i - stages: not before its products ended.
                assert!(t[i].0 >= t[i - stages].3 - 1e-9, "stages {stages}: tile {i}");
            }
            for i in 1..12 {
                assert!(t[i].2 >= t[i].1 && t[i].2 >= t[i - 1].3, "tile {i} starts after it lands and after {}", i - 1);
            }
        }
    }
}
