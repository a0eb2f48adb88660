//! CST: the Cast Engine, which lowers i32/f32 stream elements to narrower types flit by flit
//! (constraints.md §15, manual L6756-L6819).

use super::context::{FnContext, at_arg};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{
    Chain, Dtype, Kind, Method, Slot, Step, Tu, output_arg, pad_edit, slot_bytes, written,
};
use crate::rule::{Generations, Rule, Status};

pub const CST_001: Rule = Rule {
    code: "CST-001",
    name: "cast-supported-pair",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The Cast Engine lowers i32 to i4/i8/i16 and f32 to f8e5m2/f8e4m3/f16/bf16 only",
    docs: "`.cast::<D2, OutPacket>()` requires `D: Cast<D2>` on a `VeScalar` stream: the Cast \
           Engine narrows i32 to i4, i8 or i16, and f32 to f8e5m2, f8e4m3, f16 or bf16. There is \
           no float-to-integer or integer-to-float lowering, no widening, and no cast of a stream \
           that is already narrow (a bf16 stream straight from collect). Convert between integer \
           and float in the Vector Engine (FxpToFp / FpToFxp) before the cast, cast to a type of \
           the same family, or drop the cast when the stream already has the type to commit. \
           furiosa-opt-std 0.6 has no f16, so f32 lowers to f8e5m2, f8e4m3 or bf16 there.",
    bad: "...accumulate::<m![1], m![1 # 8]>(AccumulationKind::Interleaved).cast::<i8, m![1 # 32]>() // f32",
    good: "...accumulate::<m![1], m![1 # 8]>(AccumulationKind::Interleaved).cast::<bf16, m![1 # 16]>()",
    manual: "L6759, L6765, L6776-L6779",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6's `CastEngineCast` has the same pairs without f16, which it removed, \
         and no identity (`furiosa-opt-std/src/cast.rs:111-126`; CHANGES.md:33-35); visa-lint \
         checks that table there. It converts f32 to bf16 in the commit as well (OPT-005)",
    ),
};

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

pub const CST_003: Rule = Rule {
    code: "CST-003",
    name: "cast-position",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Cast runs on the main context, after Vector/Contraction and before Transpose/Commit",
    docs: "The Cast Engine sits between the Vector and Transpose engines, and its output can only \
           be transposed and committed; a sub-context commit cannot follow a cast. The findings are \
           divided so each is reported once: a cast in the wrong place of a chain (after a \
           transpose, twice, before the vector stage) is KRN-001 at the misplaced method; a \
           sub-context chain that casts and then commits is KRN-006 at the commit; CST-003 reports \
           the remaining case, a cast on `ctx.sub` whose result no commit of the function consumes \
           (it is returned or left unused), at the cast: it can never reach DM. Run the chain on \
           `ctx.main`.",
    bad: "let c = ctx.sub.begin(a.view()).fetch::<i32, T, P>().collect::<T, P>().cast::<i8, m![A # 32]>();",
    good: "let c = ctx.main.begin(a.view()).fetch::<i32, T, P>().collect::<T, P>().cast::<i8, m![A # 32]>();",
    manual: "L3018, L2337-L2338, L3046-L3052",
    generations: Generations::Both,
};

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[CST_001, CST_002, CST_003];

/// CST-001: the stream's type against the Cast Engine table of the crate's library.
fn check_pair(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let Some(d1) = step.input.as_ref().and_then(|t| t.dtype) else {
        return;
    };
    let Some(d2) = step.output.as_ref().and_then(|t| t.dtype) else {
        return;
    };
    let stage = cx.conversions().cast_engine;
    if stage.converts(d1, d2) {
        return;
    }
    let span = written(step, 0).map_or(step.span, |a| a.span);
    let names = |ds: Vec<Dtype>| ds.iter().map(|d| d.as_str()).collect::<Vec<_>>();
    let sources = names(stage.sources());
    let msg = if !sources.contains(&d1.as_str()) {
        format!(
            "the Cast Engine lowers {} streams only; this stream is {d1}: it is already narrow, \
             commit it without `.cast()` or widen it first",
            sources.join(" and ")
        )
    } else if d1 == d2 {
        format!("the stream is already {d1}: the Cast Engine only lowers precision; drop `.cast()`")
    } else {
        format!(
            "the Cast Engine lowers {d1} to {} only, not to {d2}",
            names(stage.targets(d1)).join(", ")
        )
    };
    out.push(Diagnostic::new(&CST_001, span, msg));
}

fn check_packet(
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
    // The input flit: collect reports its own packet (COL-001); other producers are checked here.
    let Some((d1, n1, in_bytes)) = slot_bytes(input, Slot::Packet) else {
        return;
    };
    let from_collect = i > 0 && chain.steps[i - 1].method == Method::Collect;
    if in_bytes != flit {
        if !from_collect && !matches!(input.kind, Kind::Fetch | Kind::Switch | Kind::Begin) {
            let text = input.get(Slot::Packet).map_or("", |m| m.text.as_str());
            out.push(Diagnostic::new(
                &CST_002,
                step.span,
                format!(
                    "the cast input packet {text} is {in_bytes} bytes ({n1} × {d1}); the Cast Engine \
                     takes exactly one {flit}-byte flit"
                ),
            ));
        }
        return;
    }
    // The output packet: the same elements, padded to one flit of D2.
    let Some(d2) = output.dtype else {
        return;
    };
    let Some(n2) = d2.elems_for(flit) else {
        return;
    };
    let (Some(pin), Some(pout)) = (
        input.get(Slot::Packet).and_then(|m| m.layout.as_deref()),
        output.get(Slot::Packet).and_then(|m| m.layout.as_deref()),
    ) else {
        return;
    };
    let expected = pin.window(n2);
    let out_text = output.get(Slot::Packet).map_or("", |m| m.text.as_str());
    let in_text = input.get(Slot::Packet).map_or("", |m| m.text.as_str());
    let arg = output_arg(step, Some(1), Slot::Packet);
    let span = arg.as_ref().map(|a| a.span);
    if *pout != expected {
        let same_elements = pout.window(n2) == expected;
        let mut diag = if same_elements {
            let bytes = slot_bytes(output, Slot::Packet).map_or(0, |(_, _, b)| b);
            at_arg(
                &CST_002,
                step,
                span,
                format!(
                    "the cast output packet {out_text} is {bytes} bytes ({} × {d2}); the Cast Engine \
                     pads each result back to one {flit}-byte flit: {n2} × {d2}",
                    pout.size
                ),
            )
        } else {
            at_arg(
                &CST_002,
                step,
                span,
                format!(
                    "the cast output packet {out_text} does not hold the input packet's elements: \
                     the Cast Engine converts {in_text} ({d1}) in place and pads it to {n2} × {d2}, \
                     `m![{}]`",
                    expected.to_expr()
                ),
            )
        };
        if let Some(a) = &arg {
            if same_elements {
                if let Some(edit) = pad_edit(cx.scope, a, n2) {
                    diag = diag.with_fix(
                        format!("pad the packet to {n2} elements ({flit} bytes)"),
                        true,
                        vec![edit],
                    );
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
    // Time passes through: an annotation at the end of the chain must keep it.
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

/// CST-003: a sub-context cast whose result no commit consumes (KRN-006 reports the others).
fn check_position(
    cx: &FnContext<'_>,
    ci: usize,
    chain: &Chain,
    i: usize,
    step: &Step,
    out: &mut Vec<Diagnostic>,
) {
    if step.context != Some(Tu::Sub) {
        return;
    }
    let is_commit = |s: &Step| s.method.is_commit();
    if chain.steps[i + 1..].iter().any(is_commit) {
        return;
    }
    // A later sub-context commit of a cast or transposed stream: KRN-006 reports it there.
    let committed_later = cx.model.chains[ci + 1..].iter().any(|c| {
        c.steps.iter().any(|s| {
            is_commit(s)
                && s.context == Some(Tu::Sub)
                && s.input
                    .as_ref()
                    .is_some_and(|t| matches!(t.kind, Kind::Cast | Kind::Transpose))
        })
    });
    if committed_later {
        return;
    }
    out.push(Diagnostic::new(
        &CST_003,
        step.span,
        "a cast on the sub context cannot reach DM: sub-context commits cannot follow a Cast \
         (or Transpose), and the sub context leaves the compute engines idle; run this chain on \
         `ctx.main`",
    ));
}

pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for (ci, chain) in cx.model.chains.iter().enumerate() {
        for (i, step) in chain.steps.iter().enumerate() {
            if step.method != Method::Cast {
                continue;
            }
            check_pair(cx, step, out);
            check_packet(cx, chain, i, step, out);
            check_position(cx, ci, chain, i, step, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::Generation;
    use crate::target::RNGD;

    /// The precision-lowering table, L6776-L6779; furiosa-opt-std 0.6's has no f16
    /// (`cast.rs:119-126` at ebb846a).
    #[test]
    fn cast_table() {
        let stage = Generation::VisaStd.conversions(&RNGD).cast_engine;
        let supported = |d1: &str, d2: &str| {
            stage.converts(
                Dtype::from_name(d1).expect(d1),
                Dtype::from_name(d2).expect(d2),
            )
        };
        for d2 in ["i4", "i8", "i16"] {
            assert!(supported("i32", d2), "{d2}");
            assert!(!supported("f32", d2), "{d2}");
        }
        for d2 in ["f8e5m2", "f8e4m3", "f16", "bf16", "f8"] {
            assert!(supported("f32", d2), "{d2}");
            assert!(!supported("i32", d2), "{d2}");
        }
        for (d1, d2) in [
            ("f32", "f32"),
            ("i32", "i32"),
            ("bf16", "f8e4m3"),
            ("i8", "i4"),
            ("i16", "i8"),
        ] {
            assert!(!supported(d1, d2), "{d1} -> {d2}");
        }
        assert_eq!(stage.pairs.len(), 7);
        let opt = Generation::OptStd.conversions(&RNGD).cast_engine;
        assert!(!opt.converts(Dtype::F32, Dtype::F16) && opt.converts(Dtype::F32, Dtype::Bf16));
    }

    /// The CST diagnostics (code, spanned text) of a cast of a `d1` collect stream.
    fn cst(d1: &str, packet: &str, cast: &str) -> Vec<(String, String)> {
        let text = format!(
            "use furiosa_visa_std::prelude::*;\naxes![A = 2048];\n#[device(chip = 1)]\n\
             fn kernel(ctx: &mut Context, a: &DmTensor<{d1}, m![1], m![1 # 2], m![A / 8 # 256], m![A % 8]>) {{\n\
             let out = ctx.main.begin(a.view()).fetch::<{d1}, m![1], m![A % 8]>()\
             .collect::<m![1], m![{packet}]>().cast::<{cast}>();\n}}\n"
        );
        crate::check_text(&text)
            .into_iter()
            .filter(|d| d.code().starts_with("CST"))
            .map(|d| (d.code().to_string(), text[d.span.range()].to_string()))
            .collect()
    }

    #[test]
    fn pairs_and_packets() {
        // L6787-L6800: 8 × i32 → i8 padded to 32.
        assert!(cst("i32", "A % 8", "i8, m![A % 8 # 32]").is_empty());
        // L358 / L2171: f32 → bf16 padded to 16.
        assert!(cst("f32", "A % 8", "bf16, m![A % 8 # 16]").is_empty());
        // i4: 64 per flit; f8: 32.
        assert!(cst("i32", "A % 8", "i4, m![A % 8 # 64]").is_empty());
        assert!(cst("f32", "A % 8", "f8e4m3, m![A % 8 # 32]").is_empty());
        assert!(cst("i32", "A % 8", "i16, m![A % 8 # 16]").is_empty());
        assert_eq!(
            cst("f32", "A % 8", "i8, m![A % 8 # 32]"),
            [("CST-001".to_string(), "i8".to_string())]
        );
        assert_eq!(
            cst("i32", "A % 8", "bf16, m![A % 8 # 16]"),
            [("CST-001".to_string(), "bf16".to_string())]
        );
        assert_eq!(
            cst("i32", "A % 8", "i8, m![A % 8 # 16]"),
            [("CST-002".to_string(), "m![A % 8 # 16]".to_string())]
        );
        // Elements moved or dropped: not the input packet.
        assert_eq!(
            cst("i32", "A % 8", "i8, m![A % 4 # 32]"),
            [("CST-002".to_string(), "m![A % 4 # 32]".to_string())]
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
}
