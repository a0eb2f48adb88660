//! SWI-001: the Switch Engine is one ring through all the slices of a cluster, so a switch
//! takes and gives a Slice of the cluster's size. A switch that does not is reported once, at
//! the short Slice, and its other checks are skipped.

use super::call::Switch;
use super::config::Topology;
use super::layouts::text;
use super::switch_topology_pattern::{Match, expected, output_edits};
use crate::diagnostic::{Diagnostic, Edit, Severity};
use crate::mapping::Scope;
use crate::model::{Arg, Slot, input_arg, output_arg, pad_edit};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const SWI_001: Rule = Rule {
    code: "SWI-001",
    name: "switch-full-cluster",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A switch operates on the full cluster: InSlice::SIZE == OutSlice::SIZE == the cluster's slices (256)",
    docs: "The Switch Engine is one ring through all 256 slices of a cluster; partial cluster \
           operations are a compilation error. Both the FetchTensor's Slice and the `Slice2` of \
           `.switch::<Slice2, Time2>()` must have size 256: pad a smaller mapping \
           (`m![A / 4, X]` → `m![[A / 4, X] # 256]`); a regular topology's short output is \
           given the broadcast slices its pattern places (Broadcast1 { slice1: 4, slice0: 1 }: \
           `m![A / 4]` → `m![A / 4, 1 # 4]`), which padding would put in the wrong place. Reported at the switch call (at `Slice2` \
           when that is the short one), once per switch; the other SWI checks of that switch \
           are skipped.",
    bad: "axes![A = 256, B = 64];\nfetched /* Slice m![A], Time m![B] */ .switch::<m![A / 4], m![B, A % 4]>(SwitchConfig::Broadcast1 { slice1: 4, slice0: 1 })",
    good: "axes![A = 256, B = 64, X = 4];\nfetched /* Slice m![A], Time m![B] */ .switch::<m![A / 4, X], m![B, A % 4]>(SwitchConfig::Broadcast1 { slice1: 4, slice0: 1 })",
    manual: "L3501-L3502, L1079-L1084",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 also runs clusters of 64 or 128 slices, on devices of 1 or 2 \
         processing elements (`furiosa-opt-std/src/constraints.rs:30-31,48-56`; \
         `furiosa-opt-examples/src/pe_count.rs:14-20`), and its switch asserts a Slice of one of \
         these sizes, the same in and out (`furiosa-opt-std/src/engine/switch.rs:39-43,71-81`; \
         `SwitchError::SliceSizeMismatch`, `furiosa-opt-lower-types/src/switch.rs:119-126`). \
         visa-lint asks for the slices of the kernel's `#[device(pe)]` grid there (library-v06.md \
         §4 R2-R3); in a helper, whose callers' grid is unknown, for an input Slice of 64, 128 or \
         256 and an output Slice of the same size",
    ),
};

/// Whether the switch's input or output Slice is not the cluster's (then the other checks of
/// the switch are skipped); reported unless CAP-003 reports it where it is written.
pub(super) fn check(cx: &FnContext<'_>, sw: &Switch<'_>, out: &mut Vec<Diagnostic>) -> bool {
    let slices = cx.cluster_slices(sw.in_slice.size);
    if sw.in_slice.size == slices && sw.out_slice.size == slices {
        return false;
    }
    // In a `#[device]` kernel CAP-003 reports every written Slice mapping that is not the
    // cluster's
    // where it is written; a short input written elsewhere is that finding, not a second
    // one at the switch. (CAP-003 leaves the switch's own output Slice to this rule.)
    let reported_by_cap = cx.device().is_some()
        && sw.out_slice.size == slices
        && sw.input.get(Slot::Slice).is_some_and(|m| m.span.is_some());
    if !reported_by_cap {
        out.push(full_cluster(cx.scope, sw, slices));
    }
    true
}

fn full_cluster(scope: &Scope, sw: &Switch<'_>, slices: u64) -> Diagnostic {
    let out_short = sw.out_slice.size != slices;
    let (span, which, text_, size) = if out_short {
        (
            sw.slice_span(),
            "output Slice",
            output_arg(sw.step, Some(0), Slot::Slice)
                .map_or_else(|| text(sw.output, Slot::Slice), |a| a.text),
            sw.out_slice.size,
        )
    } else {
        (
            // The input Slice the fix pads, where it is written.
            input_arg(sw.step, Slot::Slice).map_or(sw.step.span, |a| a.span),
            "input Slice",
            text(sw.input, Slot::Slice),
            sw.in_slice.size,
        )
    };
    let mut d = at_arg(
        &SWI_001,
        sw.step,
        Some(span),
        format!(
            "the switch {which} `{text_}` has size {size}; the Switch Engine's ring runs through all {slices} slices of a cluster, so InSlice::SIZE and OutSlice::SIZE must both be {slices}"
        ),
    );
    if out_short && let Some((topo, edits)) = topology_output(sw, slices) {
        d = d.with_fix(
            format!("write the {} output", topo.describe()),
            false,
            edits,
        );
    } else if size < slices {
        let arg = if out_short {
            output_arg(sw.step, Some(0), Slot::Slice)
        } else {
            sw.input
                .get(Slot::Slice)
                .and_then(|m| Some(Arg::mapping(m, m.span?)))
        };
        if let Some(edit) = arg.and_then(|a| pad_edit(scope, &a, slices)) {
            d = d.with_fix(format!("pad the Slice to {slices}"), false, vec![edit]);
        }
    }
    d
}

/// The edits that write the output a regular topology makes of a full input, when the switch
/// writes a short one: its broadcast slices are what the written Slice lacks (`m![A / 4]` →
/// `m![A / 4, 1 # 4]`), where padding the Slice would put them in the wrong place (SWI-002).
fn topology_output(sw: &Switch<'_>, slices: u64) -> Option<(Topology, Vec<Edit>)> {
    if sw.in_slice.size != slices {
        return None;
    }
    let topo = sw.config.topo;
    let exp = expected(topo, sw.in_slice, sw.in_time).ok()??;
    if exp.0.size != slices {
        return None;
    }
    let known = sw.known_axes()?;
    let m = Match {
        slice_ok: false,
        time_ok: exp.1 == *sw.out_time,
    };
    Some((topo, output_edits(sw, &exp, &known, &m)?))
}

#[cfg(test)]
mod tests {
    use crate::rules::fix_testing::apply;

    /// The fixture's switch (L3223-L3234's Broadcast1, written with a 64-slice output): the fix
    /// writes the broadcast slices where the topology places them (`1 # 4` after `A / 4`), and
    /// the switch is then clean; padding `A / 4` to 256 would be SWI-002.
    #[test]
    fn a_short_broadcast_output_is_given_the_slices_its_topology_places() {
        let text = "axes![A = 256, B = 64, C = 32];\n\
            fn shrink<'l, const T: Tu>(input: FetchTensor<'l, T, i8, m![1], m![1 # 2], m![A], m![B], m![C]>) {\n\
            let _s = input.switch::<m![A / 4], m![B, A % 4]>(SwitchConfig::Broadcast1 { slice1: 4, slice0: 1 });\n}\n";
        let fixed = apply(text, "SWI-001", 0).expect("a fix");
        assert!(
            fixed.contains("switch::<m![A / 4, 1 # 4], m![B, A % 4]>"),
            "{fixed}"
        );
        let left: Vec<_> = crate::check_text(&fixed)
            .iter()
            .map(|d| d.code().to_string())
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
