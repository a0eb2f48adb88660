//! CAP-010: a `to_trf` load into a region (`TrfAddress::FirstHalf`, `SecondHalf` or `Full`)
//! that overlaps the region of a TRF tensor used later overwrites that tensor.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::model::TrfRegion;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const CAP_010: Rule = Rule {
    code: "CAP-010",
    name: "trf-region-overlap",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "Live TRF tensors occupy distinct regions: Full is exclusive, FirstHalf and SecondHalf one each",
    docs: "`TrfAddress::Full` dedicates the whole TRF to one tensor; `FirstHalf` and \
           `SecondHalf` isolate up to two (double buffering). Loading a TRF tensor into a region \
           that overlaps one whose tensor is still used later (`.align(&trf)`) overwrites it \
           silently. Reported at the second `to_trf` when the first tensor's binding is used \
           after it (or returned); a load a helper makes for the tensor it returns \
           (`let w = load(ctx, &w_dm, region)`) counts at the call, with the region the \
           helper's trace with the call's values loads into. A local array that holds the \
           tensor (`let trfs = [&re, &im];`) reads it wherever the array is read (`trfs[i]`). \
           Use the other half, or finish with the first tensor before loading.",
    bad: "let w0 = ..to_trf(TrfAddress::Full);\nlet w1 = ..to_trf(TrfAddress::FirstHalf);\n..align::<_, _, _, _>(&w0)",
    good: "let w0 = ..to_trf(TrfAddress::FirstHalf);\nlet w1 = ..to_trf(TrfAddress::SecondHalf);\n..align::<_, _, _, _>(&w0)",
    manual: "L304, L4151-L4159",
    generations: Generations::VisaStdOnly(
        "furiosa-opt-std 0.6 has no `TrfAddress`: the scheduler assigns the TRF regions \
         (CHANGES.md:26-32; `docs/src/computing-tensors/register-files.md:122`)",
    ),
};

/// A TRF load: a `to_trf` step of the function, or a call of a helper whose trace loads the
/// tensor it returns (`let w = load_weights(ctx, &w_dm, region);`).
struct TrfLoad<'a> {
    /// Where it happens, from its start to its end (the step's method, or the whole call).
    at: Span,
    /// What the diagnostic points at: the region argument (the call's path for a helper's).
    region_at: Span,
    binding: Option<&'a str>,
    region: TrfRegion,
    /// The helper that loads it, for a call.
    helper: Option<String>,
}

/// Every TRF load of the function (of a loop's first pass) whose region is known, in the
/// order they are written.
fn loads<'a>(cx: &FnContext<'a>) -> Vec<TrfLoad<'a>> {
    let model = cx.model;
    let mut loads = Vec::new();
    for c in model
        .chains
        .iter()
        .filter(|c| model.in_first_pass(c.iteration))
    {
        let n = c.steps.len();
        for (k, step) in c.steps.iter().enumerate() {
            let Some(region) = step.trf_region() else {
                continue;
            };
            loads.push(TrfLoad {
                at: step.span,
                region_at: step.args.first().map_or(step.span, |a| a.span),
                binding: c.binding.as_deref().filter(|_| k + 1 == n),
                region,
                helper: None,
            });
        }
    }
    for tv in model
        .tensors
        .iter()
        .filter(|t| model.in_first_pass(t.iteration))
    {
        let Some((region, call_at)) = tv.trf_loaded else {
            continue;
        };
        let Some(call) = model.calls.iter().find(|c| c.span == call_at) else {
            continue;
        };
        loads.push(TrfLoad {
            at: call.expr,
            region_at: call.span,
            binding: Some(tv.name.as_str()),
            region,
            helper: Some(call.callee_name()),
        });
    }
    // A call's loads in the order its result gives them (`let (a, b) = ..`).
    loads.sort_by_key(|l| (l.at.start, l.binding.map(|b| b.len())));
    loads
}

/// The uses of the tensor `name` bound by `load` (its arguments in chains and helper calls, a
/// chain started from it, the function's result), up to the next binding of the name: the
/// last one, when it comes after `after`.
fn used_after(cx: &FnContext<'_>, load: &TrfLoad<'_>, name: &str, after: Span) -> Option<Span> {
    let model = cx.model;
    let rebound = model
        .tensors
        .iter()
        .filter(|t| t.name == name && t.span.start > load.at.end)
        .map(|t| t.span.start)
        .min()
        .unwrap_or(u32::MAX);
    let within = |s: Span| s.start >= after.end && s.start < rebound;
    // Its name, or a local array that holds it (`trfs[i]` of `let trfs = [&a, &b];`).
    let names = model.names_reading(name, load.at.end);
    let mentioned = |text: &str| names.iter().any(|n| crate::syntax::mentions(text, n));
    let in_chains = model
        .chains
        .iter()
        .filter(|c| model.in_first_pass(c.iteration))
        .flat_map(|c| {
            let from = (c.receiver.as_deref() == Some(name))
                .then(|| c.steps.first().map(|s| s.span))
                .flatten();
            c.steps
                .iter()
                .filter(|s| s.args.iter().any(|a| mentioned(&a.text)))
                .map(|s| s.span)
                .chain(from)
        });
    let in_calls = model
        .calls
        .iter()
        .filter(|c| model.in_first_pass(c.iteration))
        .filter(|c| c.reads.iter().any(|(n, _)| names.contains(&n.as_str())))
        .map(|c| c.span);
    let returned = model
        .returned
        .iter()
        .filter(|(n, _)| n == name)
        .map(|(_, s)| *s);
    in_chains
        .chain(in_calls)
        .chain(returned)
        .filter(|s| within(*s))
        .max_by_key(|s| s.start)
}

/// CAP-010: a TRF load into a region that overlaps a TRF tensor used later.
pub(super) fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let loads = loads(cx);
    for (k, first) in loads.iter().enumerate() {
        let Some(name) = first.binding else { continue };
        for second in loads.iter().skip(k + 1) {
            if !first.region.overlaps(second.region) {
                continue;
            }
            // `first` is still used once `second` has loaded over it.
            if let Some(use_span) = used_after(cx, first, name, second.at) {
                out.push(report(first, second, name, use_span));
            }
            break;
        }
    }
}

/// CAP-010 on `second`, a load that overwrites `name`, loaded by `first` and used at `use_span`.
fn report(first: &TrfLoad<'_>, second: &TrfLoad<'_>, name: &str, use_span: Span) -> Diagnostic {
    let (r1, r2) = (first.region.name(), second.region.name());
    let what = match &second.helper {
        Some(h) => format!(
            "`{h}` loads {} into TrfAddress::{r2}, which",
            second
                .binding
                .map_or("its result".to_string(), |b| format!("`{b}`"))
        ),
        None => format!("this TrfAddress::{r2} load"),
    };
    let why = match first.region == TrfRegion::Full || second.region == TrfRegion::Full {
        true => "Full dedicates the whole TRF to one tensor".to_string(),
        false => format!("both use the {r1} of the TRF"),
    };
    let by = first
        .helper
        .as_ref()
        .map(|h| format!(", by `{h}`"))
        .unwrap_or_default();
    Diagnostic::new(
        &CAP_010,
        second.region_at,
        format!(
            "{what} overlaps TrfAddress::{r1} of `{name}`, which is still used later: {why}; \
             the second load overwrites it"
        ),
    )
    .with_related(
        first.region_at,
        format!("`{name}` is loaded into TrfAddress::{r1} here{by}"),
    )
    .with_related(use_span, format!("`{name}` is used here"))
}
