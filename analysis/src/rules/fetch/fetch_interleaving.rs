//! FET-010: `begin_interleaved` puts the interleave axis in the BeginTensor's Time, and the
//! fetch alternates the tensors one packet per time step, so the axis belongs to the fetch's
//! Time and never to its Packet. `fetch_with_zero_points` subtracts one zero point per
//! interleaved tensor, so its input must be interleaved.

use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::Layout;
use crate::mapping::layout::Dim;
use crate::model::{Method, Slot, Step, written};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const FET_010: Rule = Rule {
    code: "FET-010",
    name: "fetch-interleaving",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "An interleaved fetch keeps the interleave axis in Time; two zero points need an interleaved input",
    docs: "`begin_interleaved` puts the interleave axis `I = 2` in the BeginTensor's Time: the \
           fetch alternates lhs, rhs, lhs, … one packet per time step (L1846-L1850), so `I` \
           belongs to the fetch's Time and never to its Packet. `fetch_with_zero_points([zp0, \
           zp1])` subtracts one zero point per interleaved tensor (L2036), so its input must be \
           interleaved. (The number of tensors and the axis size are KRN-011's.)",
    bad: "ctx.main.begin_interleaved::<I, _, _, _, _, _>(a.view(), b.view()).fetch::<i8, m![A], m![I, B]>()",
    good: "ctx.main.begin_interleaved::<I, _, _, _, _, _>(a.view(), b.view()).fetch::<i8, m![A, I], m![B]>()",
    manual: "L1846-L1850, L2030-L2049",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 has one zero point per fetch, `fetch_zero_point_sub(zp: i32)` \
         (`furiosa-opt-std/src/engine/fetch_adapter.rs:307`), so only the interleave-axis part \
         applies there",
    ),
};

/// FET-010: the interleave axis stays in Time; two zero points need an interleaved input.
pub(super) fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for chain in &cx.model.chains {
        for step in &chain.steps {
            if !step.method.is_fetch() {
                continue;
            }
            let Some(time_in) = step
                .input
                .as_ref()
                .and_then(|t| t.get(Slot::Time))
                .and_then(|m| m.layout.as_deref())
            else {
                continue;
            };
            let inter = axes(time_in);
            if step.method == Method::FetchWithZeroPoints && time_in.size == 1 {
                out.push(Diagnostic::new(
                    &FET_010,
                    step.span,
                    "`fetch_with_zero_points` subtracts one zero point per interleaved tensor, but this input is not interleaved (its Time is `m![1]`): start the chain with `begin_interleaved`, or use `fetch_with_zero_point`",
                ));
                continue;
            }
            if inter.is_empty() {
                continue;
            }
            check_axes(step, &inter, out);
        }
    }
}

/// FET-010 on a fetch of an interleaved input: each interleave axis in its output's Time and
/// not in its Packet.
fn check_axes(step: &Step, inter: &[String], out: &mut Vec<Diagnostic>) {
    let Some(out_ty) = step.output.as_ref() else {
        return;
    };
    let (Some(t2), Some(p2)) = (out_ty.get(Slot::Time), out_ty.get(Slot::Packet)) else {
        return;
    };
    let (Some(tl), Some(pl)) = (t2.layout.as_deref(), p2.layout.as_deref()) else {
        return;
    };
    let (in_t, in_p) = (axes(tl), axes(pl));
    for a in inter {
        if in_p.contains(a) || !in_t.contains(a) {
            let arg = if step.method == Method::Fetch {
                written(step, if in_p.contains(a) { 2 } else { 1 })
            } else {
                None
            };
            let Some(sp) = arg
                .map(|x| x.span)
                .or(if in_p.contains(a) { p2.span } else { t2.span })
            else {
                continue;
            };
            let msg = if in_p.contains(a) {
                format!(
                    "the interleave axis `{a}` is in the fetch's Packet `{}`: interleaving alternates the tensors one packet per time step (L1846-L1848), so `{a}` belongs in Time",
                    p2.text
                )
            } else {
                format!(
                    "the interleave axis `{a}` is missing from the fetch's Time `{}`: an interleaved fetch alternates the two tensors over Time (L1846-L1848)",
                    t2.text
                )
            };
            out.push(at_arg(&FET_010, step, Some(sp), msg));
        }
    }
}

/// The axes of a layout's factors, outermost first.
fn axes(l: &Layout) -> Vec<String> {
    l.dims
        .iter()
        .filter_map(|d| match d {
            Dim::Factor(f) => f.axis.as_ref().map(|a| a.name.to_string()),
            Dim::Opaque(_) => None,
        })
        .collect()
}
