//! The book's diagrams, drawn with the `svg` crate from each step's real geometry
//! ([`Geometry`]: its launch at 4096³ and the shared arrays its kernel declares). Where a
//! diagram needs a kernel's index math (which lane touches which address), that math is
//! mirrored here once, next to the diagram, with the kernel lines it copies.
//!
//! Every registered step gets the diagrams that fit it; a step added later gets the generic
//! ones from its defines alone: the K loop in time (a pipeline of barriers per tile), or the
//! producer and consumers of a pipeline on mbarriers, and warp and fragment tiles.

use crate::svg::geometry::Geometry;
use common::{Precision, Step};
use std::collections::{BTreeMap, BTreeSet};
use svg::Document;
use svg::node::element::{Circle, Group, Line, Polygon, Polyline, Rectangle, Text};

/// Font sizes: the diagrams are at most about 540 units wide, so that scaled down to a 400-pixel
/// phone screen (about 0.7) the small text is still 11 pixels.
const FONT: u32 = 19;
const SMALL: u32 = 16;
const INK: &str = "#222222";
const FAINT: &str = "#e8edf3";
const PAD_FILL: &str = "#b8b8b8";
/// One colour per warp (Tableau 10).
const WARP: [&str; 8] = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f"];

/// Every diagram of every registered step, path relative to `book/src/generated/`. Diagrams of a
/// step's geometry are drawn per registry entry (`<id>-...`); those that the precision does not
/// change, once per step from its first entry (`<name>-...`).
pub fn generate() -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    let mut put = |name: String, doc: Document| out.insert(format!("diagrams/{name}.svg"), format!("{doc}\n"));
    for (i, step) in steps::ALL.iter().enumerate() {
        let g = Geometry::of(step);
        let id = step.id();
        let first = i == 0 || steps::ALL[i - 1].name != step.name;
        match step.name {
            "step01-naive" | "step02-coalesce" => put(format!("{id}-warp"), warp_access(&g)?),
            "step03-smem" | "step04-bankfree" => put(format!("{id}-banks"), banks(&g)?),
            "step05-threadtile-float4" => put(format!("{id}-tiles"), thread_tiles(&g)?),
            "step08-mma-ldmatrix" if first => put(format!("{}-swizzle", step.name), step08_swizzle(step)),
            _ => None,
        };
        if let Some(d) = timeline(&g)? {
            put(format!("{id}-timeline"), d);
        }
        if let Some(d) = warp_tiles(&g)? {
            put(format!("{id}-tiles"), d);
        }
        if let (true, Some(d)) = (first, pipeline(&g)?) {
            put(format!("{}-pipeline", step.name), d);
        }
    }
    // The building blocks of step 8 on, drawn from their definitions (PTX ISA), not from a step.
    put("mma-m16n8-accumulator".into(), accumulator_lanes());
    let ldmatrix = SwizzlePanel {
        kind: "ldmatrix".into(),
        xor: Xor::RowMod8,
        reads: (0..8).map(|r| (r, 0)).collect(),
        users: String::new(),
    };
    put(
        "swizzle-128b".into(),
        swizzle(
            &[
                "8 rows of 128 B in 16-byte chunks",
                "chunk c of row r stored at c ^ x(r);",
                "columns: chunk positions, 4 banks each",
            ],
            &[ldmatrix],
        ),
    );
    Ok(out)
}

// ---------------------------------------------------------------- drawing helpers

fn document(w: u32, h: u32) -> Document {
    Document::new()
        .set("viewBox", format!("0 0 {w} {h}"))
        .set("width", w)
        .set("height", h)
        .set("font-family", "sans-serif")
        .set("font-size", FONT)
        .add(Rectangle::new().set("width", w).set("height", h).set("fill", "white"))
}

fn rect(x: f64, y: f64, w: f64, h: f64, fill: &str) -> Rectangle {
    Rectangle::new().set("x", x).set("y", y).set("width", w).set("height", h).set("fill", fill)
}

fn text(x: f64, y: f64, s: impl Into<String>) -> Text {
    Text::new(s).set("x", x).set("y", y)
}

fn line(x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str) -> Line {
    Line::new().set("x1", x1).set("y1", y1).set("x2", x2).set("y2", y2).set("stroke", stroke)
}

/// Lane 0 blue through lane 31 orange.
fn lane_colour(lane: usize) -> String {
    format!("hsl({}, 75%, 45%)", 215 - lane * 185 / 31)
}

/// The same, light enough for dark text on it.
fn lane_tint(lane: usize) -> String {
    format!("hsl({}, 75%, 78%)", 215 - lane * 185 / 31)
}

/// Title and subtitle lines at the top.
fn heading(mut doc: Document, lines: &[&str]) -> Document {
    for (i, l) in lines.iter().enumerate() {
        let t = text(12.0, 26.0 + 22.0 * i as f64, *l);
        doc = doc.add(if i == 0 { t.set("font-weight", "bold") } else { t });
    }
    doc
}

/// A lane-colour legend: a gradient of 32 swatches from "lane 0" to "lane 31".
fn lane_legend(mut doc: Document, x: f64, y: f64, w: f64) -> Document {
    let sw = w / 32.0;
    for lane in 0..32 {
        doc = doc.add(rect(x + sw * lane as f64, y, sw, 14.0, &lane_colour(lane)));
    }
    doc.add(text(x, y + 32.0, "lane 0").set("font-size", SMALL))
        .add(text(x + w, y + 32.0, "lane 31").set("font-size", SMALL).set("text-anchor", "end"))
}

/// The threads of warp 0 as (tx, ty): 32 consecutive thread ids, x fastest.
fn warp0(g: &Geometry) -> Vec<(usize, usize)> {
    let (bx, _) = g.block();
    (0..32).map(|t| (t % bx, t / bx)).collect()
}

// ---------------------------------------------------------------- steps 1 and 2

/// Which element of C (row, col) thread (tx, ty) of block (0, 0) computes, as the kernels
/// write it: step01-naive/src/kernel.cu:10-11 (tx walks down a column of C) and
/// step02-coalesce/src/kernel.cu:11-12 (tx walks along a row).
fn c_element(step: &Step, (tx, ty): (usize, usize)) -> (usize, usize) {
    if step.name == "step01-naive" { (tx, ty) } else { (ty, tx) }
}

/// Step 1 vs 2: the elements of A, B and C one warp touches in one iteration of the K loop,
/// coloured by lane, and how many 32-byte sectors each access needs.
fn warp_access(g: &Geometry) -> Result<Document, String> {
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

// ---------------------------------------------------------------- steps 3 and 4

/// Step 3 vs 4: the B tile in shared memory laid out over the 32 banks (word w in bank
/// w % 32), with the 32 words one warp reads at once coloured by lane.
fn banks(g: &Geometry) -> Result<Document, String> {
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

// ---------------------------------------------------------------- step 5

/// Where thread `tid` works, as step05-threadtile-float4/src/kernel.cu writes it:
/// its four TM/2 x TN/2 quadrants of the block tile (lines 42-44) and the corners of its
/// float4 loads of the A tile (BM x BK) and the B tile (BK x BN) (lines 33-35, 52-54).
struct ThreadWork {
    quadrants: Vec<(usize, usize)>,
    a_loads: Vec<(usize, usize)>,
    b_loads: Vec<(usize, usize)>,
}

fn thread_work(tid: usize, [bm, bn, bk, tm, tn]: [usize; 5]) -> ThreadWork {
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
fn thread_tiles(g: &Geometry) -> Result<Document, String> {
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

// ---------------------------------------------------------------- steps 5, 6, 7: the K loop in time

/// The K loop as a timeline, for any step with shared tiles: buffers are the leading
/// dimension of `As` (step 6: `As[2][BK][BM + 4]`) or the STAGES define (step 7 on);
/// a load of K-tile t is issued `buffers - 1` iterations ahead of its math, and one barrier per
/// tile frees a buffer. Schematic: the lengths are not measured times. A kernel synchronised by
/// mbarriers (step 9) works otherwise and gets [`pipeline`] instead.
fn timeline(g: &Geometry) -> Result<Option<Document>, String> {
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

// ---------------------------------------------------------------- step 7 on

/// The shape of one tensor-core product (M x N of C, K deep): WMMA's fragments as
/// step07-wmma/src/kernel.cu declares them (`FM, FN, FK`), the `mma.sync` tiles of step 8 on
/// (step08-mma-ldmatrix/src/kernel.cu: `MMA_M, MMA_N, MMA_K`).
fn fragment(step: &Step) -> (usize, usize, usize) {
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
fn warp_tiles(g: &Geometry) -> Result<Option<Document>, String> {
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

/// The accumulator of PTX `mma.sync.m16n8k*` (FP32): lane l holds c0, c1 at row l/4, columns
/// 2(l%4) and 2(l%4)+1, and c2, c3 eight rows below (PTX ISA, "Matrix Fragments for mma.m16n8k16"),
/// which is how step 8's epilogue stores it (step08-mma-ldmatrix/src/kernel.cu:388-396) and step
/// 9's, repeated per 8 columns. WMMA leaves its layout unspecified, which is why step 7's epilogue
/// goes through shared memory.
fn accumulator_lanes() -> Document {
    let (cw, ch, left, top) = (54.0, 30.0, 34.0, 120.0);
    let mut doc = heading(
        document((left + 8.0 * cw + 16.0) as u32, (top + 16.0 * ch + 16.0) as u32),
        &["mma.sync m16n8 accumulator", "16 x 8 floats; cell: the lane that", "holds it, and which register"],
    );
    for col in (0..8).step_by(2) {
        doc = doc.add(
            text(left + (col as f64 + 0.5) * cw, top - 8.0, format!("col {col}"))
                .set("font-size", SMALL)
                .set("text-anchor", "middle"),
        );
    }
    for row in 0..16 {
        doc = doc.add(
            text(left - 6.0, top + (row as f64 + 0.7) * ch, format!("{row}"))
                .set("font-size", SMALL)
                .set("text-anchor", "end"),
        );
        for col in 0..8 {
            let lane = (row % 8) * 4 + col / 2;
            let reg = col % 2 + 2 * (row / 8);
            let (x, y) = (left + col as f64 * cw, top + row as f64 * ch);
            doc = doc.add(rect(x, y, cw, ch, &lane_tint(lane)).set("stroke", "white")).add(
                text(x + cw / 2.0, y + ch * 0.68, format!("{lane}·c{reg}"))
                    .set("font-size", SMALL)
                    .set("text-anchor", "middle"),
            );
        }
    }
    doc
}

// ---------------------------------------------------------------- step 8: the swizzle

/// A row's XOR: chunk c (16 bytes) of row r is stored at chunk c ^ x(r) of its 128-byte line.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Xor {
    RowMod8,
    TwiceRowMod4,
}

impl Xor {
    fn of(self, r: usize) -> usize {
        match self {
            Xor::RowMod8 => r % 8,
            Xor::TwiceRowMod4 => 2 * (r % 4),
        }
    }

    fn formula(self) -> &'static str {
        match self {
            Xor::RowMod8 => "x(r) = r % 8",
            Xor::TwiceRowMod4 => "x(r) = 2 (r % 4)",
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Operand {
    A,
    B,
}

/// Step 8's swizzle of each operand's tile, as step08-mma-ldmatrix/src/kernel.cu:73-78 writes
/// it (`swizzle_a`, `swizzle_b`, with SWIZZLE = 1).
fn step08_xor(p: Precision, op: Operand) -> Xor {
    match op {
        Operand::A if p == Precision::F64 => Xor::TwiceRowMod4,
        Operand::A => Xor::RowMod8,
        Operand::B if matches!(p, Precision::F16 | Precision::Bf16) => Xor::RowMod8,
        Operand::B => Xor::TwiceRowMod4,
    }
}

/// What one shared-memory access of step 8's fragment loads reads at the same time (one 128-byte
/// wavefront), as the (row, chunk) pairs of its tile, for the first fragment (row0 = k0 = n0 = 0),
/// and the instruction: step08-mma-ldmatrix/src/kernel.cu, `load_a` and `load_b`.
fn step08_reads(p: Precision, op: Operand) -> (String, BTreeSet<(usize, usize)>) {
    let elem = p.input().bytes();
    let ldmatrix = match op {
        Operand::A => p != Precision::F64,                           // line 163
        Operand::B => matches!(p, Precision::F16 | Precision::Bf16), // line 192
    };
    if ldmatrix {
        // Lanes 0-7 give the eight row addresses of the first 8x8 matrix: A (line 172)
        // r = lane % 16, B (line 195) r = lane % 8 + 8 ((lane / 8) % 2); both at chunk lane / 16.
        let row = |lane: usize| if op == Operand::A { lane % 16 } else { lane % 8 + 8 * ((lane / 8) % 2) };
        let reads = (0..8).map(|lane| (row(lane), lane / 16)).collect();
        return ("ldmatrix".into(), reads);
    }
    // One value per lane, g = lane / 4, t = lane % 4 (lines 164, 191), v = 0: FP64 A reads row g,
    // column t (line 167-168), B row t, column g (lines 205-206). A 64-bit load is served per
    // half-warp (16 lanes, 128 bytes), a 32-bit one per warp.
    let lanes = 128 / elem;
    let reads = (0..lanes)
        .map(|lane| {
            let (g, t) = (lane / 4, lane % 4);
            let (r, col) = if op == Operand::A { (g, t) } else { (t, g) };
            (r, col * elem / 16)
        })
        .collect();
    (format!("{}-bit loads", 8 * elem), reads)
}

/// Step 8: for each way its fragments are read (ldmatrix; 32- and 64-bit loads), the chunks one
/// access reads, over the eight 16-byte positions of a line, plain and with the kernel's XOR.
fn step08_swizzle(step: &Step) -> Document {
    // Each distinct access (the same XOR and the same chunks read): its instructions and users.
    struct Access {
        kinds: Vec<String>,
        xor: Xor,
        reads: BTreeSet<(usize, usize)>,
        users: Vec<(&'static str, Precision)>,
    }
    let mut accesses: Vec<Access> = Vec::new();
    for v in steps::variants(step.name) {
        for (op, name) in [(Operand::A, "A"), (Operand::B, "B")] {
            let (kind, reads) = step08_reads(v.precision, op);
            let xor = step08_xor(v.precision, op);
            let i = match accesses.iter().position(|a| a.xor == xor && a.reads == reads) {
                Some(i) => i,
                None => {
                    accesses.push(Access { kinds: Vec::new(), xor, reads, users: Vec::new() });
                    accesses.len() - 1
                }
            };
            let a = &mut accesses[i];
            if !a.kinds.contains(&kind) {
                a.kinds.push(kind);
            }
            a.users.push((name, v.precision));
        }
    }
    let panels = accesses
        .into_iter()
        .map(|a| {
            // "ldmatrix", or "32-/64-bit loads"
            let kind = if a.kinds.len() == 1 {
                a.kinds[0].clone()
            } else {
                let bits: Vec<&str> = a.kinds.iter().map(|k| k.split('-').next().unwrap_or_default()).collect();
                format!("{}-bit loads", bits.join("-/"))
            };
            let who: Vec<String> = ["A", "B"]
                .iter()
                .filter_map(|op| {
                    let ps: Vec<String> = a.users.iter().filter(|u| u.0 == *op).map(|u| u.1.to_string()).collect();
                    (!ps.is_empty()).then(|| format!("{op} in {}", ps.join(" ")))
                })
                .collect();
            SwizzlePanel { kind, xor: a.xor, reads: a.reads, users: who.join(", ") }
        })
        .collect::<Vec<_>>();
    swizzle(
        &[
            &format!("{}: the swizzle", step.name),
            "row r, chunk c (16 B) is stored at chunk",
            "c ^ x(r) of its 128-byte line; columns: the",
            "8 chunk positions of a line, 4 banks each",
        ],
        &panels,
    )
}

/// One access over a swizzled tile, for [`swizzle`].
struct SwizzlePanel {
    /// The instruction(s): "ldmatrix".
    kind: String,
    xor: Xor,
    /// The (row, chunk) pairs the access reads at once.
    reads: BTreeSet<(usize, usize)>,
    /// Who reads this way ("A in fp16 bf16"); empty for none.
    users: String,
}

/// An XOR swizzle of 16-byte chunks: for each panel's access, the rows it reads as 128-byte
/// lines over the eight four-bank positions, stored plain and swizzled, the chunks it reads
/// coloured by row, and the passes (wavefronts) each layout needs.
fn swizzle(lines: &[&str], panels: &[SwizzlePanel]) -> Document {
    let (cw, ch, label_w, gap): (f64, f64, f64, f64) = (28.0, 26.0, 26.0, 12.0);
    let grid = 8.0 * cw;
    let x_plain = 12.0 + label_w;
    let x_swz = x_plain + grid + gap + label_w;
    let w = x_swz + grid + 12.0;
    let rows = |p: &SwizzlePanel| p.reads.iter().map(|r| r.0 + 1).max().unwrap_or(1);
    let mut top = 26.0 + 22.0 * lines.len() as f64 + 8.0;
    let h = top + panels.iter().map(|p| 160.0 + rows(p) as f64 * ch).sum::<f64>();
    let mut doc = heading(document(w.round() as u32, h.round() as u32), lines);
    for panel in panels {
        let rows = rows(panel);
        let chunks: BTreeSet<usize> = panel.reads.iter().map(|r| r.1).collect();
        let title =
            format!("{}: {rows} rows x {} chunk{}", panel.kind, chunks.len(), if chunks.len() == 1 { "" } else { "s" });
        doc = doc.add(text(12.0, top + 20.0, title).set("font-weight", "bold"));
        let note = if panel.users.is_empty() {
            panel.xor.formula().to_string()
        } else {
            format!("{}: {}", panel.xor.formula(), panel.users)
        };
        doc = doc.add(text(12.0, top + 42.0, note).set("font-size", SMALL));
        let grid_top = top + 96.0;
        for (x0, swizzled) in [(x_plain, false), (x_swz, true)] {
            let x = |r: usize| if swizzled { panel.xor.of(r) } else { 0 };
            doc = doc
                .add(text(x0, grid_top - 34.0, if swizzled { "swizzled" } else { "plain" }).set("font-weight", "bold"))
                .add(
                    text(x0 - 4.0, grid_top - 8.0, if swizzled { "x" } else { "r" })
                        .set("font-size", SMALL)
                        .set("text-anchor", "end")
                        .set("font-style", "italic"),
                );
            for pos in 0..8 {
                doc = doc.add(
                    text(x0 + (pos as f64 + 0.5) * cw, grid_top - 8.0, format!("{pos}"))
                        .set("font-size", SMALL)
                        .set("text-anchor", "middle")
                        .set("fill", "#666666"),
                );
            }
            let mut per_pos = [0usize; 8];
            for r in 0..rows {
                let y = grid_top + r as f64 * ch;
                doc = doc.add(
                    text(x0 - 4.0, y + ch * 0.7, format!("{}", if swizzled { x(r) } else { r }))
                        .set("font-size", SMALL)
                        .set("text-anchor", "end"),
                );
                for (pos, count) in per_pos.iter_mut().enumerate() {
                    let c = pos ^ x(r);
                    let hot = panel.reads.contains(&(r, c));
                    if hot {
                        *count += 1;
                    }
                    let fill = if hot { lane_tint(r * 31 / (rows - 1).max(1)) } else { FAINT.to_string() };
                    let cx = x0 + pos as f64 * cw;
                    doc = doc.add(rect(cx, y, cw, ch, &fill).set("stroke", "white").set("stroke-width", 1.5)).add(
                        text(cx + cw / 2.0, y + ch * 0.7, format!("{c}"))
                            .set("font-size", SMALL)
                            .set("text-anchor", "middle")
                            .set("font-weight", if hot { "bold" } else { "normal" })
                            .set("fill", if hot { INK } else { "#8a8a8a" }),
                    );
                }
            }
            let passes = per_pos.iter().copied().max().unwrap_or(1);
            let used: Vec<usize> = (0..8).filter(|&p| per_pos[p] > 0).collect();
            let worst: Vec<usize> = (0..8).filter(|&p| per_pos[p] == passes).collect();
            let detail = if passes == 1 {
                format!("{} chunks in {} banks", used.len(), 4 * used.len())
            } else {
                let (lo, hi) = (worst[0], worst[worst.len() - 1]);
                format!("{passes} rows in banks {}-{}", 4 * lo, 4 * hi + 3)
            };
            let below = grid_top + rows as f64 * ch;
            doc = doc
                .add(
                    text(x0, below + 24.0, format!("{passes} pass{}", if passes == 1 { "" } else { "es" }))
                        .set("font-weight", "bold"),
                )
                .add(text(x0, below + 44.0, detail).set("font-size", SMALL));
        }
        top = grid_top + rows as f64 * ch + 64.0;
    }
    doc
}

// ---------------------------------------------------------------- step 9: producer and consumers

/// True for a kernel whose pipeline is synchronised by mbarriers (step 9: producer and consumer
/// warpgroups), not by one `__syncthreads` per K-tile.
fn uses_mbarriers(g: &Geometry) -> bool {
    g.step.kernel.code.contains("mbarrier.")
}

/// A line with an arrowhead at its last point, through `points`.
fn arrow(points: &[(f64, f64)], colour: &str) -> Group {
    let path: Vec<String> = points.iter().map(|(x, y)| format!("{x},{y}")).collect();
    let (x1, y1) = points[points.len() - 2];
    let (x2, y2) = points[points.len() - 1];
    let len = ((x2 - x1).powi(2) + (y2 - y1).powi(2)).sqrt().max(1e-9);
    let (ux, uy) = ((x2 - x1) / len, (y2 - y1) / len);
    let r = |v: f64| (v * 10.0).round() / 10.0;
    let (bx, by) = (x2 - 11.0 * ux, y2 - 11.0 * uy);
    let head = format!(
        "{},{} {},{} {},{}",
        r(x2),
        r(y2),
        r(bx - 6.0 * uy),
        r(by + 6.0 * ux),
        r(bx + 6.0 * uy),
        r(by - 6.0 * ux)
    );
    // The line stops inside the head, so that its end does not poke out of the point.
    let mut shaft = path;
    shaft.pop();
    shaft.push(format!("{},{}", r(x2 - 8.0 * ux), r(y2 - 8.0 * uy)));
    Group::new()
        .add(
            Polyline::new()
                .set("points", shaft.join(" "))
                .set("fill", "none")
                .set("stroke", colour)
                .set("stroke-width", 3),
        )
        .add(Polygon::new().set("points", head).set("fill", colour))
}

/// A numbered marker: a dark disc with the number in white.
fn number_mark(x: f64, y: f64, n: usize) -> Group {
    Group::new().add(Circle::new().set("cx", x).set("cy", y).set("r", 11).set("fill", INK)).add(
        text(x, y + 5.5, format!("{n}"))
            .set("font-size", SMALL)
            .set("font-weight", "bold")
            .set("fill", "white")
            .set("text-anchor", "middle"),
    )
}

/// A box with bold text and smaller lines under it, centred.
fn labelled_box(x: f64, y: f64, w: f64, h: f64, fill: &str, bold: &str, small: &[String]) -> Group {
    let mut gr = Group::new()
        .add(rect(x, y, w, h, fill).set("rx", 6).set("stroke", INK).set("stroke-width", 1.5))
        .add(text(x + w / 2.0, y + 22.0, bold).set("font-weight", "bold").set("text-anchor", "middle"));
    for (i, l) in small.iter().enumerate() {
        gr = gr.add(
            text(x + w / 2.0, y + 42.0 + 18.0 * i as f64, l.as_str())
                .set("font-size", SMALL)
                .set("text-anchor", "middle"),
        );
    }
    gr
}

/// A step whose K loop runs on mbarriers (step 9): its warpgroups, one producer and BM / 64
/// consumers (step09-wgmma-tma/src/kernel.cu:42-43), the ring of STAGES buffers with their full and
/// empty barriers (lines 295, 307-309), and the five moves of a K-tile through it: the producer's
/// TMA copy completing `full` (lines 327-343), the consumers' wait on `full` (line 363), their
/// wgmma, their arrival on `empty` in every block of the cluster (lines 355-358), and the
/// producer's wait on `empty` before it reuses the buffer (line 326).
fn pipeline(g: &Geometry) -> Result<Option<Document>, String> {
    if !uses_mbarriers(g) {
        return Ok(None);
    }
    let [bm, bn, bk, stages] = g.defines(["BM", "BN", "BK", "STAGES"])?;
    let cluster = g.define("CLUSTER").unwrap_or(1);
    let warpgroups = g.launch.threads_per_block() as usize / 128;
    let consumers = bm / 64;
    if warpgroups != consumers + 1 {
        return Err(format!("{}: {warpgroups} warpgroups for BM = {bm}", g.step.id()));
    }
    // kernel.cu:44-48: A_BYTES = BM rows of 128 B; B_BYTES = BN x BK elements, two planes for 3xTF32.
    let planes = if g.step.precision == Precision::Tf32x3 { 2 } else { 1 };
    let stage_bytes = bm * 128 + bn * bk * g.step.precision.input().bytes() * planes;
    let (producer_c, consumer_c, full_c, empty_c) = (WARP[1], WARP[0], WARP[4], WARP[2]);

    // Columns: the full barriers, the buffers, the empty barriers; the cluster's other blocks.
    let (full_x, full_w) = (16.0, 76.0);
    let (buf_x, buf_w) = (full_x + full_w + 26.0, 154.0);
    let (empty_x, empty_w) = (buf_x + buf_w + 26.0, 86.0);
    let right = empty_x + empty_w;
    let (peer_x, peer_w) = (right + 28.0, 536.0 - 16.0 - right - 28.0);
    // Rows: producer, ring, consumers, then the numbered notes.
    let (prod_y, prod_h) = (126.0, 60.0);
    let (ring_y, row_h) = (prod_y + prod_h + 60.0, 40.0);
    let ring_bottom = ring_y + row_h * stages as f64 - 6.0;
    let (cons_y, cons_h) = (ring_bottom + 60.0, 96.0);
    let notes_y = cons_y + cons_h + 40.0;
    let copy_peers = if cluster > 2 { format!("blocks 1-{}", cluster - 1) } else { "block 1".into() };
    let notes: Vec<(usize, Vec<String>)> = vec![
        (
            1,
            vec![
                format!("TMA: tile t's A ({bm} x {bk}) and B ({bk} x {bn}) into"),
                format!("buffer t % {stages}, each block copying {} of B's", bn / cluster),
                "columns for the whole cluster (multicast);".into(),
                format!("the {} KiB complete on full", stage_bytes / 1024),
            ],
        ),
        (2, vec!["the consumers wait until full".into()]),
        (3, vec![format!("each multiplies its 64 x {bn} of C (wgmma)")]),
        (
            4,
            vec![
                "when those wgmma are done, each consumer arrives on".into(),
                format!(
                    "empty in {}: empty completes at {} arrivals",
                    if cluster == 2 { "both blocks".to_string() } else { format!("all {cluster} blocks") },
                    consumers * cluster
                ),
            ],
        ),
        (5, vec![format!("the producer waits on empty, then copies tile t + {stages}")]),
    ];
    let note_lines: usize = notes.iter().map(|n| n.1.len()).sum();
    let (w, h) = (536.0, notes_y + 22.0 * note_lines as f64 + 16.0);

    let mut doc = heading(
        document(w as u32, h as u32),
        &[
            &format!("{}: one block ({})", g.step.name, g.step.precision),
            &format!("BM = {bm}: 1 producer + {consumers} consumer warpgroups"),
            &format!("a ring of STAGES = {stages} buffers, 2 mbarriers each"),
            &format!("CLUSTER = {cluster} blocks share each B tile"),
        ],
    );
    // The producer.
    doc = doc.add(labelled_box(
        full_x,
        prod_y,
        right - full_x,
        prod_h,
        "#fbe3cc",
        "warpgroup 0: producer",
        &["one thread issues every TMA copy".into()],
    ));
    // The ring: per buffer its full barrier, the buffer, its empty barrier.
    let pill = |x: f64, y: f64, w: f64, fill: &str, label: String| {
        Group::new()
            .add(rect(x, y, w, row_h - 6.0, fill).set("rx", (row_h - 6.0) / 2.0))
            .add(text(x + w / 2.0, y + row_h * 0.55, label).set("font-size", SMALL).set("text-anchor", "middle"))
    };
    for s in 0..stages {
        let y = ring_y + row_h * s as f64;
        let tile = if s == 0 { "tile t".to_string() } else { format!("tile t+{s}") };
        doc = doc
            .add(pill(full_x, y, full_w, "#cfe8c9", format!("full {s}")))
            .add(rect(buf_x, y, buf_w, row_h - 6.0, FAINT).set("stroke", INK).set("stroke-width", 1))
            .add(
                text(buf_x + buf_w / 2.0, y + row_h * 0.55, format!("buffer {s}: {tile}"))
                    .set("font-size", SMALL)
                    .set("text-anchor", "middle"),
            )
            .add(pill(empty_x, y, empty_w, "#f6d0d0", format!("empty {s}")))
            .add(arrow(
                &[(buf_x - 2.0, y + (row_h - 6.0) / 2.0), (full_x + full_w + 1.0, y + (row_h - 6.0) / 2.0)],
                full_c,
            ));
    }
    // The consumers, side by side.
    let cw = (right - full_x - 8.0 - 8.0 * (consumers as f64 - 1.0)) / consumers as f64;
    doc = doc.add(rect(full_x, cons_y, right - full_x, cons_h, "#dbe5f1").set("rx", 6));
    for c in 0..consumers {
        let x = full_x + 4.0 + (cw + 8.0) * c as f64;
        doc = doc.add(labelled_box(
            x,
            cons_y + 4.0,
            cw,
            cons_h - 8.0,
            "white",
            &format!("warpgroup {}", c + 1),
            &["consumer".into(), format!("C rows {}-{}", 64 * c, 64 * c + 63)],
        ));
    }
    // The moves, numbered as in the notes: 1 copy, 2 wait full, 3 wgmma, 4 arrive empty, 5 wait empty.
    let (full_mid, buf_mid, empty_mid) = (full_x + full_w / 2.0, buf_x + buf_w / 2.0, empty_x + empty_w / 2.0);
    doc = doc
        .add(arrow(&[(buf_mid, prod_y + prod_h), (buf_mid, ring_y - 2.0)], producer_c))
        .add(number_mark(buf_mid + 22.0, (prod_y + prod_h + ring_y) / 2.0, 1))
        .add(arrow(&[(full_mid, ring_bottom), (full_mid, cons_y - 2.0)], full_c))
        .add(number_mark(full_mid + 22.0, (ring_bottom + cons_y) / 2.0, 2))
        .add(arrow(&[(buf_mid, ring_bottom), (buf_mid, cons_y - 2.0)], consumer_c))
        .add(number_mark(buf_mid + 22.0, (ring_bottom + cons_y) / 2.0, 3))
        .add(arrow(&[(empty_mid, cons_y), (empty_mid, ring_bottom + 2.0)], empty_c))
        .add(number_mark(empty_mid + 22.0, (ring_bottom + cons_y) / 2.0, 4))
        .add(arrow(&[(empty_mid, ring_y - 6.0), (empty_mid, prod_y + prod_h + 2.0)], empty_c))
        .add(number_mark(empty_mid + 22.0, (prod_y + prod_h + ring_y) / 2.0, 5));
    // The other blocks of the cluster: B from this producer, arrivals from these consumers.
    if cluster > 1 {
        let peer_mid = peer_x + peer_w / 2.0;
        doc = doc
            .add(
                rect(peer_x, ring_y, peer_w, ring_bottom - ring_y, "#f6f6f6")
                    .set("stroke", INK)
                    .set("stroke-dasharray", "6 4")
                    .set("rx", 6),
            )
            .add(text(peer_mid, ring_y + 26.0, copy_peers).set("font-weight", "bold").set("text-anchor", "middle"));
        for (i, l) in ["of the cluster:", "its own ring,", "producer and", "consumers"].iter().enumerate() {
            doc = doc.add(
                text(peer_mid, ring_y + 50.0 + 19.0 * i as f64, *l)
                    .set("font-size", SMALL)
                    .set("text-anchor", "middle"),
            );
        }
        doc = doc
            .add(arrow(
                &[(right, prod_y + prod_h / 2.0), (peer_mid, prod_y + prod_h / 2.0), (peer_mid, ring_y - 2.0)],
                producer_c,
            ))
            .add(number_mark(peer_mid + 22.0, (prod_y + prod_h + ring_y) / 2.0, 1))
            .add(arrow(
                &[(right, cons_y + cons_h / 2.0), (peer_mid, cons_y + cons_h / 2.0), (peer_mid, ring_bottom + 2.0)],
                empty_c,
            ))
            .add(number_mark(peer_mid + 22.0, (ring_bottom + cons_y) / 2.0, 4));
    }
    // The notes.
    let mut y = notes_y;
    for (n, lines) in notes {
        doc = doc.add(number_mark(28.0, y - 6.0, n));
        for l in lines {
            doc = doc.add(text(48.0, y, l).set("font-size", SMALL));
            y += 22.0;
        }
    }
    Ok(Some(doc))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_step_has_a_stable_diagram() {
        let all = super::generate().unwrap();
        assert_eq!(all, super::generate().unwrap(), "byte-stable output");
        for step in steps::ALL {
            assert!(all.keys().any(|k| k.contains(step.name)), "no diagram for {}", step.name);
        }
        assert!(all["diagrams/step03-smem-banks.svg"].contains("32 lanes in one bank: 32 passes"));
        assert!(all["diagrams/step04-bankfree-banks.svg"].contains("32 lanes in 32 banks: one pass"));
        assert!(all["diagrams/step01-naive-warp.svg"].contains("A: 32 sectors"));
        assert!(all["diagrams/step02-coalesce-warp.svg"].contains("B: 4 sectors"));
    }

    #[test]
    fn step08_swizzle_spreads_every_access() {
        let all = super::generate().unwrap();
        let d = &all["diagrams/step08-mma-ldmatrix-swizzle.svg"];
        // ldmatrix: 8 rows in one position unswizzled, 8 positions swizzled; the 32- and 64-bit
        // loads: 4 rows in two positions, then 8 positions.
        for s in
            ["8 passes", "8 rows in banks 0-3", "4 passes", "4 rows in banks 0-7", "x(r) = r % 8", "x(r) = 2 (r % 4)"]
        {
            assert!(d.contains(s), "step 8 swizzle: no {s:?}");
        }
        assert_eq!(d.matches("8 chunks in 32 banks").count(), 2);
        assert!(d.contains("A in fp16 bf16 tf32 3xtf32, B in fp16 bf16"));
        assert!(d.contains("A in fp64, B in tf32 fp64 3xtf32"));
        // Once per step, not per precision.
        assert_eq!(all.keys().filter(|k| k.contains("swizzle") && k.contains("step08")).count(), 1);
    }

    #[test]
    fn step09_gets_its_pipeline_and_no_barrier_timeline() {
        let all = super::generate().unwrap();
        let d = &all["diagrams/step09-wgmma-tma-pipeline.svg"];
        for s in [
            "BM = 128: 1 producer + 2 consumer warpgroups",
            "STAGES = 4",
            "CLUSTER = 2",
            "empty 3",
            "full 3",
            "4 arrivals",
        ] {
            assert!(d.contains(s), "step 9 pipeline: no {s:?}");
        }
        assert!(!d.contains("empty 4"));
        assert!(!all.keys().any(|k| k.starts_with("diagrams/step09") && k.ends_with("-timeline.svg")));
        assert_eq!(all.keys().filter(|k| k.contains("pipeline")).count(), 1);
        // The cp.async steps keep theirs.
        assert!(all.contains_key("diagrams/step08-mma-ldmatrix-fp16-timeline.svg"));
    }
}
