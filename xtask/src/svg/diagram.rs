//! The book's diagrams, drawn with the `svg` crate from each step's real geometry
//! ([`Geometry`]: its launch at 4096³ and the shared arrays its kernel declares). Where a
//! diagram needs a kernel's index math (which lane touches which address), that math is
//! mirrored here once, next to the diagram, with the kernel lines it copies.
//!
//! Every registered step gets the diagrams that fit it; a step added later gets the generic
//! ones (pipeline timeline, warp and fragment tiles) from its defines alone.

use crate::svg::geometry::Geometry;
use common::{Precision, Step};
use std::collections::BTreeMap;
use svg::Document;
use svg::node::element::{Line, Rectangle, Text};

/// Font sizes: the diagrams are at most about 540 units wide, so that scaled down to a 400-pixel
/// phone screen (about 0.7) the small text is still 11 pixels.
const FONT: u32 = 19;
const SMALL: u32 = 16;
const INK: &str = "#222222";
const FAINT: &str = "#e8edf3";
const PAD_FILL: &str = "#b8b8b8";
/// One colour per warp (Tableau 10).
const WARP: [&str; 8] = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f"];

/// Every diagram of every registered step, path relative to `book/src/generated/`.
pub fn generate() -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    let mut put = |name: String, doc: Document| out.insert(format!("diagrams/{name}.svg"), format!("{doc}\n"));
    for step in steps::ALL {
        let g = Geometry::of(step);
        let id = step.id();
        match step.name {
            "step01-naive" | "step02-coalesce" => put(format!("{id}-warp"), warp_access(&g)?),
            "step03-smem" | "step04-bankfree" => put(format!("{id}-banks"), banks(&g)?),
            "step05-threadtile-float4" => put(format!("{id}-tiles"), thread_tiles(&g)?),
            _ => None,
        };
        if let Some(d) = timeline(&g)? {
            put(format!("{id}-timeline"), d);
        }
        if let Some(d) = warp_tiles(&g)? {
            put(format!("{id}-tiles"), d);
        }
    }
    // The next rung's building blocks, drawn from their definitions (PTX ISA), not from a step.
    put("mma-m16n8-accumulator".into(), accumulator_lanes());
    put("swizzle-128b".into(), swizzle(128, 8, "chunk' = chunk ^ (row % 8)", |row, chunk| chunk ^ (row % 8)));
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
/// a load of K-tile t is issued `buffers - 1` iterations ahead of its math. Schematic: the
/// lengths are not measured times.
fn timeline(g: &Geometry) -> Result<Option<Document>, String> {
    let Some(bk) = g.define("BK") else { return Ok(None) };
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
/// 2(l%4) and 2(l%4)+1, and c2, c3 eight rows below (PTX ISA, "Matrix Fragments for mma.m16n8k16").
/// WMMA leaves its layout unspecified, which is why step 7's epilogue goes through shared memory.
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

/// An XOR swizzle of 16-byte chunks: `rows` rows of `row_bytes`, chunk c of row r stored at
/// chunk `swz(r, c)`, drawn over the 8 four-bank groups of a 128-byte line, with and without
/// the swizzle. Highlighted: chunk 0 of every row, what one `ldmatrix` 8x8 matrix reads.
/// `rule` states `swz` in words for the heading.
pub fn swizzle(row_bytes: usize, rows: usize, rule: &str, swz: fn(usize, usize) -> usize) -> Document {
    let chunks = row_bytes / 16;
    let lines = rows * row_bytes / 128;
    let (cw, ch, gap, top) = (29.0, 28.0, 20.0, 168.0);
    let panel = 8.0 * cw;
    let (w, h) = ((16.0 + 2.0 * panel + gap + 16.0) as u32, (top + lines as f64 * ch + 50.0) as u32);
    let mut doc = heading(
        document(w, h),
        &[
            &format!("{rows} rows of {row_bytes} B, 16-byte chunks"),
            rule,
            "cell: row.chunk; coloured: chunk 0",
            "of each row (one ldmatrix read)",
        ],
    );
    for (p, swizzled) in [(0, false), (1, true)] {
        let x0 = 16.0 + p as f64 * (panel + gap);
        let mut groups = [0usize; 8];
        doc = doc.add(text(x0, top - 28.0, if swizzled { "swizzled" } else { "plain" }).set("font-weight", "bold"));
        for r in 0..rows {
            for c in 0..chunks {
                let stored = if swizzled { swz(r, c) } else { c };
                let byte = r * row_bytes + stored * 16;
                let (group, line_) = ((byte / 16) % 8, byte / 128);
                let hot = c == 0;
                if hot {
                    groups[group] += 1;
                }
                let fill = if hot { lane_tint(r * 31 / (rows - 1).max(1)) } else { FAINT.to_string() };
                let (x, y) = (x0 + group as f64 * cw, top + line_ as f64 * ch);
                doc = doc.add(rect(x, y, cw, ch, &fill).set("stroke", "white")).add(
                    text(x + cw / 2.0, y + ch * 0.68, format!("{r}.{c}"))
                        .set("font-size", 13)
                        .set("text-anchor", "middle")
                        .set("font-weight", if hot { "bold" } else { "normal" }),
                );
            }
        }
        let passes = groups.iter().max().copied().unwrap_or(1);
        doc = doc.add(
            text(x0, top + lines as f64 * ch + 30.0, format!("{passes} pass{}", if passes == 1 { "" } else { "es" }))
                .set("font-weight", "bold"),
        );
    }
    doc.add(text(16.0, top - 6.0, "columns: groups of 4 banks").set("font-size", SMALL))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_step_has_a_stable_diagram() {
        let all = super::generate().unwrap();
        assert_eq!(all, super::generate().unwrap(), "byte-stable output");
        for step in steps::ALL {
            assert!(all.keys().any(|k| k.contains(&step.id())), "no diagram for {}", step.id());
        }
        assert!(all["diagrams/step03-smem-banks.svg"].contains("32 lanes in one bank: 32 passes"));
        assert!(all["diagrams/step04-bankfree-banks.svg"].contains("32 lanes in 32 banks: one pass"));
        assert!(all["diagrams/step01-naive-warp.svg"].contains("A: 32 sectors"));
        assert!(all["diagrams/step02-coalesce-warp.svg"].contains("B: 4 sectors"));
    }
}
