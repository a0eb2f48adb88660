//! SEQ-005: a packet of several flits read in fetches the layout keeps below one flit, because
//! its contiguous SRAM run is shorter than a flit; the message names the entries that break
//! the run.

use super::ops::choices;
use super::read_packet::ReadPacket;
use crate::derive::{self, Op};
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const SEQ_005: Rule = Rule {
    code: "SEQ-005",
    name: "contiguous-sram-access",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "contiguous_sram_access_size: the product of the innermost physically contiguous entries",
    docs: "Adjacent entries outer `(n1 : s1)` and inner `(n2 : s2)` are physically contiguous iff \
           `s1 == n2 * s2`; the product of the innermost contiguous run is the \
           contiguous_sram_access_size, and the fetch size divides it. visa-lint reports it \
           (with the entry pair that breaks the run) where it is what keeps a multi-flit packet \
           (over 32 bytes) from being read 32 bytes at a time, as in the manual's \
           `four_axes_non_contiguous` (8 contiguous bytes, L1795-L1804). Packets of at most one \
           flit split by the layout are FET-011's; small packets in a long run are FET-003's. \
           `visa-lint derive` prints the size for every operation.",
    bad: "// a: DmTensor<i8, .., m![N, C, H, W]>\n.fetch::<i8, m![1], m![N, H, C, W]>() // 8-byte runs",
    good: ".fetch::<i8, m![C], m![N, H, W]>() // 32-byte runs",
    manual: "L1762, L1769-L1804",
    generations: Generations::Both,
};

/// SEQ-005: a multi-flit packet read in fetches the layout keeps below one flit.
pub(super) fn check(
    cx: &FnContext<'_>,
    op: &Op<'_>,
    p: &ReadPacket<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let (cfg, bits, last, sub) = (p.cfg, p.bits, p.last, p.sub);
    if sub || last.stride > 1 {
        return;
    }
    let f = derive::fetch_sizes(cfg, bits, &choices(cx, op));
    let flit = cx.target.flit_bytes;
    let Some(fetch) = f.fetch_size else { return };
    if f.packet_bytes > flit && f.contiguous_bytes < flit && fetch < flit {
        let brk = cfg
            .entries
            .windows(2)
            .rev()
            .find(|w| w[0].stride != w[1].size.saturating_mul(w[1].stride))
            .map(|w| {
                format!(
                    "; `{} : {}` is not contiguous with `{} : {}` ({} != {} * {})",
                    w[0].size,
                    w[0].stride,
                    w[1].size,
                    w[1].stride,
                    w[0].stride,
                    w[1].size,
                    w[1].stride
                )
            })
            .unwrap_or_default();
        let best = derive::time_steps(cfg).saturating_mul(f.packet_bytes.div_ceil(flit));
        out.push(Diagnostic::new(
            &SEQ_005,
            op.span,
            format!(
                "contiguous_sram_access_size is {} bytes (sequencer {cfg}{brk}), so fetch_size is {fetch} and each {}-byte packet takes {} fetches: {} cycles; a layout with {flit}-byte runs would take {best}",
                f.contiguous_bytes,
                f.packet_bytes,
                f.fetches_per_packet.unwrap_or(0),
                f.cycles.unwrap_or(0)
            ),
        ));
    }
}
