//! Step 15: the operand swap. At a decode shape step 12's tile of C is mostly rows that do not
//! exist; swapped, the kernel computes C^T = B^T A^T and its tile is full. Drawn for the rule's
//! plan at 16 x 11008 x 4096 (not to scale: the matrices' sides are squeezed alike).

use super::draw::*;
use crate::svg::geometry::Geometry;
use common::{Precision, Shape};
use step15_skinny::{Plan, plan, tiles};
use svg::Document;

pub(super) fn swap(g: &Geometry) -> Result<Document, String> {
    let shape = Shape::new(16, 11008, 4096);
    let Plan::Swapped { bn, .. } = plan(&shape) else { return Err(format!("step 15 does not swap at {shape}")) };
    let step12 = tiles(Precision::F16C16).step12;
    let bk = g.define("BK").unwrap_or(64);
    let mut doc = heading(
        document(540, 600),
        &[
            &format!("{} at {} x {} x {}", g.step.name, shape.m, shape.n, shape.k),
            "A and B swapped: left, step 12's tile of C; right,",
            "this step's tile of C^T (shapes not to scale)",
        ],
    );
    let (top, h_m, w_k, w_n) = (150.0, 26.0, 110.0, 220.0);
    // C = A B: A is M x K (a thin strip), B is K x N, C is M x N.
    let (ax, bx) = (14.0, 14.0 + w_k + 12.0);
    let by = top + h_m + 16.0;
    doc = doc
        .add(text(ax, top - 12.0, "C = A B").set("font-weight", "bold"))
        .add(rect(ax, top, w_k, h_m, WARP[0]))
        .add(text(ax + 4.0, top + 19.0, format!("A {} x K", shape.m)).set("font-size", SMALL).set("fill", "white"))
        .add(rect(bx, by, w_n * 0.5, w_k, FAINT))
        .add(text(bx + 6.0, by + 22.0, "B K x N").set("font-size", SMALL))
        .add(rect(bx, top, w_n * 0.5, h_m, WARP[1]))
        .add(text(bx + 4.0, top + 19.0, "C").set("font-size", SMALL).set("fill", "white"));
    // Step 12's tile: BM rows of which M exist.
    let tile_y = by + w_k + 30.0;
    let (tw, th) = (96.0, 48.0);
    doc = doc
        .add(rect(ax, tile_y, tw, th, PAD_FILL))
        .add(rect(ax, tile_y, tw, th * shape.m as f64 / step12.bm as f64, WARP[1]))
        .add(text(ax + tw + 8.0, tile_y + 16.0, format!("tile {} x {}:", step12.bm, step12.bn)).set("font-size", SMALL))
        .add(
            text(ax + tw + 8.0, tile_y + 36.0, format!("{} rows of {} exist", shape.m, step12.bm))
                .set("font-size", SMALL),
        );
    // C^T = B^T A^T: B^T is N x K (tall), A^T is K x M (thin), C^T is N x M.
    let (rx, ry) = (300.0, top);
    let (h_n, w_kk, w_m) = (250.0, 110.0, 26.0);
    doc = doc
        .add(text(rx, ry - 12.0, "C^T = B^T A^T").set("font-weight", "bold"))
        .add(rect(rx, ry, w_kk, h_n, FAINT))
        .add(text(rx + 6.0, ry + 22.0, "B^T N x K").set("font-size", SMALL))
        .add(rect(rx + w_kk + 12.0, ry, w_m, w_kk, WARP[0]))
        .add(rect(rx + w_kk + 12.0 + w_m + 12.0, ry, w_m, h_n, WARP[1]))
        .add(text(rx + w_kk + 12.0, ry + w_kk + 22.0, "A^T").set("font-size", SMALL))
        .add(text(rx + w_kk + 12.0 + w_m + 12.0 + w_m + 6.0, ry + h_n - 8.0, "C^T").set("font-size", SMALL));
    // One tile of C^T: 128 rows of N (two consumers of 64) by bn of M, all of it real.
    let (t_x, t_y, t_h) = (rx + w_kk + 12.0 + w_m + 12.0, ry + 60.0, 64.0);
    doc = doc
        .add(rect(t_x - 3.0, t_y, w_m + 6.0, t_h, INK))
        .add(rect(t_x, t_y + 3.0, w_m, t_h / 2.0 - 4.0, WARP[2]))
        .add(rect(t_x, t_y + t_h / 2.0 + 1.0, w_m, t_h / 2.0 - 4.0, WARP[3]))
        .add(rect(rx, t_y, w_kk, t_h, "#c9d6e6"));
    let notes_y = tile_y + th + 50.0;
    let notes = [
        format!("right: a tile of C^T is 128 rows of N by {bn} of M, each"),
        format!("consumer's wgmma 64 rows (red, teal) by N = {bn}. It reads"),
        "the band of B^T beside it, MN-major, as the TMA lands B in".to_string(),
        format!("boxes of 64 columns by {bk} of K, and A^T, which is A's rows,"),
        "K-major as they lie. The epilogue writes C^T back into C".to_string(),
        "transposed.".to_string(),
    ];
    for (i, n) in notes.iter().enumerate() {
        doc = doc.add(text(14.0, notes_y + 22.0 * i as f64, n.as_str()).set("font-size", SMALL));
    }
    Ok(doc)
}
