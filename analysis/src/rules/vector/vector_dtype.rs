//! VEC-001: every Vector Engine lane is a 32-bit value, so `vector_init()` takes i32 or f32
//! streams only (`D: VeScalar`). A lower-precision stream must be widened before it reaches the
//! Vector Engine, by a casting fetch or by the Contraction Engine; when the fetch that feeds it
//! reads the stream's type, the fix fetches the widened type instead.

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Dtype, Engine, Step};
use crate::rule::{Generations, Rule, Status};

pub const VEC_001: Rule = Rule {
    code: "VEC-001",
    name: "vector-dtype",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The Vector Engine takes i32 or f32 streams only (`D: VeScalar`)",
    docs: "`vector_init()` requires `D: VeScalar`, i.e. i32 or f32: every Vector Engine lane is a \
           32-bit value. Lower-precision data must be widened before it reaches the Vector Engine, \
           either by a casting fetch (`fetch::<f32, ..>()` from bf16, `fetch::<i32, ..>()` from \
           i8, subject to the fetch cast limits) or by the Contraction Engine, whose accumulator \
           is already i32/f32.",
    bad: "ctx.main.begin(a.view()).fetch::<bf16, m![1], m![A % 16]>().collect::<..>().vector_init()",
    good: "ctx.main.begin(a.view()).fetch::<f32, m![1], m![A % 8]>().collect::<..>().vector_init()",
    manual: "L3041, L4551, L4563-L4565, L5254",
    generations: Generations::Both,
};

/// VEC-001: the dtype entering `vector_init()`.
pub(super) fn check(before: &[Step], step: &Step, out: &mut Vec<Diagnostic>) {
    if step.output.is_none() {
        // Not a stream `vector_init()` takes: KRN-001.
        return;
    }
    let Some(d) = step.input.as_ref().and_then(|t| t.dtype) else {
        return;
    };
    if d.is_ve_scalar() {
        return;
    }
    let msg = format!(
        "the Vector Engine computes on i32 or f32 lanes only; this stream is {d}: widen it \
         before `vector_init()` (a casting fetch or the Contraction Engine)"
    );
    // With the widening fetch as the fix, the fetch's element type is the primary span and
    // `vector_init` related; without it, `vector_init`.
    let fix = d.widened().zip(
        before
            .iter()
            .rev()
            .find(|s| s.engine == Some(Engine::Fetch))
            .and_then(|f| f.generics.first())
            .filter(|g| Dtype::from_name(g.text.trim()) == Some(d)),
    );
    let diag = match fix {
        Some((w, g)) => Diagnostic::new(&VEC_001, g.span, msg)
            .with_related(
                step.span,
                format!("the {d} stream enters the Vector Engine here"),
            )
            .with_edit(
                format!("fetch as {w} (a widening fetch cast; check the fetch size)"),
                false,
                g.span,
                w.to_string(),
            ),
        None => Diagnostic::new(&VEC_001, step.span, msg),
    };
    out.push(diag);
}
