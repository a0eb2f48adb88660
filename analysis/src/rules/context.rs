//! What every rule family's check reads of one function: its model, the facts derived from
//! it once for every family (and the simulator), its scope and the target. Families import
//! this and the layers below, never one another.

use crate::diagnostic::{Diagnostic, Edit, Span};
use crate::library::{Conversions, Generation};
use crate::mapping::Scope;
use crate::model::FnKind;
use crate::model::{Chain, FnModel, Slot, Step, in_call, input_arg, output_arg, pad_edit};
use crate::rule::Rule;
use crate::target::{DEFAULT_CHIPS, DEFAULT_PE, Grid, Target, is_pe_slice_count, pe_grid};

/// What a rule family's check sees of one function.
pub struct FnContext<'a> {
    pub model: &'a FnModel,
    /// The derived sequencer operations of the function (computed once for every family).
    pub ops: Vec<crate::derive::Op<'a>>,
    /// The derived DMA transfers (read/write sequencer pairs) of the function, also once.
    pub dma_ops: Vec<crate::derive::dma::DmaOp<'a>>,
    /// The axes and aliases in scope for the function.
    pub scope: &'a Scope,
    pub target: &'a Target,
}

impl<'a> FnContext<'a> {
    /// The context of one function, with its derivations computed once for every family.
    pub fn new(model: &'a FnModel, scope: &'a Scope, target: &'a Target) -> Self {
        FnContext {
            model,
            ops: crate::derive::ops(model, target),
            dma_ops: crate::derive::dma::ops(model, target),
            scope,
            target,
        }
    }

    /// The conversions of the function's library generation on its target: the table each
    /// converting stage is checked against.
    pub fn conversions(&self) -> Conversions<'a> {
        self.model.library.conversions(self.target)
    }

    /// The grid the function's tensors are laid out over: under the manual's library the
    /// chip's; under furiosa-opt-std a `#[device]` kernel's, from its `pe` (8 unless written,
    /// [`crate::target::pe_grid`]). `None` for a furiosa-opt-std helper, which kernels of any
    /// topology may call (its Slice is then one of [`crate::target::is_pe_slice_count`]).
    pub fn grid(&self) -> Option<Grid> {
        if self.model.library != Generation::OptStd {
            return Some(self.target.grid());
        }
        let FnKind::Device { pe, .. } = self.device()? else {
            return None;
        };
        Some(self.grid_of_pe(pe.unwrap_or(DEFAULT_PE)))
    }

    /// The grid of a `pe` topology; the chip's for a count the library has no grid for.
    fn grid_of_pe(&self, pe: u64) -> Grid {
        pe_grid(pe).unwrap_or_else(|| self.target.grid())
    }

    /// The `#[device]` kernel the function's mappings run on: itself, or for a helper checked
    /// with a call's values, the kernel whose trace calls it. `None` for a helper on its own.
    pub fn device(&self) -> Option<FnKind> {
        match self.model.kind {
            kind @ FnKind::Device { .. } => Some(kind),
            _ => self.model.traced_in,
        }
    }

    /// The slices of a cluster of the function's grid. A furiosa-opt-std helper runs on its
    /// callers' grids: there a Slice of `seen` positions is a whole cluster when some topology
    /// has that many slices, and otherwise the default device's cluster is meant.
    pub fn cluster_slices(&self, seen: u64) -> u64 {
        match self.grid() {
            Some(g) => g.slices,
            None if is_pe_slice_count(seen) => seen,
            None => self.grid_of_pe(DEFAULT_PE).slices,
        }
    }

    /// The chips a `#[device]` kernel runs on: its `chip = N`, or under furiosa-opt-std the
    /// macro's default when it names none ([`crate::target::DEFAULT_CHIPS`]). `None` for a
    /// helper, and for a manual kernel that names none (KRN-010).
    pub fn chips(&self) -> Option<u64> {
        let FnKind::Device { chips, .. } = self.device()? else {
            return None;
        };
        match self.model.library {
            Generation::OptStd => Some(chips.unwrap_or(DEFAULT_CHIPS)),
            Generation::VisaStd => chips,
        }
    }
}

/// A diagnostic of `rule` about what `step` does, whose fault lies in the argument written at
/// `at` (ARCHITECTURE.md, "Where a diagnostic points"): the primary span is `at`, with the call
/// as a related span when `at` is written away from it (a `let` annotation, the signature,
/// another call); the call's method name when the argument is written nowhere (`None`).
pub fn at_arg(
    rule: &'static Rule,
    step: &Step,
    at: Option<Span>,
    message: impl Into<String>,
) -> Diagnostic {
    match at {
        Some(span) if !in_call(step, span) => Diagnostic::new(rule, span, message)
            .with_related(step.span, format!("checked at this `{}`", step.method)),
        Some(span) => Diagnostic::new(rule, span, message),
        None => Diagnostic::new(rule, step.span, message),
    }
}

/// The edits that rewrite the `slot` mapping of `step`'s result to `new_text` wherever it is
/// written (an alias use is replaced at that use): the turbofish argument `generic` (or the
/// annotation, signature or call it comes from) and, when `step` ends `chain`, the chain's declared type if it writes the mapping
/// elsewhere (both must change together or the kernel no longer type-checks). `None` when the
/// mapping is written nowhere.
pub fn rewrite_output(
    chain: &Chain,
    step: &Step,
    generic: Option<usize>,
    slot: Slot,
    new_text: &str,
) -> Option<Vec<Edit>> {
    let at = output_arg(step, generic, slot).filter(spelled_out)?;
    let mut edits = vec![Edit {
        span: at.span,
        new_text: new_text.to_string(),
    }];
    if let Some(span) = declared_elsewhere(chain, step, slot, at.span) {
        let declared = chain.declared.as_ref()?.get(slot)?;
        if !spelled_out(&crate::model::Arg::written(declared.text.clone(), span)) {
            return None;
        }
        edits.push(Edit {
            span,
            new_text: new_text.to_string(),
        });
    }
    Some(edits)
}

/// The edits that rewrite the `slot` mapping of `step`'s input to `new_text` where the tensor
/// got it: the call that produced it (its turbofish argument, and the chain's declared type
/// with it, see [`rewrite_output`]), or the parameter's type. `None` when the mapping is not
/// spelled out there.
pub fn rewrite_input(
    model: &FnModel,
    step: &Step,
    slot: Slot,
    new_text: &str,
) -> Option<Vec<Edit>> {
    let at = input_arg(step, slot)?;
    for chain in &model.chains {
        for s in &chain.steps {
            let generic = s.generics.iter().position(|g| g.span == at.span);
            let out_slot = s.output.as_ref().and_then(|t| {
                t.maps
                    .iter()
                    .find(|(_, m)| m.span == Some(at.span))
                    .map(|(k, _)| k)
            });
            if let Some(out_slot) = out_slot {
                return rewrite_output(chain, s, generic, out_slot, new_text);
            }
        }
    }
    spelled_out(&at).then(|| {
        vec![Edit {
            span: at.span,
            new_text: new_text.to_string(),
        }]
    })
}

/// The edits that pad the `slot` mapping of `step`'s result to `n` positions wherever it is
/// written (see [`rewrite_output`]): an `m![...]` is padded in place, an alias use is replaced
/// by its padded layout (see [`pad_edit`]); `None` when a place cannot be padded.
pub fn pad_output(
    scope: &Scope,
    chain: &Chain,
    step: &Step,
    generic: Option<usize>,
    slot: Slot,
    n: u64,
) -> Option<Vec<Edit>> {
    let at = output_arg(step, generic, slot).filter(written_here)?;
    let mut edits = vec![pad_edit(scope, &at, n)?];
    if let Some(span) = declared_elsewhere(chain, step, slot, at.span) {
        let declared = chain.declared.as_ref()?.get(slot)?;
        let declared = crate::model::Arg::written(declared.text.clone(), span);
        edits.push(pad_edit(scope, &declared, n).filter(|_| written_here(&declared))?);
    }
    Some(edits)
}

/// The padding to `n` positions of a mapping written in place (`m![1]`) inside the tensor type
/// alias that declares `step`'s output (`type AmaxDm = DmTensor<f32, .., m![1]>;`, named at
/// the use): the alias's generic argument it is and its padded text, for
/// [`crate::diagnostic::Diagnostic::with_tensor_alias_pad`]. `None` for any other mapping.
pub fn pad_in_tensor_alias(
    step: &Step,
    generic: Option<usize>,
    slot: Slot,
    n: u64,
) -> Option<(usize, String)> {
    let at = output_arg(step, generic, slot)?;
    if !at.in_tensor_alias {
        return None;
    }
    let k = step
        .output
        .as_ref()?
        .kind
        .params()
        .iter()
        .position(|s| *s == slot)?;
    let edit = crate::mapping::edit::pad(&at.text, at.span, n)?;
    Some((k, edit.new_text))
}

/// The mapping alias a tensor type alias names for `slot` of `step`'s output (`ScaleCell` of
/// `type ScaleDm = DmTensor<f32, .., ScaleCell>;`), with the padded mapping it would define
/// (`m![1 # 2]` for `type ScaleCell = m![1];`): no use here to edit, so the alias is padded
/// where it is defined (see [`crate::diagnostic::Diagnostic::with_alias_pad`]).
pub fn pad_alias_in_tensor_alias(
    scope: &Scope,
    step: &Step,
    generic: Option<usize>,
    slot: Slot,
    n: u64,
) -> Option<(String, String)> {
    let at = output_arg(step, generic, slot)?;
    let name = at.text.trim();
    if !at.in_tensor_alias || !scope.aliases.contains_key(name) || scope.bound.contains(name) {
        return None;
    }
    let mut here = at.clone();
    here.in_tensor_alias = false;
    let edit = pad_edit(scope, &here, n)?;
    Some((name.to_string(), edit.new_text))
}

/// Where the chain's declared type writes `slot`, when `step` ends the chain and that is not
/// `at`.
pub fn declared_elsewhere(chain: &Chain, step: &Step, slot: Slot, at: Span) -> Option<Span> {
    let last = chain.steps.last().is_some_and(|s| std::ptr::eq(s, step));
    let span = chain.declared.as_ref()?.get(slot)?.span?;
    (last && span != at).then_some(span)
}

/// Whether `arg` is a mapping written at its span that a fix may replace: an `m![...]`, or a
/// mapping alias's name (`Packet`, `layouts::Packet`), which the new mapping replaces at this
/// use only, as [`pad_edit`] does; not a tensor alias whose mappings all point at the alias's
/// name.
pub fn spelled_out(arg: &crate::model::Arg) -> bool {
    let text = arg.text.trim();
    let path = text != "_"
        && text
            .split("::")
            .all(|seg| !seg.is_empty() && seg.chars().all(|c| c.is_alphanumeric() || c == '_'));
    (text.starts_with("m![") || path || is_type_form_text(text)) && written_here(arg)
}

/// Whether `text` is a mapping written as types (`Padding<Symbol<K>, 8>`).
fn is_type_form_text(text: &str) -> bool {
    matches!(crate::syntax::type_of_text(text), Some(ra_ap_syntax::ast::Type::PathType(p))
        if crate::syntax::is_type_form(&p))
}

/// Whether `arg`'s text is what its span covers (a mapping or an alias use written there, not a
/// mapping read out of a tensor alias).
fn written_here(arg: &crate::model::Arg) -> bool {
    !arg.in_tensor_alias
        && usize::try_from(arg.span.end.saturating_sub(arg.span.start)) == Ok(arg.text.len())
}
