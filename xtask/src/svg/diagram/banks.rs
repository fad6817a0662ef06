//! Steps 3 and 4: the B tile over the 32 banks.

use super::draw::*;
use crate::svg::geometry::Geometry;
use svg::Document;

/// Step 3 vs 4: the B tile in shared memory laid out over the 32 banks (word w in bank
/// w % 32), with the 32 words one warp reads at once coloured by lane.
pub(super) fn banks(g: &Geometry) -> Result<Document, String> {
    let dims = g.shared("Bs")?;
    let [tile] = g.defines(["TILE"])?;
    let (rows, ld) = (dims[0], dims[1]);
    // Lane tx reads Bs[tx][k] (step03-smem/src/kernel.cu:34, step04-bankfree/src/kernel.cu:33),
    // here for k = 0; the warp is 32 threads of one ty.
    let k = 0;
    let words: Vec<usize> = warp0(g).iter().map(|&(tx, _)| tx * ld + k).collect();
    let mut per_bank = [0usize; 32];
    for &w in &words {
        per_bank[w % 32] += 1;
    }
    let passes = *per_bank.iter().max().unwrap_or(&1);
    let lines = (rows * ld).div_ceil(32);

    let cell = 14.0;
    let (left, top) = (16.0, 124.0);
    let grid_h = cell * lines as f64;
    let (w, h) = ((left + 32.0 * cell + 24.0) as u32, (top + grid_h + 150.0) as u32);
    let pad = ld - tile;
    let mut doc = heading(
        document(w, h),
        &[
            &format!("{}: __shared__ float Bs[{rows}][{ld}]", g.step.name),
            &if pad == 0 {
                "rows of 32 floats, no padding".to_string()
            } else {
                format!("{pad} float of padding per row (grey)")
            },
            "one warp reads Bs[tx][0], colour = lane",
        ],
    );
    for bank in [0, 8, 16, 24, 31] {
        doc = doc.add(
            text(left + (bank as f64 + 0.5) * cell, top - 8.0, format!("{bank}"))
                .set("font-size", SMALL)
                .set("text-anchor", "middle"),
        );
    }
    doc = doc.add(text(left + 32.0 * cell, top - 30.0, "bank").set("font-size", SMALL).set("text-anchor", "end"));
    for w in 0..rows * ld {
        let (row, col) = (w / ld, w % ld);
        let fill = if col >= tile {
            PAD_FILL
        } else if row % 2 == 0 {
            "#dde6f2"
        } else {
            "#f2f5fa"
        };
        let (x, y) = (left + (w % 32) as f64 * cell, top + (w / 32) as f64 * cell);
        doc = doc.add(rect(x, y, cell, cell, fill).set("stroke", "white").set("stroke-width", 0.5));
    }
    for (lane, &w) in words.iter().enumerate() {
        let (x, y) = (left + (w % 32) as f64 * cell, top + (w / 32) as f64 * cell);
        doc = doc.add(rect(x, y, cell, cell, &lane_colour(lane)));
    }
    // Lanes per bank: the passes the access needs.
    let base = top + grid_h + 56.0;
    for (bank, &c) in per_bank.iter().enumerate().filter(|(_, c)| **c > 0) {
        let bh = 40.0 * c as f64 / 32.0;
        doc = doc.add(rect(left + bank as f64 * cell + 1.0, base - bh, cell - 2.0, bh.max(3.0), INK));
    }
    doc = doc
        .add(line(left, base, left + 32.0 * cell, base, INK))
        .add(text(left, base + 26.0, "lanes per bank (bar = 32 lanes)").set("font-size", SMALL))
        .add(
            text(
                left,
                base + 52.0,
                if passes == 1 {
                    "32 lanes in 32 banks: one pass".to_string()
                } else {
                    format!("{passes} lanes in one bank: {passes} passes")
                },
            )
            .set("font-weight", "bold"),
        );
    Ok(doc)
}
