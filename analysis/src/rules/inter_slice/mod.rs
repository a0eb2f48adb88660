//! XSL: the Vector Engine's inter-slice block, `vector_inter_slice_reduce::<Slice2, Time2>(op)`
//! (constraints.md §14): ops per element type, the stages it may follow, and the output mapping
//! rules (Broadcast, Dummy, Promotion).
//!
//! Each rule is one file, named after the rule, holding its declaration and its check; this
//! module only says in which order they run. [`layouts`] is the layout reading the rules
//! share.

mod inter_slice_from_way8;
mod inter_slice_keeps_packet;
mod inter_slice_output_mapping;
mod inter_slice_reduce_ops;
mod inter_slice_scope;
mod inter_slice_tail_latency;
mod layouts;
#[cfg(test)]
mod tests;

pub use inter_slice_from_way8::XSL_002;
pub use inter_slice_keeps_packet::XSL_004;
pub use inter_slice_output_mapping::XSL_005;
pub use inter_slice_reduce_ops::XSL_001;
pub use inter_slice_scope::XSL_003;
pub use inter_slice_tail_latency::XSL_006;

use super::context::FnContext;
use crate::diagnostic::Diagnostic;
use crate::model::Method;
use crate::rule::Rule;

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[XSL_001, XSL_002, XSL_003, XSL_004, XSL_005, XSL_006];

/// Checks each chain's declared Packet (XSL-004), then each inter-slice reduce of the chain:
/// its op (XSL-001), the stage it follows (XSL-002), its scope (XSL-003), its output mapping
/// (XSL-005) and its tail (XSL-006).
pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for chain in &cx.model.chains {
        inter_slice_keeps_packet::check(chain, out);
        for step in &chain.steps {
            if step.method != Method::VectorInterSliceReduce {
                continue;
            }
            inter_slice_reduce_ops::check(step, out);
            inter_slice_from_way8::check(step, out);
            inter_slice_scope::check(step, out);
            inter_slice_output_mapping::check(step, out);
            inter_slice_tail_latency::check(cx, step, out);
        }
    }
}
