//! Step 9: a `wgmma` operand's shared-memory descriptor, and what it points at.

use super::draw::*;
use super::pipeline::arrow;
use crate::svg::geometry::Geometry;
use svg::Document;

/// The leading and stride byte offsets the kernel encodes for an operand, from its call
/// `descriptor(a_tile(0), LBO, SBO)` (or `b_tile`), evaluated with the kernel's constants.
fn offsets(g: &Geometry, tile: &str) -> Result<(usize, usize), String> {
    let code = &g.step.kernel.code;
    let call = format!("descriptor({tile}(0), ");
    let args = code.split_once(&call).and_then(|(_, rest)| rest.split_once(')')).map(|(args, _)| args);
    let args: Vec<&str> = args.ok_or_else(|| format!("{}: no {call}...)", g.step.id()))?.split(',').collect();
    match args[..] {
        [lbo, sbo] => Ok((
            g.eval(lbo).ok_or_else(|| format!("{}: cannot evaluate {lbo}", g.step.id()))?,
            g.eval(sbo).ok_or_else(|| format!("{}: cannot evaluate {sbo}", g.step.id()))?,
        )),
        _ => Err(format!("{}: {call}{}) takes two offsets", g.step.id(), args.join(","))),
    }
}

/// The descriptor common/include/hopper.cuh encodes (`descriptor`): the start address in bits
/// 0-13, the leading byte offset in 16-29 and the stride byte offset in 32-45, each in 16-byte
/// units, and the swizzle in 62-63 (1: 128 bytes).
/// `offset`: the start's distance from the tile's own start, which the field adds to it.
fn fields(offset: usize, lbo: usize, sbo: usize) -> [(&'static str, u32, u32, String); 4] {
    [
        ("start >> 4", 0, 13, format!("tile + {}", (offset & 0x3FFFF) >> 4)),
        ("LBO >> 4", 16, 29, format!("{}", lbo >> 4)),
        ("SBO >> 4", 32, 45, format!("{}", sbo >> 4)),
        ("swizzle", 62, 63, "1".into()),
    ]
}

/// The 64 bits of a descriptor as a bar from bit 63 down to bit 0, its fields named and valued.
fn bit_bar(
    mut doc: Document,
    (x, y): (f64, f64),
    w: f64,
    title: &str,
    f: &[(&'static str, u32, u32, String)],
) -> Document {
    let bit = w / 64.0;
    let at = |b: u32| x + (63 - b) as f64 * bit;
    doc = doc.add(text(x, y - 8.0, title).set("font-size", SMALL).set("font-weight", "bold"));
    doc = doc.add(rect(x, y, w, 30.0, FAINT).set("stroke", INK));
    for (i, (name, lo, hi, value)) in f.iter().enumerate() {
        let (x0, x1) = (at(*hi), at(*lo) + bit);
        let fill = WARP[[0, 1, 4, 6][i]];
        doc = doc
            .add(rect(x0, y, x1 - x0, 30.0, fill).set("fill-opacity", 0.8))
            .add(
                text((x0 + x1) / 2.0, y + 21.0, value.as_str())
                    .set("font-size", SMALL)
                    .set("fill", "white")
                    .set("text-anchor", "middle"),
            )
            // A field too narrow for its name has it left-aligned from its start.
            .add(if x1 - x0 < 60.0 {
                text(x0, y + 48.0, *name).set("font-size", SMALL)
            } else {
                text((x0 + x1) / 2.0, y + 48.0, *name).set("font-size", SMALL).set("text-anchor", "middle")
            })
            .add(text(x0, y + 66.0, format!("{hi}")).set("font-size", 14).set("fill", "#666666"));
    }
    doc
}

/// Step 9's `wgmma` operands in shared memory: A, K-major, a tile of BM rows of one 128-byte
/// swizzled line each, and B, N-major, BK rows of K in boxes of 64 columns; for each its
/// descriptor's fields, and over the tile what the second k-step's descriptor (kk = 1) points
/// at: its start (A: 32 bytes into each row; B: 16 rows of K further), the stride between 8-row
/// groups (SBO) and, for B, the leading offset between boxes (LBO).
pub(super) fn descriptors(g: &Geometry) -> Result<Document, String> {
    let [bm, bn, bk] = g.defines(["BM", "BN", "BK"])?;
    let row = g.constant("ROW").ok_or_else(|| format!("{}: no ROW", g.step.id()))?;
    let k_step = g.step.precision.input().bytes() * 16; // bytes of one wgmma's K (16 elements)
    let (a_lbo, a_sbo) = offsets(g, "a_tile")?;
    let (b_lbo, b_sbo) = offsets(g, "b_tile")?;
    let box_cols = b_lbo / row;
    let (w, bar_w, left) = (540.0, 500.0, 20.0);
    let (cw, ch, a_x, a_y) = (30.0, 18.0, left + 40.0, 380.0);
    let (b_y, box_w, gh) = (a_y + 16.0 * ch + 100.0, 110.0, 14.0);
    let b_bottom = b_y + (bk / 8) as f64 * gh;
    let h = b_bottom + 112.0;
    let mut doc = heading(
        document(w as u32, h as u32),
        &[
            &format!("{}: wgmma's descriptors ({})", g.step.name, g.step.precision),
            "64 bits per operand: where the tile starts, how",
            "far apart its 8-row groups (SBO) and, N-major,",
            "its 64-column boxes (LBO) lie, and the swizzle",
        ],
    );
    doc = bit_bar(
        doc,
        (left, 140.0),
        bar_w,
        &format!("A, k-step 1: start = tile + {k_step} B"),
        &fields(k_step, a_lbo, a_sbo),
    );
    doc = bit_bar(
        doc,
        (left, 250.0),
        bar_w,
        &format!("B, k-step 1: start = tile + {} B", 16 * row),
        &fields(16 * row, b_lbo, b_sbo),
    );
    // A: the first two 8-row groups of its BM rows, chunk by chunk as stored (c ^ r % 8).
    doc = doc
        .add(text(left, a_y - 14.0, format!("A: {bm} rows x {row} B (K-major), rows 0-15")).set("font-weight", "bold"));
    for r in 0..16 {
        let y = a_y + r as f64 * ch + if r >= 8 { 10.0 } else { 0.0 };
        for pos in 0..row / 16 {
            let c = pos ^ (r % 8);
            let read = c * 16 / k_step == 1;
            let fill = if read { WARP[0] } else { FAINT };
            doc = doc
                .add(rect(a_x + pos as f64 * cw, y, cw, ch, fill).set("stroke", "white").set("stroke-width", 1))
                .add(
                    text(a_x + (pos as f64 + 0.5) * cw, y + ch * 0.78, format!("{c}"))
                        .set("font-size", 14)
                        .set("text-anchor", "middle")
                        .set("fill", if read { "white" } else { "#8a8a8a" }),
                );
        }
    }
    let a_right = a_x + (row / 16) as f64 * cw;
    doc = doc
        .add(arrow(&[(a_right + 40.0, a_y), (a_right + 40.0, a_y + 8.0 * ch + 10.0)], INK))
        .add(text(a_right + 50.0, a_y + 4.0 * ch + 10.0, format!("SBO = {a_sbo} B:")).set("font-size", SMALL))
        .add(
            text(a_right + 50.0, a_y + 4.0 * ch + 30.0, format!("{} groups of 8 rows", bm / 8)).set("font-size", SMALL),
        )
        .add(text(a_right + 50.0, a_y + 4.0 * ch + 50.0, format!("LBO = {a_lbo}: unused,")).set("font-size", SMALL))
        .add(text(a_right + 50.0, a_y + 4.0 * ch + 70.0, "K within a row").set("font-size", SMALL))
        .add(
            text(left, a_y + 16.0 * ch + 34.0, format!("blue: the {k_step} bytes of K of k-step 1 (chunks 2, 3),"))
                .set("font-size", SMALL),
        )
        .add(text(left, a_y + 16.0 * ch + 54.0, "at chunk position c ^ (r % 8) of each row").set("font-size", SMALL));
    // B: its boxes of 64 columns side by side, each BK rows of K in groups of 8.
    let boxes = bn / box_cols;
    doc = doc.add(
        text(left, b_y - 14.0, format!("B: {bk} rows of K x {bn} columns (N-major), {boxes} boxes of {box_cols}"))
            .set("font-weight", "bold"),
    );
    for b in 0..boxes {
        let x = left + b as f64 * (box_w + 10.0);
        for grp in 0..bk / 8 {
            // k-step 1 reads rows 16-31 of K: groups 2 and 3.
            let read = (16..32).contains(&(grp * 8));
            doc = doc.add(
                rect(x, b_y + grp as f64 * gh, box_w, gh, if read { WARP[1] } else { FAINT })
                    .set("stroke", "white")
                    .set("stroke-width", 1),
            );
        }
        doc = doc.add(
            text(
                x + box_w / 2.0,
                b_y + (bk / 8) as f64 * gh + 20.0,
                format!("columns {}-{}", b * box_cols, (b + 1) * box_cols - 1),
            )
            .set("font-size", 14)
            .set("text-anchor", "middle"),
        );
    }
    doc = doc
        .add(arrow(&[(left, b_bottom + 40.0), (left + box_w + 10.0, b_bottom + 40.0)], INK))
        .add(
            text(left + box_w + 20.0, b_bottom + 46.0, format!("LBO = {b_lbo} B: the next box of {box_cols} columns"))
                .set("font-size", SMALL),
        )
        .add(text(left, b_bottom + 72.0, "orange: k-step 1's 16 rows of K, two 8-row groups,").set("font-size", SMALL))
        .add(
            text(left, b_bottom + 92.0, format!("SBO = {b_sbo} B apart; one wgmma reads all {boxes} boxes"))
                .set("font-size", SMALL),
        );
    Ok(doc)
}
