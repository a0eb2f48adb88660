//! Whole-file analysis (every rule family) of the manual's kernels: the cost of one keystroke
//! in an editor (a fresh database each time, so nothing is reused), and of linting every
//! shipped fixture once. Axis sizes must not matter: the GEMM kernel is also run with its axes
//! scaled to 2^40.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::Path;

fn read(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn bench_check(c: &mut Criterion) {
    let gemm = read("fixtures/manual/0473_gemm.rs");
    let huge = gemm.replace(
        "axes![I = 512, J = 512, K = 2048]",
        "axes![I = 1099511627776, J = 1099511627776, K = 1099511627776]",
    );
    assert_ne!(gemm, huge, "the GEMM fixture declares its axes as expected");
    let mut group = c.benchmark_group("check_text");
    group.bench_function("gemm", |b| {
        b.iter(|| visa_analysis::check_text(black_box(&gemm)))
    });
    group.bench_function("gemm_axes_2^40", |b| {
        b.iter(|| visa_analysis::check_text(black_box(&huge)))
    });
    group.finish();

    let mut files: Vec<String> = Vec::new();
    for dir in ["fixtures/manual", "fixtures/rules", "fixtures/ok"] {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(dir);
        let Ok(entries) = std::fs::read_dir(&root) else {
            continue;
        };
        for e in entries.flatten() {
            if let Ok(text) = std::fs::read_to_string(e.path()) {
                files.push(text);
            }
        }
    }
    assert!(files.len() > 400, "{} fixtures", files.len());
    let mut group = c.benchmark_group("lint");
    group.sample_size(10);
    group.bench_function("every_fixture", |b| {
        b.iter(|| {
            files
                .iter()
                .map(|t| visa_analysis::check_text(black_box(t)).len())
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, bench_check);
criterion_main!(benches);
