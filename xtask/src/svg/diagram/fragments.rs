//! Step 8: which lane holds which element of an `mma.sync` tile, and which lane gives which row
//! address to the `ldmatrix` that fills those registers.

use super::draw::*;
use super::swizzle::{Operand, ldmatrix_row, position_ticks, step08_xor};
use super::warp_tiles::fragment;
use common::{Precision, Step};
use svg::Document;

/// The lane and register of element (row, col) of each operand of `mma.sync.m16n8k16` with 16-bit
/// inputs, as the PTX ISA lays them out ("Matrix Fragments for mma.m16n8k16"), with g = lane / 4
/// and t = lane % 4: A's a_i at row g + 8 ((i / 2) % 2), column 2t + i % 2 + 8 (i / 4); B's b_i at
/// row (k) 2t + i % 2 + 8 (i / 2), column g; C's c_i at row g + 8 (i / 2), column 2t + i % 2.
/// Returns (lane, element index i).
fn holder(op: char, row: usize, col: usize) -> (usize, usize) {
    match op {
        'A' => ((row % 8) * 4 + (col % 8) / 2, col % 2 + 2 * (row / 8) + 4 * (col / 8)),
        'B' => ((col % 8) * 4 + (row % 8) / 2, row % 2 + 2 * (row / 8)),
        _ => ((row % 8) * 4 + col / 2, col % 2 + 2 * (row / 8)),
    }
}

/// Between an operand's 8 x 8 blocks: room for their registers' names.
const BLOCK_GAP: f64 = 22.0;

/// Where element (r, c) of an operand drawn at (x, y) lies: its 8 x 8 blocks apart by BLOCK_GAP.
fn place((x, y): (f64, f64), r: usize, c: usize, cell: f64) -> (f64, f64) {
    (x + c as f64 * cell + (c / 8) as f64 * BLOCK_GAP, y + r as f64 * cell + (r / 8) as f64 * BLOCK_GAP)
}

/// One operand's grid at (x, y): `rows` x `cols` elements, each coloured and numbered by the lane
/// that holds it, in 8 x 8 blocks, each one 32-bit register of every lane, named above it by the
/// elements it holds ("a0,a1").
fn operand(mut doc: Document, op: char, at: (f64, f64), rows: usize, cols: usize, cell: f64) -> Document {
    for r in 0..rows {
        for c in 0..cols {
            let (lane, _) = holder(op, r, c);
            let (cx, cy) = place(at, r, c, cell);
            doc = doc
                .add(rect(cx, cy, cell, cell, &lane_tint(lane)).set("stroke", "white").set("stroke-width", 0.5))
                .add(
                    text(cx + cell / 2.0, cy + cell * 0.7, format!("{lane}"))
                        .set("font-size", SMALL)
                        .set("text-anchor", "middle"),
                );
        }
    }
    let letter = op.to_ascii_lowercase();
    for br in 0..rows / 8 {
        for bc in 0..cols / 8 {
            let (bx, by) = place(at, br * 8, bc * 8, cell);
            let (_, i) = holder(op, br * 8, bc * 8);
            doc = doc.add(rect(bx, by, 8.0 * cell, 8.0 * cell, "none").set("stroke", INK).set("stroke-width", 2)).add(
                text(bx, by - 5.0, format!("{letter}{i},{letter}{}", i + 1))
                    .set("font-size", SMALL)
                    .set("font-weight", "bold"),
            );
        }
    }
    doc
}

/// `mma.sync` m16n8k16 with 16-bit inputs, the instruction of step 8's FP16 and BF16 (its
/// fragment shape from the step's tiles): A, B and C laid out as in C = A B, every element
/// coloured and numbered by the lane that holds it, each outlined 8 x 8 block one register.
pub(super) fn mma_fragments(step: &Step) -> Result<Document, String> {
    let (m, n, k) = fragment(step);
    if (m, n, k) != (16, 8, 16) || step.precision.input().bytes() != 2 {
        return Err(format!("{}: the fragments are drawn for 16-bit m16n8k16, not m{m}n{n}k{k}", step.id()));
    }
    // A on top, B and C side by side under it: every element readable on a phone.
    let cell = 24.0;
    let (left, top) = (16.0, 190.0);
    let side = |n: usize| n as f64 * cell + (n / 8 - 1) as f64 * BLOCK_GAP;
    let a_at = (left, top);
    let b_at = (left, top + side(m) + 72.0);
    let c_at = (left + side(n) + 28.0, b_at.1);
    let (w, h) = (left + side(k) + 20.0, b_at.1 + side(k) + 50.0);
    let mut doc = heading(
        document(w as u32, h as u32),
        &[
            &format!("mma.sync m{m}n{n}k{k} ({}): who holds", step.precision),
            "what; cell: the lane holding the element",
            "(g = lane / 4, t = lane % 4); a block: one",
            "register of each lane, two 16-bit elements",
            "of A or B, or one FP32 of C",
        ],
    );
    doc = operand(doc, 'A', a_at, m, k, cell);
    doc = operand(doc, 'B', b_at, k, n, cell);
    doc = operand(doc, 'C', c_at, m, n, cell);
    let label = |doc: Document, (x, y): (f64, f64), s: String| doc.add(text(x, y - 30.0, s).set("font-weight", "bold"));
    doc = label(doc, a_at, format!("A: {m} x {k}, rows g and g + 8"));
    doc = label(doc, b_at, format!("B: {k} x {n}"));
    doc = label(doc, c_at, format!("C = A B: {m} x {n}"));
    Ok(doc.add(text(left, h - 20.0, "32 lanes x (4 + 2 + 4) registers: the whole tile").set("font-size", SMALL)))
}

/// Step 8's x4 `ldmatrix` of the first A fragment (16 rows of 16 halves) and of the first pair of
/// B fragments (16 rows of K, 16 columns), over the swizzled tile as shared memory holds it: rows
/// of 128 bytes in eight 16-byte chunks, chunk c of row r stored at position c ^ x(r) (the
/// kernel's `swizzle_a`, `swizzle_b`). Each chunk read is numbered by the lane that gives its
/// address and coloured by its matrix (lanes 8m to 8m + 7: matrix m, register m of every lane).
pub(super) fn ldmatrix_addresses(step: &Step) -> Result<Document, String> {
    let p = step.precision;
    if !matches!(p, Precision::F16 | Precision::Bf16) {
        return Err(format!("{}: ldmatrix reads both operands only in 16-bit precisions", step.id()));
    }
    let xor = step08_xor(p, Operand::A);
    if xor != step08_xor(p, Operand::B) {
        return Err(format!("{}: A and B are swizzled alike in 16 bits", step.id()));
    }
    let (cw, ch, left, top) = (44.0, 24.0, 40.0, 170.0);
    let (w, h) = (left + 8.0 * cw + 162.0, top + 16.0 * ch + 96.0);
    let mut doc = heading(
        document(w as u32, h as u32),
        &[
            &format!("{}: one x4 ldmatrix ({p})", step.name),
            "each lane gives the address of one 16-byte",
            "row of an 8 x 8 matrix; columns: the 8 chunk",
            "positions of a 128-byte row, swizzled; cell:",
            "the lane whose address points there",
        ],
    );
    let matrix_colour = |m: usize| WARP[[0, 1, 4, 6][m]];
    doc = doc.add(text(left, top - 30.0, "position c ^ x(r)").set("font-size", SMALL));
    doc = position_ticks(doc, left, top - 8.0, cw);
    // Who reads where: lane -> (row, chunk) -> position chunk ^ x(row).
    let mut at = vec![[None; 8]; 16];
    for lane in 0..32 {
        let (r, c) = ldmatrix_row(Operand::A, lane);
        if ldmatrix_row(Operand::B, lane) != (r, c) {
            return Err("A's and B's lanes give different rows".into());
        }
        at[r][c ^ xor.of(r)] = Some(lane);
    }
    for (r, row) in at.iter().enumerate() {
        let y = top + r as f64 * ch;
        doc =
            doc.add(text(left - 6.0, y + ch * 0.72, format!("{r}")).set("font-size", SMALL).set("text-anchor", "end"));
        for (pos, lane) in row.iter().enumerate() {
            let x = left + pos as f64 * cw;
            let (fill, label, colour) = match lane {
                Some(l) => (matrix_colour(l / 8).to_string(), format!("{l}"), "white"),
                None => (FAINT.to_string(), format!("c{}", pos ^ xor.of(r)), "#8a8a8a"),
            };
            doc = doc.add(rect(x, y, cw, ch, &fill).set("stroke", "white").set("stroke-width", 1.5)).add(
                text(x + cw / 2.0, y + ch * 0.72, label)
                    .set("font-size", SMALL)
                    .set("text-anchor", "middle")
                    .set("fill", colour),
            );
        }
    }
    doc = doc.add(text(left - 30.0, top - 8.0, "r").set("font-size", SMALL).set("font-style", "italic"));
    // The matrices: whose rows, and the registers they fill.
    let key_x = left + 8.0 * cw + 14.0;
    for m in 0..4 {
        let y = top + 12.0 + m as f64 * 96.0;
        let (rows, chunk) = (if m % 2 == 0 { "rows 0-7" } else { "rows 8-15" }, m / 2);
        doc = doc
            .add(rect(key_x, y - 14.0, 16.0, 16.0, matrix_colour(m)))
            .add(text(key_x + 22.0, y, format!("matrix {m}")).set("font-size", SMALL).set("font-weight", "bold"))
            .add(text(key_x, y + 20.0, format!("lanes {}-{}", 8 * m, 8 * m + 7)).set("font-size", SMALL))
            .add(text(key_x, y + 40.0, format!("{rows}, chunk {chunk}")).set("font-size", SMALL))
            .add(text(key_x, y + 60.0, format!("A: a{},a{}", 2 * m, 2 * m + 1)).set("font-size", SMALL));
    }
    let foot = top + 16.0 * ch + 28.0;
    Ok(doc
        .add(text(left - 30.0, foot, "x(r) = r % 8: each matrix's 8 rows in 8 positions,").set("font-size", SMALL))
        .add(text(left - 30.0, foot + 20.0, "one pass. B (k-major) is read alike with .trans:").set("font-size", SMALL))
        .add(
            text(left - 30.0, foot + 40.0, "matrices 0, 1 give b0-b3 of columns 0-7, 2, 3 of 8-15")
                .set("font-size", SMALL),
        ))
}

#[cfg(test)]
mod tests {
    use super::holder;

    /// Every lane holds 8 elements of A, 4 of B and 4 of C, each element of each register once.
    #[test]
    fn the_fragments_cover_each_operand_once() {
        for (op, rows, cols, per_lane) in [('A', 16, 16, 8), ('B', 16, 8, 4), ('C', 16, 8, 4)] {
            let mut seen = vec![vec![false; per_lane]; 32];
            for r in 0..rows {
                for c in 0..cols {
                    let (lane, i) = holder(op, r, c);
                    assert!(!seen[lane][i], "{op}: lane {lane} element {i} twice");
                    seen[lane][i] = true;
                }
            }
        }
        // The PTX ISA's first elements: a0 of lane 5 is A[1][2], b2 of lane 6 is B[12][1].
        assert_eq!(holder('A', 1, 2), (5, 0));
        assert_eq!(holder('B', 12, 1), (6, 2));
        assert_eq!(holder('C', 9, 3), (5, 3));
    }
}
