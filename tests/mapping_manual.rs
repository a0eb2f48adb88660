//! Golden tests for the `m!` mapping engine against the Virtual ISA manual.
//!
//! Every test reproduces one assertion or worked number of the manual's "Mapping Expressions"
//! page (seed 001, lines 580-1028) or its "Memory and Stream" page (lines 1029-1161) and is
//! named after the first manual line it reproduces (`l0678_...` is manual line 678). The
//! manual's `E::map(i)` is [`Layout::map`], its `E::SIZE` is [`Layout::size`], and its
//! equivalence of mappings (lines 1018-1020) is checked position by position as well as through
//! the normal form (`==` on layouts).
//!
//! `evaluate` takes one mapping, so the manual's escapes `{ E }` are written inline as the group
//! `[ ... ]` of the alias body. Two tests (`l0974_...` and `l1022_...`) also go through a
//! [`Scope`] with real `type X = m![...]` aliases; alias resolution in whole files is tested
//! with the rules, not here.

use std::collections::BTreeSet;
use std::sync::Arc;

use expect_test::expect;
use visa_analysis::Span;
use visa_analysis::mapping::describe::{describe, digits};
use visa_analysis::mapping::lower::Alias;
use visa_analysis::mapping::{Index, Layout, Scope, ast, lower, parse};
use visa_analysis::{Evaluation, evaluate};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// The tensor index `i![k1: v1, ...]`, wrapped in `Some` as `map` returns it. Zero coordinates
/// are dropped, as the manual's `i![A: 0]` is `i![]` (line 671-673).
fn idx(pairs: &[(&str, u128)]) -> Option<Index> {
    Some(
        pairs
            .iter()
            .filter(|(_, v)| *v != 0)
            .map(|(k, v)| (Arc::from(*k), *v))
            .collect(),
    )
}

/// Evaluates a mapping that must be free of diagnostics and returns its normal form.
fn layout(axes: &str, mapping: &str) -> Layout {
    let ev = evaluate(axes, mapping);
    assert!(
        ev.diagnostics.is_empty(),
        "`{mapping}` under `{axes}` should have no diagnostics, got {:?}",
        ev.diagnostics
            .iter()
            .map(|d| format!("{}: {}", d.code(), d.message))
            .collect::<Vec<_>>()
    );
    ev.layout
        .unwrap_or_else(|| panic!("`{mapping}` under `{axes}` should evaluate"))
}

/// Evaluates a mapping that must produce exactly one diagnostic and returns it with the
/// evaluation (for its source text).
fn single_diagnostic(axes: &str, mapping: &str) -> Evaluation {
    let ev = evaluate(axes, mapping);
    assert_eq!(
        ev.diagnostics.len(),
        1,
        "`{mapping}` under `{axes}` should have exactly one diagnostic, got {:?}",
        ev.diagnostics
            .iter()
            .map(|d| format!("{}: {}", d.code(), d.message))
            .collect::<Vec<_>>()
    );
    ev
}

/// Applies every edit of fix `k` of the first diagnostic to the evaluation's source.
fn apply_fix(ev: &Evaluation, k: usize) -> String {
    let fix = &ev.diagnostics[0].fixes[k];
    let mut edits = fix.edits.clone();
    edits.sort_by_key(|e| std::cmp::Reverse(e.span.start));
    let mut text = ev.source.clone();
    for e in edits {
        text.replace_range(e.span.range(), &e.new_text);
    }
    text
}

/// Splits a virtual evaluation source `axes![...];\nm![...]` back into its two bodies.
fn split_source(source: &str) -> (String, String) {
    let (axes, mapping) = source
        .split_once(";\n")
        .expect("an evaluation source has an axes line and a mapping line");
    (axes.to_string(), mapping.to_string())
}

/// The union `t1 ∪ t2` of two partial tensor indices (manual line 1158). The manual's `Pair`
/// combines its halves the same way (`Index::add`, line 713).
fn union(a: &Index, b: &Index) -> Index {
    let mut out = a.clone();
    for (k, v) in b {
        *out.entry(k.clone()).or_insert(0) += v;
    }
    out
}

/// Buffer positions to compare two mappings at: all of them for small mappings, otherwise an
/// even sample plus both ends; always including the first position past the end.
fn probe_positions(size: u64) -> Vec<u64> {
    const ALL: u64 = 1 << 12;
    if size <= ALL {
        return (0..=size).collect();
    }
    let step = size / ALL;
    let mut v: Vec<u64> = (0..ALL).map(|k| k * step).collect();
    v.extend([size - 2, size - 1, size, size + 1]);
    v
}

/// The manual's equivalence (lines 1018-1020): equal sizes and equal `map` at every position.
/// Compares `map_all` so that linear combinations are compared as sets of indices.
fn assert_same_mapping(lhs: &Layout, rhs: &Layout, what: &str) {
    assert_eq!(lhs.size, rhs.size, "{what}: sizes differ");
    for i in probe_positions(lhs.size) {
        assert_eq!(
            lhs.map_all(i),
            rhs.map_all(i),
            "{what}: position {i} differs ({} vs {})",
            lhs.to_expr(),
            rhs.to_expr()
        );
    }
}

/// Equivalent by the manual's definition *and* equal as normal forms.
fn assert_equivalent(lhs: &Layout, rhs: &Layout, what: &str) {
    assert_same_mapping(lhs, rhs, what);
    assert_eq!(
        lhs,
        rhs,
        "{what}: the mappings agree at every position but their normal forms differ: `{}` vs `{}`",
        lhs.to_expr(),
        rhs.to_expr()
    );
}

/// Lowers `mapping` in a scope with the given axes and `type Name = m![body]` aliases.
fn with_aliases(axes: &str, aliases: &[(&str, &str)], mapping: &str) -> Layout {
    let mut diags = Vec::new();
    let mut scope = Scope::default();
    let (decls, problems) = parse::parse_axes(axes);
    assert!(
        problems.is_empty(),
        "the axes `{axes}` should parse: {problems:?}"
    );
    scope.declare_axes(&decls, &mut diags);
    for (name, body) in aliases {
        let body = parse::parse_mapping(body).expect("the alias body parses");
        scope.aliases.insert(
            (*name).to_string(),
            Alias {
                name: ast::Name {
                    text: (*name).to_string(),
                    span: Span::new(0, 0),
                },
                body: Some(body),
                generics: Vec::new(),
            },
        );
    }
    let expr = parse::parse_mapping(mapping).expect("the mapping parses");
    let l = lower(&expr, &scope, &mut diags);
    assert!(
        diags.is_empty(),
        "`{mapping}` should have no diagnostics, got {:?}",
        diags
            .iter()
            .map(|p| visa_analysis::rules::mapping_diagnostic(p).message)
            .collect::<Vec<_>>()
    );
    l.unwrap_or_else(|| panic!("`{mapping}` should evaluate"))
}

/// Divisors of `n`, ascending.
fn divisors(n: u64) -> Vec<u64> {
    (1..=n).filter(|d| n.is_multiple_of(*d)).collect()
}

const AB: &str = "A = 8, B = 512";

// ---------------------------------------------------------------------------------------------
// Mapping Expressions: introduction and host tensors (lines 583-620)
// ---------------------------------------------------------------------------------------------

// L585-586: `m![A, B]` with A = 8, B = 512 needs 8 × 512 = 4096 positions; position 0 holds
// {A=0, B=0}, position 1 holds {A=0, B=1}, and all 512 positions with A = 0 come before A = 1.
// L615: `HostTensor<bf16, m![A, B]>` therefore holds 4096 elements.
#[test]
fn l0585_pair_a_b_needs_4096_positions_a_major() {
    let e = layout(AB, "m![A, B]");
    assert_eq!(e.size, 8 * 512);
    assert_eq!(e.size, 4096);
    assert_eq!(e.map(0), idx(&[("A", 0), ("B", 0)]));
    assert_eq!(e.map(1), idx(&[("A", 0), ("B", 1)]));
    assert_eq!(e.map(511), idx(&[("A", 0), ("B", 511)]));
    assert_eq!(e.map(512), idx(&[("A", 1), ("B", 0)]));
}

// L588, L625: an axis' size comes from the `axes!` declaration; a symbol that was never
// declared has no size, which the engine reports as MAP-005 and does not evaluate.
#[test]
fn l0625_undeclared_axis_is_map005() {
    let ev = single_diagnostic(AB, "m![A, Z]");
    let d = &ev.diagnostics[0];
    assert_eq!(d.code(), "MAP-005");
    assert_eq!(&ev.source[d.span.range()], "Z");
    assert!(d.message.contains("undeclared axis `Z`"), "{}", d.message);
    assert!(ev.layout.is_none());

    // A size argument naming an undeclared axis is the same mistake.
    let ev = single_diagnostic(AB, "m![A / Z::SIZE]");
    let d = &ev.diagnostics[0];
    assert_eq!(d.code(), "MAP-005");
    assert_eq!(&ev.source[d.span.range()], "Z");
    assert!(ev.layout.is_none());
}

// ---------------------------------------------------------------------------------------------
// Symbol (lines 624-673)
// ---------------------------------------------------------------------------------------------

// L626, L631-639: with A = 8, `m![A]` has 8 positions, position i holds i![A: i], and
// position SIZE is past the end.
#[test]
fn l0626_symbol_maps_position_i_to_coordinate_i() {
    let e = layout("A = 8", "m![A]");
    assert_eq!(e.size, 8);
    for i in 0..e.size {
        assert_eq!(e.map(i), idx(&[("A", u128::from(i))]), "position {i}");
    }
    assert_eq!(e.map(e.size), None);
    assert_eq!(e.to_expr(), "A");
}

// L671-673 (and L626): coordinate 0 of a symbol is the empty index: `i![A: 0]` is `i![]`.
#[test]
fn l0671_symbol_index_zero_is_the_empty_index() {
    let e = layout("A = 8", "m![A]");
    assert_eq!(e.map(0), Some(Index::new()));
    assert!(e.map(0).expect("position 0 is valid").is_empty());
    assert_eq!(e.map(1), idx(&[("A", 1)]));
    assert_eq!(e.map(2), idx(&[("A", 2)]));
}

// ---------------------------------------------------------------------------------------------
// Pair (lines 674-716)
// ---------------------------------------------------------------------------------------------

// L676-677: the first 512 positions hold A = 0 and the next 512 hold A = 1.
#[test]
fn l0677_pair_first_512_positions_hold_a_zero_next_512_a_one() {
    let e = layout(AB, "m![A, B]");
    for i in 0..512 {
        assert_eq!(e.map(i), idx(&[("B", u128::from(i))]), "position {i}");
        assert_eq!(
            e.map(512 + i),
            idx(&[("A", 1), ("B", u128::from(i))]),
            "position {}",
            512 + i
        );
    }
}

// L678: position 519 holds i![A: 1, B: 7] because 519 == 512 * 1 + 7.
#[test]
fn l0678_pair_position_519_is_a1_b7() {
    assert_eq!(519, 512 + 7);
    let e = layout(AB, "m![A, B]");
    assert_eq!(e.map(519), idx(&[("A", 1), ("B", 7)]));
}

// L681: `m![A, B, C, D]` is `Pair<A, Pair<B, Pair<C, D>>>`: right-associative, A outermost.
#[test]
fn l0681_pair_lists_are_right_associative() {
    let axes = "A = 2, B = 3, C = 4, D = 5";
    let flat = layout(axes, "m![A, B, C, D]");
    let nested = layout(axes, "m![A, [B, [C, D]]]");
    assert_equivalent(&flat, &nested, "m![A, B, C, D] vs m![A, [B, [C, D]]]");
    assert_eq!(flat.size, 2 * 3 * 4 * 5);
    for a in 0..2u64 {
        for b in 0..3u64 {
            for c in 0..4u64 {
                for d in 0..5u64 {
                    let i = ((a * 3 + b) * 4 + c) * 5 + d;
                    let want = idx(&[
                        ("A", a.into()),
                        ("B", b.into()),
                        ("C", c.into()),
                        ("D", d.into()),
                    ]);
                    assert_eq!(flat.map(i), want, "position {i}");
                }
            }
        }
    }
    assert_eq!(flat.map(120), None);
}

// L690-694, L703, L710-714: position i holds {A: i / B::SIZE, B: i % B::SIZE}; 2 * 512 + 7
// holds {A: 2, B: 7}; SIZE is L::SIZE * R::SIZE and position SIZE is past the end.
#[test]
fn l0690_pair_decomposes_by_division_and_remainder() {
    let e = layout(AB, "m![A, B]");
    let b_size = layout(AB, "m![B]").size;
    let a_size = layout(AB, "m![A]").size;
    assert_eq!(e.size, a_size * b_size);
    for i in 0..e.size {
        let want = idx(&[("A", u128::from(i / b_size)), ("B", u128::from(i % b_size))]);
        assert_eq!(e.map(i), want, "position {i}");
    }
    assert_eq!(e.map(2 * b_size + 7), idx(&[("A", 2), ("B", 7)]));
    assert_eq!(e.map(e.size), None);
}

// ---------------------------------------------------------------------------------------------
// Identity (lines 717-740)
// ---------------------------------------------------------------------------------------------

// L718, L724-728, L733: `m![1]` has one position, holding the empty index; position 1 is past
// the end.
#[test]
fn l0718_identity_is_one_position_holding_the_empty_index() {
    let e = layout(AB, "m![1]");
    assert_eq!(e.size, 1);
    assert_eq!(e.map(0), Some(Index::new()));
    assert_eq!(e.map(1), None);
    assert_eq!(e.to_expr(), "1");
}

// L719: `m![1, A]` and `m![A, 1]` are both equivalent to `m![A]`.
#[test]
fn l0719_identity_is_neutral_for_pairs() {
    let a = layout(AB, "m![A]");
    assert_equivalent(&layout(AB, "m![1, A]"), &a, "m![1, A] vs m![A]");
    assert_equivalent(&layout(AB, "m![A, 1]"), &a, "m![A, 1] vs m![A]");
}

// ---------------------------------------------------------------------------------------------
// Padding (lines 741-778)
// ---------------------------------------------------------------------------------------------

// L744: with C = 13, D = 61, `m![C, D]` has rows of 61, so row 1 starts at position 61, not at
// a 64-element boundary.
#[test]
fn l0744_unpadded_rows_are_misaligned() {
    let e = layout("C = 13, D = 61", "m![C, D]");
    assert_eq!(e.size, 13 * 61);
    assert_eq!(e.map(61), idx(&[("C", 1)]));
    assert_eq!(e.map(64), idx(&[("C", 1), ("D", 3)]));
    // Position 64, a 64-element boundary, is in the middle of row 1.
    assert_ne!(e.map(64), idx(&[("C", 1)]));
}

// L745, L751-759: `m![C, D # 64]` aligns every row to 64 positions with 3 padding positions per
// row: 0 -> {C:0, D:0}, 60 -> {C:0, D:60}, 61..=63 padding, 64 -> {C:1, D:0}.
#[test]
fn l0745_padding_aligns_rows_to_64() {
    let e = layout("C = 13, D = 61", "m![C, D # 64]");
    assert_eq!(e.size, 13 * 64);
    assert_eq!(e.map(0), idx(&[("C", 0), ("D", 0)]));
    assert_eq!(e.map(60), idx(&[("C", 0), ("D", 60)]));
    assert_eq!(e.map(61), None);
    assert_eq!(e.map(62), None);
    assert_eq!(e.map(63), None);
    assert_eq!(e.map(64), idx(&[("C", 1), ("D", 0)]));
    // "3 extra elements per row": every row is 61 values and 3 padding positions.
    for c in 0..13u64 {
        for d in 0..64u64 {
            let want = if d < 61 {
                idx(&[("C", c.into()), ("D", d.into())])
            } else {
                None
            };
            assert_eq!(e.map(64 * c + d), want, "row {c}, column {d}");
        }
    }
    let padding = (0..e.size).filter(|&i| e.map(i).is_none()).count();
    assert_eq!(padding, 13 * 3);
    assert_eq!(e.map(e.size), None);
}

// L767, L775-776: `Padding<L, N>` has SIZE N (it pads *to* N, it does not add N) and maps
// every position like L, so positions L::SIZE.. are padding.
#[test]
fn l0767_padding_pads_to_n_and_maps_like_its_operand() {
    let d = layout("C = 13, D = 61", "m![D]");
    let e = layout("C = 13, D = 61", "m![D # 64]");
    assert_eq!(e.size, 64);
    for i in 0..64 {
        assert_eq!(e.map(i), d.map(i), "position {i}");
    }
}

// L767 (SIZE = N) with L745 ("adds unused buffer space"): `# n` below the operand's size would
// shrink it, which the engine reports as MAP-003 with two unsafe fixes (add n, or resize).
#[test]
fn l0767_padding_below_the_size_is_map003() {
    let ev = single_diagnostic("C = 13, D = 61", "m![C, D # 32]");
    let d = &ev.diagnostics[0];
    assert_eq!(d.code(), "MAP-003");
    assert_eq!(&ev.source[d.span.range()], "D # 32");
    assert_eq!(d.fixes.len(), 2);
    assert!(d.fixes.iter().all(|f| !f.safe));
    assert!(
        split_source(&apply_fix(&ev, 0))
            .1
            .ends_with("m![C, D # 93]")
    );
    assert!(
        split_source(&apply_fix(&ev, 1))
            .1
            .ends_with("m![C, D = 32]")
    );
}

// ---------------------------------------------------------------------------------------------
// Resize (lines 779-812)
// ---------------------------------------------------------------------------------------------

// L780-781: `m![D = 2]` keeps only D = 0 and D = 1 of D = 3.
#[test]
fn l0781_resize_keeps_the_first_two_coordinates() {
    let e = layout("C = 2, D = 3", "m![D = 2]");
    assert_eq!(e.size, 2);
    assert_eq!(e.map(0), idx(&[("D", 0)]));
    assert_eq!(e.map(1), idx(&[("D", 1)]));
    assert_eq!(e.map(2), None);
}

// L780: resize only shrinks ("a smaller logical size"); growing with `=` is MAP-004, whose safe
// fix turns it into padding.
#[test]
fn l0780_resize_larger_than_the_size_is_map004() {
    let ev = single_diagnostic("C = 2, D = 3", "m![C, D = 4]");
    let d = &ev.diagnostics[0];
    assert_eq!(d.code(), "MAP-004");
    assert_eq!(&ev.source[d.span.range()], "D = 4");
    assert_eq!(d.fixes.len(), 1);
    assert!(d.fixes[0].safe);
    let (axes, mapping) = split_source(&apply_fix(&ev, 0));
    assert_eq!(mapping, "m![C, D # 4]");
    let fixed = layout(&axes, &mapping);
    assert_eq!(fixed.size, 8);
    assert_eq!(fixed.map(3), None);
    assert_eq!(fixed.map(4), idx(&[("C", 1)]));
}

// L786-794, L810: `m![C, D = 2]` with C = 2, D = 3 is the 2 × 2 table
// 0 -> {C:0, D:0}, 1 -> {C:0, D:1}, 2 -> {C:1, D:0}, 3 -> {C:1, D:1}; 4 is past the end.
#[test]
fn l0790_resize_pair_table() {
    let e = layout("C = 2, D = 3", "m![C, D = 2]");
    assert_eq!(e.size, 4);
    assert_eq!(e.map(0), idx(&[("C", 0), ("D", 0)]));
    assert_eq!(e.map(1), idx(&[("C", 0), ("D", 1)]));
    assert_eq!(e.map(2), idx(&[("C", 1), ("D", 0)]));
    assert_eq!(e.map(3), idx(&[("C", 1), ("D", 1)]));
    assert_eq!(e.map(4), None);
}

// ---------------------------------------------------------------------------------------------
// Tiling by elements (lines 813-832)
// ---------------------------------------------------------------------------------------------

// L823-831: the tile mapping `m![A, B = 2 # 4]` keeps 2 values of B per row (logical size 2)
// inside a footprint of 4 positions per row: 8 rows × 4 = 32 positions, columns 2 and 3 padding.
#[test]
fn l0823_element_tile_mapping_b_resized_to_2_padded_to_4() {
    let e = layout(AB, "m![A, B = 2 # 4]");
    assert_eq!(e.size, 8 * 4);
    for a in 0..8u64 {
        assert_eq!(e.map(4 * a), idx(&[("A", a.into())]), "row {a}");
        assert_eq!(
            e.map(4 * a + 1),
            idx(&[("A", a.into()), ("B", 1)]),
            "row {a}"
        );
        assert_eq!(e.map(4 * a + 2), None, "row {a}");
        assert_eq!(e.map(4 * a + 3), None, "row {a}");
    }
    assert_eq!(e.map(32), None);
    // B = 2 # 4 is B = 2 with two padding positions after it.
    let b = layout(AB, "m![B = 2 # 4]");
    assert_eq!(b.size, 4);
    assert_eq!(b.map(0), idx(&[]));
    assert_eq!(b.map(1), idx(&[("B", 1)]));
    assert_eq!(b.map(2), None);
}

// ---------------------------------------------------------------------------------------------
// Stride and Modulo (lines 833-918)
// ---------------------------------------------------------------------------------------------

// L843, L848-851, L874, L883: `m![B / 64]` has size 512 / 64 = 8 and position i holds
// i![B / 64: i], i.e. B = 64 i; position 8 is past the end.
#[test]
fn l0843_stride_b_by_64_has_size_8() {
    let e = layout(AB, "m![B / 64]");
    assert_eq!(e.size, 8);
    for i in 0..8u64 {
        assert_eq!(e.map(i), idx(&[("B", u128::from(64 * i))]), "position {i}");
    }
    assert_eq!(e.map(8), None);
}

// L844, L852-855, L892, L901: `m![B % 64]` has size 64 and position j holds i![B % 64: j],
// i.e. B = j; position 64 is past the end.
#[test]
fn l0844_modulo_b_by_64_has_size_64() {
    let e = layout(AB, "m![B % 64]");
    assert_eq!(e.size, 64);
    for j in 0..64u64 {
        assert_eq!(e.map(j), idx(&[("B", j.into())]), "position {j}");
    }
    assert_eq!(e.map(64), None);
}

// L837: position 130 of `m![B / 64, B % 64]` is block 2, offset 2, so B = 64 × 2 + 2 = 130,
// the same as in the flat `m![B]`.
#[test]
fn l0837_position_130_is_block_2_offset_2() {
    assert_eq!(130, 64 * 2 + 2);
    let e = layout(AB, "m![B / 64, B % 64]");
    assert_eq!(e.map(130), idx(&[("B", 130)]));
    assert_eq!(layout(AB, "m![B]").map(130), idx(&[("B", 130)]));
    assert_eq!(layout(AB, "m![B / 64]").map(2), idx(&[("B", 128)]));
    assert_eq!(layout(AB, "m![B % 64]").map(2), idx(&[("B", 2)]));
}

// L836, L845, L856-864, L904-905: `m![B / 64, B % 64]` is an 8 × 64 grid equivalent to
// `m![B]`: position 64 i + j holds what `m![B]` holds there, and 512 is past the end.
#[test]
fn l0845_stride_modulo_split_is_equivalent_to_b() {
    let e = layout(AB, "m![B / 64, B % 64]");
    let b = layout(AB, "m![B]");
    assert_eq!(e.size, 8 * 64);
    for i in 0..8 {
        for j in 0..64 {
            assert_eq!(e.map(64 * i + j), b.map(64 * i + j), "i = {i}, j = {j}");
        }
    }
    assert_eq!(e.map(512), None);
    assert_equivalent(&e, &b, "m![B / 64, B % 64] vs m![B]");
    assert_eq!(e.to_expr(), "B");
}

// L873-874: `Stride` asserts "Stride size must divide the original size". `B / 3` (512 is not
// a multiple of 3) is MAP-001 with that message, pointing at the stride, and its safe fix pads
// the operand to the next multiple first.
#[test]
fn l0873_stride_that_does_not_divide_is_map001() {
    let ev = single_diagnostic(AB, "m![A, B / 3]");
    let d = &ev.diagnostics[0];
    assert_eq!(d.code(), "MAP-001");
    assert!(
        d.message
            .starts_with("Stride size must divide the original size"),
        "{}",
        d.message
    );
    assert_eq!(&ev.source[d.span.range()], "B / 3");
    assert!(ev.layout.is_none());
    assert!(d.fixes[0].safe);
    let (axes, mapping) = split_source(&apply_fix(&ev, 0));
    assert_eq!(mapping, "m![A, B # 513 / 3]");
    let fixed = layout(&axes, &mapping);
    assert_eq!(fixed.size, 8 * 171);
    assert_eq!(fixed.map(170), idx(&[("B", 510)]));
}

// L891-892: `Modulo` asserts "Modulo size must divide the original size". With D = 61,
// `D % 64` is MAP-002 with that message; the fix pads D to 64 first.
#[test]
fn l0891_modulo_that_does_not_divide_is_map002() {
    let ev = single_diagnostic("C = 13, D = 61", "m![C, D % 64]");
    let d = &ev.diagnostics[0];
    assert_eq!(d.code(), "MAP-002");
    assert!(
        d.message
            .starts_with("Modulo size must divide the original size"),
        "{}",
        d.message
    );
    assert_eq!(&ev.source[d.span.range()], "D % 64");
    assert!(ev.layout.is_none());
    let (axes, mapping) = split_source(&apply_fix(&ev, 0));
    assert_eq!(mapping, "m![C, D # 64 % 64]");
    // Padding to 64 and taking 64 is exactly `m![C, D # 64]` of line 751.
    assert_equivalent(
        &layout(&axes, &mapping),
        &layout("C = 13, D = 61", "m![C, D # 64]"),
        "m![C, D # 64 % 64] vs m![C, D # 64]",
    );
}

// L906-912: `m![B / 4, B % 4]` with B = 16; row r (B / 4 = r) and column c (B % 4 = c) hold
// B = 4 r + c: rows 0-3, 4-7, 8-11, 12-15.
#[test]
fn l0906_four_by_four_stride_modulo_table() {
    let e = layout("B = 16", "m![B / 4, B % 4]");
    assert_eq!(e.size, 16);
    let manual: [[u128; 4]; 4] = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]];
    for (r, row) in manual.iter().enumerate() {
        for (c, &b) in row.iter().enumerate() {
            let i = 4 * r as u64 + c as u64;
            assert_eq!(e.map(i), idx(&[("B", b)]), "row {r}, column {c}");
        }
    }
    // The row and column headers: B / 4 = r is B = 4r, B % 4 = c is B = c.
    let rows = layout("B = 16", "m![B / 4]");
    let cols = layout("B = 16", "m![B % 4]");
    for k in 0..4u64 {
        assert_eq!(rows.map(k), idx(&[("B", u128::from(4 * k))]));
        assert_eq!(cols.map(k), idx(&[("B", k.into())]));
    }
    // The normal form of the split is `m![B]`; drawn with the 4 columns of `B % 4`, the table is
    // the manual's.
    expect![[r#"
        pos |   +0   +1   +2   +3
          0 |   {}  B=1  B=2  B=3
          4 |  B=4  B=5  B=6  B=7
          8 |  B=8  B=9 B=10 B=11
         12 | B=12 B=13 B=14 B=15

        size 16 = 16
        stride    extent  tensor
             1        16  B
        buffer bits [3:0] hold B bits [3:0]
    "#]]
    .assert_eq(&describe(&e, Some(4)));
    // The 4 × 4 grid of the manual, drawn from the stride and modulo factors.
    let mut grid = String::new();
    for r in 0..4u64 {
        let cells: Vec<String> = (0..4u64)
            .map(|c| {
                let b = e.map(4 * r + c).expect("no padding");
                format!("{:>2}", b.get("B").copied().unwrap_or(0))
            })
            .collect();
        grid.push_str(&format!("B/4={r} | {}\n", cells.join(" ")));
    }
    expect![[r#"
        B/4=0 |  0  1  2  3
        B/4=1 |  4  5  6  7
        B/4=2 |  8  9 10 11
        B/4=3 | 12 13 14 15
    "#]]
    .assert_eq(&grid);
}

// L914-915: `m![B / n]` indexes the 512 / n blocks of n elements, `m![B % n]` the n positions
// inside a block; checked for every n dividing 512.
#[test]
fn l0914_stride_indexes_blocks_and_modulo_positions_in_a_block() {
    for n in divisors(512) {
        let blocks = layout(AB, &format!("m![B / {n}]"));
        let inner = layout(AB, &format!("m![B % {n}]"));
        assert_eq!(blocks.size, 512 / n, "B / {n}");
        assert_eq!(inner.size, n, "B % {n}");
        for k in 0..blocks.size {
            assert_eq!(
                blocks.map(k),
                idx(&[("B", u128::from(k * n))]),
                "B / {n} at {k}"
            );
        }
        for k in 0..inner.size {
            assert_eq!(inner.map(k), idx(&[("B", k.into())]), "B % {n} at {k}");
        }
        assert_equivalent(
            &layout(AB, &format!("m![B / {n}, B % {n}]")),
            &layout(AB, "m![B]"),
            &format!("m![B / {n}, B % {n}] vs m![B]"),
        );
    }
}

// L916-918 against L844 and L890-893: by the code, `m![B % 64]` has size 64, not the original
// 512, and keeps the first 64 positions exactly as the resize `m![B = 64]` does; modulo differs
// from resize only in requiring n to divide the size (`B = 100` is fine, `B % 100` is
// MAP-002). The prose "Modulo preserves the original buffer size" is true only of the pair
// `m![B / n, B % n]` as a whole.
#[test]
fn l0916_modulo_and_resize_keep_the_same_first_positions() {
    let modulo = layout(AB, "m![B % 64]");
    let resize = layout(AB, "m![B = 64]");
    assert_eq!(modulo.size, 64);
    assert_equivalent(&modulo, &resize, "m![B % 64] vs m![B = 64]");
    assert_eq!(layout(AB, "m![B = 100]").size, 100);
    let ev = single_diagnostic(AB, "m![B % 100]");
    assert_eq!(ev.diagnostics[0].code(), "MAP-002");
    assert_eq!(layout(AB, "m![B / 64, B % 64]").size, 512);
}

// L928-943: `m![B / 64, B % 32, B / 32 % 2]` sends position 64 i + 2 j + k to B = 64 i + j + 32 k
// for all i < 8, j < 32, k < 2, and 512 is past the end.
#[test]
fn l0928_nested_stride_all_512_positions() {
    let e = layout(AB, "m![B / 64, B % 32, B / 32 % 2]");
    assert_eq!(e.size, 8 * 32 * 2);
    let mut seen = BTreeSet::new();
    for i in 0..8u64 {
        for j in 0..32u64 {
            for k in 0..2u64 {
                let b = 64 * i + j + 32 * k;
                assert_eq!(
                    e.map(64 * i + 2 * j + k),
                    idx(&[("B", b.into())]),
                    "i = {i}, j = {j}, k = {k}"
                );
                seen.insert(b);
            }
        }
    }
    // Every B in 0..512 appears once: the mapping is a permutation of B.
    assert_eq!(seen, (0..512).collect::<BTreeSet<u64>>());
    assert_eq!(e.map(512), None);
    assert!(e.is_regular());
    assert_eq!(e.to_expr(), "B / 64, B % 32, B / 32 % 2");
}

// L946-950: position 67 = 64 × 1 + 2 × 1 + 1 (i = j = k = 1) holds B = 64 + 1 + 32 = 97, and
// 97 / 64 = 1, 97 % 32 = 1, (97 / 32) % 2 = 1 recover the digits.
#[test]
fn l0946_nested_stride_position_67_is_b97() {
    assert_eq!(67, 64 + 2 + 1);
    assert_eq!(97, 64 + 1 + 32);
    assert_eq!((97 / 64, 97 % 32, (97 / 32) % 2), (1, 1, 1));
    let e = layout(AB, "m![B / 64, B % 32, B / 32 % 2]");
    assert_eq!(e.map(67), idx(&[("B", 97)]));
    // Each factor on its own, at digit 1.
    assert_eq!(layout(AB, "m![B / 64]").map(1), idx(&[("B", 64)]));
    assert_eq!(layout(AB, "m![B % 32]").map(1), idx(&[("B", 1)]));
    assert_eq!(layout(AB, "m![B / 32 % 2]").map(1), idx(&[("B", 32)]));
}

// L926-927, L952-953: the buffer's bit groups [8:6]_[5:1]_[0] hold B's bits [8:6], [4:0] and
// [5]: buffer 0b001_00001_1 (67) becomes B = 0b001_1_00001 (97).
#[test]
// The binary literals are grouped as the manual groups the bits.
#[allow(clippy::unusual_byte_groupings)]
fn l0952_nested_stride_rearranges_bits() {
    let e = layout(AB, "m![B / 64, B % 32, B / 32 % 2]");
    assert_eq!(0b001_00001_1, 67);
    assert_eq!(0b001_1_00001, 97);
    assert_eq!(e.map(0b001_00001_1), idx(&[("B", 0b001_1_00001)]));
    for p in 0..512u64 {
        let b = (p >> 6) << 6 | ((p >> 1) & 0b1_1111) | ((p & 1) << 5);
        assert_eq!(e.map(p), idx(&[("B", b.into())]), "buffer {p:09b}");
    }
    expect![[r#"
        size 512 = 8 × 32 × 2
        stride    extent  tensor
            64         8  B × 64
             2        32  B
             1         2  B × 32
        buffer bits [8:6]_[5:1]_[0] hold B bits [8:6]_[4:0]_[5]
    "#]]
    .assert_eq(&digits(&e));
}

// ---------------------------------------------------------------------------------------------
// Tiling by blocks (lines 954-971)
// ---------------------------------------------------------------------------------------------

// L963-970: the block tile mapping `m![A, B / 32 = 2 # 16, B % 32]`: per row of A, blocks 0 and
// 1 (B / 32 resized to 2) are valid and blocks 2..16 of the 16-block footprint are padding.
#[test]
fn l0963_block_tile_mapping() {
    let e = layout(AB, "m![A, B / 32 = 2 # 16, B % 32]");
    assert_eq!(e.size, 8 * 16 * 32);
    let mut valid = 0;
    for a in 0..8u64 {
        for blk in 0..16u64 {
            for r in 0..32u64 {
                let i = 512 * a + 32 * blk + r;
                let want = if blk < 2 {
                    valid += 1;
                    idx(&[("A", a.into()), ("B", u128::from(32 * blk + r))])
                } else {
                    None
                };
                assert_eq!(e.map(i), want, "a = {a}, block = {blk}, r = {r}");
            }
        }
    }
    assert_eq!(valid, 8 * 2 * 32);
    assert_eq!(e.map(e.size), None);
    // L970: `B / 32 = 2` has two values: blocks 0 and 1.
    let two = layout(AB, "m![B / 32 = 2]");
    assert_eq!(two.size, 2);
    assert_eq!(two.map(1), idx(&[("B", 32)]));
    assert_eq!(two.map(2), None);
}

// L966: with B = 512, `m![B / 32]` has 16 blocks numbered 0-15.
#[test]
fn l0966_b_over_32_has_16_blocks() {
    let e = layout(AB, "m![B / 32]");
    assert_eq!(e.size, 16);
    assert_eq!(e.map(15), idx(&[("B", 480)]));
    assert_eq!(e.map(16), None);
}

// L962, L967-969: tile i (0..15) of `m![B / 32]` with 2 blocks covers blocks {i, i + 1}, so
// consecutive tiles share one block and the last, tile 14, covers {14, 15}. The tile at offset
// i holds the tile mapping's B shifted by 32 i.
#[test]
fn l0968_block_tiles_overlap_by_one_block() {
    let tile = layout(AB, "m![A, B / 32 = 2 # 16, B % 32]");
    let blocks_of = |i: u64| -> BTreeSet<u128> {
        (0..tile.size)
            .filter_map(|p| tile.map(p))
            .map(|t| (t.get("B").copied().unwrap_or(0) + 32 * u128::from(i)) / 32)
            .collect()
    };
    for i in 0..15u64 {
        let blocks = blocks_of(i);
        assert_eq!(
            blocks,
            BTreeSet::from([i.into(), u128::from(i) + 1]),
            "tile {i}"
        );
        assert!(blocks.iter().all(|&b| b < 16), "tile {i} stays inside B");
    }
    assert_eq!(
        blocks_of(0)
            .intersection(&blocks_of(1))
            .copied()
            .collect::<Vec<_>>(),
        vec![1]
    );
    assert_eq!(blocks_of(14), BTreeSet::from([14, 15]));
}

// L971: a single-block tile `B / 32 = 1` simplifies to the identity `m![1]`.
#[test]
fn l0971_single_block_tile_is_the_identity() {
    let one = layout(AB, "m![B / 32 = 1]");
    assert_equivalent(&one, &layout(AB, "m![1]"), "m![B / 32 = 1] vs m![1]");
    assert_eq!(one.to_expr(), "1");
    // Inside the tile mapping, the single block drops out.
    assert_equivalent(
        &layout(AB, "m![A, B / 32 = 1, B % 32]"),
        &layout(AB, "m![A, B % 32]"),
        "m![A, B / 32 = 1, B % 32] vs m![A, B % 32]",
    );
}

// ---------------------------------------------------------------------------------------------
// Escape (lines 972-984)
// ---------------------------------------------------------------------------------------------

// L974-982: with L = m![A] and R = m![B], `m![{ L }, { R }]` is `m![A, B]`. Written inline
// (`[A], [B]`) for `evaluate`, and through a scope holding the two aliases.
#[test]
fn l0974_escape_of_two_aliases_is_the_pair() {
    let pair = layout(AB, "m![A, B]");
    assert_equivalent(
        &layout(AB, "m![[A], [B]]"),
        &pair,
        "m![[A], [B]] vs m![A, B]",
    );
    let escaped = with_aliases(AB, &[("L", "A"), ("R", "B")], "{ L }, { R }");
    assert_equivalent(&escaped, &pair, "m![{ L }, { R }] vs m![A, B]");
    assert_eq!(escaped.map(519), idx(&[("A", 1), ("B", 7)]));
}

// ---------------------------------------------------------------------------------------------
// Skewed axis (lines 986-1003)
// ---------------------------------------------------------------------------------------------

const SKEW: &str = "A = 4, B = 4, B' = B - A";

// L990-1002: with A = 4, B = 4 and B' = B - A, `m![A, B' = 4]` places (A, B') at 4 A + B' and
// holds (A, B) there; every row of the manual's table.
#[test]
fn l0992_skew_table() {
    let e = layout(SKEW, "m![A, B' = 4]");
    assert_eq!(e.size, 16);
    // (A, B') -> (A, B), as printed.
    let manual: [((u64, u64), (u128, u128)); 8] = [
        ((0, 0), (0, 0)),
        ((0, 1), (0, 1)),
        ((0, 2), (0, 2)),
        ((0, 3), (0, 3)),
        ((1, 0), (1, 1)),
        ((1, 1), (1, 2)),
        ((1, 2), (1, 3)),
        ((1, 3), (1, 0)),
    ];
    for ((a, bp), (ta, tb)) in manual {
        assert_eq!(
            e.map(4 * a + bp),
            idx(&[("A", ta), ("B", tb)]),
            "(A, B') = ({a}, {bp})"
        );
    }
    // The table stops at A = 1; rows A = 2 and A = 3 follow the same rule (line 1003).
    for a in 0..4u64 {
        for bp in 0..4u64 {
            let b = (bp + a) % 4;
            assert_eq!(
                e.map(4 * a + bp),
                idx(&[("A", a.into()), ("B", b.into())]),
                "(A, B') = ({a}, {bp})"
            );
        }
    }
    assert_eq!(e.map(16), None);
}

// L1003: at A = 1, B' = 3 the coordinate B wraps: B = (3 + 1) % 4 = 0.
#[test]
fn l1003_skew_wraps_modulo_the_axis() {
    assert_eq!((3 + 1) % 4, 0);
    let e = layout(SKEW, "m![A, B' = 4]");
    assert_eq!(e.map(4 + 3), idx(&[("A", 1)]));
    assert_eq!(e.map(4 + 3), idx(&[("A", 1), ("B", 0)]));
}

// ---------------------------------------------------------------------------------------------
// Sliding: linear combination (lines 1006-1016)
// ---------------------------------------------------------------------------------------------

const SLIDE: &str = "N = 5, F = 3";

// L1009, L1016: size($(e1: n1, ..., ed: nd)) = 1 + Σ (size(ek) - 1) nk; for $(N: 1, F: 2) with
// N = 5, F = 3 that is 1 + 4 × 1 + 2 × 2 = 9.
#[test]
fn l1009_linear_combination_size_formula() {
    assert_eq!(1 + (5 - 1) + (3 - 1) * 2, 9);
    let e = layout(SLIDE, "m![$(N: 1, F: 2)]");
    assert_eq!(e.size, 9);
    assert_eq!(e.map(9), None);
    assert!(e.map_all(9).is_empty());
    // Other coefficients, by the same formula.
    assert_eq!(layout(SLIDE, "m![$(N: 1, F: 1)]").size, 1 + 4 + 2);
    assert_eq!(layout(SLIDE, "m![$(N: 3, F: 1)]").size, 1 + 4 * 3 + 2);
    assert_eq!(layout(SLIDE, "m![$(N: 1)]").size, 5);
}

// L1009 (the relation) and L1011-1012: tensor element (N, F) sits at position N + 2F; every
// position holds only indices with N + 2F equal to it, and each (N, F) is held exactly once.
#[test]
fn l1012_sliding_table_is_n_plus_2f() {
    let e = layout(SLIDE, "m![$(N: 1, F: 2)]");
    let manual: [[u64; 3]; 5] = [[0, 2, 4], [1, 3, 5], [2, 4, 6], [3, 5, 7], [4, 6, 8]];
    for (n, row) in manual.iter().enumerate() {
        for (f, &pos) in row.iter().enumerate() {
            assert_eq!(pos, n as u64 + 2 * f as u64);
            let want = idx(&[("N", n as u128), ("F", f as u128)]).expect("an index");
            assert!(
                e.map_all(pos).contains(&want),
                "(N, F) = ({n}, {f}) should be at position {pos}, got {:?}",
                e.map_all(pos)
            );
        }
    }
    let mut held = 0;
    for pos in 0..e.size {
        let all = e.map_all(pos);
        assert!(!all.is_empty(), "position {pos} is not padding");
        for t in &all {
            let n = t.get("N").copied().unwrap_or(0);
            let f = t.get("F").copied().unwrap_or(0);
            assert_eq!(n + 2 * f, u128::from(pos), "{t:?} at {pos}");
        }
        held += all.len();
    }
    assert_eq!(held, 5 * 3);
}

// L1014-1015: position 4 holds exactly {N: 4}, {N: 2, F: 1} and {F: 2}.
#[test]
fn l1014_sliding_position_4_holds_three_indices() {
    let e = layout(SLIDE, "m![$(N: 1, F: 2)]");
    let got: BTreeSet<Index> = e.map_all(4).into_iter().collect();
    let want: BTreeSet<Index> = [
        idx(&[("N", 4)]),
        idx(&[("N", 2), ("F", 1)]),
        idx(&[("F", 2)]),
    ]
    .into_iter()
    .flatten()
    .collect();
    assert_eq!(got, want);
    assert_eq!(e.map_all(4).len(), 3);
    assert!(e.map(4).is_some_and(|t| want.contains(&t)));
}

// L1010: the outer sum e1 * e2 is $(e1: size(e2), e2: 1); for A = 8, B = 512 that linear
// combination holds at each position what `m![A, B]` holds (one index per position).
#[test]
fn l1010_outer_sum_as_linear_combination_is_the_pair() {
    let lin = layout(AB, "m![$(A: 512, B: 1)]");
    let pair = layout(AB, "m![A, B]");
    assert_eq!(lin.size, 1 + 7 * 512 + 511);
    // Linear combinations are kept whole in the normal form, so only the manual's definition of
    // equivalence is checked here, not equality of normal forms.
    assert_same_mapping(&lin, &pair, "$(A: 512, B: 1) vs m![A, B]");
    assert_eq!(
        lin.map_all(519),
        vec![idx(&[("A", 1), ("B", 7)]).expect("an index")]
    );
}

// ---------------------------------------------------------------------------------------------
// Equivalent Mapping (lines 1017-1028)
// ---------------------------------------------------------------------------------------------

/// The manual's constructors evaluated literally, the way its trait implementations do:
/// Symbol (L650-669), Pair (L710-715), Identity (L737-739), Padding (L775-777), Resize
/// (L809-811), Stride (L872-884) and Modulo (L890-902); plus the linear combination by its
/// formal definition (L1009). It never calls the engine. The laws below are checked against it
/// as well as against the engine, so that a law the definitions themselves break is told apart
/// from an engine bug.
#[derive(Clone, Debug)]
enum Def {
    Sym(&'static str, u64),
    One,
    Pair(Box<Def>, Box<Def>),
    Pad(Box<Def>, u64),
    Resize(Box<Def>, u64),
    Stride(Box<Def>, u64),
    Modulo(Box<Def>, u64),
    Lin(Vec<(Def, u64)>),
}

impl Def {
    fn size(&self) -> u64 {
        match self {
            Def::Sym(_, n) | Def::Pad(_, n) | Def::Resize(_, n) => *n,
            Def::One => 1,
            Def::Pair(l, r) => l.size() * r.size(),
            Def::Stride(l, s) => {
                assert!(
                    l.size() % s == 0,
                    "Stride size must divide the original size"
                );
                l.size() / s
            }
            Def::Modulo(l, m) => {
                assert!(
                    l.size() % m == 0,
                    "Modulo size must divide the original size"
                );
                *m
            }
            Def::Lin(terms) => 1 + terms.iter().map(|(e, n)| (e.size() - 1) * n).sum::<u64>(),
        }
    }

    /// Every index at position `i`, sorted: none (padding or past the end), one, or several
    /// inside a linear combination. Pairs add their halves as `Index::add` does (L713).
    fn maps(&self, i: u64) -> Vec<Index> {
        let mut out = match self {
            Def::Sym(a, n) => {
                if i < *n {
                    vec![idx(&[(a, u128::from(i))]).expect("an index")]
                } else {
                    Vec::new()
                }
            }
            Def::One => {
                if i == 0 {
                    vec![Index::new()]
                } else {
                    Vec::new()
                }
            }
            Def::Pair(l, r) => {
                let rs = r.size();
                let right = r.maps(i % rs);
                l.maps(i / rs)
                    .iter()
                    .flat_map(|x| right.iter().map(move |y| union(x, y)))
                    .collect()
            }
            Def::Pad(l, _) => l.maps(i),
            Def::Resize(l, n) => {
                if i < *n {
                    l.maps(i)
                } else {
                    Vec::new()
                }
            }
            Def::Stride(l, s) => {
                if i < self.size() {
                    l.maps(i * s)
                } else {
                    Vec::new()
                }
            }
            Def::Modulo(l, _) => {
                if i < self.size() {
                    l.maps(i % l.size())
                } else {
                    Vec::new()
                }
            }
            Def::Lin(terms) => {
                let mut out = Vec::new();
                if i < self.size() {
                    lin_solutions(terms, i, &Index::new(), &mut out);
                }
                out
            }
        };
        for t in &mut out {
            t.retain(|_, v| *v != 0);
        }
        out.sort();
        out.dedup();
        out
    }
}

/// Every `∪ e_k(s_k)` with `Σ s_k n_k == rest` (L1009).
fn lin_solutions(terms: &[(Def, u64)], rest: u64, acc: &Index, out: &mut Vec<Index>) {
    let Some(((e, n), tail)) = terms.split_first() else {
        if rest == 0 {
            out.push(acc.clone());
        }
        return;
    };
    for s in 0..e.size() {
        if s * n > rest {
            break;
        }
        for t in e.maps(s) {
            lin_solutions(tail, rest - s * n, &union(acc, &t), out);
        }
    }
}

fn sym(name: &'static str, size: u64) -> Def {
    Def::Sym(name, size)
}
fn pr(l: Def, r: Def) -> Def {
    Def::Pair(Box::new(l), Box::new(r))
}
fn pad(e: Def, n: u64) -> Def {
    Def::Pad(Box::new(e), n)
}
fn rsz(e: Def, n: u64) -> Def {
    Def::Resize(Box::new(e), n)
}
fn strd(e: Def, n: u64) -> Def {
    Def::Stride(Box::new(e), n)
}
fn modu(e: Def, n: u64) -> Def {
    Def::Modulo(Box::new(e), n)
}

/// Axes for the law tests: the page's A and B and the padding example's C and D.
const LAW_AXES: &str = "A = 8, B = 512, C = 13, D = 61";

fn law(mapping: &str) -> Layout {
    layout(LAW_AXES, &format!("m![{mapping}]"))
}

/// A mapping `E` of the law tests: its `m!` text and its literal definition.
type Case = (String, Def);

/// Concrete mappings `E` for the laws: plain, split, padded, resized, padded identity, tiled,
/// a pad that cuts across a pair, a prime-sized axis, and a linear combination.
fn law_cases() -> Vec<Case> {
    let (a, b, c, d) = (sym("A", 8), sym("B", 512), sym("C", 13), sym("D", 61));
    vec![
        ("A".into(), a.clone()),
        ("A, B".into(), pr(a.clone(), b.clone())),
        (
            "B / 64, B % 32, B / 32 % 2".into(),
            pr(
                strd(b.clone(), 64),
                pr(modu(b.clone(), 32), modu(strd(b.clone(), 32), 2)),
            ),
        ),
        ("C, D # 64".into(), pr(c.clone(), pad(d.clone(), 64))),
        ("C, D = 2".into(), pr(c.clone(), rsz(d.clone(), 2))),
        ("1 # 2".into(), pad(Def::One, 2)),
        (
            "A, B / 32 = 2 # 16, B % 32".into(),
            pr(
                a.clone(),
                pr(pad(rsz(strd(b.clone(), 32), 2), 16), modu(b.clone(), 32)),
            ),
        ),
        ("[A, D] # 500".into(), pad(pr(a.clone(), d.clone()), 500)),
        ("D".into(), d.clone()),
        ("$(A: 1, C: 2)".into(), Def::Lin(vec![(a, 1), (c, 2)])),
    ]
}

/// Small mappings for the laws that multiply sizes (projection and associativity).
fn small_law_cases() -> Vec<Case> {
    let (a, b, c, d) = (sym("A", 8), sym("B", 512), sym("C", 13), sym("D", 61));
    vec![
        ("A".into(), a.clone()),
        ("1 # 2".into(), pad(Def::One, 2)),
        ("C, D = 2".into(), pr(c, rsz(d.clone(), 2))),
        ("D # 64".into(), pad(d, 64)),
        ("B / 64 % 4".into(), modu(strd(b, 64), 4)),
        ("A / 2 # 5".into(), pad(strd(a, 2), 5)),
    ]
}

/// The engine agrees with the literal definitions at every probed position.
fn assert_follows_definitions(text: &str, def: &Def) {
    let l = law(text);
    assert_eq!(l.size, def.size(), "m![{text}]: size");
    for i in probe_positions(l.size) {
        assert_eq!(l.map_all(i), def.maps(i), "m![{text}] at position {i}");
    }
}

/// Whether two definitions are equivalent by L1018-1020 (at the probed positions).
fn definitions_agree(x: &Def, y: &Def) -> bool {
    x.size() == y.size()
        && probe_positions(x.size())
            .into_iter()
            .all(|i| x.maps(i) == y.maps(i))
}

/// Checks one instance of a law that the definitions guarantee: the law holds by the
/// definitions, the engine follows the definitions on both sides, and the engine finds the two
/// sides equivalent with equal normal forms.
fn assert_law(lhs: (&str, &Def), rhs: (&str, &Def)) {
    let what = format!("m![{}] vs m![{}]", lhs.0, rhs.0);
    assert!(
        definitions_agree(lhs.1, rhs.1),
        "{what}: the definitions disagree"
    );
    assert_follows_definitions(lhs.0, lhs.1);
    assert_follows_definitions(rhs.0, rhs.1);
    assert_equivalent(&law(lhs.0), &law(rhs.0), &what);
}

// L1018-1021: equivalence means equal SIZE and equal map at every position, and is reflexive,
// symmetric and transitive; five spellings of `m![B]` are pairwise equivalent both ways.
#[test]
fn l1018_equivalence_is_an_equivalence_relation() {
    let spellings = [
        "B",
        "B / 64, B % 64",
        "B / 4, B % 4",
        "[B / 32, B % 32] # 512",
        "1, B, 1",
    ];
    let layouts: Vec<Layout> = spellings.iter().map(|s| law(s)).collect();
    for (x, lx) in spellings.iter().zip(&layouts) {
        for (y, ly) in spellings.iter().zip(&layouts) {
            assert_equivalent(lx, ly, &format!("{x} vs {y}"));
        }
    }
    // Different sizes are never equivalent, even when the common positions agree.
    assert_ne!(law("B % 64").size, law("B").size);
    assert_ne!(law("B % 64"), law("B"));
}

// L1022-1023: identity of pairs: E ≡ m![{ E }, 1] ≡ m![1, { E }].
#[test]
fn l1022_identity_of_pairs() {
    for (e, d) in law_cases() {
        assert_law((&format!("[{e}], 1"), &pr(d.clone(), Def::One)), (&e, &d));
        assert_law((&format!("1, [{e}]"), &pr(Def::One, d.clone())), (&e, &d));
    }
}

// L1023-1024: stride-modulo decomposition, E ≡ m![{ E } / n, { E } % n] for every n dividing
// E::SIZE. By the definitions (L710-715, L882-883, L900-901) the split holds
// E::map(n q) ∪ E::map(r) at position n q + r, which is E::map(n q + r) only when adding r
// never carries out of a digit of E or into its padding. So the law holds for every n only
// when E is a product of whole axes, splits of one axis, or unpadded bit permutations; for
// other E it holds exactly for the n listed below, and the engine agrees with the definitions
// everywhere (see `l1023_split_law_breaks_when_the_split_carries` for the counterexamples).
#[test]
fn l1023_stride_modulo_decomposition() {
    let mut report = String::new();
    for (e, d) in law_cases() {
        let mut broken = Vec::new();
        for n in divisors(d.size()) {
            let text = format!("[{e}] / {n}, [{e}] % {n}");
            let split = pr(strd(d.clone(), n), modu(d.clone(), n));
            assert_follows_definitions(&text, &split);
            if definitions_agree(&split, &d) {
                if matches!(d, Def::Lin(_)) {
                    // Normal forms keep linear combinations whole; see
                    // `l1023_split_of_a_linear_combination_is_equivalent`.
                    assert_same_mapping(&law(&text), &law(&e), &text);
                } else {
                    assert_equivalent(&law(&text), &law(&e), &text);
                }
            } else {
                broken.push(n);
                assert_ne!(law(&text), law(&e), "{text}: normal forms should differ");
            }
        }
        report.push_str(&format!(
            "{e} (size {}): fails for n in {broken:?}\n",
            d.size()
        ));
    }
    expect![[r#"
        A (size 8): fails for n in []
        A, B (size 4096): fails for n in []
        B / 64, B % 32, B / 32 % 2 (size 512): fails for n in []
        C, D # 64 (size 832): fails for n in [2, 4, 8, 13, 16, 26, 32, 52, 104, 208, 416]
        C, D = 2 (size 26): fails for n in [13]
        1 # 2 (size 2): fails for n in []
        A, B / 32 = 2 # 16, B % 32 (size 4096): fails for n in []
        [A, D] # 500 (size 500): fails for n in [2, 4, 5, 10, 20, 25, 50, 100, 125, 250]
        D (size 61): fails for n in []
        $(A: 1, C: 2) (size 32): fails for n in [4, 8, 16]
    "#]]
    .assert_eq(&report);
}

// L1023-1024 with L1009: `$(A: 1, C: 2)` (size 32) split by 2 holds at every position what the
// linear combination holds (the law holds by the definitions), so by L1018-1020 the two are
// equivalent; their normal forms should then be equal too.
#[test]
fn l1023_split_of_a_linear_combination_is_equivalent() {
    let e = law("$(A: 1, C: 2)");
    let split = law("[$(A: 1, C: 2)] / 2, [$(A: 1, C: 2)] % 2");
    assert_same_mapping(&split, &e, "split of $(A: 1, C: 2)");
    // Linear combinations are opaque digits of the normal form: equal normal forms imply
    // equivalence, not the converse (documented in analysis/src/mapping/layout.rs).
    assert!(!split.is_regular() && !e.is_regular());
}

// L1023-1024 against the definitions (L710-715, L775-776, L882-883, L900-901): two splits
// where the law fails. With C = 13, D = 61:
// - E = m![C, D # 64], n = 2: position 61 of the split is E::map(60) ∪ E::map(1) =
//   {D: 60} + {D: 1} = {D: 61}, but E::map(61) is padding (None).
// - E = m![C, D], n = 13: position 61 of the split is E::map(52) ∪ E::map(9) = {D: 61}, but
//   E::map(61) = {C: 1}.
// Both produce D = 61, outside the axis D = 61. The engine follows the definitions.
#[test]
fn l1023_split_law_breaks_when_the_split_carries() {
    let padded = law("C, D # 64");
    let split = law("[C, D # 64] / 2, [C, D # 64] % 2");
    assert_eq!(split.size, padded.size);
    assert_eq!(padded.map(60), idx(&[("D", 60)]));
    assert_eq!(padded.map(1), idx(&[("D", 1)]));
    assert_eq!(padded.map(61), None);
    assert_eq!(split.map(61), idx(&[("D", 61)]));

    let plain = law("C, D");
    let split = law("[C, D] / 13, [C, D] % 13");
    assert_eq!(plain.map(52), idx(&[("D", 52)]));
    assert_eq!(plain.map(9), idx(&[("D", 9)]));
    assert_eq!(plain.map(61), idx(&[("C", 1)]));
    assert_eq!(split.map(61), idx(&[("D", 61)]));
}

// L1023-1024: the split of the law renders (`to_expr`) as an `m!` body; that body must lower
// back to the same normal form (the engine's contract for `Layout::to_expr`), also when the
// split carries as in `l1023_split_law_breaks_when_the_split_carries`.
#[test]
fn l1023_rendered_split_lowers_back_to_itself() {
    for (e, d) in law_cases() {
        for n in divisors(d.size()) {
            let split = law(&format!("[{e}] / {n}, [{e}] % {n}"));
            let rendered = split.to_expr();
            let back = evaluate(LAW_AXES, &rendered);
            assert_eq!(
                back.layout.as_ref(),
                Some(&split),
                "[{e}] / {n}, [{e}] % {n} renders as `{rendered}`, which lowers to {:?} with {:?}",
                back.layout.as_ref().map(Layout::to_expr),
                back.diagnostics
                    .iter()
                    .map(|d| d.code())
                    .collect::<Vec<_>>()
            );
        }
    }
}

// L1024-1025: pair projection: m![[{ A }, { B }] / B::SIZE] ≡ A and
// m![[{ A }, { B }] % B::SIZE] ≡ B, for every two mappings.
#[test]
fn l1024_pair_projection() {
    let mut cases = small_law_cases();
    let big = law_cases();
    cases.extend(
        big.into_iter()
            .filter(|(e, _)| ["A, B", "C, D # 64", "$(A: 1, C: 2)"].contains(&e.as_str())),
    );
    for (x, dx) in &cases {
        for (y, dy) in &cases {
            let n = dy.size();
            let both = pr(dx.clone(), dy.clone());
            assert_law(
                (&format!("[[{x}], [{y}]] / {n}"), &strd(both.clone(), n)),
                (x, dx),
            );
            assert_law((&format!("[[{x}], [{y}]] % {n}"), &modu(both, n)), (y, dy));
        }
    }
}

// L1025-1026: associativity of pairs: m![{ E1 }, { E2 }, { E3 }],
// m![[{ E1 }, { E2 }], { E3 }] and m![{ E1 }, [{ E2 }, { E3 }]] are equivalent.
#[test]
fn l1025_associativity_of_pairs() {
    let check = |(x, dx): &Case, (y, dy): &Case, (z, dz): &Case| {
        let flat = format!("[{x}], [{y}], [{z}]");
        let left = format!("[[{x}], [{y}]], [{z}]");
        let right = format!("[{x}], [[{y}], [{z}]]");
        let d_right = pr(dx.clone(), pr(dy.clone(), dz.clone()));
        let d_left = pr(pr(dx.clone(), dy.clone()), dz.clone());
        assert!(
            definitions_agree(&d_left, &d_right),
            "{left} vs {right}: definitions"
        );
        assert_follows_definitions(&flat, &d_right);
        assert_follows_definitions(&left, &d_left);
        assert_follows_definitions(&right, &d_right);
        let flat = law(&flat);
        assert_equivalent(&law(&left), &flat, &left);
        assert_equivalent(&law(&right), &flat, &right);
    };
    let cases: Vec<Case> = small_law_cases()
        .into_iter()
        .filter(|(e, _)| ["1 # 2", "C, D = 2", "A / 2 # 5"].contains(&e.as_str()))
        .collect();
    for x in &cases {
        for y in &cases {
            for z in &cases {
                check(x, y, z);
            }
        }
    }
    // One triple of larger mappings, including a padded one and a bit permutation.
    let big = law_cases();
    let pick = |name: &str| {
        big.iter()
            .find(|(e, _)| e == name)
            .cloned()
            .expect("a law case")
    };
    check(
        &pick("C, D # 64"),
        &pick("1 # 2"),
        &pick("B / 64, B % 32, B / 32 % 2"),
    );
}

// L1026-1027: idempotent operations: E ≡ m![{ E } / 1] ≡ m![{ E } # E::SIZE] ≡
// m![{ E } = E::SIZE].
#[test]
fn l1026_idempotent_operations() {
    for (e, d) in law_cases() {
        let n = d.size();
        assert_law((&format!("[{e}] / 1"), &strd(d.clone(), 1)), (&e, &d));
        assert_law((&format!("[{e}] # {n}"), &pad(d.clone(), n)), (&e, &d));
        assert_law((&format!("[{e}] = {n}"), &rsz(d.clone(), n)), (&e, &d));
    }
}

// L1027-1028: modulo by 1: m![E % 1] ≡ m![1] (for a symbol, literally `m![A % 1]`).
#[test]
fn l1027_modulo_by_one_is_the_identity() {
    assert_law(("A % 1", &modu(sym("A", 8), 1)), ("1", &Def::One));
    for (e, d) in law_cases() {
        assert_law((&format!("[{e}] % 1"), &modu(d, 1)), ("1", &Def::One));
    }
}

// L1022-1028 in the manual's own notation, with escapes of aliases and `E::SIZE`, `Y::SIZE`.
#[test]
fn l1022_laws_in_escape_notation() {
    let aliases = [
        ("E", "C, D # 64"),
        ("X", "A / 2 # 5"),
        ("Y", "C, D = 2"),
        ("Z", "1 # 2"),
    ];
    let at = |m: &str| with_aliases(LAW_AXES, &aliases, m);
    let e = at("{ E }");
    assert_equivalent(&e, &law("C, D # 64"), "{ E } vs its body");
    assert_equivalent(&at("{ E }, 1"), &e, "{ E }, 1");
    assert_equivalent(&at("1, { E }"), &e, "1, { E }");
    // A split that does not carry (see `l1023_stride_modulo_decomposition`).
    assert_equivalent(&at("{ E } / 64, { E } % 64"), &e, "{ E } / 64, { E } % 64");
    assert_equivalent(
        &at("[{ X }, { Y }] / Y::SIZE"),
        &at("{ X }"),
        "[{ X }, { Y }] / Y::SIZE",
    );
    assert_equivalent(
        &at("[{ X }, { Y }] % Y::SIZE"),
        &at("{ Y }"),
        "[{ X }, { Y }] % Y::SIZE",
    );
    let flat = at("{ X }, { Y }, { Z }");
    assert_equivalent(&at("[{ X }, { Y }], { Z }"), &flat, "[{ X }, { Y }], { Z }");
    assert_equivalent(&at("{ X }, [{ Y }, { Z }]"), &flat, "{ X }, [{ Y }, { Z }]");
    assert_equivalent(&at("{ E } / 1"), &e, "{ E } / 1");
    assert_equivalent(&at("{ E } # E::SIZE"), &e, "{ E } # E::SIZE");
    assert_equivalent(&at("{ E } = E::SIZE"), &e, "{ E } = E::SIZE");
    assert_equivalent(&at("{ E } % 1"), &at("1"), "{ E } % 1");
}

// ---------------------------------------------------------------------------------------------
// Memory and Stream: HBM and SRAM (lines 1033-1093)
// ---------------------------------------------------------------------------------------------

// L1064-1065 with the formal definition L1154-1158: `HbmTensor<bf16, m![A], m![B]>` spreads
// 8 × 512 = 4096 elements over 8 chips of 512; chip i's element j holds
// Chip::map(i) ∪ Element::map(j) = {A: i, B: j}, which is `m![A, B]` at 512 i + j.
#[test]
fn l1064_hbm_tensor_chip_a_element_b() {
    let chip = layout(AB, "m![A]");
    let element = layout(AB, "m![B]");
    assert_eq!(chip.size, 8);
    assert_eq!(element.size, 512);
    assert_eq!(chip.size * element.size, 4096);
    let flat = layout(AB, "m![A, B]");
    for i in 0..chip.size {
        let ti = chip.map(i).expect("every chip holds data");
        for j in 0..element.size {
            let tj = element.map(j).expect("every element holds data");
            let t = union(&ti, &tj);
            assert_eq!(
                Some(t.clone()),
                idx(&[("A", i.into()), ("B", j.into())]),
                "chip {i}, element {j}"
            );
            assert_eq!(Some(t), flat.map(512 * i + j), "chip {i}, element {j}");
        }
    }
}

// L1075: 2 clusters × 256 slices × 512 KB = 256 MB of SRAM per chip; 8 chips give 2 GB.
#[test]
fn l1075_sram_capacity_arithmetic() {
    const KB: u64 = 1 << 10;
    const MB: u64 = 1 << 20;
    const GB: u64 = 1 << 30;
    assert_eq!(2 * 256 * 512 * KB, 256 * MB);
    assert_eq!(8 * 256 * MB, 2 * GB);
}

// L1079: a kernel on fewer chips pads the chip mapping: `m![1 # NUM_CHIPS]` (here 8 chips) has
// NUM_CHIPS positions and only chip 0 holds data.
#[test]
fn l1079_chip_padding_for_a_single_chip() {
    let e = layout(AB, "m![1 # 8]");
    assert_eq!(e.size, 8);
    assert_eq!(e.map(0), Some(Index::new()));
    for i in 1..8 {
        assert_eq!(e.map(i), None, "chip {i}");
    }
}

// L1080, L1091-1092: a single-cluster kernel uses `Cluster = m![1 # 2]`: one logical cluster
// padded to the 2 clusters of a chip; cluster 1 is padding.
#[test]
fn l1092_single_cluster_is_one_padded_to_two() {
    let e = layout(AB, "m![1 # 2]");
    assert_eq!(e.size, 2);
    assert_eq!(e.map(0), Some(Index::new()));
    assert_eq!(e.map(1), None);
    assert_eq!(e.to_expr(), "1 # 2");
}

// L1081 (with the `m![A / 8 # 256]` of L186): the slice mapping is padded to 256 slices. With
// A = 2048, A / 8 already has 256 positions and none is padding; with A = 64 only the first 8
// of the 256 slices hold data.
#[test]
fn l1081_slice_padding_to_256() {
    let full = layout("A = 2048", "m![A / 8 # 256]");
    assert_eq!(full.size, 256);
    for s in 0..256u64 {
        assert_eq!(full.map(s), idx(&[("A", u128::from(8 * s))]), "slice {s}");
    }
    assert_equivalent(
        &full,
        &layout("A = 2048", "m![A / 8]"),
        "A / 8 # 256 vs A / 8",
    );

    let small = layout("A = 64", "m![A / 8 # 256]");
    assert_eq!(small.size, 256);
    let valid: Vec<u64> = (0..256).filter(|&s| small.map(s).is_some()).collect();
    assert_eq!(valid, (0..8).collect::<Vec<u64>>());
    assert_eq!(small.map(7), idx(&[("A", 56)]));
    assert_eq!(small.map(8), None);
}

// ---------------------------------------------------------------------------------------------
// Memory and Stream: Tensor Unit stream (lines 1094-1161)
// ---------------------------------------------------------------------------------------------

const STREAM: &str = "N = 4, C = 64, H = 32, W = 32";

// L1141-1142: the example's Chip and Cluster mappings `m![1]` are a single position each.
#[test]
fn l1141_stream_chip_and_cluster_are_single_positions() {
    let one = layout(STREAM, "m![1]");
    assert_eq!(one.size, 1);
    assert_eq!(one.map(0), Some(Index::new()));
}

// L1143, L1148: Slice `m![C / 2]` spreads the 64 channels over 32 slices; slice s starts at
// channel 2 s.
#[test]
fn l1143_stream_slice_c_over_2_has_32_positions() {
    let slice = layout(STREAM, "m![C / 2]");
    assert_eq!(slice.size, 32);
    for s in 0..32u64 {
        assert_eq!(slice.map(s), idx(&[("C", u128::from(2 * s))]), "slice {s}");
    }
}

// L1144, L1149: Time `m![N, H, W]` has 4 × 32 × 32 = 4096 positions (cycles).
#[test]
fn l1144_stream_time_n_h_w_has_4096_cycles() {
    let time = layout(STREAM, "m![N, H, W]");
    assert_eq!(time.size, 4 * 32 * 32);
    assert_eq!(time.size, 4096);
    assert_eq!(
        time.map(1024 + 32 * 5 + 7),
        idx(&[("N", 1), ("H", 5), ("W", 7)])
    );
    assert_eq!(time.map(4095), idx(&[("N", 3), ("H", 31), ("W", 31)]));
    assert_eq!(time.map(4096), None);
}

// L1145, L1150: Packet `m![C % 2]` delivers 2 channels per cycle to each slice.
#[test]
fn l1145_stream_packet_c_mod_2_has_2_channels() {
    let packet = layout(STREAM, "m![C % 2]");
    assert_eq!(packet.size, 2);
    assert_eq!(packet.map(0), Some(Index::new()));
    assert_eq!(packet.map(1), idx(&[("C", 1)]));
    assert_eq!(packet.map(2), None);
}

// L1151 with L1159-1161: 32 slices × 2 channels = 64 channels per cycle; the union of the Chip,
// Cluster, Slice, Time and Packet indices covers every element of the {N, C, H, W} tensor
// exactly once.
#[test]
fn l1151_stream_covers_64_channels_per_cycle() {
    let chip = layout(STREAM, "m![1]");
    let cluster = layout(STREAM, "m![1]");
    let slice = layout(STREAM, "m![C / 2]");
    let time = layout(STREAM, "m![N, H, W]");
    let packet = layout(STREAM, "m![C % 2]");
    assert_eq!(slice.size * packet.size, 64);

    // Channels delivered in one cycle.
    let mut channels = BTreeSet::new();
    for s in 0..slice.size {
        for p in 0..packet.size {
            let t = union(
                &slice.map(s).expect("slice holds data"),
                &packet.map(p).expect("packet holds data"),
            );
            channels.insert(t.get("C").copied().unwrap_or(0));
        }
    }
    assert_eq!(channels, (0..64).collect::<BTreeSet<u128>>());

    // The whole stream: each tensor element exactly once.
    let base = union(
        &chip.map(0).expect("one chip"),
        &cluster.map(0).expect("one cluster"),
    );
    let mut hits = vec![0u8; 4 * 64 * 32 * 32];
    for t in 0..time.size {
        let tt = union(&base, &time.map(t).expect("every cycle holds data"));
        for s in 0..slice.size {
            let ts = union(&tt, &slice.map(s).expect("slice holds data"));
            for p in 0..packet.size {
                let full = union(&ts, &packet.map(p).expect("packet holds data"));
                let get = |k: &str| full.get(k).copied().unwrap_or(0) as usize;
                hits[((get("N") * 64 + get("C")) * 32 + get("H")) * 32 + get("W")] += 1;
            }
        }
    }
    assert!(hits.iter().all(|&h| h == 1));
}
