//! DMA-010: an innermost run over the 4,096-byte packet limit with no divisor of at least one
//! request degrades to tiny packets, one request each; the fix pads the DM tensor's innermost
//! axis to a multiple of the limit.

use super::padding::{dm_element, dtype, pad_fix, row_bytes};
use crate::derive::bytes;
use crate::derive::dma::{DmaOp, DmaPair};
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const DMA_010: Rule = Rule {
    code: "DMA-010",
    name: "dma-bad-divisor",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Innermost runs over 4,096 bytes without a good divisor degrade to tiny packets",
    docs: "The DMA packet divides the innermost contiguous run and is at most 4,096 bytes; a run \
           without a divisor between 256 and 4,096 (4,099 bytes is prime) moves tiny packets, \
           one 256-byte request each. visa-lint derives the packet of every `to_dm`/`to_hbm` \
           and reports it with the request counts. Pad the innermost axis to a multiple of \
           256 bytes (or split the command, about 500 cycles each).",
    bad: "axes![A = 2, C = 4099]; h.to_dm::<m![1], m![1], m![A, C]>(..) // 8,198-byte run: 2-byte packets",
    good: "axes![A = 2, C = 4099]; h.to_dm::<m![1], m![1], m![A, C # 4352]>(..)",
    manual: "L2469-L2472, L2593-L2594",
    generations: Generations::Both,
};

/// DMA-010 on the DMA pair `p`, whose run is over the packet limit and whose packet `stride0`
/// is smaller than one request.
pub(super) fn report(
    cx: &FnContext<'_>,
    op: &DmaOp<'_>,
    p: &DmaPair,
    stride0: u64,
    out: &mut Vec<Diagnostic>,
) {
    let (run, max, req) = (
        p.run_bytes,
        cx.target.dma_packet_max_bytes,
        cx.target.dma_request_bytes,
    );
    let packets = p.packets.unwrap_or(0);
    let full_requests = bytes(
        op.time
            .iter()
            .chain(op.packet.iter())
            .fold(1u64, |a, d| a.saturating_mul(d.extent())),
        op.bits,
    )
    .div_ceil(req);
    let row = row_bytes(op).unwrap_or(run);
    let up = row.div_ceil(max).saturating_mul(max);
    // At the DM Element the fix pads (the call when it is written nowhere).
    let diag = at_arg(
        &DMA_010,
        op.step,
        dm_element(op).map(|w| w.0),
        format!(
            "the {run}-byte contiguous run has no divisor between {req} and {max} bytes, so \
             the DMA moves {stride0}-byte packets: {packets} packets of one {req}-byte \
             request each instead of about {full_requests} requests; pad the innermost axis \
             to {up} bytes (a multiple of {max}) or split the command"
        ),
    );
    out.push(pad_fix(cx.scope, op, dtype(op.step), up, diag));
}
