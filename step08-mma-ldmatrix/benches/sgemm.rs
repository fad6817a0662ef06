use criterion::{Criterion, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    common::tools::bench::run_variants(c, &step08_mma_ldmatrix::VARIANTS);
}

criterion_group!(benches, bench);
criterion_main!(benches);
