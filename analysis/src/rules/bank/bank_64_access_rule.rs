//! BNK-001: a fetch or commit must not access one DM bank 64 or more times in a row while a
//! DMA may be active, since the DMA, with the lowest DM priority, starves until the NoC's
//! timeout resets the cluster. The fix pads the DM buffer (its innermost term, else the term
//! that sets the walked pitch) so the row pitch rotates banks, where the buffer's mapping is
//! written or where its alias is defined.

use super::commands::{Cmd, NEAR, access_bytes, bank_name, dma_span, op_runs, why};
use crate::derive::Op;
use crate::derive::OpKind;
use crate::derive::timeline::Timeline;
use crate::diagnostic::{Diagnostic, Edit, Severity};
use crate::mapping::edit::{pad_top_term, top_terms};
use crate::mapping::lower::layout_of;
use crate::model::{Arg, Slot, input_arg, output_arg};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg, rewrite_input, rewrite_output};

pub const BNK_001: Rule = Rule {
    code: "BNK-001",
    name: "bank-64-access-rule",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "A fetch/commit must not hit one DM bank 64+ times in a row while DMA is active",
    docs: "DM banks are 8 bytes wide and 16 per slice; 128 consecutive bytes cover all of them \
           (L2875-L2879). DMA has the lowest DM priority, and a DMA request that waits 4096 \
           cycles makes the NoC declare it dead and reset the cluster (L2905). Fetch and \
           commit commands must therefore not access one bank 64 or more times in a row \
           while a DMA is active (L2898, L2906-L2909; (256/128) × 64 × 32 < 4096, L2938), \
           and the manual asks to treat this as a hard constraint (L2909, L2352). visa-lint \
           derives each command's sequencer and reports the longest run: consecutive \
           accesses stay in one bank when their byte stride is a multiple of 128 (for example \
           a column of a row-major matrix with a 256-byte row pitch) or 0 (a Time broadcast \
           re-reading the same address). Whether a DMA may run at the same time comes from \
           the function's schedule. Where the function issues DMA, the command is reported \
           when one of those DMAs may overlap it (the schedule does not order it before or \
           after), and not when every one is ordered around it. Where the function issues no \
           DMA at all (typically a helper taking `&mut Context` and tensors), what runs \
           alongside is decided by its callers: the concurrency is unknown there, and the \
           command is reported with a message that says so. The compiler serializes such a \
           command with DMA, so both are warnings by default (constraints.md §22 A-27); \
           `strict-bank-rule = true`, `--deny BNK-001` or `--deny warnings` make both errors \
           (the strict reading: never, whatever runs alongside). Fix: pad the row pitch so it \
           is not a multiple of 128 bytes (`m![A, B # 136]`), or reorder Time so the \
           innermost loop walks contiguous memory.",
    bad: "axes![R = 128, C = 128]; // bf16 rows of 256 bytes at DM 0\n\
          ctx.main.begin(m.view()).fetch::<bf16, m![C / 16, R], m![C % 16]>()… // column walk: bank 0, 128 times\n\
          let w = w.to_dm::<m![1 # 2], m![S], m![R, C]>(&mut ctx.tdma, 1 << 17); // independent DMA",
    good: "ctx.main.begin(m.view()).fetch::<bf16, m![R, C / 16], m![C % 16]>()… // row walk",
    manual: "L2137, L2352-L2353, L2856, L2875-L2879, L2898, L2906-L2909, L2938-L2939",
    generations: Generations::Both,
};

/// BNK-001 on the command `c`, which the DMA node `d` of `t` may overlap.
pub(super) fn report(
    cx: &FnContext<'_>,
    t: &Timeline<'_>,
    c: &Cmd<'_>,
    d: usize,
    out: &mut Vec<Diagnostic>,
) {
    let limit = cx.target.bank_max_consecutive;
    let message = format!(
        "{} is accessed {} times in a row by this {} (sequencer {}: {}) while the DMA \
         may be active; {limit} or more consecutive same-bank accesses can starve the \
         DMA into a NoC timeout, so the compiler serializes this command with DMA. {}",
        bank_name(c, cx.target),
        c.runs.run,
        c.kind.as_str(),
        c.cfg,
        why(c),
        remedy(c)
    );
    out.push(
        bnk_001(cx, c, message).with_related(dma_span(t, d), "this DMA may run at the same time"),
    );
}

/// BNK-001 where the function issues no DMA: a helper whose caller may have one in flight.
/// Reported at the rule's severity, like the visible case; what it would cost is said as a
/// condition (L2909: the pattern is to be avoided whatever runs alongside).
pub(super) fn unknown_concurrency(cx: &FnContext<'_>, c: &Cmd<'_>, limit: u64) -> Diagnostic {
    let message = format!(
        "{} is accessed {} times in a row by this {} (sequencer {}: {}); `{}` issues no DMA, \
         so whether one is active meanwhile is unknown here (its callers decide). If one is, the \
         compiler serializes this command with it and the overlap is lost: {limit} or more \
         consecutive same-bank accesses could otherwise starve the DMA until the NoC's \
         {}-cycle timeout resets the cluster. {}",
        bank_name(c, cx.target),
        c.runs.run,
        c.kind.as_str(),
        c.cfg,
        why(c),
        cx.model.name,
        cx.target.noc_timeout_cycles,
        remedy(c),
    );
    bnk_001(cx, c, message).with_related(
        cx.model.span,
        "issues no DMA: what runs alongside it depends on where it is called",
    )
}

/// How many accesses BNK-001's fix may add to the innermost term before it gives up.
const MAX_PAD_ACCESSES: u64 = 8;

/// BNK-001's fix: the DM tensor's Element, where it is written, padded (see [`padded_pitch`])
/// until the command's accesses rotate banks, as the command would derive over it; its edits
/// and the new mapping. `None` for a re-read of one address (no padding moves it) or a mapping
/// that is not spelled out where it is written.
fn rotation(cx: &FnContext<'_>, c: &Cmd<'_>) -> Option<(Vec<Edit>, String)> {
    if c.runs.stride == 0 {
        return None;
    }
    let new = padded_pitch(cx, c)?;
    Some((buffer_edits(cx, c.op, &new)?, new))
}

/// A BNK-001 diagnostic: at the DM mapping its fix pads (the command related), else at the
/// command.
fn bnk_001(cx: &FnContext<'_>, c: &Cmd<'_>, message: String) -> Diagnostic {
    let fix = rotation(cx, c);
    let at = fix.as_ref().and_then(|(e, _)| e.first()).map(|e| e.span);
    let diag = at_arg(&BNK_001, c.op.step, at, message);
    match fix {
        Some((edits, new)) => diag.with_fix(
            format!("pad the DM layout so its row pitch rotates banks: {new}"),
            false,
            edits,
        ),
        None => diag,
    }
}

/// The buffer mapping padded as [`rotation`] pads it: its innermost term by whole accesses,
/// else the nearest term outside it by whole positions, which lengthens the pitch of the
/// terms outside (`m![H / 16, F % 32, H % 16]` walked along `H / 16`: `F % 32 # 33`). The
/// buffer is the mapping an alias stands for when it names one (the fix writes it out there).
fn padded_pitch(cx: &FnContext<'_>, c: &Cmd<'_>) -> Option<String> {
    let text = crate::model::written_mapping(cx.scope, &buffer_arg(c.op)?)?;
    let terms = top_terms(&text);
    let innermost = terms.len().checked_sub(1)?;
    let access = access_bytes(c.op).unwrap_or(0).max(cx.target.dm_bank_bytes);
    let per_access = c.op.bits.and_then(|b| {
        let bits = access.checked_mul(8)?;
        bits.is_multiple_of(u64::from(b))
            .then(|| bits / u64::from(b))
    })?;
    (0..=innermost).rev().find_map(|j| {
        let extent = layout_of(&format!("m![{}]", terms[j].1), cx.scope)?.size;
        let unit = if j == innermost { per_access } else { 1 };
        (1..=MAX_PAD_ACCESSES).find_map(|k| {
            let n = extent.checked_add(k.checked_mul(unit)?)?;
            let new = pad_top_term(&text, j, n)?;
            let op = c.op.over(layout_of(&new, cx.scope)?, cx.target);
            let runs = op_runs(&op, c.base, cx.target)?;
            (runs.run < NEAR).then_some(new)
        })
    })
}

/// Where the DM buffer of a fetch (its source's Element) or commit (its Element) is written.
fn buffer_arg(op: &Op<'_>) -> Option<Arg> {
    match op.kind {
        OpKind::Fetch => input_arg(op.step, Slot::Packet),
        _ => output_arg(op.step, Some(0), Slot::Element),
    }
}

/// The edits that write `new` as the DM buffer of `op` wherever it is written.
fn buffer_edits(cx: &FnContext<'_>, op: &Op<'_>, new: &str) -> Option<Vec<Edit>> {
    if op.kind == OpKind::Fetch {
        return rewrite_input(cx.model, op.step, Slot::Packet, new);
    }
    let chain = cx
        .model
        .chains
        .iter()
        .find(|ch| ch.steps.iter().any(|s| std::ptr::eq(s, op.step)))?;
    rewrite_output(chain, op.step, Some(0), Slot::Element, new)
}

/// What BNK-001 asks for: padding, unless the run re-reads one address (no padding moves it).
fn remedy(c: &Cmd<'_>) -> &'static str {
    if c.runs.stride == 0 {
        "No padding moves a re-read of one address: reorder Time so the broadcast axis is \
         not the innermost loop (the innermost loop should walk contiguous memory)"
    } else {
        "Pad the stride so it is not a multiple of 128 bytes, or make the innermost loop walk \
         contiguous memory"
    }
}

#[cfg(test)]
mod tests {
    use crate::diagnostic::{Diagnostic, Severity};
    use crate::rules::fix_testing::assert_fix_clears;

    /// The column walk of fixtures/rules/BNK-001.rs with a different last statement.
    fn column_walk(last: &str) -> Vec<String> {
        let text = format!(
            "axes![S = 256, R = 128, C = 128];
#[device(chip = 1)]
fn kernel(ctx: &mut Context, m: &HbmTensor<bf16, m![1], m![S, R, C]>, w: &HbmTensor<bf16, m![1], m![S, R, C]>) {{
    let m = m.to_dm::<m![1 # 2], m![S], m![R, C]>(&mut ctx.tdma, 0);
    let cols = ctx.main.begin(m.view()).fetch::<bf16, m![C / 16, R], m![C % 16]>().collect::<m![C / 16, R], m![C % 16]>().commit::<m![C / 16, R, C % 16]>(1 << 16);
    {last}
}}"
        );
        crate::check_text(&text)
            .iter()
            .filter(|d| d.code().starts_with("BNK"))
            .map(|d| d.code().to_string())
            .collect()
    }

    /// Only a DMA the schedule does not order around the fetch counts as active (L2898).
    #[test]
    fn only_concurrent_dma_counts() {
        // An independent load after the fetch may overlap it.
        assert_eq!(
            column_walk("let w = w.to_dm::<m![1 # 2], m![S], m![R, C]>(&mut ctx.tdma, 1 << 17);"),
            ["BNK-001"]
        );
        // The only DMA feeds the fetch: it has finished before the fetch starts.
        assert!(column_walk("").is_empty());
        // A DMA that moves the fetch's result out waits for it.
        assert!(column_walk("cols.to_hbm(&mut ctx.tdma, 0);").is_empty());
    }

    /// The column walk in a helper that issues no DMA, `rows` rows of 256 bytes.
    fn helper_walk(rows: u64) -> String {
        format!(
            "axes![S = 256, R = {rows}, C = 128];
fn walk(ctx: &mut Context, m: &DmTensor<bf16, m![1], m![1 # 2], m![S], m![R, C]>) {{
    let cols = ctx.main.begin(m.view()).fetch::<bf16, m![C / 16, R], m![C % 16]>().collect::<m![C / 16, R], m![C % 16]>().commit::<m![C / 16, R, C % 16]>(1 << 16);
}}"
        )
    }

    /// No DMA in the function: concurrency is unknown, not absent; 64 in a row is reported
    /// (a warning saying so), 63 is not (L2898: 64 or more).
    #[test]
    fn helper_without_dma_is_unknown_concurrency() {
        let d: Vec<Diagnostic> = crate::check_text(&helper_walk(64))
            .into_iter()
            .filter(|d| d.code().starts_with("BNK"))
            .collect();
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].code(), "BNK-001");
        assert_eq!(d[0].severity, Severity::Warning);
        assert!(d[0].message.contains("unknown here"), "{}", d[0].message);
        assert!(d[0].message.contains("4096-cycle"), "{}", d[0].message);
        assert!(
            crate::check_text(&helper_walk(63))
                .iter()
                .all(|d| !d.code().starts_with("BNK"))
        );
    }

    /// `strict-bank-rule` makes every BNK-001 an error, the unknown case included (L2909).
    #[test]
    fn strict_bank_rule_denies_the_unknown_case() {
        let strict = crate::config::Config {
            strict_bank: true,
            ..Default::default()
        };
        let d = strict.apply(crate::check_text(&helper_walk(64)));
        let bnk: Vec<_> = d.iter().filter(|d| d.code() == "BNK-001").collect();
        assert_eq!(bnk.len(), 1, "{d:?}");
        assert_eq!(bnk[0].severity, Severity::Error);
    }

    /// BNK-001's fix pads the row by one 32-byte fetch (128 -> 144 bf16): a 288-byte pitch
    /// starts each row 32 bytes further along the banks, so the column walk rotates them.
    #[test]
    fn fix_pads_the_row_pitch_where_the_dm_tensor_is_written() {
        let fixed = assert_fix_clears(
            include_str!("../../../../fixtures/rules/BNK-001.rs"),
            "BNK-001",
        );
        assert!(
            fixed.contains("m.to_dm::<m![1 # 2], m![S], m![R, C # 144]>(&mut ctx.tdma, 0)"),
            "{fixed}"
        );
        // The other DMA's tensor keeps its layout.
        assert!(
            fixed.contains("w.to_dm::<m![1 # 2], m![S], m![R, C]>"),
            "{fixed}"
        );
        let fixed = assert_fix_clears(&helper_walk(64), "BNK-001");
        assert!(
            fixed.contains("m: &DmTensor<bf16, m![1], m![1 # 2], m![S], m![R, C # 144]>"),
            "{fixed}"
        );
    }

    /// A Time broadcast re-reads one address: no padding helps, and the message says so.
    /// A commit walking 16-wide blocks of 32 rows: no padding of the innermost term rotates
    /// a 32 × 16-element pitch, so the rows are padded, in the alias's mapping written out.
    #[test]
    fn fix_pads_the_term_that_sets_the_pitch() {
        let fixed = assert_fix_clears(
            include_str!("../../../../fixtures/rules/BNK-001-commit-alias.rs"),
            "BNK-001",
        );
        assert!(
            fixed.contains("m![S], m![H / 16, F # 33, H % 16]> {"),
            "{fixed}"
        );
    }

    #[test]
    fn broadcast_has_no_padding_fix() {
        let text = "axes![S = 256, T = 64, C = 4];
fn bcast(ctx: &mut Context, m: &DmTensor<f32, m![1], m![1 # 2], m![S], m![C]>) {
    let r = ctx.main.begin(m.view()).fetch::<f32, m![T], m![C]>().collect::<m![T], m![C # 8]>().commit::<m![T, C # 8]>(1 << 16);
}";
        let d: Vec<Diagnostic> = crate::check_text(text)
            .into_iter()
            .filter(|d| d.code() == "BNK-001")
            .collect();
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].fixes.is_empty(), "{:?}", d[0].fixes);
        assert!(
            d[0].message.contains("No padding moves a re-read"),
            "{}",
            d[0].message
        );
    }
}
