//! COL: the Collect Engine, which normalizes packets to 32-byte flits (constraints.md §9).

use super::context::{FnContext, at_arg, pad_output, rewrite_output};
use crate::derive::collect::normalize;
use crate::diagnostic::{Diagnostic, Edit, Severity};
use crate::model::{Chain, Method, Slot, Step, output_arg, slot_bytes, written};
use crate::rule::{Generations, Rule, Status};

pub const COL_001: Rule = Rule {
    code: "COL-001",
    name: "collect-one-flit",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The collect output packet is exactly one 32-byte flit",
    docs: "Collect pads a smaller packet to the 32-byte flit and splits a larger one at the flit \
           boundary, moving the outer flit count into Time; every engine downstream consumes \
           exactly one flit per step. So the Packet of `.collect::<Time2, Packet2>()` is 32 bytes: \
           pad a small packet (`m![B # 32]` for 16 × i8) or split a large one (`m![B % 16]` with \
           `B / 16` added to Time, for 32 × bf16). The manual's GEMV collects a 64-byte packet \
           (constraints.md §22 A-12).",
    bad: "axes![B = 16]; ...fetch::<i8, m![A], m![B]>().collect::<m![A], m![B]>()",
    good: "axes![B = 16]; ...fetch::<i8, m![A], m![B]>().collect::<m![A], m![B # 32]>()",
    manual: "L3039, L3544, L3549, L3561-L3564",
    generations: Generations::Both,
};

pub const COL_002: Rule = Rule {
    code: "COL-002",
    name: "collect-time-packet",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Time2 = Time followed by the outer flit count; Packet2 = the inner 32 bytes",
    docs: "`collect()` pads the packet to the flit boundary and, for packets over 32 bytes, moves \
           the outer flit index to the innermost position of Time (`m![A]`, bf16 `m![B]` with B = \
           32 → `m![A, B / 16]`, `m![B % 16]`); smaller packets keep Time and are padded \
           (`m![B # 32]`). A written `.collect::<Time2, Packet2>()` (or CollectTensor annotation) \
           with a one-flit Packet2 that is not this derivation (reordered, the flit factor \
           elsewhere in Time, another split) does not type-check against `verify_collect`. \
           visa-lint compares by meaning (MAP-007) and offers the derived mappings. A Packet2 \
           that is not one flit is COL-001's.",
    bad: "// fetch Time m![A], Packet m![B], bf16, B = 32\n.collect::<m![B / 16, A], m![B % 16]>()",
    good: ".collect::<m![A, B / 16], m![B % 16]>()",
    manual: "L3561-L3564, L3589-L3603, L3622-L3668",
    generations: Generations::Both,
};

pub const COL_003: Rule = Rule {
    code: "COL-003",
    name: "collect-mandatory",
    severity: Severity::Error,
    status: Status::Covered {
        by: &["KRN-002"],
        why: "no case of its own: the catalog's COL-003 is the condition of KRN-002 \
         (collect-is-mandatory, L3605), which reports every downstream engine reached without \
         collect",
    },
    summary: "Collect comes before every downstream engine",
    docs: "See KRN-002.",
    bad: "",
    good: "",
    manual: "L3605",
    generations: Generations::Both,
};

pub const COL_004: Rule = Rule {
    code: "COL-004",
    name: "collect-padding-waste",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Multi-flit packets that are not multiples of 32 bytes waste a flit on zero padding",
    docs: "Collect pads every packet to the 32-byte flit boundary with zeros (L2122-L2124): a \
           40-byte packet (five batched 8-byte fetches) becomes two flits, 64 bytes with 24 of \
           padding, and every downstream engine processes the padding flit too. visa-lint \
           reports packets over one flit whose last flit is partial, with the wasted share; make \
           the packet a multiple of 32 bytes (move the excess to Time, or pad the axis in DM). \
           Sub-flit packets are padded to one flit in any case (growing them is FET-003's).",
    bad: "axes![B = 40]; .fetch::<i8, m![A], m![B]>().collect::<m![A, B # 64 / 32], m![B # 64 % 32]>()",
    good: "axes![B = 32]; .fetch::<i8, m![A], m![B]>().collect::<m![A], m![B]>()",
    manual: "L2122-L2124, L2128",
    generations: Generations::Both,
};

pub const COL_005: Rule = Rule {
    code: "COL-005",
    name: "single-channel-flits",
    severity: Severity::Info,
    status: Status::Unreachable(
        "the manual documents no API for dual channel mode (L1997, L2125-L2127 describe it in \
         prose only; no code shows it), so there is nothing to recognise",
    ),
    summary: "Flits are 32 bytes; 64-byte dual channel flits only by explicit configuration",
    docs: "See FET-012.",
    bad: "",
    good: "",
    manual: "L1997, L2125-L2127",
    generations: Generations::Both,
};

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[COL_001, COL_002, COL_003, COL_004, COL_005];

pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let flit = cx.target.flit_bytes;
    for chain in &cx.model.chains {
        for step in chain.steps.iter().filter(|s| s.method == Method::Collect) {
            let Some(ty) = step.output.as_ref() else {
                continue;
            };
            let Some((d, n, bytes)) = slot_bytes(ty, Slot::Packet) else {
                continue;
            };
            if bytes == flit {
                check_derived(cx, step, out);
                continue;
            }
            let span = output_arg(step, Some(1), Slot::Packet).map(|a| a.span);
            let text = ty.get(Slot::Packet).map_or("", |m| m.text.as_str());
            let mut diag = if bytes < flit {
                at_arg(
                    &COL_001,
                    step,
                    span,
                    format!(
                        "the collect output packet {text} is {bytes} bytes ({n} × {d}); it must be \
                         exactly one {flit}-byte flit: pad it to {} elements",
                        d.elems_for(flit)
                            .map_or_else(|| "a full flit of".to_string(), |m| m.to_string())
                    ),
                )
            } else {
                let per = d.elems_for(flit);
                at_arg(
                    &COL_001,
                    step,
                    span,
                    format!(
                        "the collect output packet {text} is {bytes} bytes ({n} × {d}); it must be \
                         exactly one {flit}-byte flit: keep {} elements in the packet and move the \
                         {} outer flits into Time",
                        per.map_or_else(|| "one flit of".to_string(), |m| m.to_string()),
                        bytes.div_ceil(flit)
                    ),
                )
            };
            if bytes < flit {
                if let Some(edits) = d
                    .elems_for(flit)
                    .and_then(|m| pad_output(cx.scope, chain, step, Some(1), Slot::Packet, m))
                {
                    diag = diag.with_fix(format!("pad the packet to {flit} bytes"), false, edits);
                }
            } else if let Some(edits) = split_fix(cx, chain, step) {
                diag = diag.with_fix(
                    format!("keep one {flit}-byte flit in the packet, the outer flits in Time"),
                    false,
                    edits,
                );
            }
            out.push(diag);
        }
    }
}

/// COL-001's fix of a packet over one flit: Time2 and Packet2 rewritten, where they are
/// written, to what collect derives (the inner flit in the packet, the outer flit count as the
/// innermost Time factor). Unsafe: every later step sees the new shape.
fn split_fix(cx: &FnContext<'_>, chain: &Chain, step: &Step) -> Option<Vec<Edit>> {
    let (inp, outp) = (step.input.as_ref()?, step.output.as_ref()?);
    let bits = inp.dtype.or(outp.dtype)?.bits();
    let time = inp.get(Slot::Time)?.layout.as_deref()?;
    let packet = inp.get(Slot::Packet)?.layout.as_deref()?;
    let f = normalize(time, packet, bits, cx.target.flit_bytes)?;
    if f.flits < 2 {
        return None;
    }
    let mut edits = Vec::new();
    for (k, slot, want) in [(0, Slot::Time, &f.time2), (1, Slot::Packet, &f.packet2)] {
        if outp.get(slot)?.layout.as_deref() == Some(want) {
            continue;
        }
        let text = format!("m![{}]", want.to_expr());
        edits.extend(rewrite_output(chain, step, Some(k), slot, &text)?);
    }
    (!edits.is_empty()).then_some(edits)
}

/// COL-002 (written Time2/Packet2 against the derivation) and COL-004 (a partial last flit).
fn check_derived(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let flit = cx.target.flit_bytes;
    let (Some(inp), Some(outp)) = (step.input.as_ref(), step.output.as_ref()) else {
        return;
    };
    let Some(d) = inp.dtype.or(outp.dtype) else {
        return;
    };
    let bits = d.bits();
    let (Some(t), Some(p)) = (inp.get(Slot::Time), inp.get(Slot::Packet)) else {
        return;
    };
    let (Some(tl), Some(pl)) = (t.layout.as_deref(), p.layout.as_deref()) else {
        return;
    };
    let Some(f) = normalize(tl, pl, bits, flit) else {
        return;
    };
    if f.flits > 1 && f.pad_bytes > 0 {
        let total = f.flits.saturating_mul(flit);
        out.push(at_arg(
            &COL_004,
            step,
            output_arg(step, Some(1), Slot::Packet).map(|a| a.span),
            format!(
                "the {}-byte packet `{}` becomes {} flits ({total} bytes) with {} bytes of zero padding: {}% of the flit bandwidth after Collect is wasted. Make the packet a multiple of {flit} bytes",
                f.packet_bytes,
                p.text,
                f.flits,
                f.pad_bytes,
                f.pad_bytes.saturating_mul(100) / total.max(1)
            ),
        ));
    }
    let (Some(t2), Some(p2)) = (outp.get(Slot::Time), outp.get(Slot::Packet)) else {
        return;
    };
    let mut edits = Vec::new();
    let mut first = None;
    for (k, mv, want) in [(0, t2, &f.time2), (1, p2, &f.packet2)] {
        let Some(l) = mv.layout.as_deref() else {
            continue;
        };
        let span = written(step, k).map(|a| a.span).or(mv.span);
        let Some(span) = span else { continue };
        if l == want {
            continue;
        }
        first.get_or_insert((span, mv.text.clone(), want.to_expr(), k));
        edits.push(Edit {
            span,
            new_text: format!("m![{}]", want.to_expr()),
        });
    }
    let Some((span, text, want, k)) = first else {
        return;
    };
    let slot = if k == 0 { "Time2" } else { "Packet2" };
    out.push(
        at_arg(
            &COL_002,
            step,
            Some(span),
            format!(
                "collect derives {slot} = `m![{want}]` from Time `{}` and the {}-byte Packet `{}` ({} flit{}: the outer flit count is the innermost Time factor, the inner {flit} bytes the packet), not `{text}`",
                t.text,
                f.packet_bytes,
                p.text,
                f.flits,
                if f.flits == 1 { "" } else { "s" }
            ),
        )
        .with_fix("use the derived Time2 and Packet2", false, edits),
    );
}

#[cfg(test)]
mod tests {
    use crate::rules::fix_testing::assert_fix_clears;

    #[test]
    fn small_packet_fix_pads_the_annotation() {
        let fixed = assert_fix_clears(
            include_str!("../../../fixtures/rules/COL-001-annotation.rs"),
            "COL-001",
        );
        assert!(fixed.contains("m![1], m![A % 16 # 32]> ="), "{fixed}");
        assert_fix_clears(
            include_str!("../../../fixtures/rules/COL-001.rs"),
            "COL-001",
        );
    }

    /// The manual's GEMV collects `Packet = m![J % 32]` (64 bytes of bf16, L456): the aliases
    /// in the collect's turbofish are replaced there (only) by the derived flit split, as
    /// constraints.md's COL-001 sketch has it; the `align` after it keeps its own `Time,
    /// Packet` (`m![J / 32], m![J % 32]`), which packs two flits again.
    #[test]
    fn large_packet_fix_replaces_aliases_at_the_collect() {
        let fixed = assert_fix_clears(
            include_str!("../../../fixtures/manual/0401_gemv.rs"),
            "COL-001",
        );
        assert!(
            fixed.contains(".collect::<m![J / 16], m![J % 16]>()"),
            "{fixed}"
        );
        assert!(
            fixed.contains(".align::<Time, Packet, _, _>(&vector_trf)"),
            "{fixed}"
        );
    }

    #[test]
    fn large_packet_fix_moves_the_outer_flits_into_time() {
        // L3124-L3135: 32 x f32 = 4 flits; Time2 m![B, C / 8], Packet2 m![C % 8] (L3563-L3564).
        let fixed = assert_fix_clears(
            include_str!("../../../fixtures/manual/3124_switch_forwarding.rs"),
            "COL-001",
        );
        assert!(
            fixed.contains("m![A], m![B, C / 8], m![C % 8]> {"),
            "{fixed}"
        );
    }
}
