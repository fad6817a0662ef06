//! Step 13 (and step 8): 3xTF32's split of an FP32 value into two TF32 numbers.

use super::draw::*;
use common::Step;
use svg::Document;

/// The two literals of `split_tf32` (common/include/tensor.cuh): the mask that keeps big's bits
/// (`big = u & MASK`) and what small adds before the tensor cores drop its low bits
/// (`small = (rest + HALF) | sign`).
fn split_literals() -> Result<(u32, u32), String> {
    let header = common::harness::compile::HEADERS.iter().find(|h| h.name == "tensor.cuh").ok_or("no tensor.cuh")?.text;
    let body = header.split_once("void split_tf32(").ok_or("no split_tf32 in tensor.cuh")?.1;
    let hex = |after: &str| -> Result<u32, String> {
        let at = body.split_once(after).ok_or_else(|| format!("split_tf32 has no `{after}`"))?.1;
        let digits: String = at.trim_start_matches("0x").chars().take_while(char::is_ascii_hexdigit).collect();
        u32::from_str_radix(&digits, 16).map_err(|e| format!("split_tf32: {e}"))
    };
    Ok((hex("big = u & ")?, hex("(__float_as_uint(rest) + ")?))
}

/// `split_tf32` on the host, bit for bit: (big, small as the tensor cores read it).
fn split(x: f32, mask: u32, half: u32) -> (u32, u32) {
    let u = x.to_bits();
    let big = u & mask;
    let rest = (x - f32::from_bits(big)).abs().max(f32::MIN_POSITIVE);
    let small = (rest.to_bits() + half) | (u & 0x8000_0000);
    (big, small & mask)
}

/// How a row of bits shades the mantissa bits that `mask` keeps, and those it does not.
#[derive(Clone, Copy)]
enum Shade {
    /// Kept bits blue, the others orange: they are what small carries.
    Splits,
    /// Kept bits blue, the others grey: zero.
    Big,
    /// Kept bits orange: x's low bits, now a TF32 number of their own.
    Small,
}

/// The 32 bits of `bits` as cells at (x, y): sign, exponent and mantissa shaded apart, the
/// mantissa by what `mask` keeps of it.
fn bit_row(
    mut doc: Document,
    (x, y): (f64, f64),
    cell: f64,
    bits: u32,
    mask: u32,
    shade: Shade,
    label: &str,
) -> Document {
    const BLUE: &str = "#c9daf0";
    const ORANGE: &str = "#f7d9b5";
    doc = doc.add(text(x, y - 8.0, label).set("font-size", SMALL));
    for i in 0..32 {
        let bit = 31 - i;
        let kept = mask >> bit & 1 == 1;
        let (fill, ink) = match (i, shade, kept) {
            (0, _, _) => ("#f6d0d0", INK),
            (1..=8, _, _) => ("#cfe8c9", INK),
            (_, Shade::Small, true) => (ORANGE, INK),
            (_, Shade::Splits, false) => (ORANGE, INK),
            (_, _, true) => (BLUE, INK),
            _ => (FAINT, "#9a9a9a"),
        };
        let cx = x + i as f64 * cell;
        doc = doc.add(rect(cx, y, cell, cell * 1.3, fill).set("stroke", "white").set("stroke-width", 1)).add(
            text(cx + cell / 2.0, y + cell, format!("{}", bits >> bit & 1))
                .set("font-size", SMALL)
                .set("text-anchor", "middle")
                .set("fill", ink),
        );
    }
    doc
}

/// 3xTF32's split, for step 13's FP32 inputs: x (here π in FP32) is big, x with the mask's low
/// bits cleared, plus small, the rest rounded to a TF32 number of its own; of the four products
/// of a = big + small and b likewise, the three kept and the one dropped.
pub(super) fn split_diagram(step: &Step) -> Result<Document, String> {
    let (mask, half) = split_literals()?;
    let dropped = mask.trailing_zeros();
    let kept = 23 - dropped;
    let x = std::f32::consts::PI;
    let (big, small) = split(x, mask, half);
    let (left, cell) = (14.0, 16.0);
    let mut doc = heading(
        document(540, 656),
        &[
            &format!("{}: x = big + small, two TF32", step.name),
            "FP32: sign, 8 exponent and 23 mantissa bits; TF32",
            &format!("keeps {kept} of them: big = x & 0x{mask:08x}"),
        ],
    );
    let rows = [
        (x.to_bits(), Shade::Splits, format!("x = {x:.8}; orange: the {dropped} bits TF32 drops")),
        (big, Shade::Big, format!("big = {:.8}: those bits cleared", f32::from_bits(big))),
        (small, Shade::Small, format!("small = {:.4e}: x - big, rounded to TF32", f32::from_bits(small))),
    ];
    for (i, (bits, shade, label)) in rows.iter().enumerate() {
        doc = bit_row(doc, (left, 140.0 + 78.0 * i as f64), cell, *bits, mask, *shade, label);
    }
    let error = (f32::from_bits(big) as f64 + f32::from_bits(small) as f64 - x as f64).abs() / x as f64;
    let below = 140.0 + 78.0 * 3.0 + 4.0;
    doc = doc.add(
        text(left, below, format!("big + small is x to {error:.1e}: {} of x's 24 bits", 2 * (kept + 1)))
            .set("font-size", SMALL),
    );
    // The four products of a * b, split.
    let (gx, gy, gw, gh) = (left + 150.0, below + 70.0, 170.0, 64.0);
    doc = doc
        .add(text(left, gy - 26.0, "a b = (big_a + small_a) (big_b + small_b)").set("font-weight", "bold"))
        .add(text(gx + gw / 2.0, gy - 6.0, "big_b").set("font-size", SMALL).set("text-anchor", "middle"))
        .add(text(gx + 1.5 * gw, gy - 6.0, "small_b").set("font-size", SMALL).set("text-anchor", "middle"));
    let products = [
        ("big_a", [("big x big", true), ("big x small", true)]),
        ("small_a", [("small x big", true), ("small x small", false)]),
    ];
    for (r, (name, cells)) in products.iter().enumerate() {
        let y = gy + r as f64 * gh;
        doc = doc.add(text(gx - 10.0, y + gh / 2.0 + 6.0, *name).set("font-size", SMALL).set("text-anchor", "end"));
        for (c, (what, kept)) in cells.iter().enumerate() {
            let x0 = gx + c as f64 * gw;
            let (fill, note) = if *kept { (WARP[0], "a TF32 wgmma") } else { (FAINT, "dropped: < 2^-20 |a b|") };
            doc = doc
                .add(rect(x0, y, gw, gh, fill).set("stroke", "white").set("stroke-width", 3))
                .add(
                    text(x0 + gw / 2.0, y + 26.0, *what)
                        .set("font-size", SMALL)
                        .set("text-anchor", "middle")
                        .set("fill", if *kept { "white" } else { INK }),
                )
                .add(
                    text(x0 + gw / 2.0, y + 48.0, note)
                        .set("font-size", 14)
                        .set("text-anchor", "middle")
                        .set("fill", if *kept { "white" } else { INK }),
                );
        }
    }
    let foot = gy + 2.0 * gh + 34.0;
    Ok(doc
        .add(text(left, foot, "three wgmma per K step, the small products first; a b").set("font-size", SMALL))
        .add(text(left, foot + 20.0, "to within 2^-19, at a third of TF32's rate").set("font-size", SMALL)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_is_the_kernels() {
        let (mask, half) = split_literals().unwrap();
        assert_eq!((mask, half), (0xffff_e000, 0x1000));
        for x in [std::f32::consts::PI, -1.0 / 3.0, 1e-3, 12345.678] {
            let (big, small) = split(x, mask, half);
            assert_eq!(big & !mask, 0);
            assert_eq!(small & !mask, 0, "small is a TF32 number");
            let sum = f32::from_bits(big) as f64 + f32::from_bits(small) as f64;
            assert!((sum - x as f64).abs() <= x.abs() as f64 * 2f64.powi(-21), "{x}: {sum}");
        }
    }
}
