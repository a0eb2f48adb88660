//! Mapping evaluation cost must not depend on axis sizes: the engine works on factor lists,
//! never on buffer positions. Compare the `2^4` and `2^40` rows (issue 2: within 2x).

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use visa_analysis::mapping::evaluate;

/// Stride, modulo, padding of a single axis and of a pair, a projection and an identity pad.
const MAPPING: &str = "m![A / 4, [B # (B::SIZE * 2)] / 2, A % 4 # 8, [A, B] % 16, 1 # 2]";

fn bench_sizes(c: &mut Criterion) {
    let mut group = c.benchmark_group("evaluate");
    for bits in [4u32, 20, 40] {
        let axes = format!("A = {}, B = 16", 1u64 << bits);
        group.bench_with_input(
            BenchmarkId::new("axes_of_2^bits", bits),
            &axes,
            |b, axes| {
                b.iter(|| {
                    let ev = evaluate(black_box(axes), black_box(MAPPING));
                    let l = ev.layout.expect("the benchmark mapping evaluates");
                    // Map positions spread over the whole buffer.
                    let mut acc = 0usize;
                    for k in 0..16u64 {
                        acc += l.map(l.size / 16 * k).map_or(0, |i| i.len());
                    }
                    black_box((l.to_expr(), acc))
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, bench_sizes);
criterion_main!(benches);
