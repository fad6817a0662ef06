use criterion::{Criterion, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    common::tools::bench::run_variants(c, &step15_skinny::VARIANTS);
}

criterion_group!(benches, bench);
criterion_main!(benches);
