//! Steps 1 and 2: the addresses one warp touches.

use super::draw::*;
use crate::svg::geometry::Geometry;
use common::Step;
use svg::Document;

/// Which element of C (row, col) thread (tx, ty) of block (0, 0) computes, as the kernels
/// write it: step01-naive/src/kernel.cu:10-11 (tx walks down a column of C) and
/// step02-coalesce/src/kernel.cu:11-12 (tx walks along a row).
pub(super) fn c_element(step: &Step, (tx, ty): (usize, usize)) -> (usize, usize) {
    if step.name == "step01-naive" { (tx, ty) } else { (ty, tx) }
}

/// Step 1 vs 2: the elements of A, B and C one warp touches in one iteration of the K loop,
/// coloured by lane, and how many 32-byte sectors each access needs.
pub(super) fn warp_access(g: &Geometry) -> Result<Document, String> {
    let (m, n, k) = (g.shape.m, g.shape.n, g.shape.k);
    let lanes: Vec<(usize, usize)> = warp0(g).into_iter().map(|t| c_element(g.step, t)).collect();
    // Iteration i = 0 of `acc += A[cRow * K + i] * B[i * N + cCol]`, then `C[cRow * N + cCol]`.
    let (i, side) = (0, g.block().0.max(g.block().1));
    let a: Vec<(usize, usize)> = lanes.iter().map(|&(r, _)| (r, i)).collect();
    let b: Vec<(usize, usize)> = lanes.iter().map(|&(_, c)| (i, c)).collect();
    let sectors = |addrs: Vec<usize>| {
        let mut s: Vec<usize> = addrs.iter().map(|a| a * 4 / 32).collect();
        s.sort();
        s.dedup();
        let mut distinct = addrs.clone();
        distinct.sort();
        distinct.dedup();
        if distinct.len() == 1 { "1 float for all lanes".to_string() } else { format!("{} sectors of 32 B", s.len()) }
    };
    let sa = sectors(a.iter().map(|&(r, c)| r * k + c).collect());
    let sb = sectors(b.iter().map(|&(r, c)| r * n + c).collect());
    let sc = sectors(lanes.iter().map(|&(r, c)| r * n + c).collect());

    let cell = 6.5;
    let p = cell * side as f64;
    let (left, right_x, top) = (16.0, 16.0 + p + 24.0, 120.0);
    let (w, h) = ((right_x + p + 24.0) as u32, (top + 2.0 * p + 110.0) as u32);
    let mut doc = heading(
        document(w, h),
        &[
            &format!("{}: one warp, one step", g.step.name),
            "of the K loop; colour = lane",
            &format!("block {}x{} threads, {}³", g.block().0, g.block().1, m),
        ],
    );
    // Three windows in the layout of C = A B: B above C, A left of C.
    let panels = [
        ("A", left, top + p + 40.0, &a, &sa, "rows of C x k"),
        ("B", right_x, top, &b, &sb, "k x columns of C"),
        ("C", right_x, top + p + 40.0, &lanes, &sc, "block tile of C"),
    ];
    for (name, x, y, cells, label, what) in panels {
        doc = doc.add(rect(x, y, p, p, FAINT).set("stroke", INK));
        // Later lanes on the same element (a broadcast) draw over earlier ones: mark it.
        for (lane, &(r, c)) in cells.iter().enumerate() {
            doc = doc.add(rect(x + c as f64 * cell, y + r as f64 * cell, cell, cell, &lane_colour(lane)));
        }
        doc = doc
            .add(text(x, y - 24.0, format!("{name}: {label}")).set("font-weight", "bold"))
            .add(text(x, y - 6.0, format!("({what})")).set("font-size", SMALL));
    }
    doc = lane_legend(doc, left, top + 20.0, p);
    doc = doc
        .add(text(left, top + 90.0, "a sector: 32 bytes,").set("font-size", SMALL))
        .add(text(left, top + 110.0, "what a load moves").set("font-size", SMALL));
    Ok(doc)
}
