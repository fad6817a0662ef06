//! Step 12: a consumer's epilogue through its staging buffers and the TMA.

use super::draw::*;
use super::pipeline::{number_mark, numbered_notes};
use crate::svg::geometry::Geometry;
use svg::Document;

/// One pair of chunks in time (units of one pair's writes): when the consumer starts writing
/// it, when its fence and barrier end and one thread issues the two stores, when the TMA has
/// read the buffers, and when C is written. As common/include/hopper.cuh's `store_chunks_as`
/// runs it: a pair's writes wait until the last pair's stores have read the buffers
/// (`tma_store_wait<0>`), and the consumer does not wait for any store to reach C.
fn pairs(n: usize) -> Vec<(f64, f64, f64, f64)> {
    let (write, fence, read, global) = (1.0, 0.3, 0.5, 1.2);
    let mut out: Vec<(f64, f64, f64, f64)> = Vec::new();
    for _ in 0..n {
        let start = out.last().map_or(0.0, |&(_, issued, read_done, _)| f64::max(issued, read_done));
        let issued = start + write + fence;
        out.push((start, issued, issued + read, issued + read + global));
    }
    out
}

/// Step 12's epilogue for one consumer: its 64 x BN tile of FP32 accumulators in chunks of 64
/// rows x 128 bytes (`CHUNK_BYTES`), chunk q through staging buffer q % 2, and in time: the
/// consumer writes a pair of chunks, fences them into the TMA's view and issues two stores, the
/// TMA reads the buffers and writes C in the background, and after the last pair the consumer is
/// already back in the next job's K loop while C's last bytes are written. Schematic lengths.
pub(super) fn staging(g: &Geometry) -> Result<Document, String> {
    let [bm, bn] = g.defines(["BM", "BN"])?;
    let chunk_bytes = g.constant("CHUNK_BYTES").ok_or_else(|| format!("{}: no CHUNK_BYTES", g.step.id()))?;
    let out_bytes = g.step.precision.output().bytes();
    let (chunk_rows, chunk_cols) = (64, chunk_bytes / 64 / out_bytes);
    let chunks = bn / chunk_cols;
    let times = pairs(chunks / 2);
    let issued_last = times.last().map_or(0.0, |t| t.1);
    let span = times.last().map_or(1.0, |t| t.3) + 0.3;
    let (w, left, label_w) = (540.0, 16.0, 104.0);
    let unit = (w - left - label_w - 14.0) / span;
    let x = |t: f64| left + label_w + unit * t;
    let buffer = |q: usize| WARP[[0, 1][q % 2]];
    // The tile as chunks, then the rows of the timeline, then the notes.
    let (tile_y, tile_h) = (124.0, 44.0);
    let (top, row_h) = (tile_y + tile_h + 74.0, 40.0);
    let rows = ["consumer", "buffer 0", "buffer 1", "TMA store", "tensor pipe"];
    let notes_y = top + row_h * rows.len() as f64 + 62.0;
    let notes = vec![
        (
            1,
            vec![
                "the 128 threads write chunks 2p, 2p + 1 into buffers".into(),
                "0 and 1, in the TMA's 128-byte swizzle".into(),
            ],
        ),
        (2, vec!["a proxy fence and the consumer's named barrier;".into(), "one thread issues both TMA stores".into()]),
        (3, vec!["the TMA reads the buffers, then writes C while".into(), "the consumer goes on".into()]),
        (4, vec!["the next pair waits until the last stores have".into(), "read the buffers (wait_group.read)".into()]),
        (5, vec!["after the last pair: the next job's wgmma, the".into(), "TMA still writing C".into()]),
    ];
    let h = notes_y + 22.0 * notes.iter().map(|n| n.1.len()).sum::<usize>() as f64 + 16.0;
    let mut doc = heading(
        document(w as u32, h as u32),
        &[
            &format!("{}: a consumer's epilogue ({}, {}-bit C)", g.step.name, g.step.precision, 8 * out_bytes),
            &format!("its 64 x {bn} of C in {chunks} chunks of {chunk_rows} rows x {chunk_cols};"),
            &format!("chunk q through staging buffer q % 2 ({} KiB each);", chunk_bytes / 1024),
            &format!("the block's {} consumers do the same at once", bm / 64),
        ],
    );
    let cw = (w - 2.0 * left) / chunks as f64;
    for q in 0..chunks {
        doc = doc
            .add(
                rect(left + q as f64 * cw, tile_y, cw, tile_h, buffer(q)).set("stroke", "white").set("stroke-width", 2),
            )
            .add(
                text(left + (q as f64 + 0.5) * cw, tile_y + tile_h * 0.62, format!("{q}"))
                    .set("font-size", SMALL)
                    .set("fill", "white")
                    .set("text-anchor", "middle"),
            );
    }
    doc = doc.add(
        text(
            left,
            tile_y + tile_h + 24.0,
            format!("columns {chunk_cols}q to {chunk_cols}q + {}: chunk q", chunk_cols - 1),
        )
        .set("font-size", SMALL),
    );
    for (r, name) in rows.iter().enumerate() {
        let y = top + row_h * r as f64;
        doc = doc.add(text(left, y + row_h * 0.62, *name).set("font-size", SMALL)).add(rect(
            x(0.0),
            y + 4.0,
            unit * span,
            row_h - 8.0,
            "#f6f6f6",
        ));
    }
    let bar = |doc: Document, row: usize, from: f64, to: f64, fill: &str, label: String, fg: &str| {
        let y = top + row_h * row as f64 + 6.0;
        doc.add(rect(x(from) + 1.0, y, (x(to) - x(from) - 2.0).max(1.0), row_h - 12.0, fill).set("rx", 4)).add(
            text((x(from) + x(to)) / 2.0, y + row_h * 0.5, label)
                .set("font-size", SMALL)
                .set("fill", fg)
                .set("text-anchor", "middle"),
        )
    };
    for (p, &(start, issued, read, written)) in times.iter().enumerate() {
        let (a, b) = (2 * p, 2 * p + 1);
        let write_end = issued - 0.3;
        if p > 0 && start > times[p - 1].1 + 1e-9 {
            doc = bar(doc, 0, times[p - 1].1, start, "#f4b6b6", String::new(), INK);
        }
        doc = bar(doc, 0, start, write_end, "#9aa9bb", format!("{a}, {b}"), "white");
        doc = bar(doc, 0, write_end, issued, INK, String::new(), "white");
        for (row, q) in [(1, a), (2, b)] {
            doc = bar(doc, row, start, read, buffer(q), format!("{q}"), "white");
        }
        doc = bar(doc, 3, issued, written, &lane_tint(10 + 8 * p), format!("C {a}, {b}"), INK);
    }
    doc = bar(doc, 4, issued_last, span, WARP[4], "next job".into(), "white");
    // The marks on the first pair's moves; the wait on the third pair's, away from the first fence.
    let waited = times[2.min(times.len() - 1)].0;
    doc = doc
        .add(number_mark(x(0.5), top - 10.0, 1))
        .add(number_mark(x(times[0].1 - 0.15), top - 10.0, 2))
        .add(number_mark(x(times[0].1) - 14.0, top + row_h * 3.5, 3))
        .add(number_mark(x(waited) - 12.0, top - 10.0, 4))
        .add(number_mark(x(issued_last) - 14.0, top + row_h * 4.5, 5));
    let axis = top + row_h * rows.len() as f64 + 12.0;
    doc = doc
        .add(line(x(0.0), axis, x(span), axis, INK))
        .add(text(x(span), axis + 20.0, "time →").set("font-size", SMALL).set("text-anchor", "end"))
        .add(text(left, axis + 20.0, "black: fence; red: waits; schematic").set("font-size", SMALL));
    Ok(numbered_notes(doc, notes_y, notes))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_pair_waits_for_the_last_reads_only() {
        let t = super::pairs(4);
        for p in 1..4 {
            assert!(t[p].0 >= t[p - 1].2, "pair {p} writes after the last pair's buffers were read");
            assert!(t[p].0 < t[p - 1].3, "and before its C is written: the stores overlap");
        }
    }
}
