//! What building a function's model finds, as data.
//!
//! The builder knows the pipeline state where a chain goes wrong, so it records what it
//! finds there; it names no rule. The rules layer chooses the rule and writes the message
//! (`rules::model_diagnostic`: [`Kernel`] in `rules/kernel/`, [`Unknown`] in
//! `rules/tool/`).

use super::methods::{Engine, Method};
use super::types::{Kind, Slot};
use crate::diagnostic::Span;

/// One finding of the model builder, in the function's coordinates.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Problem {
    /// The kernel's structure breaks a rule of the pipeline, the contexts or DMA
    /// (constraints.md §2).
    Kernel(Kernel),
    /// A type or method outside the furiosa_visa_std API visa-lint knows: what uses it is not
    /// typed further.
    Unknown(Unknown),
    /// A value from a form the model does not follow: what uses it is not checked.
    NotFollowed(NotFollowed),
    /// What furiosa-opt-std 0.6's compiler refuses in a device function.
    Refused(super::refusals::Refusal),
}

/// A finding about the structure of a kernel. `at` is the method (or function) name token of
/// the offending call unless said otherwise; `method` is its name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// `.method()` of `engine` on a fetched or switched stream: it needs `.collect()` first.
    NeedsCollect {
        at: Span,
        method: Method,
        engine: Engine,
    },
    /// `.method()` on a `BeginTensor`: it needs a fetch first.
    NeedsFetch { at: Span, method: Method },
    /// `.method()` of `engine` after the pipeline reached `after`, which comes later.
    OutOfOrder {
        at: Span,
        method: Method,
        engine: Engine,
        after: Engine,
    },
    /// `.method()` is not a method of `on` (a stream after `after`).
    NotAvailable {
        at: Span,
        method: Method,
        on: Kind,
        after: Engine,
    },
    /// A spatial slot that an annotation gives another mapping than the chain carries: `at`
    /// is the chain's last method, `from` / `to` the two mappings as written, `annotation`
    /// where the annotation writes `to`.
    SpatialChange {
        at: Span,
        slot: Slot,
        from: String,
        to: String,
        annotation: Option<Span>,
    },
    /// Contraction or Vector work (`engine`) in the sub context.
    SubCompute {
        at: Span,
        method: Method,
        engine: Engine,
    },
    /// A sub-context commit (`at`) after a Cast or Transpose: `offender` is that step's
    /// method and name token when it is in the commit's own chain (or the chain it continues).
    SubCommitAfterCast {
        at: Span,
        offender: Option<(Method, Span)>,
    },
    /// A sub-context fetch that casts its type (`casting`) or indexes a table.
    SubFetchAdapter { at: Span, casting: bool },
    /// `launch(...)` (`at`: `launch`) without `.await`.
    LaunchNotAwaited { at: Span },
    /// `to_dm` over the PCIe DMA (`ctx.pdma`).
    DmOverPcie { at: Span },
    /// `to_host` over the Tensor DMA (`ctx.tdma`).
    HostOverTensorDma { at: Span },
    /// A PCIe DMA transfer in host code that is not awaited.
    PcieNotAwaited { at: Span, method: Method },
    /// A transfer awaited inside a `#[device]` kernel, where it is synchronous.
    AwaitedInDevice { at: Span, method: Method },
    /// `begin_interleaved` with `count` tensors instead of two.
    InterleaveCount { at: Span, count: usize },
    /// `begin_interleaved::<I, ..>` over an axis (`m![I]`) whose size is not 2.
    InterleaveAxis { at: Span, axis: String, size: u64 },
}

/// A primitive of the furiosa_visa_std API that visa-lint does not know.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Unknown {
    /// The type's or the method's name token.
    pub at: Span,
    pub primitive: Primitive,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Primitive {
    /// A type named `...Tensor`.
    Type(String),
    /// A method of a tensor chain.
    Method(String),
    /// A context method called without tensor arguments (the Kernel Examples' pseudo-API
    /// `begin_interleaved().fetch(&a, &b)`).
    WithoutTensors(String),
}

/// A construct the model does not follow, reported once where it matters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NotFollowed {
    /// A value from the construct at `at` (`what`, e.g. "the field `self.weights`"), used as
    /// a tensor at `used`.
    Lost { at: Span, what: String, used: Span },
    /// An engine chain (`.method()`, at its name token) inside the macro `name!`.
    InMacro {
        at: Span,
        name: String,
        method: Method,
    },
    /// A macro `name!` visa-lint does not expand (not the crate's, or defined twice), given
    /// the kernel's context or tensors (`given`, as written): what it does with them.
    MacroGiven {
        at: Span,
        name: String,
        given: Vec<String>,
    },
    /// An address computed by a call of `name` (`at`: the call) with constant arguments, and
    /// why its value is unknown where the evaluator ran it and says (`why`).
    AddressCall {
        at: Span,
        name: String,
        why: Option<String>,
    },
    /// A value argument (`text`, at `at`) whose compile-time value is unknown, and why.
    Value { at: Span, text: String, why: String },
    /// A loop over `var` (at its pattern) of `count` iterations, past the function's `budget`
    /// of loop-body evaluations: only its first and last iterations are checked.
    Iterations {
        at: Span,
        var: String,
        count: u64,
        budget: u32,
    },
}

impl NotFollowed {
    /// Where it is reported.
    pub fn at(&self) -> Span {
        match self {
            NotFollowed::Lost { at, .. }
            | NotFollowed::InMacro { at, .. }
            | NotFollowed::MacroGiven { at, .. }
            | NotFollowed::AddressCall { at, .. }
            | NotFollowed::Value { at, .. }
            | NotFollowed::Iterations { at, .. } => *at,
        }
    }
}

impl From<NotFollowed> for Problem {
    fn from(p: NotFollowed) -> Problem {
        Problem::NotFollowed(p)
    }
}

impl From<Kernel> for Problem {
    fn from(p: Kernel) -> Problem {
        Problem::Kernel(p)
    }
}

impl From<Unknown> for Problem {
    fn from(p: Unknown) -> Problem {
        Problem::Unknown(p)
    }
}
