//! CON-014: the accumulator has 1024 slots (8 rows × 32 columns × 4 registers); it buffers
//! every output position inner to the outermost reduced Time axis until the reduction ends.

use super::accumulate::{Accumulate, Mode};
use super::layouts::{at, overlaps};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::Slot;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const CON_014: Rule = Rule {
    code: "CON-014",
    name: "accumulator-slots",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Temporal accumulation fits the 1024-slot accumulator (Interleaved <= 128, Sequential <= 32 inner positions)",
    docs: "The accumulator has 8 rows x 32 columns x 4 registers = 1024 slots. The positions \
           inner to the outermost reduced Time axis are buffered: Interleaved needs \
           align_up(Row, 8) x inner <= 1024 (inner <= 128), Sequential align_up(packet, 32) x \
           inner <= 1024 (inner <= 32). Move the reduced axis inward or shrink the inner axes. \
           The output shapes of each mode are CON-015/CON-016.",
    bad: "axes![M = 256, N = 8, K = 64]; ..align::<m![K / 16, M], m![K % 16 # 32], _, _>(&trf)\
          .contract::<m![1]>().accumulate::<m![M], m![N]>(AccumulationKind::Interleaved)",
    good: "axes![M = 256, N = 8, K = 64]; ..align::<m![M, K / 16], m![K % 16 # 32], _, _>(&trf)\
           .contract::<m![1]>().accumulate::<m![M], m![N]>(AccumulationKind::Interleaved)",
    manual: "L4409, L4432-L4434, L4534-L4538",
    generations: Generations::Both,
};

/// CON-014 on an `.accumulate()` of the right shape: the buffer positions inner to the
/// outermost reduced Time axis.
pub(super) fn check(cx: &FnContext<'_>, a: &Accumulate<'_>, out: &mut Vec<Diagnostic>) {
    let Some(first) = a.reduced.iter().position(|&x| x) else {
        return;
    };
    let (r, t, q, mode) = (a.row, a.time, a.packet, a.mode);
    let rows = cx.target.trf_rows;
    let cols = cx.target.reducer_columns;
    let outer = &t.dims[..first];
    let mut inner: u64 = 1;
    let mut inner_names = Vec::new();
    for d in &a.out_time.dims {
        if outer.iter().any(|o| overlaps(d, o)) {
            continue;
        }
        inner = inner.saturating_mul(d.extent());
        inner_names.push(d.to_expr());
    }
    let slots = rows
        .saturating_mul(cols)
        .saturating_mul(cx.target.accumulator_registers);
    let (per, formula) = match mode {
        Mode::Interleaved => (
            r.size.div_ceil(rows).saturating_mul(rows),
            "align_up(Row, 8)",
        ),
        Mode::Sequential => (
            q.size.div_ceil(cols).saturating_mul(cols),
            "align_up(packet, 32)",
        ),
    };
    let used = per.saturating_mul(inner);
    if used <= slots {
        return;
    }
    out.push(at_arg(
        &CON_014,
        a.step,
        at(a.step, 0, Slot::Time),
        format!(
            "{mode:?} accumulation buffers the {inner} positions inner to the reduced `{}` ({}); \
             {formula} × {inner} = {per} × {inner} = {used} slots, over the {slots}-slot \
             accumulator ({rows} rows × {cols} columns × {} registers): at most {} inner positions",
            t.dims[first].to_expr(),
            if inner_names.is_empty() {
                "none".to_string()
            } else {
                inner_names.join(" × ")
            },
            cx.target.accumulator_registers,
            slots / per.max(1)
        ),
    ));
}

#[cfg(test)]
mod tests {
    use super::super::tests::codes;
    use crate::target::RNGD;

    #[test]
    fn accumulator_slots_golden() {
        // L4409: 8 rows x 32 columns x 4 registers = 1024 slots; Interleaved 128 inner (L4434),
        // Sequential 32 (L4434, L4537).
        let slots = RNGD.trf_rows * RNGD.reducer_columns * RNGD.accumulator_registers;
        assert_eq!(slots, 1024);
        assert_eq!(slots / RNGD.trf_rows, 128);
        assert_eq!(slots / RNGD.reducer_columns, 32);
    }

    #[test]
    fn manual_reducer_examples() {
        // L4453-L4479: inner 4 x 4 = 16 <= 128; L4495-L4523: 4 x 8 = 32 <= 32.
        let inter = include_str!("../../../../fixtures/manual/4453_reducer_interleaved.rs");
        let seq = include_str!("../../../../fixtures/manual/4495_reducer_sequential.rs");
        assert!(codes(inter).is_empty());
        assert!(codes(seq).is_empty());
        // M = 8 doubles the Sequential inner positions to 64 > 32.
        let seq8 = seq.replace("M = 4", "M = 8");
        assert_eq!(codes(&seq8), vec!["CON-014"]);
        // M = 64 gives 64 x 4 = 256 > 128 Interleaved inner positions.
        let inter64 = inter.replace("M = 4", "M = 64");
        assert_eq!(codes(&inter64), vec!["CON-014"]);
    }
}
