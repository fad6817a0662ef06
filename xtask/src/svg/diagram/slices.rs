//! Step 15: where the SMs read B at the start of a decode GEMM, with step 11's even shares of all
//! K-tiles (stream-K) and with this step's slices. The shares and the slices are computed as the
//! kernels compute them: step 11's `Schedule::begin` and the first piece it loads (schedule.cuh),
//! and step 15's `slices`, `skew` and `cut` (its lib.rs, which mirror skinny.cuh's `Slices`).

use super::draw::*;
use crate::results::Results;
use common::{Precision, Shape};
use step15_skinny::{Plan, cut, plan, skew, slices, swapped_tiles};
use svg::Document;

/// The first K-tile each SM reads, as (tile, K-tile), and the unit of every cell, for the even
/// shares of `tiles` x `ktiles` over `clusters` (every tile shared out: tail = tiles).
fn even_shares(tiles: usize, ktiles: usize, clusters: usize) -> (Vec<(usize, usize)>, Vec<usize>) {
    let begin = |c: usize| c * tiles * ktiles / clusters;
    let mut owner = vec![0; tiles * ktiles];
    let mut first = Vec::new();
    for c in 0..clusters {
        let (b, e) = (begin(c), begin(c + 1));
        owner[b..e].iter_mut().for_each(|o| *o = c);
        // A share that crosses into the next job multiplies that job's start first.
        let next = (b / ktiles + 1) * ktiles;
        let at = if e > next { next } else { b };
        if e > b {
            first.push((at / ktiles, at % ktiles));
        }
    }
    (first, owner)
}

pub(super) fn slices_diagram(book: &Results) -> Result<Document, String> {
    let (shape, p) = (Shape::new(16, 4096, 4096), Precision::F16C16);
    let chosen = plan(&shape);
    let Plan::Swapped { bm, bn, .. } = chosen else { return Err(format!("step 15 does not swap at {shape}")) };
    let clusters = book.sweep.gpu.sms as usize;
    let (tiles, ktiles) = (swapped_tiles(&shape, bm, bn), shape.k.div_ceil(64));
    let (s, sk) = (slices(&shape, p, clusters), skew(chosen));
    let cuts: Vec<usize> = (0..=s).map(|i| cut(i, s, ktiles, sk)).collect();
    let (first, owner) = even_shares(tiles, ktiles, clusters);
    let rows_even = first.iter().map(|f| f.1).collect::<std::collections::BTreeSet<_>>().len();
    let (ch, top, gap) = (4.0, 150.0, 40.0);
    // Two panels of a column a tile side by side in the 540-wide picture.
    let cw = ((540.0 - 28.0 - gap) / 2.0 / tiles as f64).min(7.0);
    let panel_w = cw * tiles as f64;
    let (x0, x1) = (14.0, 14.0 + panel_w + gap);
    let mut doc = heading(
        document(540, 560),
        &[
            &format!("step15-skinny at {} x {} x {} on {clusters} SMs", shape.m, shape.n, shape.k),
            &format!("{tiles} tiles of C^T (columns, {bm} of N each) by {ktiles} K-tiles"),
            "(rows); black: the K-tile each SM reads first",
        ],
    );
    let tints = ["#c9d6e6", FAINT];
    doc = doc
        .add(text(x0, top - 16.0, "even shares (stream-K)").set("font-size", SMALL))
        .add(text(x1, top - 16.0, format!("{s} slices a tile")).set("font-size", SMALL));
    for j in 0..tiles {
        for k in 0..ktiles {
            let y = top + ch * k as f64;
            let even = tints[owner[j * ktiles + k] % 2];
            let slice = (0..s).rev().find(|&i| cuts[i] <= k).unwrap_or(0);
            let sliced = WARP[slice % WARP.len()];
            doc = doc.add(rect(x0 + cw * j as f64, y, cw - 0.5, ch - 0.5, even)).add(rect(
                x1 + cw * j as f64,
                y,
                cw - 0.5,
                ch - 0.5,
                sliced,
            ));
        }
    }
    for &(j, k) in &first {
        doc = doc.add(rect(x0 + cw * j as f64, top + ch * k as f64, cw - 0.5, ch - 0.5, INK));
    }
    // Every unit of the slices runs in the first wave (tiles x slices <= clusters): each starts at
    // its slice's first K-tile.
    let units = tiles * s;
    for u in 0..units.min(clusters) {
        let (j, slice) = (u % tiles, u / tiles);
        doc = doc.add(rect(x1 + cw * j as f64, top + ch * cuts[slice] as f64, cw - 0.5, ch - 0.5, INK));
    }
    let notes_y = top + ch * ktiles as f64 + 34.0;
    let notes = [
        format!(
            "left: {} SMs, {:.1} K-tiles each, start on {rows_even} rows of B",
            first.len(),
            (tiles * ktiles) as f64 / clusters as f64
        ),
        format!("right: {units} SMs start on {s} rows of B; the slices take"),
        format!(
            "{} K-tiles, each cut {sk} K-tiles before the even one",
            cuts.windows(2).map(|w| (w[1] - w[0]).to_string()).collect::<Vec<_>>().join(" and ")
        ),
        "(the slices' units are numbered slice by slice: the SMs".to_string(),
        "of one slice read the same rows of B side by side)".to_string(),
    ];
    for (i, n) in notes.iter().enumerate() {
        doc = doc.add(text(x0, notes_y + 22.0 * i as f64, n.as_str()).set("font-size", SMALL));
    }
    Ok(doc)
}
