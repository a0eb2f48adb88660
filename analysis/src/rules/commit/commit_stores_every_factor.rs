//! CMT-006: a commit can neither broadcast nor drop a factor, since a write sequencer needs
//! non-zero strides; the fix stores the missing axes in the Element.

use super::element::element_written;
use crate::derive::OpKind;
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const CMT_006: Rule = Rule {
    code: "CMT-006",
    name: "commit-stores-every-factor",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "No broadcast or selective writes: every stream factor is stored",
    docs: "The commit sequencer is a write sequencer, and write sequencers require non-zero \
           strides for all entries (L7775): a stream Time or Packet factor whose axis the \
           committed Element does not hold would be written with stride 0, every step \
           overwriting the same DM addresses, so broadcast (reuse) is impossible during a commit \
           although a fetch may broadcast freely. visa-lint derives the commit sequencer \
           (crate::derive) and reports such a factor, naming the axes. CMT-006 covers commits; \
           the same condition on the Sequencer page's `BufTensor::write` is SEQ-008 (one \
           finding per write). An Element factor the stream never produces is SEQ-006. Keep the \
           axis in the Element (the fix prepends it, which enlarges the tensor), or reduce it \
           (Vector Engine / accumulate) before the commit.",
    bad: "// stream Time m![T, A / 32], Packet m![A % 32] (T repeats A)\n.commit::<m![A]>(0x1000)",
    good: ".commit::<m![T, A]>(0x1000)",
    manual: "L7775",
    generations: Generations::Both,
};

/// CMT-006: a commit whose write sequencer would need a stride-0 entry (a broadcast factor).
pub(super) fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for op in &cx.ops {
        if op.kind != OpKind::Commit {
            continue;
        }
        let Ok(cfg) = &op.config else { continue };
        let Some(what) = op.stride_zero(cfg) else {
            continue;
        };
        let missing = op.missing_axes();
        let it = if missing.len() > 1 { "them" } else { "it" };
        let written_el = element_written(op.step);
        let el_text = written_el.as_ref().map_or_else(
            || "the Element".to_string(),
            |(_, t)| format!("the Element `{t}`"),
        );
        // The Element the fix extends is at fault; the commit when it is written nowhere.
        let mut d = at_arg(
            &CMT_006,
            op.step,
            written_el.as_ref().map(|w| w.0),
            format!(
                "the commit sequencer would store {what} with stride 0 (commit sequencer {cfg}): \
                 {el_text} does not hold {it}, and a write sequencer needs non-zero strides, so a \
                 commit can neither broadcast nor drop a factor; keep it in the Element or reduce it \
                 before the commit"
            ),
        );
        if !missing.is_empty()
            && let Some((sp, text)) = &written_el
            && let Some(inner) = text
                .trim()
                .strip_prefix("m![")
                .and_then(|t| t.strip_suffix(']'))
        {
            let inner = inner.trim();
            let head = missing.join(", ");
            let new = if inner.is_empty() || inner == "1" {
                format!("m![{head}]")
            } else {
                format!("m![{head}, {inner}]")
            };
            d = d.with_edit(
                format!("store {} in the Element: {new}", missing.join(", ")),
                false,
                *sp,
                new,
            );
        }
        out.push(d);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn stride_zero_commit_is_cmt_006_and_write_is_seq_008() {
        // L7775: no broadcast during commit; the Sequencer page's BufTensor::write is SEQ-008.
        let commit = include_str!("../../../../fixtures/rules/CMT-006.rs");
        let codes: Vec<&str> = crate::db::analyse_text(commit)
            .diagnostics()
            .iter()
            .map(|d| d.code())
            .collect();
        assert_eq!(codes, ["CMT-006"]);
        let a = crate::db::analyse_text(commit);
        assert_eq!(a.diagnostics()[0].fixes[0].edits[0].new_text, "m![T, A]");
        let write = include_str!("../../../../fixtures/rules/SEQ-008.rs");
        let codes: Vec<&str> = crate::db::analyse_text(write)
            .diagnostics()
            .iter()
            .map(|d| d.code())
            .collect();
        assert_eq!(codes, ["SEQ-008"]);
    }
}
