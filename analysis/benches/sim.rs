//! The cost simulator on one kernel: what a cost hover or `visa-lint cost` pays per function
//! once the model and its derivations exist. Axis sizes must not matter: the same pipeline is
//! simulated with an axis of 2^4 and of 2^40; the manual's GEMM gives a real kernel's cost.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::Path;
use visa_analysis::sim;
use visa_analysis::target::RNGD;

fn read(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A whole pipeline (HBM -> DM, fetch, collect, vector, commit, DM -> HBM) over `A = n`.
fn pipeline(n: u64) -> String {
    format!(
        r#"
extern crate furiosa_visa_std;
use furiosa_visa_std::prelude::*;
axes![A = {n}, B = 64];
#[device(chip = 1)]
fn kernel(ctx: &mut Context, input: &HbmTensor<i32, m![1], m![A, B]>) -> HbmTensor<i32, m![1], m![A, B]> {{
    let dm = input.to_dm::<m![1 # 2], m![1 # 256], m![A, B]>(&mut ctx.tdma, 0);
    let result = ctx
        .main
        .begin(dm.view())
        .fetch::<i32, m![A, B / 8], m![B % 8]>()
        .collect::<m![A, B / 8], m![B % 8]>()
        .vector_init()
        .vector_intra_slice_branch(BranchMode::Unconditional)
        .vector_fxp(FxpBinaryOp::AddFxp, 1)
        .vector_final()
        .commit::<m![A, B]>(1 << 12);
    result.to_hbm(&mut ctx.tdma, 1 << 28)
}}
"#
    )
}

fn bench_sim(c: &mut Criterion) {
    let gemm = read("fixtures/manual/0473_gemm.rs");
    let variants = [
        ("pipeline_A_2^4", pipeline(1 << 4)),
        ("pipeline_A_2^40", pipeline(1 << 40)),
        ("gemm", gemm),
    ];
    let mut group = c.benchmark_group("simulate");
    let mut shapes = Vec::new();
    for (name, text) in &variants {
        let analysis = visa_analysis::db::analyse_text(text);
        let model = &analysis
            .fns
            .iter()
            .find(|(_, f)| f.model.name == "kernel")
            .expect("the device kernel")
            .1
            .model;
        let ops = visa_analysis::derive::ops(model, &RNGD);
        let dma = visa_analysis::derive::dma::ops(model, &RNGD);
        let k = sim::simulate(model, &ops, &dma, &RNGD);
        eprintln!(
            "{name}: {} operations, {} tasks, {} cycles",
            k.ops.len(),
            k.tasks.len(),
            k.total_cycles
        );
        assert!(!k.ops.is_empty(), "{name}: the kernel has operations");
        shapes.push((k.ops.len(), k.tasks.len()));
        group.bench_function(*name, |b| {
            b.iter(|| sim::simulate(black_box(model), &ops, &dma, &RNGD))
        });
    }
    assert_eq!(
        shapes[0], shapes[1],
        "2^4 and 2^40 simulate the same operations"
    );
    group.finish();
}

criterion_group!(benches, bench_sim);
criterion_main!(benches);
