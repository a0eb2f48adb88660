//! FET-003: the compiler reads `fetch_size` bytes per cycle, the largest supported size that
//! divides both the packet and the contiguous DM run. A main-context fetch whose packet is
//! smaller than a flit while the DM run continues past it would take at most a quarter of the
//! cycles with a larger packet; the fix moves the innermost Time terms into the Packet.

use super::main_fetch::MainFetch;
use crate::derive;
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::Layout;
use crate::model::{Method, Slot, output_arg, written};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const FET_003: Rule = Rule {
    code: "FET-003",
    name: "fetch-size-derivation",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "fetch_size is the largest supported divisor of gcd(packet, contiguous run)",
    docs: "The compiler reads `fetch_size` bytes per cycle: the largest supported size dividing \
           both the packet and the contiguous DM run (L1761), and for a casting fetch at most 32 \
           bytes of output (L1996). Cycles = Time::SIZE × ceil(packet / fetch_size) (L2060). \
           visa-lint reports a main-context fetch whose packet is smaller than a flit while the \
           DM run continues past it, so that a larger packet (the innermost Time factors moved \
           into the Packet, padded to a power of two: `m![C]` → `m![[B, C] # 16]` → `m![[A, B, \
           C] # 32]`, 15 → 3 → 1 cycles, L1816-L1839) would need at most a quarter of the \
           cycles (\"drastically\", L1818). The message gives both cycle counts. Packets split \
           by the layout are FET-011's; 4-bit fetches are skipped, as the manual's batching \
           page counts i4 as bytes (constraints.md §22 A-3).",
    bad: "// a: DmTensor<f8e4m3, .., m![A, B, C]>, A = 3, B = 5, C = 2\n.fetch::<f8e4m3, m![A, B], m![C]>() // 2-byte fetches, 15 cycles",
    good: ".fetch::<f8e4m3, m![A], m![[B, C] # 16]>() // 16-byte fetches, 3 cycles",
    manual: "L1761, L2060, L2067-L2111, L1816-L1839",
    generations: Generations::Both,
};

/// Mapping terms with their lowered layouts, as written.
type Terms = Vec<(String, Layout)>;

/// FET-003 on a main-context fetch that reads one small packet per fetch while the DM run
/// continues past it.
pub(super) fn check(
    cx: &FnContext<'_>,
    op: &derive::Op<'_>,
    m: &MainFetch<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let flit = cx.target.flit_bytes;
    let (cfg, bits, allowed, f) = (m.cfg, m.bits, &m.allowed, &m.sizes);
    let (fetch, cycles, steps) = (m.fetch, m.cycles, m.steps);
    let run = f.contiguous_bytes.min(flit);
    let best_fetch = allowed
        .iter()
        .copied()
        .filter(|&s| s <= run)
        .max()
        .unwrap_or(fetch);
    let total = steps.saturating_mul(f.packet_bytes);
    let best = total.div_ceil(best_fetch);
    if best.saturating_mul(4) <= cycles && bits >= 8 {
        // The small packet the fix grows (and the call when it is written nowhere).
        let at = output_arg(
            op.step,
            (op.step.method == Method::Fetch).then_some(2),
            Slot::Packet,
        );
        let mut d = at_arg(
            &FET_003,
            op.step,
            at.map(|a| a.span),
            format!(
                "fetch_size is {fetch} bytes (the {}-byte packet; the DM run is {} contiguous bytes, sequencer {cfg}): {cycles} cycles; moving the innermost Time factors into the Packet (padded to {best_fetch} bytes) would take about {best}",
                f.packet_bytes, f.contiguous_bytes
            ),
        );
        if let Some((edits, new_cycles, packet)) = grow_packet(cx, op, bits, allowed) {
            d = d.with_fix(
                format!(
                    "fetch `{packet}` packets ({new_cycles} cycle{})",
                    if new_cycles == 1 { "" } else { "s" }
                ),
                false,
                edits,
            );
        }
        out.push(d);
    }
}

/// FET-003's fix (L1816-L1839): move the innermost written Time terms into the Packet while
/// it stays within one flit, padded to a power-of-two byte size. Returns the edits, the new
/// cycle count and the new Packet text.
fn grow_packet(
    cx: &FnContext<'_>,
    op: &derive::Op<'_>,
    bits: u32,
    allowed: &[u64],
) -> Option<(Vec<crate::diagnostic::Edit>, u64, String)> {
    if op.step.method != Method::Fetch {
        return None;
    }
    let (ta, pa) = (written(op.step, 1)?, written(op.step, 2)?);
    let ty = op.step.output.as_ref()?;
    let (tm, pm) = (ty.get(Slot::Time)?, ty.get(Slot::Packet)?);
    let (time, moved, size) = grown_terms(cx, &tm.text, &pm.text, bits)?;
    let flit = cx.target.flit_bytes;
    let want = derive::bytes(size, bits).next_power_of_two().min(flit);
    let elems = want.checked_mul(8)? / u64::from(bits);
    let body = moved.join(", ");
    let packet_text = if elems == size {
        format!("m![{body}]")
    } else if moved.len() == 1 {
        format!("m![{body} # {elems}]")
    } else {
        format!("m![[{body}] # {elems}]")
    };
    let time_text = if time.is_empty() {
        "m![1]".to_string()
    } else {
        format!(
            "m![{}]",
            time.iter()
                .map(|(t, _)| t.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    // Check the new configuration and its cycles.
    let new_packet = cx.scope.lowered_terms(&packet_text)?;
    let time_dims: Vec<_> = time.iter().flat_map(|(_, l)| l.dims.clone()).collect();
    let packet_dims: Vec<_> = new_packet.into_iter().flat_map(|(_, l)| l.dims).collect();
    let cfg = derive::configure(
        &op.buf,
        &time_dims,
        &packet_dims,
        derive::Direction::Read,
        cx.target.sequencer_entries,
    )
    .ok()?;
    let cycles = derive::fetch_sizes(&cfg, bits, allowed).cycles?;
    let edits = vec![
        crate::diagnostic::Edit {
            span: ta.span,
            new_text: time_text,
        },
        crate::diagnostic::Edit {
            span: pa.span,
            new_text: packet_text.clone(),
        },
    ];
    Some((edits, cycles, packet_text))
}

/// The Time terms left and the Packet terms after moving the innermost Time terms into the
/// Packet while it stays within one flit, splitting the next Time term when only part of it
/// fits, and the new Packet's element count; `None` when nothing moves.
fn grown_terms(
    cx: &FnContext<'_>,
    time: &str,
    packet: &str,
    bits: u32,
) -> Option<(Terms, Vec<String>, u64)> {
    let mut time = cx.scope.lowered_terms(time)?;
    let packet = cx.scope.lowered_terms(packet)?;
    let mut moved: Vec<String> = packet.iter().map(|(t, _)| t.clone()).collect();
    let mut size = packet
        .iter()
        .try_fold(1u64, |a, (_, l)| a.checked_mul(l.size))?;
    let flit = cx.target.flit_bytes;
    let mut grown = false;
    while let Some((t, l)) = time.last() {
        let next = size.checked_mul(l.size)?;
        if derive::bytes(next, bits) > flit {
            break;
        }
        size = next;
        moved.insert(0, t.clone());
        time.pop();
        grown = true;
    }
    // Split the next Time term when only part of it fits: `A` → `A / k` stays, `A % k` moves.
    if let Some((t, l)) = time.last().cloned() {
        let room = flit.checked_mul(8)? / u64::from(bits) / size.max(1);
        let simple = !t.contains(['%', '#', '[', ',', '=', '(']);
        if simple && room > 1 && l.size > room && l.size.is_multiple_of(room) {
            let inner = format!("{t} % {room}");
            let lowered = cx.scope.lowered_terms(&format!("m![{t} / {room}]"))?;
            time.pop();
            time.extend(
                lowered
                    .into_iter()
                    .map(|(_, l)| (format!("{t} / {room}"), l)),
            );
            moved.insert(0, inner);
            size = size.checked_mul(room)?;
            grown = true;
        }
    }
    if !grown {
        return None;
    }
    Some((time, moved, size))
}

#[cfg(test)]
mod tests {
    use crate::target::RNGD;

    /// The Batching page's four fetches of `m![N, C, H, W]` (L2067-L2111): packet, fetch size,
    /// batching factor and cycles. The manual counts one byte per i4 element (constraints.md §22
    /// A-3), so its numbers are reproduced at 8 bits; packed i4 halves the packets.
    #[test]
    fn batching_page_l2067() {
        use crate::derive::{Direction, configure, fetch_sizes};
        use crate::mapping::evaluate;
        let axes = "axes![N = 4, C = 3, H = 4, W = 8];";
        let lay = |m: &str| evaluate(axes, m).layout.expect("layout");
        let buf = lay("m![N, C, H, W]");
        let cases = [
            ("m![N, C, H]", "m![W]", (8, 8, 1, 48), (4, 4, 1, 48)),
            (
                "m![N, C, H / 2]",
                "m![H % 2, W]",
                (16, 16, 1, 24),
                (8, 8, 1, 24),
            ),
            ("m![N, C]", "m![H, W]", (32, 32, 1, 12), (16, 16, 1, 12)),
            ("m![N]", "m![C, H, W]", (96, 32, 3, 12), (48, 16, 3, 12)),
        ];
        for (time, packet, manual, packed) in cases {
            let (t, p) = (lay(time), lay(packet));
            let cfg = configure(
                &buf,
                &t.dims,
                &p.dims,
                Direction::Read,
                RNGD.sequencer_entries,
            )
            .expect("configures");
            assert_eq!(
                crate::derive::contiguous_elements(&cfg.entries),
                384,
                "{time} {packet}"
            );
            for (bits, want) in [(8, manual), (4, packed)] {
                let f = fetch_sizes(&cfg, bits, RNGD.fetch_sizes_main);
                let got = (
                    f.packet_bytes,
                    f.fetch_size.unwrap_or(0),
                    f.fetches_per_packet.unwrap_or(0),
                    f.cycles.unwrap_or(0),
                );
                assert_eq!(got, want, "{time} {packet} at {bits} bits");
            }
        }
    }
}
