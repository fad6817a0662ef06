//! The decode shapes' table (chapter 15): the top rung over the fastest cuBLAS configuration at
//! M = 1 to 256 against a layer's weights, both timing methods side by side.

use super::render::{Judged, all_rows, heading, judge, keys_of};
use super::{References, elem_label, with_c_types};
use common::Precision;
use std::fmt::Write as _;

/// The decode shapes (chapter 15): the rung over the fastest cuBLAS configuration with the same C,
/// both methods side by side, `torch.matmul` beside, and the decode shapes and precisions the file
/// has not timed yet, named so that the table cannot pass for complete.
pub fn decode(r: &References) -> String {
    let rows = all_rows(r);
    let shapes = crate::sweep::decode_shapes();
    // In the order of `decode_shapes` (by the layer's N and K, then M), FP16 before BF16.
    let place =
        |m: u64, n: u64, k: u64| shapes.iter().position(|s| (s.m, s.n, s.k) == (m as usize, n as usize, k as usize));
    let mut keys: Vec<_> = keys_of(r).into_iter().filter(|(m, n, k, _)| place(*m, *n, *k).is_some()).collect();
    keys.sort_by_key(|(m, n, k, p)| (place(*m, *n, *k), p != "fp16"));
    let judged = judge(r, &rows, &keys);
    let mut s = heading(r);
    let _ = writeln!(
        s,
        "The top rung over the fastest cuBLAS configuration with the same C (the verdict's timing), one \
         at a time and back to back, and over `torch.matmul` (its own process) in the same two ways:\n"
    );
    let _ = writeln!(
        s,
        "| shape | precision | C | fastest cuBLAS (one at a time) | one at a time | back to back | torch.matmul |"
    );
    let _ = writeln!(s, "|---|---|---|---|---:|---:|---|");
    let (mut met, mut cells, mut held) = (0, 0, 0);
    for key in &keys {
        let (m, n, k, p) = key;
        let Some(family) = Precision::parse(p) else { continue };
        for prec in with_c_types(family) {
            let here: Vec<&Judged> = judged.iter().filter(|j| j.key == key && j.prec == prec).collect();
            let by = |method: &str| here.iter().find(|j| j.method == method);
            let (Some(one), Some(back)) = (by("one at a time"), by("back to back")) else { continue };
            for j in [one, back] {
                match j.held_back {
                    Some(_) => held += 1,
                    None => (cells, met) = (cells + 1, met + usize::from(j.met() == Some(true))),
                }
            }
            let torch = |j: &Judged| j.torch.map_or("-".to_string(), |t| format!("{:.3}", j.rung().tflops / t.tflops));
            let _ = writeln!(
                s,
                "| {m}x{n}x{k} | {p} | {} | {} | {:.3} | {:.3} | {}, {} |",
                elem_label(prec.output()),
                one.best().who,
                one.ratio(),
                back.ratio(),
                torch(one),
                torch(back)
            );
        }
    }
    let held =
        if held > 0 { format!(" ({held} more timed while the GPU was held back, not judged)") } else { String::new() };
    let _ = writeln!(s, "\n{met} of {cells} cells at 1.00 or more{held}.");
    let missing: Vec<String> = ["fp16", "bf16"]
        .into_iter()
        .map(|p| {
            let timed = |i: usize| keys.iter().any(|(m, n, k, q)| q == p && place(*m, *n, *k) == Some(i));
            let left: Vec<String> = shapes
                .iter()
                .enumerate()
                .filter(|&(i, _)| !timed(i))
                .map(|(_, sh)| format!("{}x{}x{}", sh.m, sh.n, sh.k))
                .collect();
            (p, left)
        })
        .filter(|(_, left)| !left.is_empty())
        .map(|(p, left)| format!("{p} at {}", left.join(", ")))
        .collect();
    if !missing.is_empty() {
        let _ = writeln!(s, "\nNot timed yet: {}.", missing.join("; "));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::references::tests::{file, has_line, row};
    use crate::references::{Row, Watched};
    use common::timing::clocks::Clocks;

    /// The decode table holds the decode shapes alone, both methods in one line, and names the
    /// decode shapes and precisions not timed yet.
    #[test]
    fn the_decode_table_names_what_it_lacks() {
        let at = |m: u64, who: &str, method: &str, tflops: f64| Row {
            m,
            n: 11008,
            k: 4096,
            ..row(who, "fp32", method, tflops)
        };
        let mut rows = Vec::new();
        for method in ["one at a time", "back to back"] {
            rows.extend([at(16, "step15-skinny-fp16", method, 50.0), at(16, "cublasGemmEx", method, 52.0)]);
            rows.extend([at(4096, "step12-epilogue-fp16", method, 600.0), at(4096, "cublasGemmEx", method, 590.0)]);
        }
        let md = decode(&file(rows.clone()));
        has_line(&md, "| 16x11008x4096 | fp16 | fp32 | cublasGemmEx | 0.962 | 0.962 | -, - |");
        assert!(!md.contains("4096x11008x4096"), "{md}");
        has_line(&md, "0 of 2 cells at 1.00 or more.");
        has_line(&md, "Not timed yet: fp16 at 1x11008x4096, 8x11008x4096, 32x11008x4096");
        assert!(md.contains("; bf16 at 1x11008x4096,") && !md.contains("fp16 at 16x11008x4096"), "{md}");
        // Timed while the GPU was held back: shown, not judged.
        let s = common::timing::clocks::Sample {
            mhz: 1400,
            milliwatts: 690_000,
            reasons: common::timing::clocks::reason::SW_THERMAL,
        };
        let clocks = Clocks::from_samples(&[s, s]).unwrap();
        let hot = References {
            clocks: vec![Watched { m: 16, n: 11008, k: 4096, precision: "fp16".into(), clocks }],
            ..file(rows.clone())
        };
        has_line(&decode(&hot), "0 of 0 cells at 1.00 or more (2 more timed while the GPU was held back, not judged).");
    }
}
