//! VL-001: the body of a mapping macro follows the mapping grammar of the crate's library. The
//! parser finds a syntax error, and a form only the other generation of the library accepts is
//! found as the crate's library is known; this file reports both.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::library::Generation;
use crate::mapping::dialect::DialectForm;
use crate::rule::{Generations, Rule, Status};

pub const VL_001: Rule = Rule {
    code: "VL-001",
    name: "mapping-syntax",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The body of `m![...]`, `axes![...]` or `i![...]` must follow the mapping grammar",
    docs: "Mapping expressions are sequences of terms separated by `,` (a right-associative \
           pair, outermost first). A term is a symbol, `1`, `[ ... ]`, `{ Alias }` or `$(e: n, ...)`, \
           followed by postfix operators applied left to right: `/ n` (stride), `% n` (modulo), \
           `# n` (pad to n) and `= n` (resize to n). The diagnostic points at the first token the \
           grammar cannot accept. A form of the other generation of the vendor's library (see \
           Applies to) is reported here, at the form; a size that furiosa-opt-std 0.6 needs in \
           braces (`# { B::SIZE }`) is offered as the fix.",
    bad: "type E = m![A / , B];",
    good: "type E = m![A / 8, B];",
    manual: "L583-L1028",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 adds broadcasts (`m![A, 2]`), padding kinds (`#{!}`, `#{0}`, `#{*}`) \
         and escaped sizes (`# { N * 2 }`), and needs braces around a size that is not a literal; \
         `furiosa_visa_std` accepts none of them \
         (`furiosa-mapping-macro/src/parser/parser.lalrpop:47-100`)",
    ),
};

/// VL-001 at the first token the mapping grammar cannot accept.
pub(super) fn syntax(at: Span, msg: &str) -> Diagnostic {
    Diagnostic::new(&VL_001, at, msg)
}

/// A mapping form the crate's library does not accept (VL-001): furiosa-opt-std's broadcasts
/// (`m![A, 2]`), padding kinds (`#{!}`) and escaped sizes (`# {N}`) in a crate on the
/// manual's library, and a size written `X::SIZE` without braces in a crate on
/// furiosa-opt-std, whose parser needs `{ X::SIZE }` (then offered as the fix).
pub fn mapping_form_of_other_library(
    form: DialectForm,
    span: Span,
    written: &str,
    library: Generation,
) -> Diagnostic {
    let message = format!(
        "{}: {} accepts this form, {library} (the library this crate is checked against) \
         rejects it",
        form.text(),
        form.accepted_by()
    );
    let diagnostic = Diagnostic::new(&VL_001, span, message);
    match form {
        DialectForm::UnescapedSize => diagnostic.with_edit(
            format!("escape the size: `{{ {written} }}`"),
            true,
            span,
            format!("{{ {written} }}"),
        ),
        _ => diagnostic,
    }
}
