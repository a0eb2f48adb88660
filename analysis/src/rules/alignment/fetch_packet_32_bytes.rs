//! ALN-011: Collect zero-pads packets that are not a multiple of the 32-byte flit, so the
//! padded share of every flit carries no data. Reported on a fetch whose written packet is
//! already padded (`# n`) to such a size and then collected; widening the padding is free.

use super::addresses::round_up;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Method, Slot, Step, pad_edit, slot_bytes, written};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const ALN_011: Rule = Rule {
    code: "ALN-011",
    name: "fetch-packet-32-bytes",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Prefer fetch packets that are multiples of 32 bytes",
    docs: "Collect zero-pads packets that are not a multiple of the 32-byte flit; the padded \
           share of every flit carries no data, for example (32 - 8) / 32 = 75 % for an 8-byte \
           packet. visa-lint reports fetches whose written packet is already padded (`# n`) to \
           a size that is not a multiple of 32 bytes and is then collected into flits: widening \
           that padding, or moving more data into the packet (`m![[B, C] # 32]`, L1837), costs \
           nothing in the fetch and fills the flit.",
    bad: "axes![C = 2]; ...fetch::<f8e4m3, m![A, B], m![C # 8]>().collect::<m![A, B], m![C # 32]>()",
    good: "axes![C = 2]; ...fetch::<f8e4m3, m![A], m![[B, C] # 32]>().collect::<m![A], m![[B, C] # 32]>()",
    manual: "L2122, L2128-L2130, L2143-L2144",
    generations: Generations::Both,
};

/// ALN-011: a padded fetch packet that is not a multiple of 32 bytes, collected into flits.
pub(super) fn check(
    cx: &FnContext<'_>,
    step: &Step,
    next: Option<&Step>,
    out: &mut Vec<Diagnostic>,
) {
    if step.method != Method::Fetch || next.is_none_or(|n| n.method != Method::Collect) {
        return;
    }
    let Some(arg) = written(step, 2) else { return };
    if !arg.text.contains('#') {
        return;
    }
    let Some(ty) = step.output.as_ref() else {
        return;
    };
    let Some((d, _, bytes)) = slot_bytes(ty, Slot::Packet) else {
        return;
    };
    let flit = cx.target.flit_bytes;
    if bytes == 0 || bytes.is_multiple_of(flit) {
        return;
    }
    let Some(full) = round_up(bytes, flit) else {
        return;
    };
    let waste = (full - bytes).saturating_mul(1000) / full;
    let mut diag = Diagnostic::new(
        &ALN_011,
        arg.span,
        format!(
            "the fetch packet {} is {bytes} bytes; Collect zero-pads it to {full}-byte flits, so \
             {}.{} % of every flit carries no data: pad or widen the packet to {full} bytes",
            arg.text.trim(),
            waste / 10,
            waste % 10
        ),
    );
    if let Some(edit) = d.elems_for(full).and_then(|m| pad_edit(cx.scope, arg, m)) {
        diag = diag.with_fix(format!("pad the packet to {full} bytes"), false, vec![edit]);
    }
    out.push(diag);
}
