//! Step 3: the tiles of A and B one block walks along K, and the tile of C they feed.

use super::draw::*;
use super::pipeline::arrow;
use crate::svg::geometry::Geometry;
use svg::Document;

/// A tile on a broken axis, and the gap that stands for the tiles left out.
const CELL: f64 = 28.0;
const GAP: f64 = 20.0;

/// The tiles an axis of `n` shows: the first three, a gap, the last.
fn axis(n: usize) -> Vec<Option<usize>> {
    if n <= 5 { (0..n).map(Some).collect() } else { vec![Some(0), Some(1), Some(2), None, Some(n - 1)] }
}

/// Where slot `i` of `slots` starts, and the length of them all.
fn offset(slots: &[Option<usize>], i: usize) -> f64 {
    slots[..i].iter().map(|s| if s.is_some() { CELL } else { GAP }).sum()
}

/// A matrix of `rows` x `cols` tiles on broken axes at (x, y): faint tiles, `fill(row, col)`
/// where it gives one (a colour and a label), and "⋯" in the gaps.
fn broken_grid(
    mut doc: Document,
    (x, y): (f64, f64),
    rows: usize,
    cols: usize,
    fill: impl Fn(usize, usize) -> Option<(String, String)>,
) -> Document {
    let (rs, cs) = (axis(rows), axis(cols));
    for (i, r) in rs.iter().enumerate() {
        for (j, c) in cs.iter().enumerate() {
            let (cx, cy) = (x + offset(&cs, j), y + offset(&rs, i));
            let (Some(r), Some(c)) = (r, c) else {
                if i == 0 || j == 0 {
                    let (w, h) = (if c.is_some() { CELL } else { GAP }, if r.is_some() { CELL } else { GAP });
                    let dots = text(cx + w / 2.0, cy + h / 2.0 + 5.0, if c.is_none() { "⋯" } else { "⋮" });
                    doc = doc.add(dots.set("font-size", SMALL).set("text-anchor", "middle").set("fill", "#888888"));
                }
                continue;
            };
            let (colour, label) = fill(*r, *c).unwrap_or((FAINT.to_string(), String::new()));
            doc = doc.add(rect(cx, cy, CELL, CELL, &colour).set("stroke", "white").set("stroke-width", 1.5)).add(
                text(cx + CELL / 2.0, cy + CELL * 0.68, label).set("font-size", SMALL).set("text-anchor", "middle"),
            );
        }
    }
    doc
}

/// Step 3: block (2, 1) of the launch, its tile of C, and the K-tiles of A (its row of tiles)
/// and B (its column) it copies into `As` and `Bs` one after the other, on broken axes of the
/// real tile counts; the K-tile being multiplied now is the third, the ones before it are done.
/// As step03-smem/src/kernel.cu:29-30 loads them: `As[ty][tx]` from A's tile (by, t), `Bs[tx][ty]`
/// (transposed) from B's tile (t, bx).
pub(super) fn tile_walk(g: &Geometry) -> Result<Document, String> {
    let [tile] = g.defines(["TILE"])?;
    let (a_dims, b_dims) = (g.shared("As")?, g.shared("Bs")?);
    let (blocks_x, blocks_y) = (g.launch.grid.0 as usize, g.launch.grid.1 as usize);
    let k_tiles = g.shape.k.div_ceil(tile);
    let (bx, by, now) = (2, 1, 2);
    let walk = |t: usize| -> (String, String) {
        let fill = if t < now {
            "#a9c4e2"
        } else if t == now {
            WARP[0]
        } else {
            "#d9e5f2"
        };
        (fill.to_string(), format!("{t}"))
    };
    let side = offset(&axis(k_tiles), axis(k_tiles).len());
    let (left, top) = (34.0, 172.0);
    let (a_at, b_at) = ((left, top + side + 44.0), (left + side + 30.0, top));
    let c_at = (b_at.0, a_at.1);
    let panel = c_at.0 + side + 34.0;
    let (w, h) = (panel + 150.0, a_at.1 + side + 108.0);
    let mut doc = heading(
        document(w as u32, h as u32),
        &[
            &format!("{}: block ({bx}, {by}) walks along K", g.step.name),
            &format!("{blocks_x} x {blocks_y} blocks of {tile} x {tile} threads, one per"),
            &format!("tile of C; {k_tiles} K-tiles of {tile} at K = {}", g.shape.k),
            &format!("dark: K-tile {now}, multiplied now; then lighter:"),
            "done before it, palest: still to come",
        ],
    );
    // B above C, A left of C, as in C = A B; the block's row of A and column of B are its walk.
    doc = broken_grid(doc, b_at, k_tiles, blocks_x, |r, c| (c == bx).then(|| walk(r)));
    doc = broken_grid(doc, a_at, blocks_y, k_tiles, |r, c| (r == by).then(|| walk(c)));
    doc = broken_grid(doc, c_at, blocks_y, blocks_x, |r, c| {
        (r == by && c == bx).then(|| (WARP[1].to_string(), "C".into()))
    });
    let cell = |(x, y): (f64, f64), rows: usize, cols: usize, r: usize, c: usize| {
        let (rs, cs) = (axis(rows), axis(cols));
        let i = rs.iter().position(|s| *s == Some(r)).unwrap_or(0);
        let j = cs.iter().position(|s| *s == Some(c)).unwrap_or(0);
        (x + offset(&cs, j), y + offset(&rs, i))
    };
    let (b_now, a_now) = (cell(b_at, k_tiles, blocks_x, now, bx), cell(a_at, blocks_y, k_tiles, by, now));
    for (x, y) in [b_now, a_now] {
        doc = doc.add(rect(x, y, CELL, CELL, "none").set("stroke", INK).set("stroke-width", 3));
    }
    // The walk's direction, and the matrices' names and sizes.
    let (m, n, k) = (g.shape.m, g.shape.n, g.shape.k);
    doc = doc
        .add(arrow(&[(a_at.0, a_at.1 - 10.0), (a_at.0 + side, a_at.1 - 10.0)], INK))
        .add(text(a_at.0, a_at.1 - 20.0, format!("A: {m} x {k}, t →")).set("font-size", SMALL))
        .add(arrow(&[(b_at.0 - 10.0, b_at.1), (b_at.0 - 10.0, b_at.1 + side)], INK))
        .add(text(b_at.0, b_at.1 - 10.0, format!("B: {k} x {n}, t ↓")).set("font-size", SMALL))
        .add(text(c_at.0, c_at.1 + side + 24.0, format!("C: {m} x {n}")).set("font-size", SMALL));
    // Shared memory: the two tiles of K-tile `now`, B's transposed.
    let s = 64.0;
    let (bs_y, as_y) = (top + 30.0, top + 30.0 + s + 74.0);
    let dims = |d: &[usize]| d.iter().map(|v| format!("[{v}]")).collect::<String>();
    let below_a = a_at.1 + side + 40.0;
    doc = doc
        .add(text(panel, top, "shared memory").set("font-weight", "bold"))
        .add(rect(panel, bs_y, s, s, WARP[0]))
        .add(text(panel, bs_y + s + 20.0, format!("Bs{}", dims(&b_dims))).set("font-size", SMALL))
        .add(text(panel, bs_y + s + 40.0, "transposed").set("font-size", SMALL))
        .add(rect(panel, as_y, s, s, WARP[0]))
        .add(text(panel, as_y + s + 20.0, format!("As{}", dims(&a_dims))).set("font-size", SMALL))
        .add(text(panel, as_y + s + 40.0, "As[ty][tx]").set("font-size", SMALL))
        .add(arrow(&[(b_now.0 + CELL + 2.0, b_now.1 + CELL / 2.0), (panel - 4.0, bs_y + s / 2.0)], WARP[0]))
        .add(arrow(
            &[
                (a_now.0 + CELL / 2.0, a_now.1 + CELL + 2.0),
                (a_now.0 + CELL / 2.0, below_a),
                (panel - 17.0, below_a),
                (panel - 17.0, as_y + s / 2.0),
                (panel - 4.0, as_y + s / 2.0),
            ],
            WARP[0],
        ));
    let foot = h - 46.0;
    doc = doc
        .add(text(left, foot, "per K-tile: each thread copies one float of each, a barrier,").set("font-size", SMALL))
        .add(
            text(left, foot + 20.0, format!("{tile} products As[ty][k] * Bs[tx][k] into C's tile, a barrier"))
                .set("font-size", SMALL),
        );
    Ok(doc)
}
