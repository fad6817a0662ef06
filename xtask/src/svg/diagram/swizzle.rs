//! Step 8: the swizzled shared layout.

use super::draw::*;
use common::{Precision, Step};
use std::collections::BTreeSet;
use svg::Document;

/// A row's XOR: chunk c (16 bytes) of row r is stored at chunk c ^ x(r) of its 128-byte line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Xor {
    RowMod8,
    TwiceRowMod4,
}

impl Xor {
    pub(super) fn of(self, r: usize) -> usize {
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
pub(super) enum Operand {
    A,
    B,
}

/// Step 8's swizzle of each operand's tile, as step08-mma-ldmatrix/src/kernel.cu writes it
/// (`swizzle_a`, `swizzle_b`, with SWIZZLE = 1).
pub(super) fn step08_xor(p: Precision, op: Operand) -> Xor {
    match op {
        Operand::A if p == Precision::F64 => Xor::TwiceRowMod4,
        Operand::A => Xor::RowMod8,
        Operand::B if matches!(p, Precision::F16 | Precision::Bf16) => Xor::RowMod8,
        Operand::B => Xor::TwiceRowMod4,
    }
}

/// The (row, 16-byte chunk) of the first fragment's tile whose address lane `lane` gives its
/// x4 `ldmatrix` (row0 = k0 = n0 = 0), as step08-mma-ldmatrix/src/kernel.cu computes it: `load_a`
/// r = lane % 16, `load_b` r = lane % 8 + 8 ((lane / 8) % 2), both at chunk lane / 16. Lanes 8m to
/// 8m + 7 give matrix m's eight rows.
pub(super) fn ldmatrix_row(op: Operand, lane: usize) -> (usize, usize) {
    let row = if op == Operand::A { lane % 16 } else { lane % 8 + 8 * ((lane / 8) % 2) };
    (row, lane / 16)
}

/// What one shared-memory access of step 8's fragment loads reads at the same time (one 128-byte
/// wavefront), as the (row, chunk) pairs of its tile, for the first fragment (row0 = k0 = n0 = 0),
/// and the instruction: step08-mma-ldmatrix/src/kernel.cu, `load_a` and `load_b`.
pub(super) fn step08_reads(p: Precision, op: Operand) -> (String, BTreeSet<(usize, usize)>) {
    let elem = p.input().bytes();
    let ldmatrix = match op {
        Operand::A => p != Precision::F64,
        Operand::B => matches!(p, Precision::F16 | Precision::Bf16),
    };
    if ldmatrix {
        // Lanes 0-7 give the eight row addresses of the first 8x8 matrix.
        let reads = (0..8).map(|lane| ldmatrix_row(op, lane)).collect();
        return ("ldmatrix".into(), reads);
    }
    // One value per lane, g = lane / 4, t = lane % 4, v = 0: FP64 A reads row g, column t, B row t,
    // column g (`load_a`, `load_b`). A 64-bit load is served per
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
pub(super) fn step08_swizzle(step: &Step) -> Document {
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

/// The eight 16-byte positions of a 128-byte line, numbered over a grid at `x0` of `cw`-wide cells.
pub(super) fn position_ticks(mut doc: Document, x0: f64, y: f64, cw: f64) -> Document {
    for pos in 0..8 {
        doc = doc.add(
            text(x0 + (pos as f64 + 0.5) * cw, y, format!("{pos}"))
                .set("font-size", SMALL)
                .set("text-anchor", "middle")
                .set("fill", "#666666"),
        );
    }
    doc
}

/// One access over a swizzled tile, for [`swizzle`].
pub(super) struct SwizzlePanel {
    /// The instruction(s): "ldmatrix".
    pub(super) kind: String,
    pub(super) xor: Xor,
    /// The (row, chunk) pairs the access reads at once.
    pub(super) reads: BTreeSet<(usize, usize)>,
    /// Who reads this way ("A in fp16 bf16"); empty for none.
    pub(super) users: String,
}

/// An XOR swizzle of 16-byte chunks: for each panel's access, the rows it reads as 128-byte
/// lines over the eight four-bank positions, stored plain and swizzled, the chunks it reads
/// coloured by row, and the passes (wavefronts) each layout needs.
pub(super) fn swizzle(lines: &[&str], panels: &[SwizzlePanel]) -> Document {
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
            doc = position_ticks(doc, x0, grid_top - 8.0, cw);
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
