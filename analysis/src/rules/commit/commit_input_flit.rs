//! CMT-001: the Commit Engine takes full flits, so the packet a commit receives is exactly one
//! flit. Producers whose own rules check the flit (collect, cast, transpose) and streams never
//! fetched (KRN-001) are left to those rules.

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Kind, Method, Slot, slot_bytes};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const CMT_001: Rule = Rule {
    code: "CMT-001",
    name: "commit-input-flit",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The commit input packet is a full 32-byte flit",
    docs: "The Commit Engine takes one 32-byte flit per step; the library asserts \
           \"Commit input packet must be exactly 32 bytes (one flit)\" at every commit, so this is \
           an error. Collect, Cast and Transpose produce flits (COL-001 and their own rules report \
           those); this rule checks commits whose input comes from elsewhere: straight after a \
           fetch or switch (the library allows `fetch → commit`, so the fetched packet must be a \
           full flit), a hand-typed stream parameter or a `let` annotation. Pad the packet to 32 \
           bytes (`m![A # 8]` for f32) and truncate at the commit instead.",
    bad: "fn k(s: CollectTensor<'_, T, f32, C, Cl, S, m![B], m![A # 4]>) { s.commit::<m![B, A]>(0); }",
    good: "fn k(s: CollectTensor<'_, T, f32, C, Cl, S, m![B], m![A # 8]>) { s.commit::<m![B, A]>(0); }",
    manual: "L2192, L2328",
    generations: Generations::Both,
};

/// Producers whose own rules (COL-001, CST, TRN) already check the flit.
const FLIT_PRODUCERS: &[Method] = &[Method::Collect, Method::Cast, Method::Transpose];

/// The stream a furiosa-opt-std commit's adapters (`commit_trim`, `commit_cast`) received, when
/// the commit `step` has any (written after `after`, the step before it): the Commit Engine
/// takes that stream's flits, and its adapters narrow what it writes of them.
fn adapted_from<'a>(
    cx: &FnContext<'a>,
    after: u32,
    step: &crate::model::Step,
) -> Option<&'a crate::model::TensorTy> {
    cx.model
        .adapters
        .iter()
        .filter(|a| a.method.is_commit_adapter())
        .filter(|a| after < a.span.start && a.span.start < step.span.start)
        .min_by_key(|a| a.span.start)
        .map(|a| &a.input)
}

/// Whether `chain` continues the stream a helper call returns in mid-pass (the call's trace
/// checks the pass the two make together).
fn continues_a_call(cx: &FnContext<'_>, chain: &crate::model::Chain) -> bool {
    cx.model
        .calls
        .iter()
        .any(|c| c.span.start == chain.span.start && c.bound.continued.is_some())
}

/// CMT-001: each commit's input packet against one flit.
pub(super) fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let flit = cx.target.flit_bytes;
    for chain in &cx.model.chains {
        for (i, step) in chain.steps.iter().enumerate() {
            if !step.method.is_commit() {
                continue;
            }
            if i > 0 && FLIT_PRODUCERS.contains(&chain.steps[i - 1].method) {
                continue;
            }
            let after = i.checked_sub(1).map_or(0, |k| chain.steps[k].span.start);
            let Some(ty) = adapted_from(cx, after, step).or(step.input.as_ref()) else {
                continue;
            };
            // A commit of a stream that was never fetched is KRN-001. A commit straight after
            // fetch or switch is allowed (the library defines commit on every stream position)
            // and is checked here: its packet is the fetched one.
            if ty.kind == Kind::Begin {
                continue;
            }
            // A stream a helper returns from its collect, cast or transpose, or from a commit
            // adapter (`commit_trim`, a furiosa-opt-std `CommitTrimTensor`, whose packet is
            // narrowed on purpose): that producer's rule checks the flit, in the helper's trace
            // of the pass, at the call.
            if matches!(
                ty.kind,
                Kind::Collect | Kind::Cast | Kind::Transpose | Kind::Stream
            ) && continues_a_call(cx, chain)
            {
                continue;
            }
            let Some((d, n, bytes)) = slot_bytes(ty, Slot::Packet) else {
                continue;
            };
            if bytes != flit {
                let text = ty.get(Slot::Packet).map_or("", |m| m.text.as_str());
                out.push(Diagnostic::new(
                    &CMT_001,
                    step.span,
                    format!(
                        "the commit input packet {text} is {bytes} bytes ({n} × {d}); the Commit \
                         Engine takes full {flit}-byte flits"
                    ),
                ));
            }
        }
    }
}
