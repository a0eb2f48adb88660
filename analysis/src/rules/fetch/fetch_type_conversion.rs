//! FET-004: the fetch adapter converts only the type pairs of its table (`D: FetchCast<D2>`).
//! A fetch of the manual's library is checked against the Fetch Adapter's table of the
//! target; under furiosa-opt-std 0.6 each adapter (`fetch_cast`, `fetch_zero_point_sub`,
//! `fetch_table_lookup`) is checked where it is written against its own stage's table, and
//! the message names the stage that does convert the pair, if any.

use super::adapter_stage::{AdapterCast, stage_of};
use crate::diagnostic::{Diagnostic, Severity};
use crate::library::{Conversions, Stage};
use crate::model::{Adapter, Dtype, Method, Step, written};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const FET_004: Rule = Rule {
    code: "FET-004",
    name: "fetch-type-conversion",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The fetch adapter converts only the listed type pairs (`D: FetchCast<D2>`)",
    docs: "On RNGD the fetch adapter converts i4 → i5/i32, i8 → i9/i32, i16 → i32, f8e4m3/f8e5m2 \
           → f32, bf16 → f32, f16 → f32 and f32 → bf16; keeping the type is always allowed. \
           RNGD-S adds i4 → i9, i16 → i9 and f8 → bf16. Any other pair does not implement \
           `FetchCast`. Fetch a supported type and convert later (the Vector Engine or the Cast \
           Engine), or store the tensor in a type that converts directly. furiosa-opt-std 0.6 \
           gives each adapter stage its own table, on either chip, and visa-lint checks each \
           adapter where it is written: `fetch_cast` keeps the type or widens i4/i8/i16 to i32 \
           and f8e4m3/f8e5m2/bf16 to f32, or narrows f32 to bf16 (no f16, no i5/i9); \
           `fetch_zero_point_sub` makes i5 from i4 and i9 from i8 only; `fetch_table_lookup` \
           decodes f4e2m1 to either 8-bit float and either 8-bit float to bf16.",
    bad: "ctx.main.begin(a.view()).fetch::<f32, m![A / 8], m![A % 8]>() // a: i8",
    good: "ctx.main.begin(a.view()).fetch::<i32, m![A / 8], m![A % 8]>() // a: i8",
    manual: "L1962-L1977, L1724, L2116",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 splits the conversions by stage, one trait each, bound where the \
         adapter is called (`furiosa-opt-std/src/engine/fetch_adapter.rs:209-245,307-313`): \
         `fetch_cast` takes `FetchCast`'s pairs (identity, i4/i8/i16 → i32, f8e4m3/f8e5m2/bf16 → \
         f32, f32 → bf16; no f16 and no RNGD-S extras, `furiosa-opt-std/src/cast.rs:20-35`), \
         `fetch_zero_point_sub` `FetchZeroPointSub`'s i4 → i5 and i8 → i9 (`cast.rs:83-108`), \
         `fetch_table_lookup` `TableLookup`'s f4e2m1 → f8e4m3/f8e5m2 and f8 → bf16 \
         (`cast.rs:43-74`); visa-lint checks each adapter against its own table",
    ),
};

/// FET-004 on a fetch of the manual's library: its input and output types against the Fetch
/// Adapter's table of the target.
pub(super) fn check(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let (Some(from), Some(to)) = (
        step.input.as_ref().and_then(|t| t.dtype),
        step.output.as_ref().and_then(|t| t.dtype),
    ) else {
        return;
    };
    let Some((stage, _)) = stage_of(&cx.conversions(), &step.method) else {
        return;
    };
    if stage.converts(from, to) {
        return;
    }
    let span = if step.method == Method::Fetch {
        written(step, 0).map_or(step.span, |a| a.span)
    } else {
        step.span
    };
    out.push(Diagnostic::new(
        &FET_004,
        span,
        format!(
            "the {} fetch adapter cannot convert {from} to {to}: {}",
            cx.target.name,
            options(stage, from)
        ),
    ));
}

/// FET-004 under furiosa-opt-std 0.6: one adapter's conversion against its own stage's table,
/// from the stream it receives to the type it names.
pub(super) fn check_adapter(
    conv: &Conversions<'_>,
    adapter: &Adapter,
    cast: &AdapterCast<'_, '_>,
    out: &mut Vec<Diagnostic>,
) {
    let AdapterCast {
        stage,
        name,
        arg,
        from,
        to,
    } = *cast;
    if stage.converts(from, to) {
        return;
    }
    // The fetch stage that does convert the pair, if any.
    let elsewhere = [
        (conv.fetch_cast, "fetch_cast"),
        (conv.zero_point_sub, "fetch_zero_point_sub"),
        (conv.table_lookup, "fetch_table_lookup"),
    ]
    .into_iter()
    .find(|(s, _)| from != to && s.converts(from, to))
    .map_or(String::new(), |(_, other)| {
        format!("; {from} → {to} is `{other}`'s")
    });
    out.push(
        Diagnostic::new(
            &FET_004,
            arg.span,
            format!(
                "`{name}` cannot convert {from} to {to}: {}{elsewhere}",
                options(stage, from)
            ),
        )
        .with_related(adapter.span, format!("the `{name}` stage")),
    );
}

/// What `from` converts to in a stage, for messages.
fn options(stage: Stage<'_>, from: Dtype) -> String {
    let list: Vec<&str> = stage.targets(from).iter().map(|d| d.as_str()).collect();
    match (list.is_empty(), stage.identity) {
        (true, true) => format!("{from} can only be fetched as {from}"),
        (true, false) => format!("it converts no {from}"),
        (false, true) => format!("{from} converts to {} (or stays {from})", list.join(", ")),
        (false, false) => format!("{from} converts to {} only", list.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use crate::library::Generation;
    use crate::model::Dtype;

    fn dtype(name: &str) -> Dtype {
        Dtype::from_name(name).expect("an element type")
    }
    use crate::target::RNGD;

    #[test]
    fn rngd_type_cast_table_l1962() {
        let stage = Generation::VisaStd.conversions(&RNGD).fetch_cast;
        let converts = |a, b| stage.converts(a, b);
        // L1962-L1971: the RNGD conversion table.
        for (a, b) in [
            ("i4", "i5"),
            ("i4", "i32"),
            ("i8", "i9"),
            ("i8", "i32"),
            ("i16", "i32"),
            ("f8e4m3", "f32"),
            ("f8e5m2", "f32"),
            ("bf16", "f32"),
            ("f16", "f32"),
            ("f32", "bf16"),
            ("i8", "i8"),
            ("f8", "f32"),
        ] {
            assert!(converts(dtype(a), dtype(b)), "{a} -> {b}");
        }
        // L1972-L1977: RNGD-S-only conversions are not RNGD's.
        for (a, b) in [
            ("i4", "i9"),
            ("i16", "i9"),
            ("f8e4m3", "bf16"),
            ("i8", "f32"),
        ] {
            assert!(!converts(dtype(a), dtype(b)), "{a} -> {b}");
        }
    }
}
