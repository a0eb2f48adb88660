//! CMT-002: the commit keeps 8, 16, 24 or 32 bytes of each flit (`commit_in_size`). On the
//! derived commit sequencer the fix pads the Element's innermost axis to the next width (or
//! gives it a kept part of its own when that axis is not the packet's); under
//! furiosa-opt-std `commit_trim::<P>()` is checked where the commit's Element is unknown, and
//! must keep a leading part of the packet it trims.

use super::commit_op::CommitOp;
use crate::derive::{self, Op};
use crate::diagnostic::{Diagnostic, Severity};
use crate::library::Generation;
use crate::mapping::layout::Layout;
use crate::model::{Arg, Dtype, MapVal, Method, Slot};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg, spelled_out};

pub const CMT_002: Rule = Rule {
    code: "CMT-002",
    name: "commit-truncation",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Truncation keeps a leading 8, 16, 24 or 32 bytes of each flit",
    docs: "The Element mapping may drop the trailing elements of each 32-byte flit (`W # 32` → \
           `W`, `N` → `N = 8`); what it keeps is commit_in_size, which must be 8, 16, 24 or 32 \
           bytes. visa-lint derives the commit sequencer (crate::derive) and reports a kept \
           prefix of another size, for example 12 i8 elements. When the Element as a whole is not \
           a multiple of 8 bytes, ALN-007 reports it instead (one finding per commit). Pad the \
           Element's innermost axis so the commit also writes the padding (`m![M, K, W]` → \
           `m![M, K, W # 16]`) or resize it to 8/16/24/32 bytes. An Element whose innermost \
           axis is not the packet's (one element kept per flit, `m![R]` over a packet \
           `m![1 # 8]`) gets a kept part of its own: `m![R, 1 # 2]` for f32.",
    bad: "axes![M = 4, K = 2, W = 12]; ...cast::<i8, m![W # 32]>().commit::<m![M, K, W]>(0)",
    good: "axes![M = 4, K = 2, W = 12]; ...cast::<i8, m![W # 32]>().commit::<m![M, K, W # 16]>(0)",
    manual: "L2191-L2194, L2330, L2201-L2238",
    generations: Generations::Differs(
        "under furiosa-opt-std 0.6 the kept part is written, `commit_trim::<P>()`: P must be 8, \
         16, 24 or 32 bytes and the leading part of the packet it trims \
         (`furiosa-opt-lower/src/verify/engine/commit_adapter.rs:8-39`); under `furiosa_visa_std` \
         the commit's Element implies it (L2191-L2194)",
    ),
};

/// CMT-002 on a derived commit sequencer whose `commit_in_size` is no Commit Adapter width;
/// whether it fired (the commit's other findings are then silent).
pub(super) fn check(
    cx: &FnContext<'_>,
    op: &Op<'_>,
    c: &CommitOp<'_>,
    allowed: &[u64],
    flit: u64,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let (cfg, d, written_el, span, kept) = (c.cfg, c.d, &c.written_el, c.span, c.kept);
    let cin_ok = allowed.contains(&c.cin) && c.sizes.widened != derive::Widened::Rounded;
    if cin_ok {
        return false;
    }
    // Under furiosa-opt-std a `commit_trim` says what each flit keeps: its width is
    // [`check_trims`]'s finding, with the trim's own fix.
    let trimmed = cx
        .model
        .adapters
        .iter()
        .any(|a| a.method == Method::CommitTrim);
    if cx.model.library == Generation::OptStd && trimmed {
        return true;
    }
    // More than a flit kept: the input packet is not one flit, which is CMT-001's finding (or
    // that of the engine that produced it), not a width to pad.
    if kept > flit {
        return true;
    }
    let mut diag = at_arg(
        &CMT_002,
        op.step,
        span,
        format!(
            "the commit keeps {} × {} = {kept} bytes of each {flit}-byte flit (commit \
             sequencer {cfg}); commit_in_size must be 8, 16, 24 or 32 bytes",
            cfg.packet_size,
            d.map_or("", Dtype::as_str)
        ),
    );
    let target = allowed.iter().copied().filter(|&a| a >= kept).min();
    // The kept part is the whole innermost axis (pad it), or a part of it (split it there).
    let size = |axis: &str| cx.scope.axes.get(axis).map(|a| a.axis.size);
    // One element kept of each flit and an innermost term of several positions of an axis:
    // that term is not the packet's (each of its positions is a flit of its own), so the kept
    // part gets a term of its own, `1 # n`. A term of padding only is the packet's.
    let outside_packet = |text: &str| {
        let (_, last) = *crate::mapping::edit::top_terms(text).last()?;
        let term = crate::mapping::lower::layout_of(&format!("m![{last}]"), cx.scope)?;
        Some(cfg.packet_size == 1 && term.size > 1 && !term.axis_names().is_empty())
    };
    let padded = |text: &str, n: u64| {
        if outside_packet(text) == Some(true) {
            return crate::mapping::edit::append_padding(text, n)
                .map(|new| ("pad the part of each flit it keeps", new));
        }
        match crate::mapping::edit::split_innermost(text, size, cfg.packet_size, n) {
            Some(new) => Some(("split the innermost axis, its kept part padded", new)),
            None => crate::mapping::edit::pad_innermost(text, n)
                .map(|new| ("pad the innermost axis", new)),
        }
    };
    if let Some((t, el)) = target.zip(written_el.as_ref())
        && let Some(n) = d.and_then(|d| d.elems_for(t))
        && let Some(text) = crate::model::written_mapping(cx.scope, el)
        && let Some((what, new)) = padded(&text, n)
    {
        diag = diag.with_edit(format!("{what} to {t} bytes: {new}"), false, el.span, new);
    }
    out.push(diag);
    true
}

/// CMT-002 under furiosa-opt-std: `commit_trim::<P>()` writes out what each flit keeps, which
/// is a leading 8, 16, 24 or 32 bytes of the packet it trims (`furiosa-opt-lower/src/verify/
/// engine/commit_adapter.rs:8-39` at ebb846a: a Commit Adapter width, and a resize of the
/// packet).
pub(super) fn check_trims(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    if cx.model.library != Generation::OptStd {
        return;
    }
    let trims = cx
        .model
        .adapters
        .iter()
        .filter(|a| a.method == Method::CommitTrim);
    for trim in trims {
        let Some((arg, Some(map))) = &trim.generic else {
            continue;
        };
        let (Some(kept), Some(d)) = (map.layout.as_deref(), trim.input.dtype) else {
            continue;
        };
        let Some(bytes) = d.size_bytes(kept.size) else {
            continue;
        };
        // The verifier refuses the trim's width itself, whatever Element the commit writes.
        let widths = cx.target.commit_sizes_main;
        let packet = trim.input.get(Slot::Packet);
        if !widths.contains(&bytes) {
            out.push(trim_width(arg, (kept, d, bytes), packet, widths));
            continue;
        }
        let Some(packet) = packet else {
            continue;
        };
        if let Some(p) = packet.layout.as_deref()
            && !leads(kept, p)
        {
            let diag = Diagnostic::new(
                &CMT_002,
                arg.span,
                format!(
                    "`commit_trim` keeps `{}`, which is not the leading part of the packet `{}`: \
                     it may only cut the packet's tail (the same elements, in order), so no trim \
                     keeps these elements; order the packet upstream so that they come first, then \
                     trim the rest",
                    arg.text, packet.text
                ),
            );
            out.push(with_packet_padded(cx, diag, packet, kept, p));
        }
    }
}

/// A trim that keeps more than the packet it receives, which is the kept packet's leading
/// part (`m![1 # 8]` of a Way4 `m![1 # 4]`): the fix pads that packet to the kept length where
/// the step before writes it.
fn with_packet_padded(
    cx: &FnContext<'_>,
    diag: Diagnostic,
    packet: &MapVal,
    kept: &Layout,
    p: &Layout,
) -> Diagnostic {
    let Some(span) = packet.span.filter(|_| kept.size > p.size && leads(p, kept)) else {
        return diag;
    };
    let written = crate::model::Arg::written(packet.text.clone(), span);
    let Some(edit) = crate::model::pad_edit(cx.scope, &written, kept.size) else {
        return diag;
    };
    // It points where its fix pads the packet.
    diag.with_fix(
        format!("pad the packet the trim receives to {} elements", kept.size),
        false,
        vec![edit],
    )
    .pointing_at(span, "the trim")
}

/// CMT-002 on a trim whose width (`bytes` of `kept`, of `d`) is no Commit Adapter width, with
/// the fix that keeps the next width up when the packet is that long.
fn trim_width(
    arg: &Arg,
    (kept, d, bytes): (&Layout, Dtype, u64),
    packet: Option<&MapVal>,
    widths: &[u64],
) -> Diagnostic {
    let mut diag = Diagnostic::new(
        &CMT_002,
        arg.span,
        format!(
            "`commit_trim` keeps {bytes} bytes of each flit ({} {d} elements, `{}`); the \
             Commit Adapter writes 8, 16, 24 or 32: pad the kept packet to one of them",
            kept.size, arg.text
        ),
    );
    let wider = packet
        .and_then(|p| p.layout.as_deref())
        .and_then(|p| wider_trim(kept, p, d, widths));
    // Written as `m![..]`, or as a name (an alias, a helper's parameter the call binds) that
    // the wider packet replaces at this use.
    if let Some((text, w)) = wider.filter(|_| spelled_out(arg)) {
        // It writes more of each flit than the kernel asked for: unsafe.
        diag = diag.with_edit(
            format!("keep the leading {w} bytes of the packet: {text}"),
            false,
            arg.span,
            text,
        );
    }
    diag
}

/// CMT-002's fix of a trim whose width is not a Commit Adapter width: keep the leading part of
/// `packet` of the next width up (`m![L = 3]` f32 → `m![L % 4]`, 16 bytes) and its width, when
/// the packet is that long.
fn wider_trim(kept: &Layout, packet: &Layout, d: Dtype, widths: &[u64]) -> Option<(String, u64)> {
    let bytes = d.size_bytes(kept.size)?;
    let w = widths.iter().copied().filter(|&w| w > bytes).min()?;
    let n = d.elems_for(w)?;
    if !leads(kept, packet) {
        return None;
    }
    // The trim keeps the whole packet, which is shorter than the width: the kept packet padded
    // to it (what the packet is then padded to as well, as the trim's next check asks).
    if n > packet.size {
        let whole = format!("m![{}]", kept.to_expr());
        return (kept.size == packet.size)
            .then(|| crate::mapping::edit::pad_innermost(&whole, n))
            .flatten()
            .map(|text| (text, w));
    }
    let lead = packet.window(n);
    (leads(&lead, packet) && d.size_bytes(lead.size) == Some(w))
        .then(|| (format!("m![{}]", lead.to_expr()), w))
}

/// Whether `kept` is the first `kept.size` positions of `packet`, element for element (padding
/// for padding).
fn leads(kept: &Layout, packet: &Layout) -> bool {
    kept.size <= packet.size && (0..kept.size).all(|i| kept.map(i) == packet.map(i))
}

#[cfg(test)]
mod tests {
    use crate::diagnostic::Diagnostic;

    /// An Element of Time only keeps one element of each flit; padding its axis adds rows,
    /// so the fix gives each row 8 bytes of its own.
    #[test]
    fn an_element_of_time_only_gets_a_kept_part() {
        let fixed = crate::rules::fix_testing::assert_fix_clears(
            include_str!("../../../../fixtures/rules/CMT-002-time-innermost.rs"),
            "CMT-002",
        );
        assert!(
            fixed.contains(".commit::<m![R, 1 # 2]>(0x1000);"),
            "{fixed}"
        );
    }

    #[test]
    fn narrow_trim_fix_keeps_the_next_width() {
        // 3 f32 = 12 bytes is no Commit Adapter width; the leading 4 (16 bytes) are.
        let src = "use furiosa_opt_std::prelude::*;\naxes![N = 8, L = 8];\n\
                   #[device(chip = 1)]\n\
                   pub fn k(ctx: &mut Context, x: &DmTensor<f32, m![1], m![1 # 2], m![1 # 256], m![N, L]>) {\n\
                   let _t = ctx.main.begin(x.view()).fetch::<m![N], m![L]>().fetch_cast::<f32>()\n\
                   .collect::<m![N], m![L]>().commit_trim::<m![L = 3]>().commit();\n}\n";
        let fixed = crate::rules::fix_testing::assert_fix_clears(src, "CMT-002");
        assert!(fixed.contains("commit_trim::<m![L % 4]>()"), "{fixed}");
        assert!(
            crate::check_text(&fixed).is_empty(),
            "{:?}",
            crate::check_text(&fixed)
        );
    }

    /// A constant in an escaped size is its value: `B = { WIN }` keeps WIN i8 elements, 4 bytes
    /// (no Commit Adapter width) or 8.
    #[test]
    fn an_escaped_constant_sizes_the_trim() {
        let kernel = |win: u64| {
            format!(
                "use furiosa_opt_std::prelude::*;\naxes![A = 8, B = 32];\nconst WIN: usize = {win};\n\
                 #[device(chip = 1)]\n\
                 pub fn k(ctx: &mut Context, x: &DmTensor<i8, m![1], m![1 # 2], m![1 # 256], m![A, B]>) {{\n\
                 let _t = ctx.main.begin(x.view()).fetch::<m![A], m![B]>()\n\
                 .collect::<m![A], m![B]>().commit_trim::<m![B = {{ WIN }}]>().commit();\n}}\n"
            )
        };
        let codes = |win| -> Vec<&'static str> {
            crate::check_text(&kernel(win))
                .iter()
                .map(Diagnostic::code)
                .collect()
        };
        assert_eq!(codes(4), ["CMT-002"]);
        assert!(codes(8).is_empty(), "{:?}", codes(8));
    }

    /// A trim that keeps every other element is no tail cut: no trim keeps them, and the
    /// message says what to do instead.
    #[test]
    fn strided_trim_has_no_fix_and_says_why() {
        let src = "use furiosa_opt_std::prelude::*;\naxes![N = 8, L = 8];\n\
                   #[device(chip = 1)]\n\
                   pub fn k(ctx: &mut Context, x: &DmTensor<f32, m![1], m![1 # 2], m![1 # 256], m![N, L]>) {\n\
                   let _t: DmTensor<f32, m![1], m![1 # 2], m![1 # 256], m![N, L / 2]> = ctx.main.begin(x.view()).fetch::<m![N], m![L]>().fetch_cast::<f32>()\n\
                   .collect::<m![N], m![L]>().commit_trim::<m![L / 2]>().commit();\n}\n";
        let d: Vec<Diagnostic> = crate::check_text(src)
            .into_iter()
            .filter(|d| d.code() == "CMT-002")
            .collect();
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].fixes.is_empty());
        assert!(
            d[0].message.ends_with(
                "so no trim keeps these elements; order the packet upstream so that they come \
                 first, then trim the rest"
            ),
            "{}",
            d[0].message
        );
    }

    /// A resized Element named by an alias: the fix pads the resize where the commit names
    /// it (`H = 5` i32 keeps 20 bytes; `H = 5 # 6` writes 24).
    #[test]
    fn a_resized_alias_is_padded_at_its_use() {
        let src = "use furiosa_visa_std::prelude::*;\naxes![T = 8, H = 8];\n\
                   type Keep = m![T, H = 5];\n\
                   #[device(chip = 1)]\n\
                   pub fn k(ctx: &mut Context, x: &DmTensor<i32, m![1], m![1 # 2], m![1 # 256], m![T, H]>) {\n\
                   let _r: DmTensor<i32, m![1], m![1 # 2], m![1 # 256], Keep> = ctx.main.begin(x.view())\n\
                   .fetch::<i32, m![T], m![H]>().commit(0x1000);\n}\n";
        let fixed = crate::rules::fix_testing::assert_fix_clears(src, "CMT-002");
        assert!(fixed.contains("m![1 # 256], m![T, H = 5 # 6]>"), "{fixed}");
    }

    #[test]
    fn merged_commit_sequencer_keeps_the_flit() {
        // Nine contiguous entries merge into one (L1568); the flit's kept bytes do not grow.
        let ok = include_str!("../../../../fixtures/ok/CMT-002-merged.rs");
        assert!(crate::db::analyse_text(ok).diagnostics().is_empty());
        let bad = include_str!("../../../../fixtures/rules/CMT-002-merged.rs");
        let a = crate::db::analyse_text(bad);
        let d = a.diagnostics();
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].code(), "CMT-002");
        assert!(
            d[0].message
                .contains("keeps 12 × i8 = 12 bytes of each 32-byte flit")
                && d[0].message.contains("[3072 : 1] : 12"),
            "{}",
            d[0].message
        );
    }

    /// A commit of a 64-byte packet keeps no width to pad: its input is not one flit, which
    /// CMT-001 reports (with the collect's COL-001), so CMT-002 says nothing more.
    #[test]
    fn a_packet_over_a_flit_is_left_to_the_input_flit_rule() {
        let src = "use furiosa_visa_std::prelude::*;\naxes![T = 8, H = 16];\n\
                   #[device(chip = 1)]\n\
                   pub fn k(ctx: &mut Context, x: &DmTensor<i32, m![1], m![1 # 2], m![1 # 256], m![T, H]>) {\n\
                   let _r: DmTensor<i32, m![1], m![1 # 2], m![1 # 256], m![T, H]> = ctx.main.begin(x.view())\n\
                   .fetch::<i32, m![T], m![H]>().commit(0x1000);\n}\n";
        let codes: Vec<&str> = crate::check_text(src).iter().map(|d| d.code()).collect();
        assert!(codes.contains(&"CMT-001"), "{codes:?}");
        assert!(!codes.contains(&"CMT-002"), "{codes:?}");
    }

    /// The widen writes a Way4 packet (`Lanes4`) that the trim then keeps 8 lanes of: the fix
    /// pads the packet where the widen writes it, at this use of the alias.
    #[test]
    fn a_trim_longer_than_its_packet_pads_the_packet() {
        let src = "use furiosa_opt_std::prelude::*;\naxes![R = 256];\n\
                   type Lanes4 = m![1 # 4];\n\
                   #[device(chip = 1)]\n\
                   pub fn k(ctx: &mut Context, x: &DmTensor<f32, m![1], m![1 # 2], m![R], m![1 # 8]>) {\n\
                   let _r: DmTensor<f32, m![1], m![1 # 2], m![R], m![1 # 8]> = ctx.main.begin(x.view())\n\
                   .fetch::<m![1], m![1 # 8]>().collect::<m![1], m![1 # 8]>().vector_init()\n\
                   .vector_intra_slice_tag(TagMode::Zero).vector_narrow_trim::<Lanes4>()\n\
                   .vector_fp_unary(FpUnaryOp::Sqrt).vector_widen_pad::<Lanes4>().vector_final()\n\
                   .commit_trim::<m![1 # 8]>().commit();\n}\n";
        let fixed = crate::rules::fix_testing::assert_fix_clears(src, "CMT-002");
        assert!(
            fixed.contains(".vector_widen_pad::<m![1 # 8]>()"),
            "{fixed}"
        );
    }
}
