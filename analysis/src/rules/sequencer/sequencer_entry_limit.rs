//! SEQ-001: a sequencer has a fixed number of entries after merging. The fix orders the
//! written Time terms as they lie in the buffer, so adjacent ones merge, when that fits.

use super::ops::{buffer_name, stream_ty, who};
use crate::derive::{self, Config, Op};
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::mapping::Layout;
use crate::mapping::layout::{Dim, Factor};
use crate::model::{Slot, mapping_around};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const SEQ_001: Rule = Rule {
    code: "SEQ-001",
    name: "sequencer-entry-limit",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A sequencer configuration has at most 8 loop entries after merging",
    docs: "The compiler turns the stream mapping `[Time, Packet]` into one loop entry per factor \
           (`size : stride` in the buffer) and, when more than 8 result, merges adjacent entries \
           that are physically contiguous (`s1 == n2 * s2`). If more than 8 remain, compilation \
           fails. Reorder the Time factors to follow the buffer's order so they merge (`C / 2, C % 2` \
           adjacent become `C`), move a factor into Slice, or split the operation.",
    bad: "// Element m![N, C, H, W]; nothing in Time is adjacent as in the buffer\n.fetch::<i8, m![H % 2, N % 2, C % 2, W / 16, H / 2, N / 2, C / 2, W / 8 % 2], m![W % 8]>()",
    good: ".fetch::<i8, m![W / 16, H % 2, H / 2, C / 2, C % 2, N / 2, N % 2, W / 8 % 2], m![W % 8]>()",
    manual: "L1568-L1569, L1616-L1627, L1630, L2321, L2338",
    generations: Generations::Both,
};

/// SEQ-001: the entries of `op`'s configuration after merging against the hardware's.
pub(super) fn check(cx: &FnContext<'_>, op: &Op<'_>, cfg: &Config, out: &mut Vec<Diagnostic>) {
    let limit = cx.target.sequencer_entries;
    if cfg.entries.len() <= limit {
        return;
    }
    // At the Time mapping the fix reorders; the call when there is no fix.
    let fix = reorder_fix(cx, op, limit);
    let mut d = at_arg(
        &SEQ_001,
        op.step,
        fix.as_ref().and_then(|f| mapping_around(cx.model, f.0)),
        format!(
            "{} needs {} entries after merging ({cfg}); the hardware has {limit}. Order the Time factors as in {} so adjacent ones merge, or split the operation",
            who(op),
            cfg.entries.len(),
            buffer_name(op)
        ),
    );
    if let Some((sp, text, n)) = fix {
        d = d.with_edit(
            format!(
                "order the Time factors as in the buffer ({n} entr{} after merging)",
                if n == 1 { "y" } else { "ies" }
            ),
            false,
            sp,
            text,
        );
    }
    out.push(d);
}

/// SEQ-001's fix: the written Time terms sorted by their stride in the buffer (outermost
/// first), when that configuration fits in `limit` entries.
fn reorder_fix(cx: &FnContext<'_>, op: &Op<'_>, limit: usize) -> Option<(Span, String, usize)> {
    let ty = stream_ty(op)?;
    let tm = ty.get(Slot::Time)?;
    let at = tm.span?;
    let terms = cx.scope.lowered_terms(&tm.text)?;
    if terms.len() < 2 {
        return None;
    }
    let sorted = sorted_terms(op, &terms)?;
    if sorted
        .iter()
        .map(|(t, _)| t)
        .eq(terms.iter().map(|(t, _)| t))
    {
        return None;
    }
    let time_dims: Vec<Dim> = sorted.iter().flat_map(|(_, l)| l.dims.clone()).collect();
    let packet_dims = ty
        .get(Slot::Packet)
        .and_then(|p| cx.scope.lowered_terms(&p.text))
        .map_or_else(
            || op.packet.dims.clone(),
            |v| v.into_iter().flat_map(|(_, l)| l.dims).collect(),
        );
    let cfg = derive::configure(
        &op.buf,
        &time_dims,
        &packet_dims,
        op.kind.direction(),
        limit,
    )
    .ok()?;
    if cfg.entries.len() > limit {
        return None;
    }
    let text = format!(
        "m![{}]",
        sorted
            .iter()
            .map(|(t, _)| t.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Some((at, text, cfg.entries.len()))
}

/// The Time terms sorted by their stride in `op`'s buffer, outermost first; `None` when the
/// buffer has an opaque dimension.
fn sorted_terms(op: &Op<'_>, terms: &[(String, Layout)]) -> Option<Vec<(String, Layout)>> {
    // Buffer strides of each digit, innermost first.
    let mut strides: Vec<(&Factor, u64)> = Vec::new();
    let mut st: u64 = 1;
    for d in op.buf.dims.iter().rev() {
        let Dim::Factor(f) = d else { return None };
        strides.push((f, st));
        st = st.checked_mul(f.extent)?;
    }
    let key = |l: &Layout| -> u64 {
        let Some(Dim::Factor(f)) = l.dims.last() else {
            return u64::MAX;
        };
        let Some(a) = &f.axis else { return u64::MAX };
        strides
            .iter()
            .find(|(h, _)| {
                h.axis.as_ref().is_some_and(|b| b.name == a.name)
                    && f.coef >= h.coef
                    && f.coef < h.coef.saturating_mul(h.valid)
            })
            .map_or(u64::MAX, |(h, s)| s.saturating_mul(f.coef / h.coef.max(1)))
    };
    let mut sorted = terms.to_vec();
    sorted.sort_by_key(|(_, l)| std::cmp::Reverse(key(l)));
    Some(sorted)
}
