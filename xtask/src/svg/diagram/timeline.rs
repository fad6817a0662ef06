//! Steps 5, 6, 7 on: the K loop in time.

use super::draw::*;
use super::pipeline::uses_mbarriers;
use crate::svg::geometry::Geometry;
use svg::Document;

/// The K loop as a timeline, for any step with shared tiles: buffers are the leading
/// dimension of `As` (step 6: `As[2][BK][BM + 4]`) or the STAGES define (step 7 on);
/// a load of K-tile t is issued `buffers - 1` iterations ahead of its math, and one barrier per
/// tile frees a buffer. Schematic: the lengths are not measured times. A kernel synchronised by
/// mbarriers (step 9) works otherwise and gets [`pipeline`] instead.
pub(super) fn timeline(g: &Geometry) -> Result<Option<Document>, String> {
    let Some(bk) = g.define("BK") else { return Ok(None) };
    if uses_mbarriers(g) {
        return Ok(None);
    }
    let (buffers, async_copy) = match g.define("STAGES") {
        Some(s) => (s, true),
        None => match g.shared("As")?.as_slice() {
            [b, _, _] => (*b, false),
            _ => (1, false),
        },
    };
    let tiles = g.shape.k.div_ceil(bk);
    let ahead = buffers - 1;
    // Time in units of one K-tile's math; step 5 (one buffer) loads, then computes.
    let (shown, unit, label_w): (usize, f64, f64) = (if ahead == 0 { 3 } else { 6 }, 62.0, 80.0);
    let units = if ahead == 0 { 2 * shown } else { shown + 1 };
    let (left, top, row_h) = (12.0 + label_w, 142.0, 38.0);
    let (w, h) = ((left + unit * units as f64 + 16.0) as u32, (top + row_h * buffers as f64 + 96.0) as u32);
    let what = if async_copy {
        "cp.async into a ring of stages"
    } else if ahead == 0 {
        "load, then math"
    } else {
        "one barrier per tile"
    };
    let mut doc = heading(
        document(w, h),
        &[
            &format!(
                "{}: {buffers} {}",
                g.step.id(),
                if async_copy {
                    "stages"
                } else if buffers == 1 {
                    "buffer"
                } else {
                    "buffers"
                }
            ),
            &format!("{tiles} K-tiles of {bk} at K = {}", g.shape.k),
            what,
            &if ahead == 0 {
                "two barriers per tile; no overlap".to_string()
            } else {
                format!("tile t+{ahead} loads while t computes")
            },
        ],
    );
    let x = |u: f64| left + unit * u;
    let mut bars = Vec::new(); // (row, from, to, is_math, tile)
    let mut barriers = Vec::new();
    for t in 0..shown {
        if ahead == 0 {
            bars.push((0, 2 * t, 2 * t + 1, false, t));
            bars.push((0, 2 * t + 1, 2 * t + 2, true, t));
            barriers.extend([2 * t + 1, 2 * t + 2]);
        } else {
            let issued = t.saturating_sub(ahead) + usize::from(t >= ahead);
            bars.push((t % buffers, issued, t + 1, false, t));
            bars.push((t % buffers, t + 1, t + 2, true, t));
            barriers.push(t + 1);
        }
    }
    for r in 0..buffers {
        let y = top + row_h * r as f64;
        let name = if async_copy { "stage" } else { "buffer" };
        doc = doc.add(text(12.0, y + row_h * 0.65, format!("{name} {r}")).set("font-size", SMALL));
        doc = doc.add(rect(left, y + 2.0, unit * units as f64, row_h - 4.0, "#f6f6f6"));
    }
    // Bars, then the barriers over them, then the labels over both (with a halo of their bar's
    // colour where a barrier crosses them).
    let mut labels = Vec::new();
    for (row, from, to, math, t) in bars {
        let y = top + row_h * row as f64 + 4.0;
        let (fill, fg, label) =
            if math { (WARP[0], "white", format!("math {t}")) } else { ("#c9daf0", INK, format!("load {t}")) };
        doc = doc.add(rect(x(from as f64) + 2.0, y, unit * (to - from) as f64 - 4.0, row_h - 8.0, fill).set("rx", 4));
        labels.push(
            text(x((from + to) as f64 / 2.0), y + row_h * 0.5, label)
                .set("fill", fg)
                .set("stroke", fill)
                .set("stroke-width", 5)
                .set("paint-order", "stroke")
                .set("font-size", SMALL)
                .set("text-anchor", "middle"),
        );
    }
    let bottom = top + row_h * buffers as f64;
    for b in barriers {
        doc = doc.add(line(x(b as f64), top - 6.0, x(b as f64), bottom + 6.0, WARP[2]).set("stroke-width", 2.5));
    }
    for l in labels {
        doc = doc.add(l);
    }
    if ahead > 0 {
        doc = doc.add(text(x(0.5), top - 10.0, "prologue").set("font-size", SMALL).set("text-anchor", "middle"));
    }
    doc = doc
        .add(line(left, bottom + 22.0, x(units as f64), bottom + 22.0, INK))
        .add(text(x(units as f64), bottom + 42.0, "time →").set("font-size", SMALL).set("text-anchor", "end"))
        .add(rect(left, bottom + 54.0, 4.0, 18.0, WARP[2]))
        .add(text(left + 10.0, bottom + 68.0, "barrier (__syncthreads)").set("font-size", SMALL))
        .add(text(12.0, bottom + 90.0, "schematic: lengths are not measured").set("font-size", SMALL));
    Ok(Some(doc))
}
