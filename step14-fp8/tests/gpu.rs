use common::Shape;
use common::tools::testing::{OwnCases, main_variants_with};

/// A shape whose last wave is too small to share out alone, on an H200 (66 clusters of two): 266
/// jobs of 128 x 192 with block scales and 399 of 128 x 128 per tensor leave 2 and 3 jobs, 22
/// K-tiles each, so that kernel.cu's `Jobs` shares them out with the wave before them, each
/// cluster's share spanning two or three jobs. M, N and K are no multiples of the tiles.
const LAST_TWO_WAVES: &[Shape] = &[Shape::new(1544, 7184, 2700)];

/// A job finished from pieces adds their partial sums in a fixed order: two launches on one GPU
/// give the same bits.
const SAME_BITS: &[(Shape, f32, f32)] = &[(Shape::new(1544, 7184, 2700), 1.0, 0.5)];

fn main() -> std::process::ExitCode {
    main_variants_with(&step14_fp8::VARIANTS, &OwnCases { shapes: LAST_TWO_WAVES, repeatable: SAME_BITS })
}
