use criterion::{Criterion, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    common::tools::bench::run(c, &step05_threadtile_float4::STEP);
}

criterion_group!(benches, bench);
criterion_main!(benches);
