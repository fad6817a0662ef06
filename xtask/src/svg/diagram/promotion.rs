//! Step 14: the tensor cores' narrow sum of each K-tile, promoted into FP32 while the next
//! K-tile's products run, and the two consumers of a block taking turns on the tensor pipe.

use super::draw::*;
use crate::svg::geometry::Geometry;
use svg::Document;

/// The K of one FP8 `wgmma`: the `mma_k` of the kernel's FP8 traits.
fn mma_k(g: &Geometry) -> Result<usize, String> {
    let code = &g.step.kernel.code;
    let at = code.split_once("mma_k = ").ok_or_else(|| format!("{}: no mma_k in the kernel", g.step.id()))?.1;
    at.chars().take_while(char::is_ascii_digit).collect::<String>().parse().map_err(|e| format!("mma_k: {e}"))
}

/// One consumer's K-tile (BK of K: BK / mma_k `wgmma` of 64 x BN into fresh registers t0 or t1,
/// which the tensor cores sum in about 14 bits), then `promote`: d += t * scale in FP32. Below, in
/// cycles at the FP8 peak: a consumer's products of one K-tile take 64 x BN x BK x 2 FLOPs at
/// `per_clock` FLOPs a cycle per SM (the book GPU's datasheet), its promotion one FMA per accumulator register a thread (BN / 2),
/// one warp instruction a cycle on each of the four schedulers: each consumer promotes a K-tile
/// while the other's products and its own next K-tile's (in the other set) run.
pub(super) fn promotion(g: &Geometry, per_clock: usize) -> Result<Document, String> {
    let [bk, bn] = g.defines(["BK", "BN"])?;
    let k = mma_k(g)?;
    let wgmmas = bk / k;
    let (left, label_w, w) = (14.0, 112.0, 540.0);
    let mut doc = heading(
        document(540, 560),
        &[
            &format!("{}: each K-tile's sum promoted into FP32", g.step.name),
            &format!("a K-tile is {bk} of K: {wgmmas} wgmma m64n{bn}k{k} into fresh"),
            "registers t (t0 and t1 in turns), summed by the tensor",
            "cores in about 14 bits; then d += t * scale in FP32",
        ],
    );
    // One K-tile: the wgmma into t, and the promotion into d.
    let (y, bw, bh) = (134.0, 70.0, 44.0);
    for i in 0..wgmmas {
        let x0 = left + i as f64 * (bw + 6.0);
        doc = doc.add(rect(x0, y, bw, bh, WARP[0])).add(
            text(x0 + bw / 2.0, y + 28.0, format!("k {}-{}", i * k, (i + 1) * k - 1))
                .set("font-size", SMALL)
                .set("text-anchor", "middle")
                .set("fill", "white"),
        );
    }
    let t_x = left + wgmmas as f64 * (bw + 6.0) + 14.0;
    doc = doc
        .add(text(t_x, y + 18.0, "→ t (narrow)").set("font-size", SMALL))
        .add(text(t_x, y + 40.0, "→ d += t * scale").set("font-size", SMALL))
        .add(
            text(left, y + bh + 26.0, "scale: sa (A's row, 128 of K) x sb (B's 128 x 128 block),")
                .set("font-size", SMALL),
        )
        .add(text(left, y + bh + 46.0, "or 1 with per-tensor scales (they go into alpha)").set("font-size", SMALL));
    // The timeline: two consumers, and the tensor pipe they share.
    let (wgmma_cycles, promote_cycles) = (64 * bn * bk * 2 / per_clock, bn / 2);
    let tiles = 4;
    let span = (tiles * wgmma_cycles + promote_cycles) as f64;
    let unit = (w - left - label_w - 10.0) / span;
    let x = |c: usize| left + label_w + unit * c as f64;
    let top = y + bh + 96.0;
    let row_h = 46.0;
    doc = doc.add(text(left, top - 16.0, "in time, at the FP8 peak (cycles)").set("font-weight", "bold"));
    let rows = ["consumer 1", "consumer 2", "tensor pipe"];
    for (r, name) in rows.iter().enumerate() {
        doc = doc.add(text(left, top + r as f64 * row_h + 26.0, *name).set("font-size", SMALL));
    }
    for t in 0..tiles {
        let (c, start) = (t % 2, t * wgmma_cycles);
        let (ry, pipe_y) = (top + c as f64 * row_h, top + 2.0 * row_h);
        let width = unit * wgmma_cycles as f64 - 2.0;
        doc = doc
            .add(rect(x(start), ry + 6.0, width, row_h - 12.0, WARP[c]))
            .add(
                text(x(start) + width / 2.0, ry + 28.0, format!("{wgmmas} wgmma → t{}", t / 2 % 2))
                    .set("font-size", SMALL)
                    .set("text-anchor", "middle")
                    .set("fill", "white"),
            )
            .add(rect(x(start), pipe_y + 6.0, width, row_h - 12.0, WARP[c]))
            .add(rect(x(start + wgmma_cycles), ry + 6.0, unit * promote_cycles as f64, row_h - 12.0, WARP[4]));
    }
    let axis_y = top + 3.0 * row_h + 20.0;
    for c in (0..=tiles).map(|t| t * wgmma_cycles) {
        doc = doc
            .add(line(x(c), top, x(c), axis_y - 14.0, "#bbbbbb").set("stroke-dasharray", "3 3"))
            .add(text(x(c), axis_y, c.to_string()).set("font-size", SMALL).set("text-anchor", "middle"));
    }
    let notes_y = axis_y + 38.0;
    let notes = [
        format!("a consumer's K-tile: 64 x {bn} x {bk} x 2 FLOPs at {per_clock}"),
        format!("a cycle: {wgmma_cycles} cycles; green, its promotion: {promote_cycles} FMAs a"),
        "thread, while the other consumer's products run, and its".to_string(),
        "own next K-tile's, started before it into the other set".to_string(),
    ];
    for (i, n) in notes.iter().enumerate() {
        doc = doc.add(text(left, notes_y + 22.0 * i as f64, n.as_str()).set("font-size", SMALL));
    }
    Ok(doc)
}

/// Where a consumer promotes, three ways, on one time axis in cycles at the FP8 peak: two sets of
/// fresh registers with the consumers free (per-tensor scales, `g`), one set with the consumers in
/// turns at the same width (cuBLASLt's loop), and one set in turns with the tiles the registers of
/// the second set allow (`wide`: the block scales' launch at large shapes). In turns a consumer's
/// promotion and the start of its next K-tile must fit in the other consumer's K-tile.
pub(super) fn turns(g: &Geometry, wide: &Geometry, per_clock: usize) -> Result<Document, String> {
    let [bk, bn] = g.defines(["BK", "BN"])?;
    let [wide_bn] = wide.defines(["BN"])?;
    let cycles = |bn: usize| (64 * bn * bk * 2 / per_clock, bn / 2);
    let ((wgmma_cycles, promote_cycles), (wide_cycles, wide_promote)) = (cycles(bn), cycles(wide_bn));
    let (left, label_w, w) = (14.0, 112.0, 540.0);
    let mut doc = heading(
        document(540, 930),
        &[
            &format!("{}: where a consumer promotes", g.step.name),
            "blue, orange: a consumer's K-tile of products;",
            &format!("green: its promotion, an FMA a register ({promote_cycles} or {wide_promote})"),
        ],
    );
    let tiles = 4;
    let unit = (w - left - label_w - 10.0) / (tiles * wide_cycles.max(wgmma_cycles) + wide_promote) as f64;
    let x = |c: usize| left + label_w + unit * c as f64;
    let row_h = 40.0;
    // One panel: rows for the two consumers and the pipe, K-tiles of `kt` cycles and promotions of
    // `pc`; with `two_sets` a dashed line marks each promotion that runs with its consumer's next
    // products in flight, without it a bar marks the window the hand-off must fit in.
    let panel = |mut doc: Document, top: f64, title: &str, (kt, pc): (usize, usize), two_sets: bool| {
        doc = doc.add(text(left, top - 34.0, title).set("font-weight", "bold"));
        for (r, name) in ["consumer 1", "consumer 2", "tensor pipe"].iter().enumerate() {
            doc = doc.add(text(left, top + r as f64 * row_h + 24.0, *name).set("font-size", SMALL));
        }
        for t in 0..tiles {
            let (c, start) = (t % 2, t * kt);
            let ry = top + c as f64 * row_h;
            let width = unit * kt as f64 - 2.0;
            let set = if two_sets { format!(" → t{}", t / 2 % 2) } else { " → t".to_string() };
            // A K-tile's label, shortened where the block is narrow.
            let name = if width > 90.0 { "K-tile " } else { "K " };
            doc = doc
                .add(rect(x(start), ry + 5.0, width, row_h - 10.0, WARP[c]))
                .add(
                    text(x(start) + width / 2.0, ry + 25.0, format!("{name}{}{set}", t / 2))
                        .set("font-size", SMALL)
                        .set("text-anchor", "middle")
                        .set("fill", "white"),
                )
                .add(rect(x(start), top + 2.0 * row_h + 5.0, width, row_h - 10.0, WARP[c]))
                .add(rect(x(start + kt), ry + 5.0, unit * pc as f64, row_h - 10.0, WARP[4]));
            if two_sets && t + 2 < tiles {
                // The consumer's next K-tile, started before this promotion, waits in the pipe.
                let y = ry + row_h - 4.0;
                doc = doc.add(line(x(start + kt), y, x(start + 3 * kt), y, WARP[c]).set("stroke-dasharray", "4 3"));
            }
        }
        if !two_sets {
            // Consumer 1's promotion and hand-off must end before consumer 2's products do.
            let (a, b, y) = (x(kt), x(2 * kt), top);
            doc = doc
                .add(line(a, y, b, y, INK))
                .add(line(a, y - 4.0, a, y + 4.0, INK))
                .add(line(b, y - 4.0, b, y + 4.0, INK))
                .add(
                    text((a + b) / 2.0, y - 8.0, format!("promote + hand-off: {kt} cycles"))
                        .set("font-size", SMALL)
                        .set("text-anchor", "middle"),
                );
        }
        doc
    };
    let narrow = (wgmma_cycles, promote_cycles);
    doc = panel(doc, 150.0, &format!("two sets, the consumers free, {bn} wide (per tensor)"), narrow, true);
    doc = panel(doc, 360.0, &format!("one set, in turns, {bn} wide (cuBLASLt's loop)"), narrow, false);
    let wide_title = format!("one set, in turns, {wide_bn} wide (block scales)");
    doc = panel(doc, 570.0, &wide_title, (wide_cycles, wide_promote), false);
    let axis_y = 570.0 + 3.0 * row_h + 20.0;
    for c in (0..=tiles * wide_cycles).step_by(wgmma_cycles) {
        doc = doc.add(text(x(c), axis_y, c.to_string()).set("font-size", SMALL).set("text-anchor", "middle"));
    }
    let notes = [
        "dashed: a consumer's next K-tile, started before its",
        "promotion, in flight while it promotes. Two sets: the",
        "promotion always runs beside its own next products.",
        "One set: only beside the other consumer's, and the",
        "promotion and the start of the next K-tile must fit",
        "in the other consumer's K-tile, or the pipe waits.",
        "One set also frees the registers of the second: the",
        "tile widens, and so does the window to fit in.",
    ];
    for (i, n) in notes.iter().enumerate() {
        doc = doc.add(text(left, axis_y + 36.0 + 22.0 * i as f64, *n).set("font-size", SMALL));
    }
    Ok(doc)
}
