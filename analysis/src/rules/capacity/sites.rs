//! The mappings written in the function, which the size rules read: [`Site`], one mapping
//! where it is written, derived once by [`written_sites`], and how a message names such a
//! mapping ([`shown`]) and a fix pads it ([`pad_fix`]).

use crate::diagnostic::{Diagnostic, Edit, FieldArg, Span};
use crate::mapping::Layout;
use crate::model::{Arg, Kind, MapVal, Method, Slot, pad_edit};
use crate::rules::context::{FnContext, declared_elsewhere};
use std::collections::HashSet;

/// A mapping written in the function (a parameter type, a `let` annotation, a turbofish
/// argument), or named through an alias.
pub(super) struct Site<'a> {
    pub kind: Kind,
    pub slot: Slot,
    pub map: &'a MapVal,
    pub at: Span,
    /// The Element mapping of the same tensor type, where factors too many for a spatial slot
    /// can go.
    pub element: Option<&'a MapVal>,
}

/// The mapping alias a mapping names (`Slice` for `type Slice = m![...]`), if it is one.
pub(super) fn alias<'s>(cx: &FnContext<'_>, map: &'s MapVal) -> Option<&'s str> {
    let t = map.text.trim();
    (cx.scope.aliases.contains_key(t) && !cx.scope.bound.contains(t)).then_some(t)
}

/// The associated mapping of a type parameter a call binds that `map` names (`<L as
/// Shard>::Slice`, `L::Slice`, `L` given a type of the crate).
fn bound_associated<'s>(cx: &FnContext<'_>, map: &'s MapVal) -> Option<&'s str> {
    let t = map.text.trim();
    (cx.scope.bound.contains(t) && t.contains("::")).then_some(t)
}

/// Every mapping written in the function, once per place (an alias once per function).
pub(super) fn written_sites<'a>(cx: &FnContext<'a>) -> Vec<Site<'a>> {
    // By place and slot: the mappings of a whole tensor alias (`a: &Input`) are all written
    // where the alias is named, one place for several slots.
    let mut seen: HashSet<(Span, Slot)> = HashSet::new();
    let mut aliases: HashSet<(String, Slot)> = HashSet::new();
    let mut out = Vec::new();
    // The Slice written in a `switch` turbofish is SWI-001's (the Switch Engine's own rule).
    let switch_slices: HashSet<Span> = cx
        .model
        .chains
        .iter()
        .flat_map(|c| c.steps.iter())
        .filter(|s| s.method == Method::Switch)
        .filter_map(|s| s.output.as_ref()?.get(Slot::Slice)?.span)
        .collect();
    let types = cx.model.tensors.iter().map(|t| &t.ty).chain(
        cx.model
            .chains
            .iter()
            .flat_map(|c| c.steps.iter())
            .filter_map(|s| s.output.as_ref()),
    );
    for ty in types {
        for (slot, map) in &ty.maps {
            let Some(at) = map.span else { continue };
            if *slot == Slot::Slice && switch_slices.contains(&at) {
                continue;
            }
            if seen.insert((at, *slot)) {
                out.push(Site {
                    kind: ty.kind,
                    slot: *slot,
                    map,
                    at,
                    element: ty.maps.get(&Slot::Element),
                });
            }
        }
    }
    out.sort_by_key(|s| s.at);
    // An alias is reported at its first use only, a struct field's type at its first read.
    let mut fields = HashSet::new();
    out.retain(|s| {
        let first_field = s
            .map
            .field
            .as_ref()
            .is_none_or(|f| fields.insert((f.clone(), s.slot)));
        first_field && alias(cx, s.map).is_none_or(|a| aliases.insert((a.to_string(), s.slot)))
    });
    out
}

/// The fix that pads a written mapping to `n` (an alias: at this use; the engine adds the
/// edit of its definition; an alias named inside a tensor type alias: at its definition only).
pub(super) fn pad_fix(
    cx: &FnContext<'_>,
    d: Diagnostic,
    site: &Site<'_>,
    n: u64,
    title: String,
) -> Diagnostic {
    let arg = Arg::mapping(site.map, site.at);
    if let Some(edit) = pad_edit(cx.scope, &arg, n) {
        let mut edits = vec![edit];
        edits.extend(declared_too(cx, site, n));
        return d.with_fix(title, true, edits);
    }
    // A mapping written in a struct field's type: padded where the struct declares it.
    let d = match field_pad(site, n) {
        Some((strukt, field, new_text)) => d.with_field_pad(strukt, field, new_text),
        None => d,
    };
    // A mapping alias named inside a tensor type alias: no use here to edit, so the alias is
    // padded where it is defined (the engine finds the definition). So is an associated
    // mapping of a type parameter the call binds (`<L as Shard>::Slice` in `StateDm<L>`),
    // which the call's type defines.
    let padded = alias(cx, site.map)
        .or_else(|| bound_associated(cx, site.map))
        .filter(|_| site.map.in_tensor_alias)
        .and_then(|a| {
            Some((
                a,
                pad_edit(cx.scope, &Arg::written(a.to_string(), site.at), n)?,
            ))
        });
    match padded {
        Some((a, edit)) => d.with_alias_pad(a, edit.new_text),
        None => d,
    }
}

/// The edit padding the same mapping where the type the site's chain ends in is declared
/// (`-> DmTensor<.., m![1], ..>` of `iota.to_dm::<Cluster, m![1], Elem>(..)` at the function's
/// tail): the two are one tensor's, and what the function gives its callers is the declared
/// one.
fn declared_too(cx: &FnContext<'_>, site: &Site<'_>, n: u64) -> Option<crate::diagnostic::Edit> {
    let (chain, step) = cx.model.chains.iter().find_map(|c| {
        let last = c.steps.last()?;
        (last.output.as_ref()?.get(site.slot)?.span == Some(site.at)).then_some((c, last))
    })?;
    let span = declared_elsewhere(chain, step, site.slot, site.at)?;
    let declared = chain.declared.as_ref()?.get(site.slot)?;
    if declared.in_tensor_alias {
        return None;
    }
    // Both written out: an alias or a parameter named twice is padded once, where it is
    // defined or bound.
    let written = |m: &crate::model::MapVal| m.text.trim().starts_with("m![");
    let same = declared.layout.is_some() && declared.layout == site.map.layout;
    (same && written(declared) && written(site.map))
        .then(|| pad_edit(cx.scope, &Arg::mapping(declared, span), n))?
}

/// The struct, its field's generic argument and the padded mapping that pad a site's mapping
/// where a struct field's type writes it.
fn field_pad<'s>(site: &Site<'s>, n: u64) -> Option<(&'s str, FieldArg, String)> {
    let of = site.map.field.as_deref()?;
    let arg = site.kind.params().iter().position(|s| *s == site.slot)?;
    let text = site.map.text.trim();
    let written = if text.starts_with("m![") {
        text.to_string()
    } else {
        format!("m![{}]", site.map.layout.as_deref()?.to_expr())
    };
    let padded = crate::mapping::edit::pad(&written, site.at, n)?.new_text;
    let field = FieldArg {
        field: of.field.clone(),
        arg,
    };
    Some((&of.strukt, field, padded))
}

/// How a mapping is named in a message: `m![A / 8]`, or `Slice` (`= m![A / 8]`) for an alias.
pub(super) fn shown(cx: &FnContext<'_>, map: &MapVal) -> String {
    let text = map.text.trim();
    match (alias(cx, map), map.layout.as_deref()) {
        (Some(a), Some(l)) => format!("`{a}` (the alias for `m![{}]`)", l.to_expr()),
        (None, Some(l)) if cx.scope.bound.contains(text) => {
            format!("`{text}` (`m![{}]` at this call)", l.to_expr())
        }
        _ => format!("`{text}`"),
    }
}

/// The fix that writes `kept` where the site's mapping is and moves `moved` (the factors it
/// no longer holds) to the outside of the same tensor's Element, so every element keeps a
/// place. `None` when the Element is not written beside the site.
pub(super) fn move_into_element(
    site: &Site<'_>,
    kept: String,
    moved: &Layout,
) -> Option<(String, Vec<Edit>)> {
    if site.map.in_tensor_alias {
        return None;
    }
    let element = site.element.filter(|e| !e.in_tensor_alias)?;
    let span = element.span.filter(|s| *s != site.at)?;
    let inner = match element.text.trim().strip_prefix("m![") {
        Some(rest) => rest.strip_suffix(']')?.trim().to_string(),
        None => element.layout.as_deref()?.to_expr(),
    };
    let moved = moved.to_expr();
    let new_text = if inner == "1" {
        format!("m![{moved}]")
    } else {
        format!("m![{moved}, {inner}]")
    };
    let slot: String = site
        .slot
        .name()
        .chars()
        .enumerate()
        .map(|(i, c)| if i == 0 { c.to_ascii_uppercase() } else { c })
        .collect();
    let title = format!("move `{moved}` from the {slot} into the Element: `{kept}`, `{new_text}`");
    let edits = vec![
        Edit {
            span: site.at,
            new_text: kept,
        },
        Edit { span, new_text },
    ];
    Some((title, edits))
}
