//! CAP-010: a `to_trf` load into a region (`TrfAddress::FirstHalf`, `SecondHalf` or `Full`)
//! that overlaps the region of a TRF tensor used later overwrites that tensor.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::model::{Chain, Method, Step};
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
           after it; use the other half, or finish with the first tensor before loading.",
    bad: "let w0 = ..to_trf(TrfAddress::Full);\nlet w1 = ..to_trf(TrfAddress::FirstHalf);\n..align::<_, _, _, _>(&w0)",
    good: "let w0 = ..to_trf(TrfAddress::FirstHalf);\nlet w1 = ..to_trf(TrfAddress::SecondHalf);\n..align::<_, _, _, _>(&w0)",
    manual: "L304, L4151-L4159",
    generations: Generations::VisaStdOnly(
        "furiosa-opt-std 0.6 has no `TrfAddress`: the scheduler assigns the TRF regions \
         (CHANGES.md:26-32; `docs/src/computing-tensors/register-files.md:122`)",
    ),
};

/// A `to_trf` load: its chain index, binding and region.
struct TrfLoad<'a> {
    chain: usize,
    step: &'a Step,
    binding: Option<&'a str>,
    region: &'static str,
}

/// Whether `name` is a word of `text`.
fn mentions(text: &str, name: &str) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w == name)
}

/// Every `to_trf` load of the function whose region is written, in chain order.
fn loads<'a>(cx: &FnContext<'a>) -> Vec<TrfLoad<'a>> {
    let mut loads = Vec::new();
    for (i, c) in cx.model.chains.iter().enumerate() {
        for step in c.steps.iter().filter(|s| s.method == Method::ToTrf) {
            let text = step
                .args
                .first()
                .map_or_else(String::new, |a| a.value_text().into_owned());
            let region = if text.contains("FirstHalf") {
                "FirstHalf"
            } else if text.contains("SecondHalf") {
                "SecondHalf"
            } else if text.contains("Full") {
                "Full"
            } else {
                continue;
            };
            loads.push(TrfLoad {
                chain: i,
                step,
                binding: c.binding.as_deref(),
                region,
            });
        }
    }
    loads
}

/// CAP-010: a `to_trf` into a region that overlaps a TRF tensor used later.
pub(super) fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let chains = &cx.model.chains;
    let loads = loads(cx);
    let uses = |c: &Chain, name: &str| {
        c.steps
            .iter()
            .any(|s| s.args.iter().any(|a| mentions(&a.text, name)))
    };
    for (k, first) in loads.iter().enumerate() {
        let Some(name) = first.binding else { continue };
        // The first tensor's uses, until its name is bound again.
        let mut last_use = None;
        for (j, c) in chains.iter().enumerate().skip(first.chain + 1) {
            if uses(c, name) {
                last_use = Some((j, c));
            }
            if c.binding.as_deref() == Some(name) {
                break;
            }
        }
        let Some((last, used)) = last_use else {
            continue;
        };
        for second in loads.iter().skip(k + 1) {
            if second.chain >= last {
                break;
            }
            let overlap =
                first.region == "Full" || second.region == "Full" || first.region == second.region;
            if !overlap {
                continue;
            }
            let use_span = used
                .steps
                .iter()
                .find(|s| s.args.iter().any(|a| mentions(&a.text, name)))
                .map_or(used.span, |s| s.span);
            out.push(report(first, second, name, use_span));
            break;
        }
    }
}

/// CAP-010 on `second`, a load that overwrites `name`, loaded by `first` and used at `use_span`.
fn report(first: &TrfLoad<'_>, second: &TrfLoad<'_>, name: &str, use_span: Span) -> Diagnostic {
    // The region argument is what the fix changes (the call when it is not written).
    let region_at = |l: &TrfLoad<'_>| l.step.args.first().map_or(l.step.span, |a| a.span);
    Diagnostic::new(
        &CAP_010,
        region_at(second),
        format!(
            "this TrfAddress::{} load overlaps TrfAddress::{} of `{name}`, which is still \
             used later: {}; the second load overwrites it",
            second.region,
            first.region,
            if first.region == "Full" || second.region == "Full" {
                "Full dedicates the whole TRF to one tensor".to_string()
            } else {
                format!("both use the {} of the TRF", first.region)
            }
        ),
    )
    .with_related(
        region_at(first),
        format!("`{name}` is loaded into TrfAddress::{} here", first.region),
    )
    .with_related(use_span, format!("`{name}` is used here"))
}
