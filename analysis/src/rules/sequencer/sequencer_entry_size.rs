//! SEQ-002: a sequencer entry counts a bounded number of iterations. The fix splits the
//! written Time term of that size in two, both within the bound.

use super::ops::{stream_ty, who};
use crate::derive::{Config, Op};
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::mapping::{lower, parse};
use crate::model::{Slot, mapping_around};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const SEQ_002: Rule = Rule {
    code: "SEQ-002",
    name: "sequencer-entry-size",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Each sequencer entry iterates at most 65,536 times",
    docs: "A loop entry's size is the iteration count of one factor of the stream (after merging, \
           which can create a large entry). The manual states `size <= 65,536` (L1632, L4174) and \
           also `limit < 65536` (L7699, constraints.md §22 A-5); visa-lint uses <= 65,536. Split \
           the axis in the Time mapping (`X` → `X / 256, X % 256`) with another factor between the \
           two parts so they do not merge back.",
    bad: "axes![A = 131072]; .fetch::<i8, m![A / 8], m![A % 8]>() // entry 16384 : 8 is fine; m![A] in Time with m![1] packet is 131072 : 1",
    good: "axes![A = 131072]; .fetch::<i8, m![A / 8], m![A % 8]>()",
    manual: "L1631-L1632, L4174, L7699",
    generations: Generations::Both,
};

/// SEQ-002: the first entry of `op`'s configuration that counts too many iterations.
pub(super) fn check(cx: &FnContext<'_>, op: &Op<'_>, cfg: &Config, out: &mut Vec<Diagnostic>) {
    let limit = cx.target.sequencer_entries;
    let max = cx.target.sequencer_entry_size;
    let Some(e) = cfg.entries.iter().find(|e| e.size > max) else {
        return;
    };
    // At the Time mapping the fix splits the factor in; the call when there is no fix.
    let fix = (cfg.entries.len() < limit)
        .then(|| split_fix(cx, op, e.size, max))
        .flatten();
    let mut d = at_arg(
        &SEQ_002,
        op.step,
        fix.as_ref().and_then(|f| mapping_around(cx.model, f.1)),
        format!(
            "{} has an entry of {} iterations ({} : {}); an entry counts at most {max} (the manual also says < 65536, constraints.md §22 A-5). Split that factor in Time",
            who(op),
            e.size,
            e.size,
            e.stride
        ),
    );
    if let Some((title, sp, text)) = fix {
        d = d.with_edit(title, false, sp, text);
    }
    out.push(d);
}

/// SEQ-002's fix: the written Time term of `size` iterations split as `t / outer, t % inner`
/// with both parts within `max` (the split parts stay apart: no merge below 8 entries).
fn split_fix(
    cx: &FnContext<'_>,
    op: &Op<'_>,
    size: u64,
    max: u64,
) -> Option<(String, Span, String)> {
    let ty = stream_ty(op)?;
    let mv = ty.get(Slot::Time)?;
    let at = mv.span?;
    // The largest divisor of `size` within `max` whose cofactor is within `max` too.
    let inner = (1..=max.min(size))
        .rev()
        .take(1 << 16)
        .find(|k| size.is_multiple_of(*k) && size / k <= max)?;
    let outer = size / inner;
    if outer <= 1 {
        return None;
    }
    for (off, term) in crate::mapping::edit::top_terms(&mv.text) {
        let Ok(e) = parse::parse_mapping(term) else {
            continue;
        };
        let Some(l) = lower(&e, cx.scope, &mut Vec::new()) else {
            continue;
        };
        if l.size != size {
            continue;
        }
        let simple = term
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '\'' || c == ' ' || c == '/');
        let base = if simple {
            term.to_string()
        } else {
            format!("({term})")
        };
        let text = format!("{base} / {inner}, {base} % {inner}");
        let start = at.start as usize + off;
        return Some((
            format!("split `{term}` into `{text}`"),
            Span::new(start, start + term.len()),
            text,
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    /// Runs the analysis of `src` and returns the codes of SEQ/FET/COL diagnostics.
    fn codes(src: &str) -> Vec<String> {
        let a = crate::db::analyse_text(src);
        a.diagnostics()
            .iter()
            .map(|d| d.code().to_string())
            .filter(|c| c.starts_with("SEQ") || c.starts_with("FET") || c.starts_with("COL"))
            .collect()
    }

    #[test]
    fn huge_sizes_do_not_panic() {
        // 2^58 × 8 elements: checked arithmetic in every derived size.
        let src = "use furiosa_visa_std::prelude::*;\n\
                   axes![S = 256, A = 288230376151711744, B = 8];\n\
                   #[device(chip = 1)]\n\
                   fn k(ctx: &mut Context, a: &DmTensor<i8, m![1], m![1 # 2], m![S], m![A, B]>) {\n\
                   let x = ctx.main.begin(a.view()).fetch::<i8, m![A], m![B # 32]>()\n\
                   .collect::<m![A], m![B # 32]>();\n}\n";
        let c = codes(src);
        assert!(c.contains(&"SEQ-002".to_string()), "{c:?}");
    }
}
