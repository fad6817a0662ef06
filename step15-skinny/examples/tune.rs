//! How step 15's rule picks a narrow tile and a ring: the rule's plan at one shape, then the other
//! widths and depths and the skews of its slices, verified and timed against cuBLAS in the same
//! precision (and C type); `--only skew` times the skews alone.
//!
//!     cargo run --release -p step15-skinny --example tune15 [-- MxNxK [fp16|bf16|fp16-c16|bf16-c16]]

use common::harness::launch::{Tiles, with_defines};
use common::tools::tune::Candidate;
use step15_skinny::{Plan, SMS, SkinnyTiles, VARIANTS, WIDTHS, deepest_ring, launch_plan, plan, skew, slices, tiles};

/// The rule's plan first (at the shape the tuner is given), then each narrow tile with the deepest
/// ring that fits the SM's shared memory, then the rule's plan with shallower rings, then the
/// rule's plan and the deepest 16-wide ring without split-K, then step 12's orientation, then the
/// rule's plan on taller tiles in more slices, then the rule's plan with other skews.
fn candidates(p: common::Precision) -> Vec<Candidate> {
    let deepest_of = |bm, bn| Plan::Swapped { bm, bn, stages: deepest_ring(bm, bn) };
    let deepest = |bn| deepest_of(128, bn);
    let widths = || WIDTHS.iter().map(|&(_, bn)| bn);
    let mut plans: Vec<Option<Plan>> = vec![None];
    plans.extend(widths().map(|bn| Some(deepest(bn))));
    // Tiles of 64 rows of N (one consumer): twice the tiles, for shapes of few.
    plans.extend(widths().map(|bn| Some(deepest_of(64, bn))));
    // Tiles of 192 rows of N (three consumers): fewer tiles, for shapes of a wave and a bit.
    plans.extend([64, 128].map(|bn| Some(deepest_of(192, bn))));
    let mut all: Vec<Candidate> = plans
        .into_iter()
        .map(|chosen| {
            let label = chosen.map_or("the rule's plan".to_string(), |p| format!("{p:?}"));
            Candidate::new(label, move |s| launch_plan(s, p, tiles(p), chosen.unwrap_or_else(|| plan(s))))
        })
        .collect();
    // The rule's plan with a shallower ring than the deepest that fits.
    for stages in [4, 5, 6, 7, 8] {
        all.push(Candidate::new(format!("the rule's plan, {stages} buffers"), move |s| {
            let shallow = match plan(s) {
                Plan::Swapped { bm, bn, .. } => Plan::Swapped { bm, bn, stages },
                step12 => step12,
            };
            launch_plan(s, p, tiles(p), shallow)
        }));
    }
    // Without split-K: a block on each tile, over all of its K (as cuBLAS at 16 x 11008 x 4096).
    let alone = SkinnyTiles { spread: false, ..tiles(p) };
    all.push(Candidate::new("the rule's plan, no split-K", move |s| launch_plan(s, p, alone, plan(s))));
    let deep = deepest(16);
    all.push(Candidate::new(format!("{deep:?}, no split-K"), move |s| launch_plan(s, p, alone, deep)));
    // Step 12's orientation (not swapped, the persistent grid) with step 12's tiles, or with the
    // tiles an experiment's `--define` gives (e.g. BN=96 with B_BOX_COLS=32, 64-byte boxes of B).
    let base = tiles(p).step12;
    all.push(Candidate::following("step 12's orientation", move |s, d| {
        let t = SkinnyTiles { step12: base.following(d), swap: false, spread: false };
        launch_plan(s, p, t, Plan::Step12)
    }));
    // Where the rule takes tiles of 64 rows of N in slices: tiles of 128 rows in twice the slices,
    // as many units, each SM reading twice the bytes of each row of B (`notes/step15.md`, "Next:
    // taller tiles where K is long").
    for stages in [6, 8] {
        for (halved, name) in [(false, "the rule's skew"), (true, "half the rule's skew")] {
            let label = format!("the rule's plan on 128 rows, twice the slices, {stages} buffers, {name}");
            all.push(Candidate::new(label, move |s| {
                let rule = plan(s);
                let (taller, slices) = match rule {
                    Plan::Swapped { bm: 64, bn, .. } => {
                        let stages = stages.min(deepest_ring(128, bn));
                        (Plan::Swapped { bm: 128, bn, stages }, 2 * slices(s, p, SMS))
                    }
                    _ => (rule, slices(s, p, SMS)),
                };
                let skew = skew(rule) >> halved as usize;
                with_defines(launch_plan(s, p, tiles(p), taller), &[("SLICES", slices as i64), ("SKEW", skew as i64)])
            }));
        }
    }
    // The rule's plan with its cuts between slices moved by other skews (`skew` in lib.rs).
    for skew in [0, 2, 4, 6, 8, 10, 12, 16] {
        all.push(Candidate::new(format!("the rule's plan, skew {skew}"), move |s| {
            with_defines(launch_plan(s, p, tiles(p), plan(s)), &[("SKEW", skew)])
        }));
    }
    all
}

fn main() -> std::process::ExitCode {
    common::tools::tune::main(&VARIANTS, candidates)
}
