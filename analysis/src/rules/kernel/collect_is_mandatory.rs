//! KRN-002: the engines after Collect consume exactly-32-byte flits, so a pass goes fetch →
//! [switch →] collect before them; in the library their methods exist only on `CollectTensor`.
//! Commit is not this rule's: a short packet committed straight after fetch is CMT-001.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::model::{Engine, Method};
use crate::rule::{Generations, Rule, Status};

pub const KRN_002: Rule = Rule {
    code: "KRN-002",
    name: "collect-is-mandatory",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`collect()` comes before Contraction, TRF/VRF loads, Vector, Cast and Transpose",
    docs: "The downstream engines consume exactly-32-byte flits, so a pass goes fetch → [switch →] \
           collect before them. In the library `to_trf`, `to_vrf`, `align`, `vector_init`, `cast` \
           and `transpose` exist only on `CollectTensor` (and later stages): on a fetched or \
           switched stream they are a missing method, a compilation error, hence an error here. \
           Insert `.collect::<Time, Packet>()` after the fetch or switch. Commit is not part of \
           this rule: the library defines `commit`/`commit_view` on every stream position and \
           only asserts \"Commit input packet must be exactly 32 bytes (one flit)\", so `fetch → \
           commit` with a full-flit packet is accepted and a short packet is CMT-001 (the manual, \
           L3605, says collect is mandatory for commit too). Under furiosa-opt-std 0.6 a commit goes \
           through `commit_trim`, which the library gives collect and the engines after it only \
           (`engine/mod.rs:256-260` at ebb846a): `fetch → commit_trim` is an error there.",
    bad: "ctx.sub.begin(a.view()).fetch::<i8, T, P>().to_trf::<R, E>(TrfAddress::Full)",
    good: "ctx.sub.begin(a.view()).fetch::<i8, T, P>().collect::<T, P>().to_trf::<R, E>(TrfAddress::Full)",
    manual: "L3605",
    generations: Generations::Both,
};

/// `.method()` of `engine` on a fetched or switched stream.
pub(super) fn needs_collect(at: Span, method: &Method, engine: Engine) -> Diagnostic {
    Diagnostic::new(
        &KRN_002,
        at,
        format!(
            "`.{method}()` needs `.collect()` first: every Tensor Unit pass goes fetch → [switch →] collect before {}",
            engine_phrase(engine, method)
        ),
    )
}

/// What a method that needs `.collect()` first does, in KRN-002's message.
fn engine_phrase(engine: Engine, method: &Method) -> String {
    match method {
        Method::ToTrf => "loading the TRF".into(),
        Method::ToVrf => "loading the VRF".into(),
        _ => format!("the {}", engine.name()),
    }
}
