//! VCG-008: the VCG tracks validity in at most 4 dimensions, one packet count and 3 binary
//! gates, so a `BranchMode::ValidCount` branch over more padded axes cannot be expressed.

use super::valid_count::ValidCount;
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const VCG_008: Rule = Rule {
    code: "VCG-008",
    name: "vcg-dimension-budget",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "At most 4 validity dimensions: 1 packet count and 3 binary gates",
    docs: "Each padded axis whose validity the VCG tracks takes the packet dim (an axis in \
           Packet) or one of 3 gate dims; unpadded axes are free, and with no padded axis in \
           Packet the packet dim serves as a fourth gate. `BranchMode::ValidCount` needs every \
           padded axis of its input stream tracked, so more than 4 padded axes (or 4 gates \
           besides a packet axis) cannot be expressed. (A reduce tracks only its reduce axis.) \
           Choose sizes that fill their digits for some axes, or split the work.",
    bad: "// A = 3, B = 60, C = 3, D = 3, E = 5\nSlice m![A # 4, B # 64], Time m![C # 4, D # 4], Packet m![E # 8]\n.vector_intra_slice_branch(BranchMode::ValidCount)",
    good: "// A = 3, B = 60, C = 3, D = 4, E = 5\nSlice m![A # 4, B # 64], Time m![C # 4, D], Packet m![E # 8]\n.vector_intra_slice_branch(BranchMode::ValidCount)",
    manual: "L4800, L6459, L6549-L6555, L6561",
    generations: Generations::Both,
};

/// VCG-008 on a `BranchMode::ValidCount` branch with more padded axes than the VCG's gates
/// (and its packet dim, when no padded axis is in Packet) can track.
pub(super) fn check(cx: &FnContext<'_>, v: &ValidCount<'_>, out: &mut Vec<Diagnostic>) {
    let gates = v.axes.len() - usize::from(v.packet_dim);
    let avail = cx.target.vcg_gate_dims + usize::from(!v.packet_dim);
    if gates <= avail {
        return;
    }
    let names = v.names();
    let msg = format!(
        "{} padded axes ({}) need validity tracking, but the VCG has at most 4 validity \
         dimensions: 1 packet count and {} binary gates. Pad fewer axes (choose sizes that \
         fill their digits) or split the work into several passes",
        v.axes.len(),
        names.join(", "),
        cx.target.vcg_gate_dims
    );
    out.push(Diagnostic::new(&VCG_008, v.arg.span, msg));
}
