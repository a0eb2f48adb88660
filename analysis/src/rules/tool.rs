//! The tool's own diagnostics: problems in the text itself rather than hardware rules. The
//! layers below find most of them and record them as data (a mapping visa-lint does not
//! evaluate, an unknown primitive of the model, a file nested too deep); the functions at the
//! end of this module report them.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::library::{Generation, Library};
use crate::mapping::ast::BinOp;
use crate::mapping::dialect::DialectForm;
use crate::mapping::parse::ParseProblem;
use crate::mapping::problem::Unevaluated;
use crate::model::problem::{NotFollowed, Primitive, Unknown};
use crate::rule::{Generations, Rule, Status};
use crate::syntax::limits::TooDeep;

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

pub const VL_002: Rule = Rule {
    code: "VL-002",
    name: "unsupported-mapping-notation",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "Notation the manual uses only in prose (`@`, `!`, `*`, `I: 2`) is not evaluated",
    docs: "The manual writes a few mapping notations only in prose, pseudo-code or compiler dumps \
           (offsets `A @ 1024`, `A!4`, outer sums `B * A`, sizes `I: 2`); their meaning is not \
           defined precisely enough to check (constraints.md §22 A-14). visa-lint reports them once \
           and skips every rule that would need the mapping's value.",
    bad: "type E = m![A @ 1024];",
    good: "type E = m![A];",
    manual: "L1876, L2531, L7171, L7785, L7911",
    generations: Generations::Both,
};

pub const VL_003: Rule = Rule {
    code: "VL-003",
    name: "size-overflow",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Mapping sizes must fit in 64 bits",
    docs: "visa-lint computes `SIZE` with checked 64-bit arithmetic, as `usize` const evaluation on \
           the 64-bit host does. A product of axis sizes beyond 2^64 - 1 (or an axis declared that \
           large) is a const-evaluation overflow in the vendor compiler too.",
    bad: "axes![A = 4294967296, B = 4294967296]; type E = m![A, B];",
    good: "axes![A = 4294967296, B = 1024]; type E = m![A, B];",
    manual: "L767, L873",
    generations: Generations::Both,
};

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

pub const VL_005: Rule = Rule {
    code: "VL-005",
    name: "nesting-too-deep",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A file nested deeper than visa-lint's documented limit is reported, not analysed",
    docs: "Before parsing, visa-lint estimates how deep the file's syntax tree nests: every open \
           `(`, `[` or `{`, every operator or `.` of a chained expression and every unclosed `<` \
           count one level. Past 256 levels (no real kernel comes near) the file is not analysed \
           and this diagnostic points at the token where the limit is exceeded; a mapping nested \
           past its own limit of 64 groups or operators is reported the same way. Deeper input \
           would overflow the parser's stack. Split the expression with `let` bindings or type \
           aliases.",
    bad: "let x = ((((((((((((((((((((/* ...300 levels... */ 1))))))))))))))))))));",
    good: "let inner = /* ... */ 1; let x = inner;",
    manual: "none: a limit of the tool, documented in docs/robustness.md",
    generations: Generations::Both,
};

pub const VL_006: Rule = Rule {
    code: "VL-006",
    name: "unused-suppression",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "A `// visa-lint: allow(...)` comment must silence something",
    docs: "`// visa-lint: allow(CODE)` silences a rule on its line (alone on a line, on that line and \
           the next one); `// visa-lint: allow-file(CODE)` in the whole file. CODE is a rule code, a \
           rule name or a family. A suppression that silences nothing is stale: the problem it hid \
           was fixed, or it names the wrong line or a rule that does not exist, and it would hide \
           the next real problem on that line. The fix removes it.",
    bad: "let x = 1; // visa-lint: allow(MAP-001)",
    good: "let x = 1;",
    manual: "(the tool's own rule)",
    generations: Generations::Both,
};

pub const VL_008: Rule = Rule {
    code: "VL-008",
    name: "name-not-analysed",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "A name comes from a place visa-lint cannot read, so what uses it is not checked",
    docs: "visa-lint resolves names across the crate the way rustc does: `mod` files, `use` paths, \
           globs, renames and re-exports. A name it cannot find while the module glob-imports a \
           crate other than `furiosa_visa_std` (or a module whose file is missing) may come from \
           there: it is not an error, but the mappings that use it cannot be checked, and this \
           note says so once per use instead of letting a clean verdict mean \"nothing was \
           checked\". Declare the axis in the crate (or import it from a module of the crate) to \
           have it checked.",
    bad: "use other_crate::*;\ntype T = m![A];",
    good: "axes![A = 64];\ntype T = m![A];",
    manual: "(the tool's own rule)",
    generations: Generations::Both,
};

pub const VL_009: Rule = Rule {
    code: "VL-009",
    name: "construct-not-analysed",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "A tensor or an address passes through a construct visa-lint does not follow, so what uses it is not checked",
    docs: "visa-lint follows tensors the way rustc types them: through `let` bindings and \
           assignments, blocks, `if`/`match`, loops, `return`, `?`, helper functions (by their \
           signatures, tuples of tensors included), tuple and struct literals, arrays and slices \
           of tensors iterated or indexed, tensors a closure captures or receives through an \
           annotated parameter, and `const fn` addresses. A few forms it does not follow: a \
           tensor passed into a closure through an unannotated parameter, the value of a macro \
           other than `m!`, `axes!` and `i!` (and an engine chain written inside one), a field \
           of a value it cannot type (`self.weights`), an index into something that is not an \
           array of tensors, a destructuring of something that is not a tuple or struct \
           literal, the items of a macro invoked where no `macro_rules!` of the file defines \
           it before (one defined there is expanded and its kernels are checked, each finding \
           reported at the invocation), the result of a function it does not know, and an address computed by a \
           call it cannot evaluate. Values are evaluated as the compiler traces the kernel: a value \
           argument (`SwitchConfig`, `TrfAddress`, an op, a zero point, an address) bound by \
           `let`, named by a `const` of any module or chosen by an `if` on a constant is read \
           as its value, and a `for` loop over a constant range is unrolled (up to 64 body \
           evaluations per function; past that its first and last iterations are checked). A \
           value argument that is a parameter of the function, or an `if` whose arms differ on a \
           condition visa-lint cannot evaluate, and the iterations of a loop past the budget, \
           are reported here too, except a helper's parameter that every call of the helper in the \
           crate gives (followed up through callers that pass their own parameters): each call \
           is checked with its value, so the helper's own note would say something untrue; a \
           `pub` helper, which code outside the crate may call, keeps it. A tensor parameter typed \
           by a type parameter of its function (`fn widen<D: Scalar>(a: &DmTensor<D, ..>)`) is \
           checked as each call instantiates it; when no call of the crate does, the type \
           parameter gets this note. Where such a value is used as a tensor (the receiver of an \
           engine method, the tensor a pass begins from or aligns with), or such an address is \
           passed to `to_dm`, `commit` or `to_hbm`, this note names the construct once, so a \
           clean verdict never silently means that nothing was checked. Annotate the closure's \
           parameter, bind the value with a typed `let`, or compute the address in a `const` \
           (or a `const fn` with a single expression) to have it checked.",
    bad: "let stage = |t| ctx.main.begin(t.view()).fetch::<i8, m![1], m![A % 8]>();",
    good: "let stage = |t: &Input| ctx.main.begin(t.view()).fetch::<i8, m![1], m![A % 8]>();",
    manual: "(the tool's own rule)",
    generations: Generations::Both,
};

pub const VL_010: Rule = Rule {
    code: "VL-010",
    name: "library-version-checked-as-nearest",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "The crate asks for a furiosa-opt-std older than 0.6; it is checked as 0.6, the nearest generation visa-lint models",
    docs: "visa-lint models two generations of the vendor's kernel library: `furiosa_visa_std` \
           0.1, the library the manual documents, and `furiosa-opt-std` 0.6. It reads which one a \
           crate uses from the configuration (`library = \"furiosa-opt-std\"` in \
           `visa-lint.toml`), the dependency in the package's `Cargo.toml`, or the crate's `use` \
           paths. `furiosa-opt-std` 0.2 to 0.5 sit between the two (0.2 and 0.3 still take \
           addresses and `fetch::<D, Time, Packet>`; 0.4 and 0.5 keep the `*_at` forms): their \
           kernels are checked as 0.6, so a method that 0.6 removed is reported as unknown and a \
           rule 0.6 changed is checked as 0.6 checks it. This note says so once per crate, on \
           its root file. Upgrade the dependency to 0.6, or set `library` in `visa-lint.toml` to \
           silence it.",
    bad: "# Cargo.toml\n[dependencies]\nfuriosa-opt-std = \"0.4\"",
    good: "# Cargo.toml\n[dependencies]\nfuriosa-opt-std = \"0.6\"",
    manual: "(the tool's own rule; library-v06.md §6, the vendor's CHANGES.md)",
    generations: Generations::OptStdOnly(
        "it reports a crate asking for a furiosa-opt-std older than the 0.6 visa-lint models; \
         0.2 to 0.5 sit between the two libraries (library-v06.md §6; CHANGES.md:93-173)",
    ),
};

/// VL-010 for a crate whose library is an older `furiosa-opt-std` than the one modelled, at
/// `span` (where the crate root names the library, or its start).
pub fn library_checked_as_nearest(library: &Library, span: Span) -> Option<Diagnostic> {
    let asked = library.older_than_modelled()?;
    let modelled = library.generation.modelled_version();
    Some(Diagnostic::new(
        &VL_010,
        span,
        format!(
            "this crate uses {} {asked} (from {}); visa-lint models {modelled} and checks it as \
             {modelled}: a method or rule that changed since {asked} is checked as {modelled} \
             has it",
            library.generation, library.evidence
        ),
    ))
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

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    VL_001, VL_002, VL_003, VL_004, VL_005, VL_006, VL_008, VL_009, VL_010,
];

/// The diagnostic of a mapping visa-lint does not evaluate (VL-001, VL-002, VL-003, VL-005,
/// VL-008), as parsing or lowering found it.
pub fn mapping_diagnostic(p: &Unevaluated) -> Diagnostic {
    match p {
        Unevaluated::Parse(p) => match p {
            ParseProblem::Syntax(at, msg) => Diagnostic::new(&VL_001, *at, msg.as_str()),
            ParseProblem::Unsupported(at, msg) => Diagnostic::new(&VL_002, *at, msg.as_str()),
            ParseProblem::Overflow(at, msg) => Diagnostic::new(&VL_003, *at, msg.as_str()),
            ParseProblem::TooDeep(at, msg) => Diagnostic::new(&VL_005, *at, msg.as_str()),
        },
        Unevaluated::NotRead { name, from, others } => {
            let more = match others {
                0 => String::new(),
                n => format!(" (or one of {n} other glob imports)"),
            };
            Diagnostic::new(
                &VL_008,
                name.span,
                format!(
                    "`{}` is not declared in this crate; it may come from `{from}`{more}, which visa-lint cannot read, so this mapping is not checked",
                    name.text
                ),
            )
        }
        Unevaluated::PairOverflow { at, left, right } => Diagnostic::new(
            &VL_003,
            *at,
            format!("mapping size overflows 64 bits: {left} × {right} > 2^64 - 1"),
        ),
        Unevaluated::LinCombOverflow { at } => {
            Diagnostic::new(&VL_003, *at, "linear combination size overflows 64 bits")
        }
        Unevaluated::SizeArithmetic { at, op } => {
            let why = match op {
                BinOp::Sub => "is negative",
                BinOp::Div => "divides by zero",
                BinOp::Add | BinOp::Mul => "overflows 64 bits",
            };
            Diagnostic::new(&VL_003, *at, format!("this size {why}"))
        }
        Unevaluated::LayoutTooDeep { at, limit } => Diagnostic::new(
            &VL_005,
            *at,
            format!(
                "mapping nested too deep: its value nests windows, strides and linear \
                 combinations more than {limit} levels (through aliases); visa-lint does not \
                 evaluate it"
            ),
        ),
        Unevaluated::AliasesTooDeep { at, name, limit } => Diagnostic::new(
            &VL_005,
            *at,
            format!(
                "mapping aliases nested too deep: `{name}` escapes aliases that escape aliases \
                 more than {limit} levels down; visa-lint does not evaluate it"
            ),
        ),
        Unevaluated::NamedConst { name } => Diagnostic::new(
            &VL_008,
            name.span,
            format!(
                "`{}` is a constant in an escaped size; visa-lint does not evaluate constants \
                 inside a mapping, so this mapping is not checked",
                name.text
            ),
        ),
        Unevaluated::SizeOfTooDeep { name, limit } => Diagnostic::new(
            &VL_005,
            name.span,
            format!(
                "`{}::SIZE` reaches aliases nested more than {limit} levels deep; visa-lint does \
                 not evaluate it",
                name.text
            ),
        ),
    }
}

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

/// The diagnostic of an item macro invocation whose items are not read (VL-009).
pub fn macro_not_expanded(call: Span, name: &str, reason: &str) -> Diagnostic {
    Diagnostic::new(
        &VL_009,
        call,
        format!(
            "not checked: the items `{name}!` generates: {reason}; visa-lint expands the \
             `macro_rules!` macros a file defines before it invokes them"
        ),
    )
}

/// VL-009 at a type parameter (`generic`, declared at `at`) of the function `name` that types
/// its tensor parameter `param`, when no call of the crate instantiates the function: the
/// rules that read the tensor's element type or mappings skip it.
pub fn generic_not_instantiated(at: Span, name: &str, param: &str, generic: &str) -> Diagnostic {
    Diagnostic::new(
        &VL_009,
        at,
        format!(
            "not checked: `{param}`'s type names `{generic}`, a type parameter of `{name}`, and \
             no call of `{name}` in the crate instantiates it, so the rules that read its \
             element type or mappings skip it; each call that gives `{name}` a tensor is \
             checked with that tensor's type"
        ),
    )
}

/// The diagnostic of a construct the model does not follow (VL-009).
pub fn not_followed(p: &NotFollowed) -> Diagnostic {
    match p {
        NotFollowed::Lost { at, what, used } => Diagnostic::new(
            &VL_009,
            *at,
            format!(
                "not checked: {what}: visa-lint does not follow a tensor through it, so the engine chain that uses it is not checked"
            ),
        )
        .with_related(*used, "used as a tensor here"),
        NotFollowed::InMacro { at, name, method } => Diagnostic::new(
            &VL_009,
            *at,
            format!(
                "not checked: the engine chain inside `{name}!` (`.{method}()`): visa-lint does not read macro bodies other than `m!`, `axes!` and `i!`; write the chain outside the macro and pass its result in to have it checked",
            ),
        ),
        NotFollowed::AddressCall { at, name } => Diagnostic::new(
            &VL_009,
            *at,
            format!(
                "not checked: the address computed by `{name}(..)`: visa-lint evaluates constants and `const fn`s with one expression, not this call, so the rules that need the address (alignment, overlaps) skip it; compute it in a `const` to have it checked"
            ),
        ),
        NotFollowed::Value { at, text, why } => Diagnostic::new(
            &VL_009,
            *at,
            format!(
                "not checked: the value of `{text}` is not known at compile time ({why}), so the rules that read this argument skip it"
            ),
        ),
        NotFollowed::Iterations {
            at,
            var,
            count,
            budget,
        } => Diagnostic::new(
            &VL_009,
            *at,
            format!(
                "not checked: the iterations of this loop between its first and last: its {count} iterations are past the {budget} loop-body evaluations visa-lint makes per function, so only the first and the last value of `{var}` are checked"
            ),
        ),
    }
}

/// The diagnostic of a file nested too deep to analyse (VL-005), found by the pre-scan.
pub fn nesting_too_deep(t: &TooDeep) -> Diagnostic {
    let TooDeep { at, depth, limit } = *t;
    Diagnostic::new(
        &VL_005,
        at,
        format!(
            "nesting too deep: brackets, operators and chained calls reach an estimated depth of \
             {depth} here; visa-lint analyses files nested up to {limit} levels and does not \
             analyse this file"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_too_deep_is_reported_at_the_token_past_the_limit() {
        let text = "fn f() { [[[[[[[[ ]]]]]]]] }";
        let t = crate::syntax::limits::check_nesting_with(text, 5).expect("too deep");
        let d = nesting_too_deep(&t);
        assert_eq!(d.code(), "VL-005");
        assert_eq!(d.span.start, 12);
        expect_test::expect![[r#"
            "nesting too deep: brackets, operators and chained calls reach an estimated depth of 6 here; visa-lint analyses files nested up to 5 levels and does not analyse this file"
        "#]]
        .assert_debug_eq(&d.message);
    }
}
