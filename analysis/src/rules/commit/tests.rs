//! The CMT tests of the manual's commit numbers, which span several rules, and their helper.

use crate::derive::{self, Direction, configure};
use crate::mapping::layout::{Dim, Factor};
use crate::mapping::testing::{lay, terms};
use crate::mapping::{Axis, Layout};

fn write(axes: &str, buf: &str, time: &str, packet: &str) -> derive::Config {
    configure(
        &lay(axes, buf),
        &terms(axes, time),
        &terms(axes, packet),
        Direction::Write,
        8,
    )
    .expect("configures")
}

#[test]
fn l2195_truncation_commit_in_size() {
    // L2201-L2234: commit_in_size 8 (i8 W # 32 → W), 16 (f32 W → W = 4), 16 (bf16 N → N = 8,
    // transposed Time), 32 (i4 J, 64 × 0.5 bytes).
    let ax = "M = 4, K = 2, W = 8, N = 16, J = 64";
    let cin = |buf: &str, t: &str, p: &str, bits| {
        derive::commit_sizes(&write(ax, buf, t, p), bits, &[8, 16, 24, 32]).commit_in_size
    };
    assert_eq!(cin("M, K, W", "M, K", "W # 32", 8), 8);
    assert_eq!(cin("M, K, W = 4", "M, K", "W", 32), 16);
    assert_eq!(cin("K, M, N = 8", "M, K", "N", 16), 16);
    assert_eq!(cin("K, M, J", "M, K", "J", 4), 32);
}

#[test]
fn l7709_full_flit_commit() {
    // L7725-L7760: `m![A, [B, C] # 22]` (§22 A-6: `# n` pads to n, so the manual's 32-byte row
    // is `# 32`): [A=3:32, [B,C]=32:1] @ 1024 / 32, 3 cycles.
    let ax = "A = 3, B = 5, C = 2";
    let c = configure(
        &lay(ax, "A, [B, C] # 32"),
        &lay(ax, "A").dims,
        &lay(ax, "[B, C] # 32").dims,
        Direction::Write,
        8,
    )
    .expect("configures");
    let s = derive::commit_sizes(&c, 8, &[8, 16, 24, 32]);
    assert_eq!(
        c.entries[0],
        derive::Entry {
            size: 3,
            stride: 32
        }
    );
    assert_eq!(derive::time_steps(&c), 3);
    // Truncation keeps the 10 data bytes; the padded row is written with them: 32 bytes.
    assert_eq!((s.commit_in_size, c.packet_size), (10, 10));
    let buf = lay(ax, "A, [B, C] # 32");
    // L7753-L7754: commit_in_size = 32, commit_size = 32 (one write per A).
    let sizes = [8, 16, 24, 32];
    let w = derive::commit_sizes_into(&buf, 32, &c, 8, &sizes, &sizes, 8);
    assert_eq!((w.commit_in_size, w.commit_size), (32, Some(32)));
    assert_eq!(w.widened, derive::Widened::Padding);
}

#[test]
fn l7672_axis_permutation_commit() {
    // L7672-L7676: [A=3:8, B=5:24, C=8:1] @ 1024 / 8 for `m![B, A, C # 6]`, which the text
    // reads as "2 C elements plus 6 bytes padding" (§22 A-6): the 8-byte row is `C # 8`.
    let ax = "A = 3, B = 5, C = 2";
    let c = write(ax, "B, A, C # 8", "A, B", "C # 32");
    assert_eq!(
        &c.entries[..2],
        &[
            derive::Entry { size: 3, stride: 8 },
            derive::Entry {
                size: 5,
                stride: 24
            }
        ]
    );
    assert_eq!(derive::time_steps(&c), 15);
    // "Commit size: 8 bytes per write" (L7678).
    let buf = lay(ax, "B, A, C # 8");
    let sizes = [8, 16, 24, 32];
    let w = derive::commit_sizes_into(&buf, 32, &c, 8, &sizes, &sizes, 8);
    assert_eq!((w.commit_in_size, w.commit_size), (8, Some(8)));
}

#[test]
fn l7860_tail_padding_table() {
    // L7809-L7867: A = 65 (f8) padded to 72/80/88/96 bytes per row: the write sequencer
    // [B=2:row, (A # row)/n = row/n : n, A=n:1] / n with n = 24, 16, 8, 32, and fetch cycles
    // 2 * row / n = 6, 10, 22, 6.
    for (row, n, cycles) in [(72u64, 24u64, 6u64), (80, 16, 10), (88, 8, 22), (96, 32, 6)] {
        let a = Axis::new("A", 65);
        let b = Axis::new("B", 2);
        let buf = Layout::from_dims(vec![
            Dim::Factor(Factor {
                extent: 2,
                valid: 2,
                axis: Some(b.clone()),
                coef: 1,
                pad: crate::mapping::layout::PadKind::Top,
            }),
            Dim::Factor(Factor {
                extent: row,
                valid: 65,
                axis: Some(a.clone()),
                coef: 1,
                pad: crate::mapping::layout::PadKind::Top,
            }),
        ])
        .expect("layout");
        let time = [
            Dim::Factor(Factor {
                extent: 2,
                valid: 2,
                axis: Some(b),
                coef: 1,
                pad: crate::mapping::layout::PadKind::Top,
            }),
            Dim::Factor(Factor {
                extent: row / n,
                valid: row / n,
                axis: Some(a.clone()),
                coef: n,
                pad: crate::mapping::layout::PadKind::Top,
            }),
        ];
        let packet = [Dim::Factor(Factor {
            extent: n,
            valid: n,
            axis: Some(a),
            coef: 1,
            pad: crate::mapping::layout::PadKind::Top,
        })];
        let c = configure(&buf, &time, &packet, Direction::Read, 8).expect("configures");
        assert_eq!(
            c.entries,
            vec![
                derive::Entry {
                    size: 2,
                    stride: row
                },
                derive::Entry {
                    size: row / n,
                    stride: n
                },
                derive::Entry { size: n, stride: 1 },
            ],
            "row {row}"
        );
        let f = derive::fetch_sizes(&c, 8, &[8, 16, 24, 32]);
        assert_eq!(
            (f.fetch_size, f.cycles),
            (Some(n), Some(cycles)),
            "row {row}"
        );
    }
}

#[test]
fn commit_numbers_from_the_target() {
    // L2232-L2233: commit_in_size/commit_size 8, 16, 24, 32 (main), 8 (sub); L2338: strides
    // in multiples of 8 bytes.
    let t = &crate::target::RNGD;
    assert_eq!(t.commit_sizes_main, &[8, 16, 24, 32]);
    assert_eq!(t.commit_sizes_sub, &[8]);
    assert_eq!(t.commit_stride_align_bytes, 8);
}

/// furiosa-opt-std's `commit_cast` narrows what the commit writes, not the flit it takes: the
/// Commit Engine reads the f32 stream's 32-byte flits (`commit_adapter.rs:59-73`), so a 16-byte
/// bf16 packet after it is no CMT-001.
#[test]
fn commit_cast_keeps_the_flit_the_commit_takes() {
    let src = "use furiosa_opt_std::prelude::*;\naxes![Y = 512];\n\
               #[device(chip = 1)]\n\
               pub fn k(ctx: &mut Context, y: &DmTensor<f32, m![1], m![1 # 2], m![Y / 2], m![Y % 2]>) {\n\
               let _o: DmTensor<bf16, m![1], m![1 # 2], m![Y / 2], m![Y % 2 # 4]> = ctx.main.begin(y.view())\n\
               .fetch::<m![1], m![Y % 2]>().collect::<m![1], m![Y % 2 # 8]>()\n\
               .vector_init().vector_intra_slice_tag(TagMode::Zero).vector_narrow_trim::<m![Y % 2 # 4]>()\n\
               .vector_fp_binary(FpBinaryOp::AddF, 1.0).vector_widen_pad::<m![Y % 2 # 8]>().vector_final()\n\
               .commit_trim::<m![Y % 2 # 4]>().commit_cast::<bf16>().commit();\n}\n";
    let found = crate::check_text(src);
    assert!(found.is_empty(), "{found:#?}");
}
