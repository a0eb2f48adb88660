//! ALN-009: when reg_read_size (the contiguous TRF read, CON-009) equals the 64-byte MAC width,
//! each read spans both 32-byte bank columns, so every TRF Sequencer stride must be a multiple
//! of 64 bytes. The strides are derived from the TRF Element read as the align's OutTime; the
//! fix resizes the Element's inner row when that aligns every stride.

use crate::derive::{Config, Entry};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Dtype, Kind, Method, Slot, Step, TensorTy, TensorVar};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const ALN_009: Rule = Rule {
    code: "ALN-009",
    name: "trf-64-byte-alignment",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "With reg_read_size = 64 bytes, TRF base and strides are 64-byte aligned",
    docs: "When reg_read_size (the contiguous TRF read common to the TRF Element and the \
           computation packet, CON-009) equals the 64-byte MAC width, each read spans both \
           32-byte bank columns, so the TRF Sequencer's base address and all its strides must \
           be multiples of 64 bytes (L4110-L4111, L4234-L4236). The base is always aligned: \
           `TrfAddress::Full`, `FirstHalf` and `SecondHalf` start at the TRF or at its half. \
           visa-lint derives reg_read_size as CON-009 does (a size that is not a power of two \
           is CON-009's) and the TRF Sequencer's OutTime entries from the TRF Element \
           (crate::derive), and reports a non-zero stride that is not a multiple of 64 bytes, \
           typically an Element whose inner axis is padded to a row that is not whole 64-byte \
           units (`m![J, K # 48]` in bf16: J strides 96 bytes). Pad (or unpad) the inner axis so \
           the row is a multiple of 64 bytes; the fix does it when that aligns every stride.",
    bad: "// trf: &TrfTensor<bf16, .., m![N], m![J, K # 48]>, K = 32\ninput.align::<m![M, J], m![K], _, _>(trf) // J strides 96 B",
    good: "// trf: &TrfTensor<bf16, .., m![N], m![J, K]>\ninput.align::<m![M, J], m![K], _, _>(trf) // J strides 64 B",
    manual: "L4110-L4111",
    generations: Generations::Both,
};

/// ALN-009: a 64-byte TRF read (reg_read_size = mac_width) whose TRF Sequencer strides are not
/// multiples of 64 bytes.
pub(super) fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for step in cx.model.chains.iter().flat_map(|c| c.steps.iter()) {
        if step.method != Method::Align {
            continue;
        }
        let Some(r) = MisalignedRead::of(cx, step) else {
            continue;
        };
        out.push(report(cx, step, &r));
    }
}

/// A 64-byte TRF read of one `align` whose TRF Sequencer has a stride that is not whole
/// 64-byte units.
struct MisalignedRead<'a> {
    /// The TRF tensor read.
    var: &'a TensorVar,
    d: Dtype,
    /// The align's OutTime.
    ot: &'a crate::mapping::Layout,
    /// The TRF Sequencer's configuration, reading the Element as OutTime.
    cfg: Config,
    /// The elements of one contiguous read.
    elems: u64,
    /// The first entry with a misaligned stride.
    bad: Entry,
}

impl<'a> MisalignedRead<'a> {
    fn of(cx: &FnContext<'a>, step: &'a Step) -> Option<Self> {
        use crate::derive::{Direction, configure, trf};
        let mac = cx.target.mac_width_bytes;
        let output = step.output.as_ref()?;
        let var = cx.model.first_arg_tensor(step, Kind::Trf)?;
        let d = var.ty.dtype?;
        let bits = d.bits();
        let (Some(e), Some(ot), Some(op)) = (
            slot_layout(&var.ty, Slot::Element),
            slot_layout(output, Slot::Time),
            slot_layout(output, Slot::Packet),
        ) else {
            return None;
        };
        let read = trf::read(op, e)?;
        if read.stray.is_some() || trf::reg_read_size(&read, d, mac) != Some(Ok(mac)) {
            return None;
        }
        let limit = cx.target.sequencer_entries;
        let cfg = configure(e, &ot.dims, &[], Direction::Read, limit).ok()?;
        let stride_bytes = |s: u64| crate::derive::bytes(s, bits);
        let bad = *cfg
            .entries
            .iter()
            .find(|en| en.stride != 0 && !stride_bytes(en.stride).is_multiple_of(mac))?;
        Some(MisalignedRead {
            var,
            d,
            ot,
            cfg,
            elems: read.elems,
            bad,
        })
    }
}

/// ALN-009's diagnostic on the read `r` of `step`, at the TRF Element, with the fix that pads
/// the Element's inner row when it aligns every stride.
fn report(cx: &FnContext<'_>, step: &Step, r: &MisalignedRead<'_>) -> Diagnostic {
    let (mac, limit, var, d) = (
        cx.target.mac_width_bytes,
        cx.target.sequencer_entries,
        r.var,
        r.d,
    );
    let stride_bytes = |s: u64| crate::derive::bytes(s, d.bits());
    let e_text = var
        .ty
        .get(Slot::Element)
        .map_or_else(|| "?".to_string(), |m| m.text.clone());
    let entries = r
        .cfg
        .entries
        .iter()
        .map(|en| format!("{} : {} B", en.size, stride_bytes(en.stride)))
        .collect::<Vec<_>>()
        .join(", ");
    // The Element the fix pads is at fault: written where the TRF tensor is declared.
    let at = var.ty.get(Slot::Element).and_then(|m| m.span);
    let mut diag = at_arg(
        &ALN_009,
        step,
        at,
        format!(
            "reg_read_size is {mac} bytes (the TRF Element {e_text} and OutPacket share {} × \
             {d}), so every TRF Sequencer stride must be a multiple of {mac} bytes; reading \
             the Element as OutTime takes [{entries}], and the {}-iteration entry strides {} \
             bytes: the read would cross a bank column. Make the Element's inner row a \
             multiple of {mac} bytes",
            r.elems,
            r.bad.size,
            stride_bytes(r.bad.stride)
        ),
    )
    .with_related(var.span, "the TRF tensor is declared here");
    if let Some((new, at)) =
        at.and_then(|span| trf_pad_fix(cx, e_text.as_str(), span, d, r.ot, mac, limit))
    {
        diag = diag.with_edit(
            format!("make the TRF Element's inner row whole {mac}-byte units: {new}"),
            false,
            at,
            new,
        );
    }
    diag
}

fn slot_layout(ty: &TensorTy, slot: Slot) -> Option<&crate::mapping::Layout> {
    ty.get(slot)?.layout.as_deref()
}
/// ALN-009's fix: the TRF Element with its innermost term resized to the smallest whole number
/// of `mac`-byte units holding its data, when that aligns every TRF Sequencer stride.
fn trf_pad_fix(
    cx: &FnContext<'_>,
    e_text: &str,
    span: crate::diagnostic::Span,
    d: Dtype,
    ot: &crate::mapping::Layout,
    mac: u64,
    limit: usize,
) -> Option<(String, crate::diagnostic::Span)> {
    use crate::mapping::layout::Dim;
    let terms = cx.scope.lowered_terms(e_text)?;
    let (_, last) = terms.last()?;
    let mut real: u64 = 1;
    for dim in &last.dims {
        let Dim::Factor(f) = dim else { return None };
        real = real.checked_mul(f.valid)?;
    }
    let per = d.elems_for(mac)?;
    let n = real.div_ceil(per).checked_mul(per)?;
    let padded = crate::mapping::edit::pad_last_term(e_text, n)?;
    let new = if n == real {
        padded.replace(&format!(" # {n}]"), "]")
    } else {
        padded
    };
    let dims: Vec<Dim> = cx
        .scope
        .lowered_terms(&new)?
        .into_iter()
        .flat_map(|(_, l)| l.dims)
        .collect();
    let layout = crate::mapping::Layout::from_dims(dims).ok()?;
    let bits = d.bits();
    let cfg = crate::derive::configure(
        &layout,
        &ot.dims,
        &[],
        crate::derive::Direction::Read,
        limit,
    )
    .ok()?;
    let aligned = cfg
        .entries
        .iter()
        .all(|en| en.stride == 0 || crate::derive::bytes(en.stride, bits).is_multiple_of(mac));
    (aligned && new != e_text.trim() && span.end > span.start).then_some((new, span))
}

#[cfg(test)]
mod tests {
    use crate::diagnostic::Diagnostic;

    fn trf_kernel(element: &str) -> Vec<Diagnostic> {
        let src = format!(
            "use furiosa_visa_std::prelude::*;\naxes![M = 16, J = 2, N = 8, K = 32];\n\
             fn matmul<'l, const T: Tu>(\n\
             input: CollectTensor<'l, T, bf16, m![1], m![1], m![1], m![M, J, K / 16], m![K % 16]>,\n\
             trf: &TrfTensor<bf16, m![1], m![1], m![1], m![N], m![{element}]>,\n\
             ) -> AccumulationTensor<'l, T, f32, m![1], m![1], m![1], m![M, J], m![N]> {{\n\
             input.align::<m![M, J], m![K], _, _>(trf).contract::<m![1]>()\n\
             .accumulate::<m![M, J], m![N]>(AccumulationKind::Interleaved)\n}}\n"
        );
        crate::db::analyse_text(&src)
            .diagnostics()
            .iter()
            .filter(|d| d.code() == "ALN-009")
            .cloned()
            .collect()
    }

    #[test]
    fn trf_64_byte_read_needs_64_byte_strides() {
        // L4110-L4111: reg_read_size = 64 B (32 bf16 of K); J strides 48 bf16 = 96 B.
        let d = trf_kernel("J, K # 48");
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(
            d[0].message.contains("[16 : 0 B, 2 : 96 B]"),
            "{}",
            d[0].message
        );
        assert_eq!(d[0].fixes[0].edits[0].new_text, "m![J, K]");
        // 64-byte (and 128-byte) rows are aligned.
        assert!(trf_kernel("J, K").is_empty());
        assert!(trf_kernel("J, K # 64").is_empty());
        // A 32-byte read (K # 48 read 16 at a time) is not this rule's: reg_read_size < 64.
    }

    #[test]
    fn trf_manual_basic_broadcast_is_aligned() {
        // L4225-L4236: Element [K = 32] bf16, reg_read_size 64 B, entry M 32 : 0 -> aligned.
        let src = include_str!("../../../../fixtures/manual/4203_trf_basic_weight_broadcast.rs");
        let a = crate::db::analyse_text(src);
        assert!(a.diagnostics().iter().all(|d| d.code() != "ALN-009"));
    }
}
