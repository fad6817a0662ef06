use common::Shape;
use common::tools::testing::{OwnCases, main_variants_with};

/// Shapes whose last wave is too small to share out alone, on an H200 (66 clusters of two), so
/// that kernel.cu's `Jobs` shares it out with the wave before it. At 1544 x 7184 x 2700, 266 jobs
/// of 128 x 192 with block scales and 399 of 128 x 128 per tensor leave 2 and 3 jobs of 22
/// K-tiles; at 250 x 51600 x 3300, 269 jobs of 128 x 192 leave 5 of 26, and two clusters' shares
/// span three jobs (the end of one, a whole one, the start of a third; the diagram's test in
/// xtask/src/svg/diagram/tail.rs names them). M, N and K are no multiples of the tiles.
const LAST_TWO_WAVES: &[Shape] = &[Shape::new(1544, 7184, 2700), Shape::new(250, 51600, 3300)];

/// A job finished from pieces adds their partial sums in a fixed order: two launches on one GPU
/// give the same bits.
const SAME_BITS: &[(Shape, f32, f32)] =
    &[(Shape::new(1544, 7184, 2700), 1.0, 0.5), (Shape::new(250, 51600, 3300), -1.0, 0.25)];

fn main() -> std::process::ExitCode {
    main_variants_with(&step14_fp8::VARIANTS, &OwnCases { shapes: LAST_TWO_WAVES, repeatable: SAME_BITS })
}
