//! Step 15: tiles as many as the SMs. For a few decode shapes and a small cube, how many tiles of
//! C^T there are with 64, 128 and 192 rows of N, against half of the SMs and one and two waves,
//! and which the rule takes (its `plan`, and `slices` where the tiles are still few).

use super::draw::*;
use crate::results::Results;
use common::{Precision, Shape};
use step15_skinny::{Plan, plan, slices, swapped_tiles};
use svg::Document;

/// The shapes drawn: where 64, 128 and 192 rows each win.
const SHAPES: [(usize, usize, usize); 5] =
    [(16, 4096, 4096), (128, 4096, 4096), (16, 11008, 4096), (256, 11008, 4096), (1024, 1024, 1024)];

pub(super) fn waves(book: &Results) -> Result<Document, String> {
    let sms = book.sweep.gpu.sms as usize;
    let (left, right, top, bar, gap) = (108.0, 526.0, 160.0, 16.0, 4.0);
    // The widest count drawn, and two waves, fit the axis.
    let mut widest = 2 * sms;
    for &(m, n, k) in &SHAPES {
        let Plan::Swapped { bn, .. } = plan(&Shape::new(m, n, k)) else {
            return Err(format!("{m}x{n}x{k} is not swapped"));
        };
        widest = widest.max(swapped_tiles(&Shape::new(m, n, k), 64, bn));
    }
    let x = |tiles: usize| left + (right - left) * tiles as f64 / widest as f64;
    let group = 24.0 + 3.0 * (bar + gap) + 14.0;
    let bottom = top + group * SHAPES.len() as f64;
    let mut doc = heading(
        document(540, (bottom + 92.0) as u32),
        &[
            &format!("step15-skinny: tiles of C^T on {sms} SMs"),
            "bars: the tiles with 64, 128 or 192 rows of N (one,",
            "two or three consumers); blue: the rule's choice",
        ],
    );
    let marks = [(sms / 2, "half"), (sms, "one wave"), (2 * sms, "two waves")];
    for (tiles, label) in marks {
        doc = doc.add(text(x(tiles), top - 10.0, label).set("font-size", SMALL).set("text-anchor", "middle"));
    }
    for (i, &(m, n, k)) in SHAPES.iter().enumerate() {
        let shape = Shape::new(m, n, k);
        let Plan::Swapped { bm: picked, bn, .. } = plan(&shape) else { unreachable!("checked above") };
        let y0 = top + group * i as f64;
        let cut = slices(&shape, Precision::F16C16, sms);
        let how = if cut > 1 { format!(", {cut} slices a tile") } else { String::new() };
        let head = format!("{m} x {n} x {k}: {picked} rows{how}");
        doc = doc.add(text(14.0, y0 + 14.0, head).set("font-size", SMALL).set("font-weight", "bold"));
        // Half of the SMs, one wave and two, beside this shape's bars.
        for (tiles, _) in marks {
            let (y1, y2) = (y0 + 20.0, y0 + 24.0 + 3.0 * (bar + gap));
            doc = doc.add(line(x(tiles), y1, x(tiles), y2, INK).set("stroke-dasharray", "4 3"));
        }
        for (j, bm) in [64, 128, 192].into_iter().enumerate() {
            let tiles = swapped_tiles(&shape, bm, bn);
            let y = y0 + 24.0 + j as f64 * (bar + gap);
            let fill = if bm == picked { WARP[0] } else { "#c9d6e6" };
            doc = doc.add(text(14.0, y + bar - 3.0, format!("{bm} rows")).set("font-size", SMALL)).add(rect(
                left,
                y,
                x(tiles) - left,
                bar,
                fill,
            ));
            // The count after the bar, or inside its end where the axis has no room.
            let count = text(0.0, y + bar - 3.0, tiles.to_string()).set("font-size", SMALL);
            doc = doc.add(if x(tiles) + 40.0 < 540.0 {
                count.set("x", x(tiles) + 4.0)
            } else {
                count.set("x", x(tiles) - 4.0).set("text-anchor", "end").set("fill", "white")
            });
        }
    }
    let notes = [
        "Where 128-row tiles fill at most half of the SMs, 64",
        "rows give twice the tiles (and slices, if still few);",
        "where they spill into a second wave and 192 rows fit",
        "in one, 192; else 128. Measured: notes/step15.md.",
    ];
    for (i, s) in notes.iter().enumerate() {
        doc = doc.add(text(14.0, bottom + 14.0 + 20.0 * i as f64, *s).set("font-size", SMALL));
    }
    Ok(doc)
}
