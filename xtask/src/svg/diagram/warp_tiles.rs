//! Step 7 on: warp and fragment tiles.

use super::draw::*;
use crate::svg::geometry::Geometry;
use common::{Precision, Step};
use svg::Document;

/// The shape of one tensor-core product (M x N of C, K deep): WMMA's fragments as
/// step07-wmma/src/kernel.cu declares them (`FM, FN, FK`), the `mma.sync` tiles of step 8 on
/// (step08-mma-ldmatrix/src/kernel.cu: `MMA_M, MMA_N, MMA_K`).
pub(super) fn fragment(step: &Step) -> (usize, usize, usize) {
    let wmma = step.name == "step07-wmma";
    match step.precision {
        Precision::F16 | Precision::Bf16 if wmma => (16, 16, 16),
        Precision::Tf32 | Precision::Tf32x3 if wmma => (16, 16, 8),
        Precision::F64 | Precision::F32 if wmma => (8, 8, 4),
        Precision::Tf32 | Precision::Tf32x3 => (16, 8, 8),
        _ => (16, 8, 16),
    }
}

/// The block tile split into warp tiles (WM x WN) and those into fragments, for any step
/// with warp tiles.
pub(super) fn warp_tiles(g: &Geometry) -> Result<Option<Document>, String> {
    let (Some(wm), Some(wn)) = (g.define("WM"), g.define("WN")) else { return Ok(None) };
    let [bm, bn] = g.defines(["BM", "BN"])?;
    let (fm, fn_, fk) = fragment(g.step);
    let s = 420.0 / bm.max(bn) as f64;
    let (left, top) = (16.0, 100.0);
    let (w, h) = ((left + bn as f64 * s + 24.0).max(440.0) as u32, (top + 22.0 + bm as f64 * s + 24.0) as u32);
    let warps_n = bn / wn;
    let mut doc = heading(
        document(w, h),
        &[
            &format!("{}: block {bm} x {bn}", g.step.id()),
            &format!("warps {wm} x {wn}, each {} x {} fragments", wm / fm, wn / fn_),
            &format!("of {fm} x {fn_} (k {fk})"),
        ],
    );
    for warp in 0..(bm / wm) * warps_n {
        // kernel.cu:166: warpRow = (warp / (BN / WN)) * WM, warpCol = (warp % (BN / WN)) * WN
        let (wr, wc) = ((warp / warps_n) * wm, (warp % warps_n) * wn);
        let (x0, y0) = (left + wc as f64 * s, top + wr as f64 * s);
        doc = doc.add(rect(x0, y0, wn as f64 * s, wm as f64 * s, WARP[warp % WARP.len()]).set("fill-opacity", 0.45));
        for i in 0..wm / fm {
            for j in 0..wn / fn_ {
                let f =
                    rect(x0 + (j * fn_) as f64 * s, y0 + (i * fm) as f64 * s, fn_ as f64 * s, fm as f64 * s, "none");
                doc = doc.add(f.set("stroke", "white").set("stroke-width", 1.5));
            }
        }
        doc = doc
            .add(rect(x0, y0, wn as f64 * s, wm as f64 * s, "none").set("stroke", INK).set("stroke-width", 3))
            .add(text(x0 + 8.0, y0 + 24.0, format!("warp {warp}")).set("font-weight", "bold"));
    }
    Ok(Some(doc))
}
