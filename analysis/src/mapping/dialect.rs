//! The forms of the mapping grammar that only one generation of the vendor's library accepts.
//!
//! The parser ([`super::parse`]) is context-free and accepts the union of both grammars: the
//! manual's (`furiosa_visa_std`, whose parser is `furiosa-mapping/src/parser/parser.lalrpop` at
//! dadf9ca) and furiosa-opt-std 0.3–0.6's (`furiosa-mapping-macro/src/parser/parser.lalrpop` at
//! ebb846a). [`dialect_forms`] lists what a written mapping uses of either side, so that a rule
//! that knows which library a crate is written against can refuse the other's forms.

use super::ast::{Expr, Op, PadKind, SizeExpr};
use crate::diagnostic::Span;
use crate::library::Generation;

/// A written form that only one [`Generation`] accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DialectForm {
    /// `N` (N >= 2) as a term: a broadcast (`parser.lalrpop:78` at ebb846a); the manual's
    /// parser rejects every number but `1` (`parser.lalrpop:58` at dadf9ca).
    Broadcast,
    /// A padding kind written `#{*}`, `#{!}` or `#{0}` (`lexer.rs:175-214` at ebb846a); the
    /// manual writes only `#`.
    PadMarker(PadKind),
    /// An operator's size escaped as `{ … }` (`parser.lalrpop:95-100` at ebb846a, since 0.4);
    /// the manual's operators take an integer literal.
    EscapedSize,
    /// An operator's size written `X::SIZE`, `( … )` or a constant's name (`# NUM_CHIPS`,
    /// manual L1079) without braces: visa-lint has always read it for the manual's library, but furiosa-opt-std's parser does not (`::` lexes as
    /// two colons, `lexer.rs:216-221`, `furiosa-mapping/tests/escaped_const.rs:12-13` at
    /// ebb846a); it writes `{ X::SIZE }`.
    UnescapedSize,
}

impl DialectForm {
    /// The library whose parser accepts this form (the other one rejects it).
    pub fn accepted_by(self) -> Generation {
        match self {
            DialectForm::UnescapedSize => Generation::VisaStd,
            DialectForm::Broadcast | DialectForm::PadMarker(_) | DialectForm::EscapedSize => {
                Generation::OptStd
            }
        }
    }

    /// What the form is, in a few words a diagnostic can quote.
    pub fn text(self) -> &'static str {
        match self {
            DialectForm::Broadcast => "a bare number is a broadcast",
            DialectForm::PadMarker(PadKind::Bottom) => "`#{!}` is inaccessible padding",
            DialectForm::PadMarker(PadKind::Zero) => "`#{0}` is padding that reads as zero",
            DialectForm::PadMarker(PadKind::Top) => "`#{*}` is top padding, written `#`",
            DialectForm::EscapedSize => "`{ … }` is an escaped size",
            DialectForm::UnescapedSize => {
                "a size written `X::SIZE`, `( … )` or a constant's name needs braces: `{ X::SIZE }`"
            }
        }
    }
}

/// Every form of `e` that only one library accepts, with its span, in the order written.
/// Spans: the number of a broadcast, the operator of a padding marker (`#{!}`), the braces of
/// an escaped size, the whole argument of an unescaped `X::SIZE` or `( … )` size. A
/// parenthesised lone literal (`# (8)`) is read as the literal and not listed. Linear
/// combinations (`$( … )`, in neither parser) are searched for forms in their terms only.
pub fn dialect_forms(e: &Expr) -> Vec<(DialectForm, Span)> {
    let mut out = Vec::new();
    walk(e, &mut out);
    out
}

fn walk(e: &Expr, out: &mut Vec<(DialectForm, Span)>) {
    match e {
        Expr::Broadcast(_, s) => out.push((DialectForm::Broadcast, *s)),
        Expr::Identity(_) | Expr::Symbol(_) | Expr::Escape(..) => {}
        Expr::Group(inner, _) => walk(inner, out),
        Expr::Pair(terms, _) => terms.iter().for_each(|t| walk(t, out)),
        Expr::LinComb(terms, _) => terms.iter().for_each(|(t, _)| walk(t, out)),
        Expr::Op {
            inner,
            op,
            op_span,
            arg,
            ..
        } => {
            walk(inner, out);
            if let Op::Pad { kind, marked: true } = op {
                out.push((DialectForm::PadMarker(*kind), *op_span));
            }
            match arg {
                SizeExpr::Escaped(_, s) => out.push((DialectForm::EscapedSize, *s)),
                SizeExpr::SizeOf(..) | SizeExpr::Bin(..) | SizeExpr::Const(_) => {
                    out.push((DialectForm::UnescapedSize, arg.span()))
                }
                SizeExpr::Lit(..) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::parse::parse_mapping;

    fn forms(body: &str) -> Vec<(DialectForm, &str)> {
        let e = parse_mapping(body).expect("parses");
        dialect_forms(&e)
            .into_iter()
            .map(|(f, s)| (f, &body[s.range()]))
            .collect()
    }

    #[test]
    fn dialect_forms_list_each_generation_specific_form_at_its_span() {
        use DialectForm::*;
        assert_eq!(forms("A, B # 16"), []);
        assert_eq!(forms("Feat, 2"), [(Broadcast, "2")]);
        assert_eq!(
            forms("1 #{!} 32, A #{0} 8, B #{*} 4"),
            [
                (PadMarker(PadKind::Bottom), "#{!}"),
                (PadMarker(PadKind::Zero), "#{0}"),
                (PadMarker(PadKind::Top), "#{*}"),
            ]
        );
        assert_eq!(
            forms("A # { B::SIZE / 8 }, C / {N}"),
            [(EscapedSize, "{ B::SIZE / 8 }"), (EscapedSize, "{N}")]
        );
        assert_eq!(
            forms("A # B::SIZE, [C, 3] # (B::SIZE * 2)"),
            [
                (UnescapedSize, "B::SIZE"),
                (Broadcast, "3"),
                (UnescapedSize, "(B::SIZE * 2)"),
            ]
        );
        // A constant's name, as the manual writes `m![1 # NUM_CHIPS]` (L1079).
        assert_eq!(
            forms("A # NUM_CHIPS, C % config::LANES"),
            [
                (UnescapedSize, "NUM_CHIPS"),
                (UnescapedSize, "config::LANES"),
            ]
        );
    }

    #[test]
    fn each_form_belongs_to_one_library_and_has_a_text() {
        assert_eq!(DialectForm::Broadcast.accepted_by(), Generation::OptStd);
        assert_eq!(
            DialectForm::UnescapedSize.accepted_by(),
            Generation::VisaStd
        );
        assert_eq!(
            DialectForm::PadMarker(PadKind::Bottom).accepted_by(),
            Generation::OptStd
        );
        assert_eq!(
            DialectForm::Broadcast.text(),
            "a bare number is a broadcast"
        );
    }
}
