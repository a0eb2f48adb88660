//! Tests of several rules at once and of the files the rules share, and the helpers the
//! rules' tests share.

use super::call::ring_cycles;
use super::config::{Topology, parse_config};
use super::layouts::{show, tiled};
use super::switch_topology_pattern::expected;
use crate::diagnostic::Span;
use crate::mapping::{Layout, evaluate};
use crate::model::Arg;
use std::collections::BTreeSet;

/// The layout of `mapping` under `axes`.
pub(super) fn l(axes: &str, mapping: &str) -> Layout {
    evaluate(axes, mapping)
        .layout
        .unwrap_or_else(|| panic!("{mapping} lowers"))
}

/// The expected output of `topo` as `m!` bodies, broadcasts named `X`.
pub(super) fn out(axes: &str, slice: &str, time: &str, topo: Topology) -> (String, String) {
    let (s, t) = expected(topo, &l(axes, slice), &l(axes, time))
        .expect("parameters fit")
        .expect("regular");
    (show(&s), format!("m![{}]", t.to_expr()))
}

pub(super) fn same(axes: &str, got: &(String, String), slice: &str, time: &str) {
    let known: BTreeSet<String> = ["A", "B", "C", "D"].iter().map(|s| s.to_string()).collect();
    let strip = |s: &str| {
        s.trim_start_matches("m![")
            .trim_end_matches(']')
            .to_string()
    };
    let (gs, gt) = (l(axes, &strip(&got.0)), l(axes, &strip(&got.1)));
    assert_eq!(
        tiled(&gs, &known),
        tiled(&l(axes, slice), &known),
        "slice {got:?}"
    );
    assert_eq!(gt, l(axes, time), "time {got:?}");
}

#[test]
fn cycle_estimates_golden() {
    let flit = crate::target::RNGD.flit_bytes;
    // L3206-L3209: Broadcast01 ring 2 × 2, B = 64, packet (C # 64) i8 = 64 bytes.
    assert_eq!(ring_cycles(4, 64, 64, flit), Some(512));
    // L3361-L3363: arbitrary permutation, ring 256, C = 8, m![D, E] i8 = 64 bytes.
    assert_eq!(ring_cycles(256, 8, 64, flit), Some(4096));
    // L3398-L3400: multi-axis broadcast, ring 32.
    assert_eq!(ring_cycles(32, 8, 64, flit), Some(512));
    // L3438-L3440: partial axis extraction, ring 4: the manual prints "4 × 8 × 2 = 128",
    // but the product of its own factors is 64.
    assert_eq!(ring_cycles(4, 8, 64, flit), Some(64));
    // L3527-L3529: ring 4, input_time 64, 64-byte packets.
    assert_eq!(ring_cycles(4, 64, 64, flit), Some(512));
    assert_eq!(ring_cycles(u64::MAX, 2, 64, flit), None);
}

#[test]
fn parameters_must_divide() {
    let axes = "A = 256, B = 64";
    let e = expected(
        Topology::Broadcast01 {
            slice1: 2,
            slice0: 2,
            time0: 3,
        },
        &l(axes, "A"),
        &l(axes, "B"),
    );
    assert_eq!(
        e.map_err(|u| (u.code.code, u.field)),
        Err(("SWI-003", "time0"))
    );
    let e = expected(
        Topology::Transpose {
            slice1: 3,
            slice0: 2,
        },
        &l(axes, "A"),
        &l(axes, "B"),
    );
    assert_eq!(e.map_err(|u| u.code.code), Err("SWI-003"));
    let e = expected(
        Topology::Transpose {
            slice1: 0,
            slice0: 2,
        },
        &l(axes, "A"),
        &l(axes, "B"),
    );
    assert_eq!(
        e.map_err(|u| (u.code.code, u.field)),
        Err(("SWI-003", "slice1"))
    );
    let e = expected(
        Topology::InterTranspose {
            slice1: 4,
            slice0: 16,
            time0: 2,
        },
        &l("A = 4, C = 256", "C"),
        &l("A = 4, C = 256", "A"),
    );
    assert_eq!(e.map_err(|u| u.code.code), Err("SWI-004"));
}

#[test]
fn config_parsing_reads_fields_and_spans() {
    let text = "SwitchConfig::Broadcast01 {\n slice1: 2,\n slice0: 1_0, time0: 4u32, }";
    let arg = Arg::written(text.to_string(), Span::new(100, 100 + text.len()));
    let c = parse_config(&arg).expect("parses");
    assert_eq!(
        c.topo,
        Topology::Broadcast01 {
            slice1: 2,
            slice0: 10,
            time0: 4
        }
    );
    let s = c.span("slice0", Span::default());
    assert_eq!(&text[s.start as usize - 100..s.end as usize - 100], "1_0");
    let text = "SwitchConfig::CustomBroadcast {\n ring_size: 4, // r\n /* é */ }";
    let arg = Arg::written(text.to_string(), Span::new(0, text.len()));
    let c = parse_config(&arg).expect("comments are skipped");
    assert_eq!(c.topo, Topology::Custom { ring_size: 4 });
    let bad = Arg::written(
        "SwitchConfig::CustomBroadcast { ring_size: N }".to_string(),
        Span::default(),
    );
    assert!(parse_config(&bad).is_none());
}

fn codes(text: &str) -> Vec<String> {
    crate::check_text(text)
        .into_iter()
        .filter(|d| d.code().starts_with("SWI") || d.code() == "KRN-003")
        .map(|d| format!("{} {}", d.code(), &text[d.span.range()]))
        .collect()
}

#[test]
fn manual_invalid_custom_examples_fire() {
    let kernel = |time: &str, slice: &str, ring: u64| {
        format!(
            "use furiosa_visa_std::prelude::*;\naxes![A = 16, B = 16, C = 8, D = 8, E = 8, X = 4, Y = 2, Z = 2];\n\
             fn f<'l, const T: Tu>(input: FetchTensor<'l, T, i8, m![1], m![1 # 2], m![A, B], m![C], m![D, E]>) \
             -> SwitchTensor<'l, T, i8, m![1], m![1 # 2], m![{slice}], m![{time}], m![D, E]> {{\n\
             input.switch::<m![{slice}], m![{time}]>(SwitchConfig::CustomBroadcast {{ ring_size: {ring} }})\n}}\n"
        )
    };
    // L3459-L3470: Time m![C, B % 2, B / 2] reverses the moved B.
    let t = kernel("C, B % 2, B / 2", "A, B / 4, X", 4);
    assert_eq!(codes(&t), vec!["SWI-006 m![C, B % 2, B / 2]".to_string()]);
    // The valid order; that custom bitmap is also the regular Broadcast1 { 4, 1 }.
    let t = kernel("C, B / 2 % 2, B % 2", "A, B / 4, X", 4);
    assert_eq!(codes(&t), vec!["SWI-010 4".to_string()]);
    // L3471-L3483: Time m![A % 2, C, B % 2] puts C between the moved axes.
    let t = kernel("A % 2, C, B % 2", "A / 2, Y, B / 2, Z", 32);
    assert_eq!(codes(&t), vec!["SWI-007 m![A % 2, C, B % 2]".to_string()]);
}
