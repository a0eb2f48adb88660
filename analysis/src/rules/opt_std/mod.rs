//! OPT: what furiosa-opt-std 0.6's compiler refuses in a `#[device]` function that the manual
//! never states. They apply to crates on furiosa-opt-std only: the model builder finds them
//! there ([`crate::model::refusals`]) and this module reports them. The manual's hardware
//! rules are the other families; these are the library's own.
//!
//! Each rule is one file, named after the rule, holding its declaration and its check or, for
//! a refusal the model builder found, its diagnostic; this module only says which steps each
//! check reads and which diagnostic each refusal becomes.

mod branched_slots;
mod commit_cast;
mod gather_index_over_spm;
mod generic_device_entry;
mod immediate_not_constant;
mod reshape_keeps_level_sizes;
mod runtime_panic_in_device;
mod tile_padding_kind;

pub use branched_slots::OPT_008;
pub use commit_cast::OPT_005;
pub use gather_index_over_spm::OPT_004;
pub use generic_device_entry::OPT_001;
pub use immediate_not_constant::OPT_003;
pub use reshape_keeps_level_sizes::OPT_006;
pub use runtime_panic_in_device::OPT_002;
pub use tile_padding_kind::OPT_007;

use super::context::FnContext;
use crate::diagnostic::Diagnostic;
use crate::library::Generation;
use crate::model::Method;
use crate::model::refusals::Refusal;
use crate::rule::Rule;

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    OPT_001, OPT_002, OPT_003, OPT_004, OPT_005, OPT_006, OPT_007, OPT_008,
];

/// The OPT rules that read the model (the others are refusals the model builder found).
pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    if cx.model.library != Generation::OptStd {
        return;
    }
    for chain in &cx.model.chains {
        for (i, step) in chain.steps.iter().enumerate() {
            match step.method {
                Method::DmaGatherUnscaled => gather_index_over_spm::check(cx, step, out),
                Method::Reshape => reshape_keeps_level_sizes::check(step, out),
                Method::Tile => tile_padding_kind::check(cx, chain, i, out),
                _ => {}
            }
        }
    }
    commit_cast::check(cx, out);
}

/// The diagnostic of one refusal.
pub fn diagnostic(r: &Refusal) -> Diagnostic {
    match r {
        Refusal::Slots { at, fault, related } => branched_slots::diagnostic(*at, fault, *related),
        Refusal::GenericEntry { at, params } => generic_device_entry::diagnostic(*at, params),
        Refusal::RuntimePanic { at, name } => runtime_panic_in_device::diagnostic(*at, name),
        Refusal::NotConstant {
            at,
            method,
            what,
            text,
        } if what.folds_in_const_block() => immediate_not_constant::folds(*at, method, what, text),
        Refusal::NotConstant {
            at,
            method,
            what,
            text,
        } => immediate_not_constant::varies(*at, method, what, text),
    }
}
