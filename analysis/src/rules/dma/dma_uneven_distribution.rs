//! DMA-008: a DM tensor spread over the DMA Engines whose padded axis leaves one engine a share
//! that no single loop nest moves makes the compiler segment that engine's transfer into
//! several commands, each with its startup.

use crate::derive::dma::partial_share;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Kind, Method, Step};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const DMA_008: Rule = Rule {
    code: "DMA-008",
    name: "dma-uneven-distribution",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Axes that do not divide across DMNs need segmented commands",
    docs: "A DM transfer is spread over the DMA Engines, one per pair of DMNs (64 slices of a \
           cluster each, seed 000 L50, L477). When an axis is padded in the DM tensor's layout \
           and split between the Slice digits that select the engine and digits below them \
           (`A = 15` as `A # 16`: `Slice = m![A # 16 / 4, A # 16 / 2 % 2, B]`, Element \
           `m![A # 16 % 2, C]`), the engine that holds the last real positions has a share that \
           is no single loop nest (3 of 4 A positions), and it must not write the extra one: the \
           compiler segments its transfer into several DMA commands, each paying the ~500-cycle \
           startup (1192 instead of 756 cycles in seed 000 L405-L454). visa-lint reports \
           `to_dm` / `to_hbm` whose DM-side layout needs that, with the command count. A \
           padding that leaves whole engine shares (or one smaller loop) is not reported. \
           Choose a size that divides across the engines, or pad the axis in both source and \
           destination so the padding moves as data.",
    bad: "axes![D = 4, A = 15, B = 32, C = 256];\n// DM: Slice m![A # 16 / 4, A # 16 / 2 % 2, B], Element m![A # 16 % 2, C]\ndm.to_hbm(&mut ctx.pdma, 0)",
    good: "axes![D = 4, A = 16, B = 32, C = 256]; // same layout, A divides",
    manual: "seed 000 L439, L454, L474",
    generations: Generations::Both,
};

/// DMA-008: a DM-side layout whose padded axis leaves one DMA Engine a share that needs several
/// commands (seed 000 L405-L454), as `derive::dma` derived it.
pub(super) fn check(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let seg = match cx.dma_ops.iter().find(|o| o.span == step.span) {
        Some(op) => op.segmented.clone(),
        // The other side is not known: the DM side's layout alone decides.
        None => {
            let ty = match step.method {
                Method::ToDm => step.output.as_ref(),
                Method::ToHbm => step.input.as_ref(),
                _ => None,
            };
            ty.filter(|t| matches!(t.kind, Kind::Dm | Kind::DmView | Kind::DmViewMut))
                .and_then(|t| partial_share(t, cx.target))
        }
    };
    let Some(seg) = seg else { return };
    let share = cx
        .target
        .slices_per_dmn
        .saturating_mul(cx.target.dmns_per_dma_engine);
    let startup = cx.target.dma_startup_cycles;
    let (axis, c, r, commands) = (&seg.axis, seg.share, seg.real, seg.count);
    let engines = axis.size.div_ceil(c);
    let first = axis.size - r;
    out.push(Diagnostic::new(
        &DMA_008,
        step.span,
        format!(
            "`{name}` ({name} = {size}) is padded to {padded} in the DM tensor and split across \
             the DMA Engines' {share}-slice shares, {c} of {name} each: the engine holding {name} \
             = {first}..{last} moves {r} of {c}, which is no single loop nest, so the compiler \
             segments its transfer into {commands} DMA commands (~{startup} cycles of startup \
             each: {extra} extra cycles on the slowest of {engines} engines). Choose a size of \
             {name} that divides into shares of {c}, or pad it in both source and destination",
            name = axis.name,
            size = axis.size,
            padded = seg
                .digits
                .iter()
                .try_fold(1u64, |a, d| a.checked_mul(d.extent))
                .unwrap_or(0),
            last = axis.size - 1,
            extra = (commands - 1).saturating_mul(startup),
        ),
    ));
}

#[cfg(test)]
mod tests {
    use crate::diagnostic::Diagnostic;

    fn dm_to_hbm(axes: &str, slice: &str, element: &str) -> Vec<Diagnostic> {
        let src = format!(
            "use furiosa_visa_std::prelude::*;\naxes![{axes}];\n#[device(chip = 1)]\n\
             fn k(ctx: &mut Context, dm: &DmTensor<i8, m![1], m![1 # 2], m![{slice}], m![{element}]>) {{\n\
             dm.to_hbm(&mut ctx.tdma, 0);\n}}\n"
        );
        crate::db::analyse_text(&src)
            .diagnostics()
            .iter()
            .filter(|d| d.code() == "DMA-008")
            .cloned()
            .collect()
    }

    #[test]
    fn seed_000_example_6_golden() {
        // seed 000 L405-L454: A = 15 over 4 DMNs; DMN #3 runs two commands (1192 vs 756 cycles:
        // one extra 500-cycle startup).
        let d = dm_to_hbm(
            "A = 15, B = 32, C = 256",
            "A # 16 / 4, A # 16 / 2 % 2, B",
            "A # 16 % 2, C",
        );
        assert_eq!(d.len(), 1, "{d:?}");
        let m = &d[0].message;
        assert!(m.contains("A = 12..14 moves 3 of 4"), "{m}");
        assert!(m.contains("2 DMA commands"), "{m}");
        assert!(m.contains("500 extra cycles"), "{m}");
        assert!(m.contains("of 4 engines"), "{m}");
    }

    #[test]
    fn whole_shares_and_single_loops_are_silent() {
        // A divides: no padding.
        assert!(dm_to_hbm("A = 16, B = 32, C = 256", "A / 4, A / 2 % 2, B", "A % 2, C").is_empty());
        // The padding lies in one Slice digit: the last engine runs one shorter loop.
        assert!(dm_to_hbm("A = 200, C = 256", "A # 256", "C").is_empty());
        // The remainder is whole blocks of the lower digits: one command.
        assert!(
            dm_to_hbm(
                "A = 14, B = 32, C = 256",
                "A # 16 / 4, A # 16 / 2 % 2, B",
                "A # 16 % 2, C"
            )
            .is_empty()
        );
    }
}
