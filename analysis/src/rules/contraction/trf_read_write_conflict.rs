//! CON-021: 64-byte TRF reads occupy both bank columns on every cache miss and stall a
//! concurrent load of the other TRF half by the sub context.

use super::align::{Align, TrfSide};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Method, Tu};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const CON_021: Rule = Rule {
    code: "CON-021",
    name: "trf-read-write-conflict",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "64-byte TRF reads block a concurrent StoTRF load into the other TRF half",
    docs: "A 64-byte reg_read_size occupies both bank columns, so each TRF cache miss of the \
           main-context read stalls a concurrent sub-context StoTRF write (reads win). Reported \
           when a function double-buffers the TRF (a `to_trf` into FirstHalf/SecondHalf on the \
           sub context) while aligning with 64-byte reads; reads of at most 32 bytes that \
           alternate the bank columns avoid the conflict.",
    bad: "sub: ..to_trf(TrfAddress::SecondHalf); main: ..align::<m![M], m![K], _, _>(&w) // 64-B reads",
    good: "sub: ..to_trf(TrfAddress::SecondHalf); main: ..align::<m![M, K / 16], m![K % 16 # 32], _, _>(&w)",
    manual: "L4181-L4199",
    generations: Generations::VisaStdOnly(
        "it needs a `to_trf` into `TrfAddress::FirstHalf` or `SecondHalf`, and furiosa-opt-std 0.6 \
         has no `TrfAddress`: its scheduler picks the TRF half (CHANGES.md:26-32; \
         `docs/src/computing-tensors/register-files.md:122`)",
    ),
};

/// CON-021 on an `.align()` of the main context that reads 64 bytes of the TRF at once.
pub(super) fn check(
    cx: &FnContext<'_>,
    a: &Align<'_>,
    side: &TrfSide<'_>,
    out: &mut Vec<Diagnostic>,
) {
    if a.step.context != Some(Tu::Main) {
        return;
    }
    let Some(load) = cx
        .model
        .chains
        .iter()
        .filter(|c| c.binding.as_deref() != Some(side.var.name.as_str()))
        .flat_map(|c| c.steps.iter())
        .find(|s| {
            s.method == Method::ToTrf
                && s.context == Some(Tu::Sub)
                && s.args.first().is_some_and(|a| {
                    a.value_text().contains("FirstHalf") || a.value_text().contains("SecondHalf")
                })
        })
    else {
        return;
    };
    let mac = cx.target.mac_width_bytes;
    out.push(
        Diagnostic::new(
            &CON_021,
            a.step.span,
            format!(
                "reg_read_size is {mac} bytes: each TRF cache miss occupies both bank columns \
                 and stalls the concurrent StoTRF load into the other TRF half (reads win); \
                 reads of at most 32 bytes that alternate the bank columns avoid the conflict"
            ),
        )
        .with_related(load.span, "the concurrent TRF load"),
    );
}
