//! The tool's own diagnostics: problems in the text itself rather than hardware rules. The
//! layers below find most of them and record them as data (a mapping visa-lint does not
//! evaluate, an unknown primitive of the model, a file nested too deep); the functions of its
//! files report them.
//!
//! Each rule is one file, named after the rule, holding its declaration, documentation and the
//! functions that report it; the constructors other modules call are re-exported here. This
//! file only says which rule reports each problem the layers below record.

mod construct_not_analysed;
mod library_version_checked_as_nearest;
mod mapping_syntax;
mod name_not_analysed;
mod nesting_too_deep;
mod size_overflow;
mod unknown_primitive;
mod unsupported_mapping_notation;
mod unused_suppression;

pub use construct_not_analysed::{VL_009, generic_not_instantiated, macro_not_expanded};
pub use library_version_checked_as_nearest::{VL_010, library_checked_as_nearest};
pub use mapping_syntax::{VL_001, mapping_form_of_other_library};
pub use name_not_analysed::VL_008;
pub use nesting_too_deep::{VL_005, nesting_too_deep};
pub use size_overflow::VL_003;
pub use unknown_primitive::{VL_004, unknown_primitive};
pub use unsupported_mapping_notation::VL_002;
pub use unused_suppression::VL_006;

use crate::diagnostic::Diagnostic;
use crate::mapping::parse::ParseProblem;
use crate::mapping::problem::Unevaluated;
use crate::model::problem::NotFollowed;
use crate::rule::Rule;

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    VL_001, VL_002, VL_003, VL_004, VL_005, VL_006, VL_008, VL_009, VL_010,
];

/// The diagnostic of a mapping visa-lint does not evaluate (VL-001, VL-002, VL-003, VL-005,
/// VL-008), as parsing or lowering found it.
pub fn mapping_diagnostic(p: &Unevaluated) -> Diagnostic {
    match p {
        Unevaluated::Parse(p) => match p {
            ParseProblem::Syntax(at, msg) => mapping_syntax::syntax(*at, msg),
            ParseProblem::Unsupported(at, msg) => {
                unsupported_mapping_notation::unsupported(*at, msg)
            }
            ParseProblem::Overflow(at, msg) => size_overflow::literal(*at, msg),
            ParseProblem::TooDeep(at, msg) => nesting_too_deep::mapping(*at, msg),
        },
        Unevaluated::NotRead { name, from, others } => {
            name_not_analysed::not_read(name, from, *others)
        }
        Unevaluated::PairOverflow { at, left, right } => size_overflow::pair(*at, *left, *right),
        Unevaluated::LinCombOverflow { at } => size_overflow::lin_comb(*at),
        Unevaluated::SizeArithmetic { at, op } => size_overflow::size_arithmetic(*at, *op),
        Unevaluated::LayoutTooDeep { at, limit } => nesting_too_deep::layout(*at, *limit),
        Unevaluated::AliasesTooDeep { at, name, limit } => {
            nesting_too_deep::aliases(*at, name, *limit)
        }
        Unevaluated::NamedConst { name } => name_not_analysed::named_const(name),
        Unevaluated::TypeForm { name, why } => name_not_analysed::type_form(name, why),
        Unevaluated::SizeOfTooDeep { name, limit } => nesting_too_deep::size_of(name, *limit),
    }
}

/// The diagnostic of a construct the model does not follow (VL-009).
pub fn not_followed(p: &NotFollowed) -> Diagnostic {
    match p {
        NotFollowed::Lost { at, what, used } => construct_not_analysed::lost(*at, what, *used),
        NotFollowed::InMacro { at, name, method } => {
            construct_not_analysed::in_macro(*at, name, method)
        }
        NotFollowed::MacroGiven { at, name, given } => {
            construct_not_analysed::macro_given(*at, name, given)
        }
        NotFollowed::AddressCall { at, name, why } => {
            construct_not_analysed::address_call(*at, name, why.as_deref())
        }
        NotFollowed::Value { at, text, why } => construct_not_analysed::value(*at, text, why),
        NotFollowed::Iterations {
            at,
            var,
            count,
            budget,
        } => construct_not_analysed::iterations(*at, var, *count, *budget),
    }
}
