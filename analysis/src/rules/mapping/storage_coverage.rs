//! MAP-010: a storage mapping places every element of the logical tensor. An HBM tensor that
//! holds only part of an axis is a warning, a DM destination of a DMA that drops an axis its
//! source holds whole is an error; a DMA whose destination iterates more of an axis than its
//! source holds (a broadcast) is a warning, found with MAP-011's factorization (`mod.rs`).

use super::macro_body::body;
use super::placed::{digit_text, gap, placed, whole_axes};
use crate::derive::dma::DmaOp;
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::model::{Kind, MapVal, Slot, Step, TensorTy};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const MAP_010: Rule = Rule {
    code: "MAP-010",
    name: "storage-coverage",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A storage mapping must place every element of the logical tensor",
    docs: "Chip x Cluster x Slice x Element together must give every element of the tensor one \
           position (L149). visa-lint accounts the factors of each axis over all of a type's \
           mappings and reports three cases. (1) Error: the DM destination of `to_dm` must hold \
           whole every axis its source holds whole (`A / 8` in Slice without `A % 8` anywhere \
           drops 7 of every 8 rows). This is what `furiosa_visa_std` asserts on every transfer: \
           the destination mapping must divide by the source's, or it panics with \
           \"[TensorViewMut::write_transpose] failed to divide mapping expressions for \
           transpose\". (2) Warning: an HBM tensor type that holds only part of an axis it \
           mentions (`m![R / 4, B]` with R = 8 keeps rows 0 and 4). The library does not check \
           this, a partial axis is a sub-sampled tensor, and the vendor's tested examples use \
           it on purpose; the warning names the risk that the other elements are silently not \
           there. Not reported: a `from_addr` view or a tensor of one loop iteration that \
           holds only an axis's inner part (one tile, its address choosing which). The tail a \
           Resize leaves out (`m![D, K = 3]` of K = 4) is no digit of the axis: it is \
           reported without a fix. (3) Warning: a DMA whose destination iterates a factor the \
           source holds only in part (`A / 8` of a source with `A % 8`). The library's \
           transfers allow this as a broadcast (the destination repeats what the source has), so it runs; the warning \
           names the risk that the destination's extra positions are copies, not data. Axes \
           present only in the destination are broadcasts too (replicated, stride 0, L1557): \
           the manual uses them deliberately (GEMM L497 keeps `J / 32` in `a`'s Slice), so they \
           are accepted and not reported. The fetch/commit and `BufTensor` cases of an \
           insufficient source are SEQ-006's.",
    bad: "axes![A = 2048, B = 16];\nlet dm: DmTensor<i8, m![1], m![1 # 2], m![A / 8 # 256], m![B]> = a.to_dm(&mut ctx.tdma, 0); // a: m![A, B]",
    good: "let dm: DmTensor<i8, m![1], m![1 # 2], m![A / 8 # 256], m![A % 8, B]> = a.to_dm(&mut ctx.tdma, 0);",
    manual: "L149, L1155-L1159, L1557",
    generations: Generations::Both,
};

/// MAP-010 for the model: HBM tensors hold their whole tensor (every axis they mention; a
/// warning, the library accepts sub-sampled tensors), and a DMA destination in DM holds every
/// axis its source holds whole (an error: the library's transfer asserts it). Axes only in the
/// destination are broadcasts (stride 0, L1557) and are accepted.
pub(super) fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for t in &cx.model.tensors {
        if t.ty.kind != Kind::Hbm {
            continue;
        }
        let Some(per) = placed(&t.ty) else { continue };
        // A view made by `from_addr`, or a tensor of one loop iteration, that holds an
        // axis's inner part only is one tile of a larger tensor, its address choosing which
        // (`m![L % 16, D]` at `base + c * TILE`).
        let tiles = t.from_addr || t.iteration.is_some();
        let tile = |size: u64, fs: &[(u64, u64)]| gap(size, fs).is_some_and(|(_, hi)| hi >= size);
        let logical: Vec<(String, u64)> = per
            .iter()
            .filter(|(_, (s, fs, _))| !(tiles && tile(*s, fs)))
            .map(|(a, (s, _, _))| (a.clone(), *s))
            .collect();
        coverage(
            cx,
            &t.ty,
            &logical,
            t.span,
            None,
            &format!("`{}`", t.name),
            Severity::Warning,
            out,
        );
    }
    for chain in &cx.model.chains {
        for step in &chain.steps {
            if !step.method.is_dm_hbm_dma() {
                continue;
            }
            let (Some(i), Some(o)) = (&step.input, &step.output) else {
                continue;
            };
            if !matches!(i.kind, Kind::Hbm | Kind::HbmView | Kind::Dm | Kind::DmView)
                || o.kind != Kind::Dm
            {
                continue;
            }
            let Some(logical) = whole_axes(i) else {
                continue;
            };
            coverage(
                cx,
                o,
                &logical,
                step.span,
                Some(step),
                &format!("the `{}` destination", step.method),
                Severity::Error,
                out,
            );
        }
    }
}

/// MAP-010: every element of the logical tensor `logical` (axes and sizes) has a position in
/// `ty`; reports the first unplaced digit range of each axis.
#[allow(clippy::too_many_arguments)]
fn coverage(
    cx: &FnContext<'_>,
    ty: &TensorTy,
    logical: &[(String, u64)],
    fallback: Span,
    call: Option<&Step>,
    who: &str,
    severity: Severity,
    out: &mut Vec<Diagnostic>,
) {
    let Some(per) = placed(ty) else { return };
    for (axis, size) in logical {
        let (range, slot) = match per.get(axis) {
            Some((size, fs, slot)) => (gap(*size, fs), *slot),
            None => (Some((1, *size)), None),
        };
        let Some((lo, hi)) = range else { continue };
        // Where the axis is placed in part; the fix below adds the rest to the Element.
        let holder = slot.and_then(|s| ty.get(s)).and_then(|mv| mv.span);
        let element = ty.get(Slot::Element).filter(|e| e.span.is_some());
        // The unplaced positions are a digit of the axis (`K / 4`), or the tail a Resize
        // leaves out (`K = 3` of 4), which no mapping term names.
        let digit = size % lo == 0 && hi % lo == 0 && (hi >= *size || size % hi == 0);
        let missing = if digit {
            digit_text(axis, lo, hi, *size)
        } else {
            format!("{axis} = {lo}..{}", hi.min(*size))
        };
        let msg = message(who, axis, *size, &missing, slot.is_some(), digit, severity);
        // The Element the fix extends is the primary span (ARCHITECTURE.md, "Where a diagnostic
        // points"); the mapping that holds the rest of the axis is related.
        // An Element read out of a whole tensor alias (`gates: &ExpertGates`) is not written
        // at its span: the alias's definition holds it.
        // A mapping alias (`Rows`) is written out at this use, as its mapping with the digits
        // added (the engine offers editing the alias's definition as a second fix).
        let element_text = element
            .and_then(crate::model::placed)
            .and_then(|arg| crate::model::written_mapping(cx.scope, &arg));
        let fixable = digit && element_text.as_deref().and_then(body).is_some();
        let at = if fixable {
            element.and_then(|e| e.span)
        } else {
            holder.or_else(|| element.and_then(|e| e.span))
        };
        let mut d = match call {
            Some(step) => crate::rules::context::at_arg(&MAP_010, step, at, msg),
            None => Diagnostic::new(&MAP_010, at.unwrap_or(fallback), msg),
        }
        .with_severity(severity);
        if let Some(h) = holder
            && Some(h) != at
        {
            d = d.with_related(h, format!("`{axis}` is placed here only in part"));
        }
        if fixable {
            d = place_in_element(d, element, element_text.as_deref(), &missing);
        }
        out.push(d);
    }
}

/// The message of an axis of `size` whose positions `missing` no mapping places (`part`: some
/// of the axis is placed; `digit`: `missing` is a mapping term that could be added), its
/// consequence told by `severity`.
fn message(
    who: &str,
    axis: &str,
    size: u64,
    missing: &str,
    part: bool,
    digit: bool,
    severity: Severity,
) -> String {
    let why = if severity == Severity::Error {
        "so those elements have no position"
    } else {
        "so the tensor is sub-sampled: the library accepts it, but only the placed elements \
         exist"
    };
    let fix = if digit {
        format!("add `{missing}` (for example to the Element)")
    } else {
        format!("place the whole of `{axis}`")
    };
    format!(
        "{who} places {} of `{axis}` ({axis} = {size}): no mapping of its Chip, Cluster, \
         Slice or Element holds `{missing}`, {why}; {fix} if every element is meant",
        if part { "only part" } else { "none" }
    )
}

/// The fix that adds the digits `missing` to the Element mapping `element`, written
/// `written` (an `m![...]`, an alias's mapping written out).
fn place_in_element(
    d: Diagnostic,
    element: Option<&MapVal>,
    written: Option<&str>,
    missing: &str,
) -> Diagnostic {
    if let Some(sp) = element.and_then(|e| e.span)
        && let Some((_, b)) = written.and_then(body)
    {
        let b = b.trim();
        let text = if b == "1" || b.is_empty() {
            format!("m![{missing}]")
        } else {
            format!("m![{missing}, {b}]")
        };
        return d.with_edit(format!("place `{missing}` in the Element"), false, sp, text);
    }
    d
}

/// MAP-010 on a DMA `what` transfer whose destination iterates `needed` of `axis`, of which the
/// source holds only `have`: a broadcast the library runs, so a warning.
pub(super) fn broadcast(
    op: &DmaOp<'_>,
    what: &str,
    axis: &str,
    needed: &str,
    have: &str,
) -> Diagnostic {
    Diagnostic::new(
        &MAP_010,
        op.span,
        format!(
            "this {what} transfer's destination iterates `{needed}`, but the source holds only `{have}` of `{axis}`: the library copies it as a broadcast, so the destination's extra positions repeat the source's elements instead of holding new ones"
        ),
    )
    .with_severity(Severity::Warning)
}

#[cfg(test)]
mod tests {
    use super::super::tests::dma;

    #[test]
    fn a_broadcast_neither_places_nor_subsamples_an_axis() {
        // furiosa-opt-std's `m![N]` (bias_partition_broadcast.rs at ebb846a): live positions
        // without a coordinate, so coverage reads only the axes around it.
        assert!(dma("m![C, 2, B]", "m![C / 8 # 256], m![C % 8, B]").is_empty());
        assert!(dma("m![C, B]", "m![C / 8, 2 # 256], m![C % 8, B]").is_empty());
        // A partial axis is still reported, broadcast or not.
        assert_eq!(
            dma("m![2, C % 8, B]", "m![1 # 256], m![C % 8, B]"),
            dma("m![C % 8, B]", "m![1 # 256], m![C % 8, B]")
        );
    }
}
