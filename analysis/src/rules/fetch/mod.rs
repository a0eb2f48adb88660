//! FET: the Fetch Engine, its sequencer and its adapter (constraints.md §7). The adapter rules
//! decided from dtypes and literals are checked here; the ones that need the derived
//! `fetch_size` stay planned until `crate::derive` provides it.
//!
//! Each rule is one file, named after the rule, holding its declaration, documentation and
//! check. `sub_fetch` derives once what the sub-context rules (FET-002, FET-006) read of one
//! fetch and `main_fetch` what the main-context ones (FET-003, FET-011) read;
//! `adapter_stage` says which conversion table a fetch or adapter is checked against
//! (FET-004, FET-007). This file only says in which order the rules run and which case of a
//! fetch goes to which rule.

mod adapter_stage;
mod casting_fetch_32_bytes;
mod dual_channel_explicit;
mod fetch_asserts;
mod fetch_interleaving;
mod fetch_masking_limits;
mod fetch_size_derivation;
mod fetch_size_per_context;
mod fetch_type_conversion;
mod main_fetch;
mod prefer_sequencer_packets;
mod sub_fetch;
mod table_indexing_main_only;
mod time_divisible_by_batching;
mod zero_point_range;

#[cfg(test)]
mod tests;

pub use casting_fetch_32_bytes::FET_005;
pub use dual_channel_explicit::FET_012;
pub use fetch_asserts::FET_001;
pub use fetch_interleaving::FET_010;
pub use fetch_masking_limits::FET_008;
pub use fetch_size_derivation::FET_003;
pub use fetch_size_per_context::FET_002;
pub use fetch_type_conversion::FET_004;
pub use prefer_sequencer_packets::FET_011;
pub use table_indexing_main_only::FET_009;
pub use time_divisible_by_batching::FET_006;
pub use zero_point_range::FET_007;

use crate::diagnostic::Diagnostic;
use crate::library::Generation;
use crate::model::{Method, TensorTy};
use crate::rule::Rule;
use crate::rules::context::FnContext;
use adapter_stage::AdapterCast;
use main_fetch::MainFetch;
use sub_fetch::SubFetch;

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    FET_001, FET_002, FET_003, FET_004, FET_005, FET_006, FET_007, FET_008, FET_009, FET_010,
    FET_011, FET_012,
];

/// The sub-context fetch sizes (FET-006, else FET-002), the main-context fetches' cycles
/// (FET-011, else FET-003), masking (FET-008) and interleaving (FET-010); then each fetch's
/// conversion (FET-004) and zero point (FET-007), or under furiosa-opt-std 0.6 each adapter's.
pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    sub_context(cx, out);
    main_context(cx, out);
    fetch_masking_limits::check(cx, out);
    fetch_interleaving::check(cx, out);
    let opt_std = cx.model.library == Generation::OptStd;
    for chain in &cx.model.chains {
        for step in &chain.steps {
            if !step.method.is_fetch() {
                continue;
            }
            // furiosa-opt-std's adapters fold into the fetch: each is checked where written
            // (a chain may stop after the fetch and go on from a variable).
            if opt_std {
                continue;
            }
            fetch_type_conversion::check(cx, step, out);
            if matches!(
                step.method,
                Method::FetchWithZeroPoint | Method::FetchWithZeroPoints
            ) {
                let dtype = |t: &Option<TensorTy>| t.as_ref().and_then(|t| t.dtype);
                let types = (dtype(&step.input), dtype(&step.output));
                zero_point_range::check(cx, types, step.args.first(), out);
            }
        }
    }
    if opt_std {
        adapters(cx, out);
    }
}

/// FET-006 or FET-002 on each sub-context fetch whose fixed fetch size does not divide its
/// packet or contiguous run: FET-006 when the packet is not a whole number of fetches.
fn sub_context(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for op in &cx.ops {
        let Some(sub) = SubFetch::of(cx, op) else {
            continue;
        };
        if !sub.whole() {
            time_divisible_by_batching::check(cx, op, &sub, out);
            continue;
        }
        fetch_size_per_context::check(cx, op, &sub, out);
    }
}

/// FET-011 or FET-003 on main-context fetches that read less per cycle than the layout
/// allows: FET-011 when the layout splits the packet, FET-003 when the run continues past it.
fn main_context(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for op in &cx.ops {
        let Some(m) = MainFetch::of(cx, op) else {
            continue;
        };
        if m.split() {
            prefer_sequencer_packets::check(op, &m, out);
            continue;
        }
        if m.run_continues() {
            fetch_size_derivation::check(cx, op, &m, out);
        }
    }
}

/// Under furiosa-opt-std 0.6, each fetch adapter where it is written: FET-007 on
/// `fetch_zero_point_sub`'s zero point, then FET-004 on the adapter's conversion against its
/// own stage's table.
fn adapters(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let conv = cx.conversions();
    for adapter in &cx.model.adapters {
        let Some(cast) = AdapterCast::of(&conv, adapter) else {
            continue;
        };
        if adapter.method == Method::FetchZeroPointSub {
            let types = (Some(cast.from), Some(cast.to));
            zero_point_range::check(cx, types, adapter.args.first(), out);
        }
        fetch_type_conversion::check_adapter(&conv, adapter, &cast, out);
    }
}
