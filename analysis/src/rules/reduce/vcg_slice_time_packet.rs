//! VCG-006: a padded reduce axis over Slice, Time and Packet with a partial last packet would
//! need a packet count that varies by slice; a Slice part between two Time parts would need a
//! number of valid time steps per slice, and each gate has one threshold. The fix for the
//! interleave writes the standard split, outer part in Slice and inner part in Time.

use super::layouts::{is_axis, render_dim};
use super::mapping_edits::{at_fix, rewrite_mapping};
use super::placement::Placement;
use crate::diagnostic::{Diagnostic, Edit, Severity};
use crate::mapping::Layout;
use crate::model::Method;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const VCG_006: Rule = Rule {
    code: "VCG-006",
    name: "vcg-slice-time-packet",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "Slice + Time + Packet, and a Time-Slice-Time interleave of a padded R, are unsupported",
    docs: "R spanning all three dimensions has the Slice + Packet problem (a partial packet count \
           that would have to vary by slice) unless |R| is a multiple of R's Packet size. A Slice \
           part sandwiched between two Time parts needs a different number of valid time steps \
           per slice, and each gate has one threshold. Use the standard split: outer part in \
           Slice, inner part in Time. (The manual's own example L5476 relies on the VCG here; \
           constraints.md §22 A-29 follows the implementation page.) For the interleave the fix writes that split wherever the function writes the \
           Slice and Time mappings.",
    bad: "Slice m![X, R # 16 / 2 % 4], Time m![R # 16 / 8, R # 16 % 2]",
    good: "Slice m![X, R # 16 / 4], Time m![R # 16 % 4]",
    manual: "L5877-L5890, L6544-L6547, L6571",
    generations: Generations::Both,
};

/// VCG-006 on a padded R in Slice, Time and Packet whose last packet is partial, `stride_p`
/// its lanes per packet.
pub(super) fn partial_packet(p: &Placement<'_>, stride_p: u64, out: &mut Vec<Diagnostic>) {
    let (r, n, more) = (p.r, p.n, &p.more);
    let msg = format!(
        "the padded reduce axis {r} ({n}) spans Slice, Time and Packet with a \
         partial last packet ({n} % {stride_p} = {}): the packet valid count \
         cannot vary by slice. Keep R in Slice + Time, or Time + Packet{more}",
        n % stride_p,
    );
    out.push(Diagnostic::new(&VCG_006, p.step.span, msg));
}

/// VCG-006 on a padded R whose Slice part sits between its Time parts, `time_size` the size
/// of those; the fix writes the standard split.
pub(super) fn interleave(
    cx: &FnContext<'_>,
    p: &Placement<'_>,
    time_size: u64,
    out: &mut Vec<Diagnostic>,
) {
    let (r, n, more) = (p.r, p.n, &p.more);
    let Some(p_all) = p
        .slice_parts
        .iter()
        .chain(p.time_parts.iter())
        .try_fold(1u64, |acc, q| acc.checked_mul(q.extent))
    else {
        return;
    };
    let k_inner: u64 = time_size.max(1);
    let pad = if p_all > n {
        format!("{r} # {p_all}")
    } else {
        r.to_string()
    };
    let new_slice = split(p.slice, r, format!("{pad} / {k_inner}"));
    let new_time = split(p.time, r, format!("{pad} % {k_inner}"));
    let msg = format!(
        "{r}'s Slice part sits between its Time parts (a Time-Slice-Time interleave): each slice \
         would need its own number of valid time steps, and the VCG has a single threshold. Use \
         the standard split, outer part in Slice and inner part in Time: Slice {new_slice}, Time \
         {new_time}{more}"
    );
    let edits = split_edits(cx, p, &new_slice, &new_time);
    let mut d = at_fix(cx, &VCG_006, p.step, &edits, msg);
    if !edits.is_empty() {
        d = d.with_fix(
            format!("use the standard split: Slice {new_slice}, Time {new_time}"),
            false,
            edits,
        );
    }
    out.push(d);
}

/// The standard split keeps the sizes: R's Slice digits become `R # p / k` where the first
/// one was, its Time digits `R # p % k`; the other digits stay. `l` with R's digits replaced
/// by `part`.
fn split(l: &Layout, r: &str, part: String) -> String {
    let mut first = true;
    let mut dims = Vec::new();
    for d in &l.dims {
        if is_axis(d, r) {
            if first {
                dims.push(part.clone());
                first = false;
            }
        } else {
            dims.push(render_dim(d));
        }
    }
    format!("m![{}]", dims.join(", "))
}

/// The edits writing the split Slice and Time wherever the function writes them; only where
/// the Time the VCG sees is the stream's (no `vector_split` rewrote it).
fn split_edits(
    cx: &FnContext<'_>,
    p: &Placement<'_>,
    new_slice: &str,
    new_time: &str,
) -> Vec<Edit> {
    let mut edits = Vec::new();
    if p.narrow.is_none_or(|n| n.method == Method::VectorTrimWay4) {
        edits = rewrite_mapping(cx.model, p.slice, new_slice);
        edits.extend(rewrite_mapping(cx.model, p.time, new_time));
        edits.sort_by_key(|e| e.span);
        edits.dedup();
    }
    edits
}
