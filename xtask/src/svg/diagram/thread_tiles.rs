//! Step 5: a thread's tiles and its float4 loads.

use super::draw::*;
use crate::svg::geometry::Geometry;
use svg::Document;

/// Where thread `tid` works, as step05-threadtile-float4/src/kernel.cu writes it:
/// its four TM/2 x TN/2 quadrants of the block tile (lines 42-44) and the corners of its
/// float4 loads of the A tile (BM x BK) and the B tile (BK x BN) (lines 33-35, 52-54).
pub(super) struct ThreadWork {
    pub(super) quadrants: Vec<(usize, usize)>,
    pub(super) a_loads: Vec<(usize, usize)>,
    pub(super) b_loads: Vec<(usize, usize)>,
}

pub(super) fn thread_work(tid: usize, [bm, bn, bk, tm, tn]: [usize; 5]) -> ThreadWork {
    let threads = (bm / tm) * (bn / tn);
    let (t_row, t_col) = (tid / (bn / tn), tid % (bn / tn));
    let rows = [t_row * tm / 2, bm / 2 + t_row * tm / 2];
    let cols = [t_col * tn / 2, bn / 2 + t_col * tn / 2];
    let (a_row, a_col, b_row, b_col) = (tid / (bk / 4), (tid % (bk / 4)) * 4, tid / (bn / 4), (tid % (bn / 4)) * 4);
    let (a_stride, b_stride) = (threads / (bk / 4), threads / (bn / 4));
    ThreadWork {
        quadrants: rows.iter().flat_map(|&r| cols.iter().map(move |&c| (r, c))).collect(),
        a_loads: (0..bm * bk / 4 / threads).map(|i| (a_row + i * a_stride, a_col)).collect(),
        b_loads: (0..bn * bk / 4 / threads).map(|i| (b_row + i * b_stride, b_col)).collect(),
    }
}

/// Step 5: the block tile of C coloured by warp, thread 0's four quadrants, the rows of A and
/// columns of B its outer products use, and warp 0's float4 loads of the A and B tiles.
pub(super) fn thread_tiles(g: &Geometry) -> Result<Document, String> {
    let d @ [bm, bn, bk, tm, tn] = g.defines(["BM", "BN", "BK", "TM", "TN"])?;
    let threads = g.launch.threads_per_block() as usize;
    let s = 400.0 / bn.max(bm) as f64;
    let (ax, cx) = (34.0, 34.0 + bk as f64 * s + 14.0);
    let (by, cy) = (150.0, 150.0 + bk as f64 * s + 14.0);
    let (w, h) = ((cx + bn as f64 * s + 20.0) as u32, (cy + bm as f64 * s + 100.0) as u32);
    let mut doc = heading(
        document(w, h),
        &[
            g.step.name,
            &format!("BM x BN = {bm} x {bn}, BK = {bk}, {threads} threads"),
            &format!("= {} warps (colours); a thread: {tm} x {tn}", threads / 32),
            "of C in 4 quadrants (thread 0 black)",
        ],
    );
    doc = doc
        .add(rect(cx, cy, bn as f64 * s, bm as f64 * s, FAINT))
        .add(rect(ax, cy, bk as f64 * s, bm as f64 * s, FAINT))
        .add(rect(cx, by, bn as f64 * s, bk as f64 * s, FAINT));
    let (qh, qw) = (tm / 2, tn / 2);
    for tid in (0..threads).rev() {
        let fill = if tid == 0 { INK } else { WARP[(tid / 32) % WARP.len()] };
        let opacity = if tid == 0 { 1.0 } else { 0.55 };
        for &(r, c) in &thread_work(tid, d).quadrants {
            let q = rect(cx + c as f64 * s, cy + r as f64 * s, qw as f64 * s, qh as f64 * s, fill);
            doc = doc.add(q.set("fill-opacity", opacity).set("stroke", "white").set("stroke-width", 0.5));
        }
    }
    let t0 = thread_work(0, d);
    // Thread 0's outer products: its TM rows of A and TN columns of B.
    for &(r, c) in &t0.quadrants {
        doc = doc.add(rect(ax - 8.0, cy + r as f64 * s, 5.0, qh as f64 * s, INK)).add(rect(
            cx + c as f64 * s,
            by - 8.0,
            qw as f64 * s,
            5.0,
            INK,
        ));
    }
    // Warp 0's float4 loads, one box per lane and load.
    for lane in 0..32 {
        let t = thread_work(lane, d);
        for &(r, c) in &t.a_loads {
            doc = doc
                .add(rect(ax + c as f64 * s, cy + r as f64 * s, 4.0 * s, s, &lane_colour(lane)).set("stroke", "white"));
        }
        for &(r, c) in &t.b_loads {
            doc = doc
                .add(rect(cx + c as f64 * s, by + r as f64 * s, 4.0 * s, s, &lane_colour(lane)).set("stroke", "white"));
        }
    }
    doc = doc.add(text(cx, by - 14.0, format!("B tile, {bk} x {bn}")).set("font-size", SMALL)).add(
        text(ax - 12.0, cy + bm as f64 * s, format!("A tile, {bm} x {bk}"))
            .set("font-size", SMALL)
            .set("transform", format!("rotate(-90 {} {})", ax - 12.0, cy + bm as f64 * s)),
    );
    let foot = cy + bm as f64 * s + 24.0;
    doc = lane_legend(doc, ax, foot, 160.0).add(
        text(ax + 176.0, foot + 12.0, format!("warp 0's float4 loads, {} of A", t0.a_loads.len()))
            .set("font-size", SMALL),
    );
    doc = doc.add(
        text(ax + 176.0, foot + 32.0, format!("and {} of B per lane; black bars:", t0.b_loads.len()))
            .set("font-size", SMALL),
    );
    doc = doc.add(text(ax + 176.0, foot + 52.0, "thread 0's rows of A, columns of B").set("font-size", SMALL));
    Ok(doc)
}
