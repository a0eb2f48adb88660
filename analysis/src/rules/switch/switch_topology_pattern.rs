//! SWI-002: a regular topology only reshapes (Slice, Time) in its predefined way, so the
//! output the switch writes must be the one its table and parameters define
//! ([`expected`]), broadcast positions read as the library reads them ([`broadcast_read`]).
//! The message shows the expected output and the fix writes it.

use super::call::Switch;
use super::config::Topology;
use super::inter_transpose_equal_chunks::time_split;
use super::layouts::{TILE, axes_of, cat, render, show, text, tile, tiled};
use super::switch_parameters_divide::{slice_split, time_divides};
use super::unfit::Unfit;
use crate::diagnostic::{Diagnostic, Edit, Severity};
use crate::mapping::Layout;
use crate::mapping::layout::{Dim, Factor};
use crate::model::{Slot, output_arg};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::at_arg;
use std::collections::BTreeSet;

pub const SWI_002: Rule = Rule {
    code: "SWI-002",
    name: "switch-topology-pattern",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The output (Slice2, Time2) of a regular topology is the pattern its parameters define",
    docs: "Regular topologies only reshape (Slice, Time) in their predefined way. With the input \
           Slice read as `[slice2, slice1, slice0]` and Time as `[time1, time0]`: Broadcast01 gives \
           `[slice2, tile, tile] | [time1, slice1, time0, slice0]`; Broadcast1 gives \
           `[slice2, tile, slice0] | [time, slice1]`; TransposedBroadcast1 (a library topology \
           the manual does not describe) gives `[slice2, tile, slice1] | [time, slice0]`; \
           Transpose gives `[slice2, slice0, slice1] | time`; InterTranspose (Time `[time2, \
           time1, time0]`, time1 = slice1) gives `[slice2, time1, slice0] | [time2, time0, \
           slice1]`. `tile` is a broadcast: the manual writes a new axis (`X`); the library \
           (`SwitchConfig::verify`) asserts only \"OutSlice broadcast axes must be new axes\", i.e. \
           that no axis of the input Slice or Time appears in those positions, so padding \
           (`1 # 4`), a new axis, or a mix of both is a broadcast. Every other position is \
           asserted equal to the input part (\"OutSlice must preserve slice2 from InSlice\", \
           \"OutTime does not match expected layout\", …), so a mismatch panics: an error. The \
           output is compared by meaning (MAP-007) and the message shows the expected \
           `Slice2`/`Time2`; the fix writes them. Parameters that do not divide the sizes are \
           SWI-003/SWI-004 instead.",
    bad: "axes![A = 256, B = 64, C = 64, X = 4];\nfetched.switch::<m![A / 4, X], m![B / 4, A % 2, B % 4, A / 2 % 2]>(SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 4 })",
    good: "axes![A = 256, B = 64, C = 64, X = 4];\nfetched.switch::<m![A / 4, X], m![B / 4, A / 2 % 2, B % 4, A % 2]>(SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 4 })",
    manual: "L3091, L3143-L3157, L3182, L3189-L3203, L3223-L3234, L3256-L3263, L3290-L3303, L3499-L3500",
    generations: Generations::Both,
};

/// The output (Slice2, Time2) a regular topology makes of the input (Slice, Time), with
/// broadcast slices as `TILE` axes; `Ok(None)` for custom topologies or on overflow.
pub(crate) fn expected(
    topo: Topology,
    slice: &Layout,
    time: &Layout,
) -> Result<Option<(Layout, Layout)>, Unfit> {
    Ok(match topo {
        Topology::Broadcast01 {
            slice1,
            slice0,
            time0,
        } => {
            let (s2, s1, s0) = slice_split(slice, slice1, slice0)?;
            time_divides(time, time0)?;
            let (t1, t0) = (time.stride(time0), time.window(time0));
            cat(&[&s2, &tile(slice1), &tile(slice0)]).zip(cat(&[&t1, &s1, &t0, &s0]))
        }
        Topology::Broadcast1 { slice1, slice0 } => {
            let (s2, s1, s0) = slice_split(slice, slice1, slice0)?;
            cat(&[&s2, &tile(slice1), &s0]).zip(cat(&[time, &s1]))
        }
        Topology::TransposedBroadcast1 { slice1, slice0 } => {
            let (s2, s1, s0) = slice_split(slice, slice1, slice0)?;
            cat(&[&s2, &tile(slice0), &s1]).zip(cat(&[time, &s0]))
        }
        Topology::Transpose { slice1, slice0 } => {
            let (s2, s1, s0) = slice_split(slice, slice1, slice0)?;
            cat(&[&s2, &s0, &s1]).map(|s| (s, time.clone()))
        }
        Topology::InterTranspose {
            slice1,
            slice0,
            time0,
        } => {
            let (s2, s1, s0) = slice_split(slice, slice1, slice0)?;
            time_divides(time, time0)?;
            let (t2, t1, t0) = time_split(time, slice1, time0)?;
            cat(&[&s2, &t1, &s0]).zip(cat(&[&t2, &t0, &s1]))
        }
        Topology::Custom { .. } => None,
    })
}

/// Where a broadcast topology writes its broadcast (`tile`) slices in the output Slice:
/// `(n, inner)`, the `n` slices just above the innermost `inner` ones.
fn tile_positions(topo: Topology) -> Option<(u64, u64)> {
    match topo {
        Topology::Broadcast01 { slice1, slice0, .. } => Some((slice1.checked_mul(slice0)?, 1)),
        Topology::Broadcast1 { slice1, slice0 } => Some((slice1, slice0)),
        Topology::TransposedBroadcast1 { slice1, slice0 } => Some((slice0, slice1)),
        Topology::Transpose { .. } | Topology::InterTranspose { .. } | Topology::Custom { .. } => {
            None
        }
    }
}

/// The written output Slice with its broadcast positions read as one broadcast when they
/// carry no axis of the input: a new axis, padding (`1 # 4`) or a mix of both. This is the
/// library's test (no symbol of InSlice or InTime in the broadcast positions); anything else
/// is returned as written and compared factor by factor.
fn broadcast_read(topo: Topology, out_slice: &Layout, known: &BTreeSet<String>) -> Layout {
    let as_written = || out_slice.clone();
    let Some((n, inner)) = tile_positions(topo) else {
        return as_written();
    };
    let Some(ni) = n.checked_mul(inner) else {
        return as_written();
    };
    if n <= 1 || inner == 0 || !out_slice.size.is_multiple_of(ni) {
        return as_written();
    }
    let region = out_slice.stride(inner).window(n);
    match axes_of(&region) {
        Some(a) if a.is_disjoint(known) => {}
        _ => return as_written(),
    }
    cat(&[&out_slice.stride(ni), &tile(n), &out_slice.window(inner)]).unwrap_or_else(as_written)
}

/// Whether the output a switch writes is the expected one, Slice2 and Time2 apart.
pub(super) struct Match {
    pub slice_ok: bool,
    pub time_ok: bool,
}

/// Compares the output `sw` writes with `exp`, the one `topo` makes of its input; `None` when
/// either Slice2 cannot be read in the compared form.
pub(super) fn compare(
    sw: &Switch<'_>,
    topo: Topology,
    exp: &(Layout, Layout),
    known: &BTreeSet<String>,
) -> Option<Match> {
    let (Some(want_slice), Some(have_slice)) = (
        tiled(&exp.0, known),
        tiled(&broadcast_read(topo, sw.out_slice, known), known),
    ) else {
        return None;
    };
    Some(Match {
        slice_ok: want_slice == have_slice,
        time_ok: exp.1 == *sw.out_time,
    })
}

/// Reports an output that is not `exp`, at the first of Slice2 and Time2 that differs, with
/// the fix that writes `exp` when every differing part can be rewritten.
pub(super) fn report(
    sw: &Switch<'_>,
    topo: Topology,
    exp: &(Layout, Layout),
    known: &BTreeSet<String>,
    m: &Match,
    out: &mut Vec<Diagnostic>,
) {
    let span = if m.slice_ok {
        sw.time_span()
    } else {
        sw.slice_span()
    };
    let mut d = at_arg(&SWI_002, sw.step, Some(span), message(sw, topo, exp, known));
    if let Some(edits) = output_edits(sw, exp, known, m) {
        d = d.with_fix(
            format!("write the {} output", topo.describe()),
            false,
            edits,
        );
    }
    out.push(d);
}

/// The edits that write `exp` where the switch writes the parts `m` says differ; `None` when
/// one of them cannot be rewritten (or none differs).
pub(super) fn output_edits(
    sw: &Switch<'_>,
    exp: &(Layout, Layout),
    known: &BTreeSet<String>,
    m: &Match,
) -> Option<Vec<Edit>> {
    let (slice_ok, time_ok) = (m.slice_ok, m.time_ok);
    let mut edits = Vec::new();
    if !slice_ok && let Some(t) = render(&exp.0, sw.out_slice, known) {
        edits.extend(sw.out_edits(0, Slot::Slice, &t));
    }
    if !time_ok {
        edits.extend(sw.out_edits(1, Slot::Time, &format!("m![{}]", exp.1.to_expr())));
    }
    let complete = (slice_ok || edits.iter().any(|e| e.span == sw.slice_span()))
        && (time_ok || edits.iter().any(|e| e.span == sw.time_span()));
    (complete && !edits.is_empty()).then_some(edits)
}

/// What `topo` makes of the input, and what the switch writes instead.
fn message(
    sw: &Switch<'_>,
    topo: Topology,
    exp: &(Layout, Layout),
    known: &BTreeSet<String>,
) -> String {
    let shown_slice = render(&exp.0, sw.out_slice, known).unwrap_or_else(|| show(&exp.0));
    let shown_time = format!("m![{}]", exp.1.to_expr());
    let mut msg = format!(
        "{} turns Slice `{}` and Time `{}` into Slice2 `{}` and Time2 `{}`, but the switch writes Slice2 `{}` and Time2 `{}`",
        topo.describe(),
        text(sw.input, Slot::Slice),
        text(sw.input, Slot::Time),
        shown_slice,
        shown_time,
        output_arg(sw.step, Some(0), Slot::Slice)
            .map_or_else(|| text(sw.output, Slot::Slice), |a| a.text),
        output_arg(sw.step, Some(1), Slot::Time)
            .map_or_else(|| text(sw.output, Slot::Time), |a| a.text),
    );
    if exp
        .0
        .dims
        .iter()
        .any(|d| matches!(d, Dim::Factor(Factor { axis: Some(a), .. }) if &*a.name == TILE))
    {
        msg.push_str(" (a new axis or padding marks the broadcast slices)");
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::switch::tests::{l, out, same};

    #[test]
    fn broadcast01_golden_l3160_l3203() {
        // L3160-L3165: In Slice m![A], Time m![B]; slice1 = 2, slice0 = 2, time0 = 4 gives
        // Slice m![A / 4, 4] and Time m![B / 4, A / 2 % 2, B % 4, A % 2].
        let axes = "A = 256, B = 64, X = 4";
        let topo = Topology::Broadcast01 {
            slice1: 2,
            slice0: 2,
            time0: 4,
        };
        let got = out(axes, "A", "B", topo);
        same(axes, &got, "A / 4, X", "B / 4, A / 2 % 2, B % 4, A % 2");
    }

    #[test]
    fn broadcast01_golden_l3213_l3217() {
        // L3213-L3217: Slice m![A] (A = 64), Time m![B / 2]; slice0 = 8, slice1 = 8, time0 = 2
        // gives Slice m![A / 64, 64] and Time m![B / 4, A / 8 % 8, B / 2 % 2, A % 8].
        let axes = "A = 64, B = 64, X = 64";
        let topo = Topology::Broadcast01 {
            slice1: 8,
            slice0: 8,
            time0: 2,
        };
        let got = out(axes, "A", "B / 2", topo);
        same(
            axes,
            &got,
            "A / 64, X",
            "B / 4, A / 8 % 8, B / 2 % 2, A % 8",
        );
    }

    #[test]
    fn router_example_l3104_l3118() {
        // L3104-L3118: Slice m![A] (A = 2), Time m![B] (B = 2), Broadcast01 slice0 = 2,
        // slice1 = 1 gives Slice m![A / 2, 2] and Time m![B / 2, B % 2, A % 2].
        let axes = "A = 2, B = 2, X = 2";
        let topo = Topology::Broadcast01 {
            slice1: 1,
            slice0: 2,
            time0: 1,
        };
        let got = out(axes, "A", "B", topo);
        same(axes, &got, "A / 2, X", "B / 2, B % 2, A % 2");
    }

    #[test]
    fn transposed_broadcast1_moves_slice0_to_time() {
        // The library's TransposedBroadcast1 { slice1: 8, slice0: 8 } (no manual page): Slice
        // [slice2, slice1, slice0] becomes [slice2, tile, slice1], Time [time, slice0].
        let axes = "A = 256, B = 64, X = 8";
        let topo = Topology::TransposedBroadcast1 {
            slice1: 8,
            slice0: 8,
        };
        let got = out(axes, "A", "B", topo);
        same(axes, &got, "A / 64, X, A / 8 % 8", "B, A % 8");
    }

    #[test]
    fn padding_in_broadcast_positions_is_a_broadcast() {
        let axes = "A = 256, B = 64, X = 4";
        let known: BTreeSet<String> = ["A", "B"].iter().map(|s| s.to_string()).collect();
        let topo = Topology::Broadcast1 {
            slice1: 4,
            slice0: 4,
        };
        let (want, _) = expected(topo, &l(axes, "A"), &l(axes, "B"))
            .expect("parameters fit")
            .expect("regular");
        let read = |m: &str| tiled(&broadcast_read(topo, &l(axes, m), &known), &known);
        let want = tiled(&want, &known);
        assert_eq!(read("A / 16, 1 # 4, A % 4"), want);
        assert_eq!(read("A / 16, X, A % 4"), want);
        // Padding elsewhere, or an input axis in the broadcast positions, is not.
        assert_ne!(read("A / 16, A % 4, 1 # 4"), want);
        assert_ne!(read("A / 16, A / 4 % 4, A % 4"), want);
    }

    #[test]
    fn broadcast1_golden_l3236_l3254() {
        let axes = "A = 256, B = 64, X = 4";
        let topo = Topology::Broadcast1 {
            slice1: 4,
            slice0: 8,
        };
        let got = out(axes, "A", "B", topo);
        same(axes, &got, "A / 32, X, A % 8", "B, A / 8 % 4");
    }

    #[test]
    fn transpose_golden_l3265_l3284() {
        let axes = "A = 256, B = 64";
        let topo = Topology::Transpose {
            slice1: 32,
            slice0: 2,
        };
        let got = out(axes, "A", "B", topo);
        assert_eq!(got.0, "m![A / 64, A % 2, A / 2 % 32]");
        same(axes, &got, "A / 64, A % 2, A / 2 % 32", "B");
    }

    #[test]
    fn inter_transpose_golden_l3305_l3335() {
        let axes = "A = 8, C = 256";
        let topo = Topology::InterTranspose {
            slice1: 2,
            slice0: 16,
            time0: 2,
        };
        let got = out(axes, "C", "A", topo);
        same(
            axes,
            &got,
            "C / 32, A / 2 % 2, C % 16",
            "A / 4, A % 2, C / 16 % 2",
        );
    }

    #[test]
    fn gemv_broadcast_l384_l400() {
        // Slice m![1 # 256] broadcast over 256 slices: the padding moves to Time.
        let axes = "I = 256";
        let topo = Topology::Broadcast01 {
            slice1: 256,
            slice0: 1,
            time0: 1,
        };
        let (s, t) = expected(topo, &l(axes, "1 # 256"), &l(axes, "1"))
            .expect("fits")
            .expect("regular");
        assert_eq!(t, l(axes, "1 # 256"));
        let known = BTreeSet::new();
        assert_eq!(tiled(&s, &known), tiled(&l(axes, "I"), &known));
    }

    #[test]
    fn huge_sizes_do_not_panic() {
        let axes = "A = 256, B = 9223372036854775808";
        for topo in [
            Topology::Broadcast01 {
                slice1: u64::MAX,
                slice0: 2,
                time0: u64::MAX,
            },
            Topology::InterTranspose {
                slice1: 1 << 40,
                slice0: 1 << 40,
                time0: 0,
            },
            Topology::Broadcast1 {
                slice1: 16,
                slice0: 16,
            },
        ] {
            let _ = expected(topo, &l(axes, "A"), &l(axes, "B"));
        }
    }
}
