use common::Shape;
use common::tools::testing::{OwnCases, main_variants_with};

/// Skinny shapes beside the shared suite, each with every tile of the rule: M = 1, 2, 3, 17, 63,
/// 65, 129, 200 and 255 with odd N and K. On an H200 (132 SMs) those with fewer tiles than half the
/// SMs cut their K into 2 to 5 slices, some of unequal length (K-tiles not a multiple of the
/// slices); (2, 11007, 999) runs a tile a cluster, and (200, 20000, 300) three waves of tiles.
const SKINNY: &[Shape] = &[
    Shape::new(1, 4097, 4097),
    Shape::new(2, 11007, 999),
    Shape::new(3, 5001, 3001),
    Shape::new(17, 3001, 2049),
    Shape::new(63, 2047, 4095),
    Shape::new(65, 1025, 777),
    Shape::new(129, 3003, 1501),
    Shape::new(200, 20000, 300),
    Shape::new(255, 1999, 4001),
    Shape::new(16, 11008, 4096),
];

/// The last slice of a tile adds the partial sums of the slices before it in a fixed order
/// (nearest first): two launches on one GPU give the same bits. Another GPU (another count of SMs)
/// may cut K into another number of slices, and round differently.
const SAME_BITS: &[(Shape, f32, f32)] =
    &[(Shape::new(16, 11008, 4096), 1.0, 0.0), (Shape::new(3, 5001, 3001), -1.5, 0.75)];

fn main() -> std::process::ExitCode {
    main_variants_with(&step15_skinny::VARIANTS, &OwnCases { shapes: SKINNY, repeatable: SAME_BITS })
}
