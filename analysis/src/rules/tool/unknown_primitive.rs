//! VL-004: a tensor type or method outside the library's API (the manual's pseudo-API) is
//! reported once by the model builder, and the rest of its chain is not typed.

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::problem::{Primitive, Unknown};
use crate::rule::{Generations, Rule, Status};

pub const VL_004: Rule = Rule {
    code: "VL-004",
    name: "unknown-primitive",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "A tensor method or type outside the furiosa_visa_std API is reported once and not checked",
    docs: "The manual's Kernel Examples pages use a pseudo-API (`TuTensor`, `.reduce_add(axis: I)`, \
           `begin_interleaved().fetch(&a, &b)`) that the real crate does not have (constraints.md §22 \
           A-13). visa-lint reports each such call once and does not type the rest of its chain.",
    bad: "let t: TuTensor<..> = x.reduce_add(axis: I);",
    good: "ctx.main.begin(x.view()).fetch::<..>().collect::<..>().vector_init() /* ... */",
    manual: "L7166-L7346",
    generations: Generations::Differs(
        "each library's API is its own list of primitives, the `#[primitive]` names of its \
         vendor crate (`analysis/src/library/*.primitives`; library-v06.md §7): a manual method \
         that furiosa-opt-std 0.6 removed (§3.1) is unknown there, and one of its own is unknown \
         to `furiosa_visa_std`",
    ),
};

/// The diagnostic of a type or method the model builder does not know (VL-004).
pub fn unknown_primitive(u: &Unknown) -> Diagnostic {
    let what = match &u.primitive {
        Primitive::Type(name) => format!("type `{name}`"),
        Primitive::Method(name) => format!("method `.{name}()`"),
        Primitive::WithoutTensors(name) => format!("`.{name}()` without tensor arguments"),
    };
    Diagnostic::new(
        &VL_004,
        u.at,
        format!(
            "unknown primitive: {what} is not part of the furiosa_visa_std API visa-lint knows; it is not checked"
        ),
    )
}
