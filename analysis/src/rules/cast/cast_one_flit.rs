//! CST-002: the Cast Engine takes one flit and gives one. Its input packet is one flit
//! (collect reports its own, COL-001), its output packet the same elements padded to one flit
//! of the target type, and Time passes through unchanged.

use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::Layout;
use crate::model::{
    Arg, Chain, Dtype, Kind, Method, Slot, Step, TensorTy, output_arg, pad_edit, slot_bytes,
};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg, pad_in_tensor_alias, pad_output};

pub const CST_002: Rule = Rule {
    code: "CST-002",
    name: "cast-one-flit",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Cast takes one 32-byte flit and gives one: OutPacket = `P # (32 / size_of(D2))`, Time unchanged",
    docs: "The Cast Engine converts the elements of one 32-byte input flit (`[P # 32 / \
           size_of(D1)]`) in place and pads the result back to 32 bytes, so OutPacket is the same \
           elements `P`, padded to 32 / size_of(D2) positions (16 for bf16, 32 for i8, 64 for \
           i4), and Time passes through unchanged. visa-lint checks the written OutPacket (the \
           turbofish or the CastTensor annotation) against the input packet, the input packet's \
           32 bytes when it does not come straight from collect (COL-001 reports those), and an \
           annotated Time. The fix pads the packet: `m![N # 8]` → `m![N # 16]` for f32 → bf16, \
           `m![A]` → `m![A # 32]` for i32 → i8.",
    bad: "...accumulate::<m![1], m![1 # 8]>(AccumulationKind::Interleaved).cast::<bf16, m![1 # 8]>()",
    good: "...accumulate::<m![1], m![1 # 8]>(AccumulationKind::Interleaved).cast::<bf16, m![1 # 16]>()",
    manual: "L6781-L6784, L3042, L6787-L6818",
    generations: Generations::Both,
};

/// Checks the cast `chain.steps[i]`: its input packet, then, when that is one flit and both
/// packets are known, its output packet and its Time.
pub(super) fn check(
    cx: &FnContext<'_>,
    chain: &Chain,
    i: usize,
    step: &Step,
    out: &mut Vec<Diagnostic>,
) {
    let flit = cx.target.flit_bytes;
    let (Some(input), Some(output)) = (step.input.as_ref(), step.output.as_ref()) else {
        return;
    };
    let Some(d1) = input_flit(cx, chain, i, step, input, out) else {
        return;
    };
    let Some(p) = Packets::of(flit, d1, input, output) else {
        return;
    };
    output_packet(cx, step, input, output, &p, out);
    time_passes_through(chain, i, step, input, out);
}

/// The input flit: collect reports its own packet (COL-001); other producers are checked
/// here, the fix padding the packet the step before writes when it is short of a flit. The
/// input's element type when its packet is one flit.
fn input_flit(
    cx: &FnContext<'_>,
    chain: &Chain,
    i: usize,
    step: &Step,
    input: &TensorTy,
    out: &mut Vec<Diagnostic>,
) -> Option<Dtype> {
    let flit = cx.target.flit_bytes;
    let (d1, n1, in_bytes) = slot_bytes(input, Slot::Packet)?;
    let from_collect = i > 0 && chain.steps[i - 1].method == Method::Collect;
    if in_bytes != flit {
        if !from_collect && !matches!(input.kind, Kind::Fetch | Kind::Switch | Kind::Begin) {
            let text = input.get(Slot::Packet).map_or("", |m| m.text.as_str());
            let message = format!(
                "the cast input packet {text} is {in_bytes} bytes ({n1} × {d1}); the Cast Engine \
                 takes exactly one {flit}-byte flit"
            );
            let n = d1.elems_for(flit).filter(|_| in_bytes < flit);
            let producer = i.checked_sub(1).and_then(|k| chain.steps.get(k));
            let edits = producer
                .zip(n)
                .and_then(|(p, n)| pad_output(cx.scope, chain, p, None, Slot::Packet, n));
            let mut diag = Diagnostic::new(&CST_002, step.span, message);
            if let (Some(edits), Some(n)) = (edits, n) {
                // It points where its fix pads the packet.
                let at = edits.first().map_or(step.span, |e| e.span);
                let title = format!("pad the packet that reaches the cast to {n} elements");
                diag = diag
                    .with_fix(title, false, edits)
                    .pointing_at(at, "the cast that reads it");
            }
            out.push(diag);
        }
        return None;
    }
    Some(d1)
}

/// The packets of a cast whose input packet is one flit: the element types, the elements of
/// the target type in one flit, and the input and output Packet.
struct Packets<'a> {
    flit: u64,
    d1: Dtype,
    d2: Dtype,
    n2: u64,
    pin: &'a Layout,
    pout: &'a Layout,
}

impl<'a> Packets<'a> {
    fn of(flit: u64, d1: Dtype, input: &'a TensorTy, output: &'a TensorTy) -> Option<Self> {
        let d2 = output.dtype?;
        let n2 = d2.elems_for(flit)?;
        let pin = input.get(Slot::Packet).and_then(|m| m.layout.as_deref())?;
        let pout = output.get(Slot::Packet).and_then(|m| m.layout.as_deref())?;
        Some(Packets {
            flit,
            d1,
            d2,
            n2,
            pin,
            pout,
        })
    }
}

/// The output packet: the same elements, padded to one flit of D2. The fix pads it, or writes
/// the input packet padded.
fn output_packet(
    cx: &FnContext<'_>,
    step: &Step,
    input: &TensorTy,
    output: &TensorTy,
    p: &Packets<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let expected = p.pin.window(p.n2);
    let arg = output_arg(step, Some(1), Slot::Packet);
    let span = arg.as_ref().map(|a| a.span);
    if *p.pout != expected {
        let same_elements = p.pout.window(p.n2) == expected;
        let message = message(input, output, p, &expected, same_elements);
        let mut diag = at_arg(&CST_002, step, span, message);
        if let Some(a) = &arg {
            if same_elements {
                let title = format!("pad the packet to {} elements ({} bytes)", p.n2, p.flit);
                if let Some(edit) = padded_parameter(cx, input, a, p.n2) {
                    diag = diag.with_fix(title, true, vec![edit]);
                } else if let Some(edit) = pad_edit(cx.scope, a, p.n2) {
                    diag = diag.with_fix(title, true, vec![edit]);
                } else if let Some((k, padded)) =
                    pad_in_tensor_alias(step, Some(1), Slot::Packet, p.n2)
                {
                    let title = format!("{title} where the tensor type alias is defined");
                    diag = diag.with_tensor_alias_pad(title, k, padded);
                }
            } else {
                diag = diag.with_edit(
                    "use the input packet, padded to one flit",
                    false,
                    a.span,
                    format!("m![{}]", expected.to_expr()),
                );
            }
        }
        out.push(diag);
    }
}

/// The output packet written as the mapping parameter of a helper that also types the input's
/// packet (`rows.cast::<bf16, P>()` with `rows: VectorFinalTensor<.., P>`, `P` = `m![H % 8]` at
/// the call): padded as written, `m![{ P } # 16]`, in the helper. Padding what the call binds
/// to `P` would pad the input packet too, which is one flit already.
fn padded_parameter(
    cx: &FnContext<'_>,
    input: &TensorTy,
    arg: &Arg,
    n: u64,
) -> Option<crate::diagnostic::Edit> {
    let name = arg.text.trim();
    let types_input = input
        .get(Slot::Packet)
        .is_some_and(|m| m.text.trim() == name);
    let is_param = cx.scope.bound.contains(name) && crate::syntax::is_ident(name);
    (is_param && types_input).then(|| crate::diagnostic::Edit {
        span: arg.span,
        new_text: format!("m![{{ {name} }} # {n}]"),
    })
}

/// What is wrong with an output packet that is not `expected`: its size when it holds the
/// same elements, else which elements it should hold.
fn message(
    input: &TensorTy,
    output: &TensorTy,
    p: &Packets<'_>,
    expected: &Layout,
    same_elements: bool,
) -> String {
    let (flit, d1, d2, n2, pout) = (p.flit, p.d1, p.d2, p.n2, p.pout);
    let out_text = output.get(Slot::Packet).map_or("", |m| m.text.as_str());
    let in_text = input.get(Slot::Packet).map_or("", |m| m.text.as_str());
    if same_elements {
        let bytes = slot_bytes(output, Slot::Packet).map_or(0, |(_, _, b)| b);
        format!(
            "the cast output packet {out_text} is {bytes} bytes ({} × {d2}); the Cast Engine \
             pads each result back to one {flit}-byte flit: {n2} × {d2}",
            pout.size
        )
    } else {
        format!(
            "the cast output packet {out_text} does not hold the input packet's elements: \
             the Cast Engine converts {in_text} ({d1}) in place and pads it to {n2} × {d2}, \
             `m![{}]`",
            expected.to_expr()
        )
    }
}

/// Time passes through: an annotation at the end of the chain must keep it.
fn time_passes_through(
    chain: &Chain,
    i: usize,
    step: &Step,
    input: &TensorTy,
    out: &mut Vec<Diagnostic>,
) {
    if i + 1 == chain.steps.len()
        && let (Some(decl), Some(tin)) = (chain.declared.as_ref(), input.get(Slot::Time))
        && decl.kind == Kind::Cast
        && let Some(tdecl) = decl.get(Slot::Time)
        && let (Some(a), Some(b)) = (tin.layout.as_deref(), tdecl.layout.as_deref())
        && a != b
    {
        out.push(at_arg(
            &CST_002,
            step,
            tdecl.span,
            format!(
                "Time passes through the Cast Engine unchanged: the input Time is {}, not {}",
                tin.text, tdecl.text
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::cast::tests::cst;

    /// The output packet written in a trait impl's associated type (`type Out =
    /// CastTensor<..>;`, named `Self::Out`) is padded where the impl defines it; the other
    /// impl's `Out` keeps its mapping.
    #[test]
    fn cast_fix_pads_the_associated_type() {
        let fixed = crate::rules::fix_testing::assert_fix_clears(
            include_str!("../../../../fixtures/rules/CST-002-trait-impl-for-alias.rs"),
            "CST-002",
        );
        assert!(fixed.contains("m![K % 16], m![1 # 16]>;"), "{fixed}");
        assert!(fixed.contains("m![Q / 8], m![Q % 8 # 16]>;"), "{fixed}");
    }

    /// A cast that names the packet parameter its call binds is padded as written, in the
    /// helper (`m![{ P } # 32]`), not where the call binds `P`, which is the input's packet.
    #[test]
    fn cast_fix_pads_the_packet_parameter_in_the_helper() {
        let fixed = crate::rules::fix_testing::assert_fix_clears(
            include_str!("../../../../fixtures/rules/CST-002-packet-parameter.rs"),
            "CST-002",
        );
        assert_eq!(
            fixed
                .matches("acc.cast::<i8, m![{ P } # 32]>().commit(addr)")
                .count(),
            2,
            "{fixed}"
        );
    }

    #[test]
    fn padded_input_packet() {
        // L6805-L6818: A = 4 i32 padded to 8 → i8 padded to 32.
        assert!(cst("i32", "A % 4 # 8", "i8, m![A % 4 # 32]").is_empty());
        assert_eq!(
            cst("i32", "A % 4 # 8", "i8, m![A % 4 # 8]"),
            [("CST-002".to_string(), "m![A % 4 # 8]".to_string())]
        );
    }

    /// The accumulate writes 4 f32 lanes: the fix pads that packet to the flit the cast reads.
    #[test]
    fn a_short_input_packet_is_padded_where_the_producer_writes_it() {
        let text = include_str!("../../../../fixtures/rules/CST-002-short-input.rs");
        let fixed = crate::rules::fix_testing::assert_fix_clears(text, "CST-002");
        assert_eq!(
            fixed
                .matches("m![G # 8]>(AccumulationKind::Interleaved)")
                .count(),
            2
        );
        assert!(!fixed.contains("m![G]>(AccumulationKind"), "{fixed}");
    }
}
