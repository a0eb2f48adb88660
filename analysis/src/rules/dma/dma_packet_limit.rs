//! ALN-004: a DMA packet is at most 4,096 bytes, so a longer run is cut into packets of a
//! divisor; where that divisor wastes part of its last request, more requests are sent than
//! the run needs.

use crate::derive::dma::{DmaOp, DmaPair};
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const ALN_004: Rule = Rule {
    code: "ALN-004",
    name: "dma-packet-limit",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "A DMA packet is at most 4,096 bytes (AXI: 256 beats of 16 bytes)",
    docs: "A DMA packet (`stride0`, 1..=4096) is at most 4,096 bytes and divides the innermost \
           contiguous run. When the run is longer and 4,096 does not divide it, the compiler \
           picks a smaller divisor; visa-lint reports the packet it derives when that divisor \
           is at least 256 bytes but its packets need more 256-byte requests than the run \
           itself (below 256 bytes it is the DMA-010 performance problem). Pad the innermost \
           axis so the run is a multiple of 4,096 bytes.",
    bad: "axes![S = 256, C = 8200]; h.to_dm::<m![1 # 2], m![S], m![C]>(&mut ctx.tdma, 0) // 1,640-byte packets, 7 requests each",
    good: "axes![S = 256, C = 8192]; h.to_dm::<m![1 # 2], m![S], m![C]>(&mut ctx.tdma, 0)",
    manual: "L2428-L2429, L2512, L2448",
    generations: Generations::Both,
};

/// ALN-004 on the DMA pair `p`, whose run is over the packet limit and whose packet `stride0`
/// is at least one request.
pub(super) fn check(
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
    let requests = p.requests.unwrap_or(0);
    if requests
        > run
            .div_ceil(req)
            .saturating_mul(packets / (run / stride0).max(1))
    {
        // The packets that divide the run waste part of their last request.
        out.push(Diagnostic::new(
            &ALN_004,
            op.span,
            format!(
                "the {run}-byte contiguous run exceeds the {max}-byte DMA packet limit; the \
                 largest divisor within it is {stride0} bytes, so the DMA moves {packets} \
                 packets in {requests} requests ({} each) where {}-byte runs would need {}",
                stride0.div_ceil(req),
                run,
                run.div_ceil(req)
                    .saturating_mul(packets / (run / stride0).max(1))
            ),
        ));
    }
}
