//! CMT-007: commits write whole 8-byte units, so a commit whose Element ends inside a unit
//! writes a dummy tail that may overwrite the tensor placed after it.

use super::element::element_written;
use crate::derive;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::Method;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const CMT_007: Rule = Rule {
    code: "CMT-007",
    name: "commit-within-tensor",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "A commit never writes past its tensor, tail dummy included",
    docs: "Commits write whole 8-byte units, so a committed Element that is not a multiple of \
           8 bytes gets a dummy tail: the footprint is `addr .. addr + round_up8(bytes)`. When \
           that tail (and only the tail) reaches another DM tensor of the function, the commit \
           overwrites its first bytes. visa-lint compares the constant addresses of the \
           function's DM tensors; an overlap of the tensors themselves is SCH-001, a tail that \
           overlaps nothing is ALN-007. Pad the Element to a multiple of 8 bytes and move the \
           neighbour, or place the commit lower.",
    bad: "let a: DmTensor<bf16, .., m![N]> = ...commit(0); // N = 3: 6 bytes + 2 dummy\nlet b = ...commit(6);",
    good: "let a: DmTensor<bf16, .., m![N # 4]> = ...commit(0);\nlet b = ...commit(8);",
    manual: "L7699, L7884, L7896",
    generations: Generations::Both,
};

/// CMT-007: a commit's dummy tail over the next tensor.
pub(super) fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for chain in &cx.model.chains {
        for step in &chain.steps {
            if step.method != Method::Commit {
                continue;
            }
            let Some((victim, end, dend)) =
                derive::commit_tail_victim(cx.model, cx.target, chain.binding.as_deref(), step)
            else {
                continue;
            };
            let span = element_written(step).map(|w| w.0);
            let Some(addr) = step.address else { continue };
            out.push(
                at_arg(
                    &CMT_007,
                    step,
                    span,
                    format!(
                        "the commit writes {} bytes at {addr} plus a {}-byte dummy tail up to \
                         {dend} (commits write whole 8-byte units); `{}` starts at {} and loses \
                         its first bytes",
                        end - addr,
                        dend - end,
                        victim.name,
                        victim.address.unwrap_or(0)
                    ),
                )
                .with_related(victim.span, format!("`{}` is placed here", victim.name)),
            );
        }
    }
}
