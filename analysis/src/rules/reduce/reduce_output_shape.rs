//! ISR-002: the reduce eliminates every Time and Packet factor of its reduce axis, so its
//! `OTime` and `OPacket` are the input Time and Packet without them (the 4-lane packet keeps
//! its padding). The fix writes the derived shape.

use super::layouts::{core, layout_of, strip};
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::mapping::Layout;
use crate::model::{Arg, Slot, Step, output_arg};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::at_arg;

pub const ISR_002: Rule = Rule {
    code: "ISR-002",
    name: "reduce-output-shape",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`OTime`/`OPacket` are the input Time/Packet with every factor of the reduce axis removed",
    docs: "All Time and Packet factors carrying the reduce label (`R / 4` in Time and `R % 4` in \
           Packet alike) are eliminated, so `OTime` must be exactly the input Time without them \
           and `OPacket` the input Packet without them (the 4-lane packet keeps its padding, \
           `m![1 # 4]`). Chip, Cluster and Slice pass through. The fix writes the derived shape.",
    bad: "// Time m![R, A % 2], Packet m![R % 4]\n.vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(op)",
    good: "// Time m![R, A % 2], Packet m![R % 4]\n.vector_intra_slice_reduce::<R, m![A % 2], m![1 # 4]>(op)",
    manual: "L5360-L5361",
    generations: Generations::Both,
};

/// ISR-002 on a reduce over `r`: OTime, then OPacket (padded to the `lanes` of a Way4 packet).
pub(super) fn check(step: &Step, r: &str, lanes: u64, out: &mut Vec<Diagnostic>) {
    let input = step.input.as_ref();
    let output = step.output.as_ref();
    // OTime
    if let (Some(t_in), Some(t_out)) = (layout_of(input, Slot::Time), layout_of(output, Slot::Time))
        && let Some(want) = strip(t_in, r)
        && want != *t_out
    {
        let arg = step.generics.get(1);
        let at = output_arg(step, Some(1), Slot::Time).map(|a| a.span);
        out.push(shape_diag(
            step, arg, at, "OTime", "Time", r, t_in, &want, t_out,
        ));
    }
    if let (Some(p_in), Some(p_out)) = (
        layout_of(input, Slot::Packet),
        layout_of(output, Slot::Packet),
    ) && let Some(want) = strip(p_in, r)
        && core(&want) != core(p_out)
    {
        let arg = step.generics.get(2);
        let want = if want.size < lanes {
            want.window(lanes)
        } else {
            want
        };
        let at = output_arg(step, Some(2), Slot::Packet).map(|a| a.span);
        out.push(shape_diag(
            step, arg, at, "OPacket", "Packet", r, p_in, &want, p_out,
        ));
    }
}

#[allow(clippy::too_many_arguments)]
fn shape_diag(
    step: &Step,
    arg: Option<&Arg>,
    at: Option<Span>,
    what: &str,
    slot: &str,
    r: &str,
    input: &Layout,
    want: &Layout,
    got: &Layout,
) -> Diagnostic {
    let msg = format!(
        "{what} must be the input {slot} m![{input}] with every factor of {r} removed, i.e. \
         m![{want}]; it is m![{got}]"
    );
    let mut d = at_arg(&ISR_002, step, at, msg);
    if let Some(a) = arg
        && a.text.trim() != "_"
    {
        d = d.with_edit(
            format!("write {what} = m![{want}]"),
            true,
            a.span,
            format!("m![{want}]"),
        );
    }
    d
}
