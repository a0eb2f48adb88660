//! A padding fix through an alias, made at the alias's definition too.
//!
//! A rule pads a mapping where the function names it (see [`crate::model::pad_edit`]): an
//! alias (`Slice`, `layouts::Slice`) is replaced at that use by its padded mapping, which
//! changes nothing else. The other way to fix it is to pad the alias where it is defined,
//! which fixes every use at once, and may break the uses that needed the old size. This
//! module finds that definition, in the same file or in another module of the crate, and adds
//! the edit of its `m![...]` as a second, unsafe fix to the diagnostics the surfaces get
//! ([`diagnostics`], over [`crate::file_diagnostics::file_diagnostics`]); checking the fixes (see
//! [`crate::fix_check`]) promotes it when the crate analysed with the edit has no new error.
//! A mapping alias named inside a tensor type alias (`type Input = DmTensor<.., Blocks, ..>`,
//! used as `a: &Input`) has no use a rule can edit: the rule asks for the definition's edit
//! alone ([`crate::diagnostic::Fix::alias_pad`]), and it is written here.

use crate::db::{self, Settings, SourceFile};
use crate::diagnostic::{Diagnostic, Edit, FieldArg, FileEdits, Fix, Span};
use crate::line_index::LineIndex;
use crate::resolve::DefMap;
use ra_ap_syntax::{AstNode, SyntaxKind, SyntaxNode, ast, ast::HasName};
use std::collections::HashMap;
use std::sync::Arc;

/// How many renames (`type Strip = Slice;`) are followed to the alias's `m![...]`.
const MAX_RENAMES: usize = 8;

/// A file's diagnostics as the surfaces get them: [`crate::file_diagnostics::file_diagnostics`] with, after each
/// fix that replaces an alias by its padded mapping, the fix that pads the alias where it is
/// defined.
#[salsa::tracked(returns(ref))]
pub fn diagnostics(
    db: &dyn salsa::Database,
    file: SourceFile,
    settings: Settings,
) -> Arc<[Diagnostic]> {
    let shown = crate::file_diagnostics::file_diagnostics(db, file, settings);
    let replaces_alias = |d: &Diagnostic| {
        d.fixes
            .iter()
            .any(|f| !f.alias_pad.is_empty() || written_alias_use(db, file, f).is_some())
    };
    if !shown.iter().any(replaces_alias) {
        return shown.clone();
    }
    let mut all = shown.to_vec();
    // Every use of each alias a fix pads, found once however many diagnostics pad it.
    let mut uses: HashMap<(String, SourceFile, Span), Vec<Use>> = HashMap::new();
    for d in &mut all {
        let named = d.span;
        d.fixes = std::mem::take(&mut d.fixes)
            .into_iter()
            .filter_map(|fix| {
                if fix.alias_pad.is_empty() {
                    return Some(fix);
                }
                // Every definition the fix pads, or none: a fix missing one is no fix.
                let mut edits = Vec::new();
                let mut other_files: Vec<FileEdits> = Vec::new();
                for pad in &fix.alias_pad {
                    let (e, o) = pad_at_definition(db, file, named, pad)?;
                    edits.extend(e);
                    for f in o {
                        match other_files.iter_mut().find(|g| g.path == f.path) {
                            Some(g) => g.edits.extend(f.edits),
                            None => other_files.push(f),
                        }
                    }
                }
                Some(Fix {
                    edits,
                    other_files,
                    alias_pad: Vec::new(),
                    ..fix
                })
            })
            .collect();
        let added: Vec<Fix> = d
            .fixes
            .iter()
            .filter_map(|fix| {
                let (read_in, path, written) = written_alias_use(db, file, fix)?;
                let path = path.as_str();
                let edit = written.first()?;
                let (def_file, body) = definition(db, read_in, edit.span.start, path)?;
                // A padding fix pads the alias; another (an Element given the digits it
                // misses, a padding kind rewritten) changes it.
                let verb = if fix.title.starts_with("pad") {
                    "pad"
                } else {
                    "change"
                };
                let mut fix =
                    definition_fix(db, file, (def_file, body), path, &edit.new_text, verb);
                let key = (path.to_string(), def_file, body);
                let every = uses
                    .entry(key)
                    .or_insert_with(|| alias_uses(db, file, path, (def_file, body)));
                let others = other_uses(read_in, written, every);
                if !others.is_empty() {
                    fix.title =
                        format!("{verb} `{path}` where it is defined, {}", changing(&others));
                }
                Some(fix)
            })
            .collect();
        // A definition edit another fix already makes (a field's type naming the alias the
        // rule pads too) is offered once.
        for fix in added {
            let same = |f: &Fix| f.edits == fix.edits && f.other_files == fix.other_files;
            if !d.fixes.iter().any(same) {
                d.fixes.push(fix);
            }
        }
    }
    all.into()
}

/// The edits that write `pad` where it is defined: in the struct's field declaration (a
/// field's pad), or over the alias's `m![...]`, the name read where the pad says (a helper's,
/// for a finding at its call) or where the diagnostic at `named` points.
fn pad_at_definition(
    db: &dyn salsa::Database,
    file: SourceFile,
    named: Span,
    pad: &crate::diagnostic::AliasPad,
) -> Option<(Vec<Edit>, Vec<FileEdits>)> {
    let at = named.start;
    if pad.kernel_chips {
        let span = kernel_chip_count(&db::parse(db, file).tree(), at)?;
        return Some(placed(db, file, file, span, &pad.new_text));
    }
    if let Some(k) = pad.tensor_arg {
        // The tensor type alias the diagnostic points at, and its `k`-th generic argument.
        let name = file.text(db).get(named.range())?.trim().to_string();
        let (def_file, body) =
            associated_type(db, file, at, &name).or_else(|| definition(db, file, at, &name))?;
        let text = def_file.text(db).get(body.range())?.to_string();
        let arg = nth_generic_arg(&text, k)?;
        let span = Span::new(
            arg.start + body.start as usize,
            arg.end + body.start as usize,
        );
        return Some(placed(db, file, def_file, span, &pad.new_text));
    }
    if let Some(field) = &pad.field {
        let (def_file, arg) = field_arg(db, file, at, &pad.name, field)?;
        return Some(placed(db, file, def_file, arg, &pad.new_text));
    }
    let (read_in, read_at) = match &pad.read_at {
        Some((path, off)) if path == file.path(db) => (file, *off),
        Some((path, off)) => (*db::workspace_file(db, path)?, *off),
        None => (file, at),
    };
    let (def_file, body) = definition(db, read_in, read_at, &pad.name)?;
    Some(placed(db, file, def_file, body, &pad.new_text))
}

/// Where the chip count of the `#[device(chip = N)]` function around `at` is written: `N`.
fn kernel_chip_count(root: &ast::SourceFile, at: u32) -> Option<Span> {
    let token = root.syntax().token_at_offset(at.into()).right_biased()?;
    let f = token.parent_ancestors().find_map(ast::Fn::cast)?;
    let entries = crate::syntax::device_entries(&f)?;
    entries
        .into_iter()
        .find_map(|(key, _, at)| (key == "chip").then_some(at))
}

/// The type an associated type of the `impl` block around `at` defines (`type Out =
/// CastTensor<..>;`, which the block's method names `Self::Out`).
fn associated_type(
    db: &dyn salsa::Database,
    file: SourceFile,
    at: u32,
    name: &str,
) -> Option<(SourceFile, Span)> {
    let root = db::parse(db, file).tree();
    let alias = alias_around(root.syntax(), at, name, SyntaxKind::ASSOC_ITEM_LIST)?;
    let r = alias.ty()?.syntax().text_range();
    Some((
        file,
        Span::new(usize::from(r.start()), usize::from(r.end())),
    ))
}

/// Where the `k`-th non-lifetime generic argument of the type `text` is written in it
/// (`m![1]` of `DmTensor<f32, Chip, Cluster, Slice, m![1]>`, `k` = 4).
fn nth_generic_arg(text: &str, k: usize) -> Option<std::ops::Range<usize>> {
    use ra_ap_syntax::ast::HasGenericArgs;
    let ast::Type::PathType(p) = crate::syntax::type_of_text(text)? else {
        return None;
    };
    let arg = p
        .path()?
        .segment()?
        .generic_arg_list()?
        .generic_args()
        .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
        .nth(k)?;
    // `type_of_text` reads `text` as the type of `type T = ..;`.
    let r = arg.syntax().text_range();
    let shift = "type T = ".len();
    Some(usize::from(r.start()).checked_sub(shift)?..usize::from(r.end()).checked_sub(shift)?)
}

/// The alias a fix replaces by a mapping (its edits write one `m![...]` over each use of one
/// path), in the file the edits are in: `file`, or the one other file a helper's edits made
/// for its call are in (the helper's, which may name the alias twice: `impl Ops for
/// DmTensor<f32, Chip, ..>` and its method's result). The file, the alias's path and the
/// edits.
fn written_alias_use<'f>(
    db: &dyn salsa::Database,
    file: SourceFile,
    fix: &'f Fix,
) -> Option<(SourceFile, String, &'f [Edit])> {
    let (in_file, edits) = match (fix.edits.as_slice(), fix.other_files.as_slice()) {
        (edits @ [_, ..], []) => (file, edits),
        ([], [other]) => (
            *db::workspace_file(db, &other.path)?,
            other.edits.as_slice(),
        ),
        _ => return None,
    };
    let text = in_file.text(db);
    let first = edits.first()?;
    let path = text
        .get(first.span.range())
        .filter(|p| crate::syntax::is_item_path(p))?;
    let same = |e: &Edit| text.get(e.span.range()) == Some(path) && e.new_text == first.new_text;
    (first.new_text.starts_with("m![") && edits.iter().all(same))
        .then(|| (in_file, path.to_string(), edits))
}

fn definition_fix(
    db: &dyn salsa::Database,
    file: SourceFile,
    (def_file, body): (SourceFile, Span),
    name: &str,
    new_text: &str,
    verb: &str,
) -> Fix {
    let (edits, other_files) = placed(db, file, def_file, body, new_text);
    Fix {
        title: format!("{verb} `{name}` where it is defined, for every use"),
        safe: false,
        edits,
        other_files,
        edits_definition: true,
        edits_helper: false,
        copies_helper: false,
        edits_attribute: false,
        alias_pad: Vec::new(),
    }
}

/// The edit writing `new_text` over `span` of `def_file`, as a fix of a diagnostic of `file`
/// holds it: among its own edits, or another file's.
fn placed(
    db: &dyn salsa::Database,
    file: SourceFile,
    def_file: SourceFile,
    span: Span,
    new_text: &str,
) -> (Vec<Edit>, Vec<FileEdits>) {
    let edits = vec![Edit {
        span,
        new_text: new_text.to_string(),
    }];
    if def_file == file {
        (edits, Vec::new())
    } else {
        let path = def_file.path(db).clone();
        (Vec::new(), vec![FileEdits { path, edits }])
    }
}

/// How many uses a fix's title names before it counts the rest.
const MAX_USES_NAMED: usize = 3;

/// A use of an alias: its file, where its path starts, and `file.rs:LINE`.
struct Use {
    file: SourceFile,
    start: u32,
    shown: String,
}

/// The uses of an alias other than those the fix's edits replace (in `file`), each as
/// `file.rs:LINE`: what padding the definition changes beside the diagnostic's own uses.
fn other_uses(file: SourceFile, written: &[Edit], uses: &[Use]) -> Vec<String> {
    let is_here = |u: &Use| {
        u.file == file
            && written.iter().any(|e| {
                let here = e.span;
                here.start <= u.start && u.start < here.end.max(here.start + 1)
            })
    };
    uses.iter()
        .filter(|u| !is_here(u))
        .map(|u| u.shown.clone())
        .collect()
}

/// The uses of the alias defined at `def` (its file and `m![...]`) in `file`'s crate. A use is
/// a path whose last segment is the alias's name and that resolves to `def` (so a same-named
/// alias of another module is not one).
fn alias_uses(
    db: &dyn salsa::Database,
    file: SourceFile,
    path: &str,
    def: (SourceFile, Span),
) -> Vec<Use> {
    let name = path.rsplit("::").next().unwrap_or(path);
    let files = db::in_crate_of(db, file, |map| {
        let mut files: Vec<std::path::PathBuf> =
            map.modules.iter().map(|m| m.file.clone()).collect();
        files.sort();
        files.dedup();
        Some(files)
    })
    .unwrap_or_default();
    let mut out = Vec::new();
    for f in files
        .iter()
        .filter_map(|p| db::workspace_file(db, p).copied())
    {
        let text = f.text(db);
        if !text.contains(name) {
            continue;
        }
        let tree = db::parse(db, f).tree();
        let lines = LineIndex::new(text);
        let shown = f
            .path(db)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for p in tree.syntax().descendants().filter_map(ast::Path::cast) {
            let outermost = p
                .syntax()
                .parent()
                .is_none_or(|n| n.kind() != SyntaxKind::PATH);
            let named = p
                .segment()
                .and_then(|s| s.name_ref())
                .is_some_and(|n| n.text() == name);
            if !outermost || !named {
                continue;
            }
            let start = u32::from(p.syntax().text_range().start());
            if definition(db, f, start, &p.syntax().text().to_string()) == Some(def) {
                let line = lines.line_col(text, start).line;
                out.push(Use {
                    file: f,
                    start,
                    shown: format!("{shown}:{line}"),
                });
            }
        }
    }
    out
}

/// `also changing its use at a.rs:1`, `also changing its uses at a.rs:1, b.rs:2 and 3 more`.
fn changing(uses: &[String]) -> String {
    let named = uses
        .iter()
        .take(MAX_USES_NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    let more = match uses.len().saturating_sub(MAX_USES_NAMED) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    let noun = if uses.len() == 1 { "use" } else { "uses" };
    format!("also changing its {noun} at {named}{more}")
}

/// The file and the `m![...]` of the mapping alias that `path`, written at `at` in `file`,
/// names: declared in a function body around the use, or an item of the crate.
fn definition(
    db: &dyn salsa::Database,
    file: SourceFile,
    at: u32,
    path: &str,
) -> Option<(SourceFile, Span)> {
    let root = db::parse(db, file).tree();
    if !path.contains("::")
        && let Some(found) = in_body_around(root.syntax(), at, path)
    {
        return alias_body(file, &found);
    }
    // `<Wide as Group>::Slice`: the item `Wide`'s `impl Group` block defines, `Wide::Slice`.
    let path = crate::syntax::without_trait(path).unwrap_or_else(|| path.to_string());
    let segs: Vec<String> = path.split("::").map(str::to_string).collect();
    let in_file = innermost_module(db, file, at);
    db::in_crate_of(db, file, |map| {
        let from = map.module_of(file.path(db), in_file)?;
        item_alias(db, file, map, from, &segs, 0)
    })
}

/// A `type NAME = ...;` in a block around `at` (the manual's kernels declare their aliases in
/// `fn main`), innermost first.
fn in_body_around(root: &SyntaxNode, at: u32, name: &str) -> Option<ast::TypeAlias> {
    alias_around(root, at, name, SyntaxKind::STMT_LIST)
}

/// A `type NAME = ...;` among the items of a `list` (a block's statements, an `impl` block's
/// items) around `at`, innermost first.
fn alias_around(
    root: &SyntaxNode,
    at: u32,
    name: &str,
    list: SyntaxKind,
) -> Option<ast::TypeAlias> {
    let token = root.token_at_offset(at.into()).right_biased()?;
    token
        .parent_ancestors()
        .filter(|n| n.kind() == list)
        .find_map(|block| {
            block
                .children()
                .filter_map(ast::TypeAlias::cast)
                .find(|a| a.name().is_some_and(|n| n.text() == name))
        })
}

/// The index (as in the file's layout) of the innermost inline module around `at`.
fn innermost_module(db: &dyn salsa::Database, file: SourceFile, at: u32) -> usize {
    db::file_layout(db, file)
        .modules
        .iter()
        .enumerate()
        .filter(|(_, m)| m.offset <= at && at < m.end)
        .max_by_key(|(_, m)| m.offset)
        .map_or(0, |(i, _)| i)
}

/// The alias item `segs` names from module `from`, followed through renames.
fn item_alias(
    db: &dyn salsa::Database,
    file: SourceFile,
    map: &DefMap,
    from: usize,
    segs: &[String],
    depth: usize,
) -> Option<(SourceFile, Span)> {
    if depth > MAX_RENAMES {
        return None;
    }
    let found = map.resolve_item(from, segs).or_else(|| {
        // `DecodeLayout::Cluster`: an associated type of an `impl` block.
        let (item, ty) = segs.split_last()?;
        map.resolve_associated(from, ty, item, crate::resolve::ItemKind::Alias)
    });
    let (module, index) = found?;
    let (def_file, (alias, offset)) = find_written(
        db,
        file,
        map,
        (module, index),
        |name, node, at| match name.split_once("::") {
            None => {
                let a = ast::TypeAlias::cast(node)?;
                (a.name()?.text() == name).then_some((a, at))
            }
            Some((ty, assoc)) => associated_alias(&node, ty, assoc).map(|a| (a, at)),
        },
    )?;
    let whole = |r: ra_ap_syntax::TextRange| {
        let start = offset + u32::from(r.start());
        Some((
            def_file,
            Span::new(start as usize, (offset + u32::from(r.end())) as usize),
        ))
    };
    match alias.ty()? {
        ast::Type::MacroType(mt) => whole(mt.syntax().text_range()),
        // The types `m!` expands to, which the padded `m![...]` replaces whole.
        ast::Type::PathType(p) if crate::syntax::is_type_form(&p) => whole(p.syntax().text_range()),
        // A generic alias given its arguments (`type Flit = Way8<Quad>;`): the padded `m![...]`
        // is what it stands for, written out in its place.
        ast::Type::PathType(p) if instantiates_generic(&p) => whole(p.syntax().text_range()),
        // An `impl` block's associated type naming a shared alias (`type Flit = RstdElem;`):
        // written out in its place, which changes this `impl`'s uses only.
        ast::Type::PathType(p) if is_associated(&alias) => whole(p.syntax().text_range()),
        // A rename, also of an associated type (`<Down as ProjShape>::Slice` is `Down::Slice`).
        ast::Type::PathType(p) => {
            let key = crate::syntax::path_key(&p.path()?)?;
            let target = crate::syntax::without_trait(&key).unwrap_or(key);
            let segs: Vec<String> = target.split("::").map(|s| s.trim().to_string()).collect();
            item_alias(db, file, map, module, &segs, depth + 1)
        }
        _ => None,
    }
}

/// Whether `alias` is an associated type of an `impl` block.
fn is_associated(alias: &ast::TypeAlias) -> bool {
    alias
        .syntax()
        .ancestors()
        .nth(2)
        .is_some_and(|n| ast::Impl::can_cast(n.kind()))
}

/// Whether `p` names a generic item with its arguments (`Way8<Quad>`).
fn instantiates_generic(p: &ast::PathType) -> bool {
    p.path()
        .and_then(|p| p.segment())
        .and_then(|s| ra_ap_syntax::ast::HasGenericArgs::generic_arg_list(&s))
        .is_some()
}

/// The file and the span of the generic argument `field.arg` of the tensor type that the
/// field `field.field` of the struct `strukt` (named so at `at` in `file`) is declared with.
fn field_arg(
    db: &dyn salsa::Database,
    file: SourceFile,
    at: u32,
    strukt: &str,
    field: &FieldArg,
) -> Option<(SourceFile, Span)> {
    let segs: Vec<String> = strukt.split("::").map(str::to_string).collect();
    let in_file = innermost_module(db, file, at);
    db::in_crate_of(db, file, |map| {
        let from = map.module_of(file.path(db), in_file)?;
        let item = map.resolve_item(from, &segs)?;
        find_written(db, file, map, item, |name, node, at| {
            let s =
                ast::Struct::cast(node).filter(|s| s.name().is_some_and(|n| n.text() == name))?;
            let r = declared_arg(&s, field)?;
            let start = at + u32::from(r.start());
            let end = at + u32::from(r.end());
            Some(Span::new(start as usize, end as usize))
        })
    })
}

/// Where the struct `s` writes the generic argument `field.arg` of its field's type (behind
/// references): `m![X / 2]` of `top: DmTensor<bf16, Chip, Cluster, m![X / 2], Row>`.
fn declared_arg(s: &ast::Struct, field: &FieldArg) -> Option<ra_ap_syntax::TextRange> {
    let ty = match s.field_list()? {
        ast::FieldList::RecordFieldList(list) => list
            .fields()
            .find(|f| f.name().is_some_and(|n| n.text() == field.field.as_str()))?
            .ty()?,
        ast::FieldList::TupleFieldList(list) => {
            list.fields().nth(field.field.parse().ok()?)?.ty()?
        }
    };
    let mut ty = ty;
    while let ast::Type::RefType(r) = &ty {
        ty = r.ty()?;
    }
    let ast::Type::PathType(p) = ty else {
        return None;
    };
    let args = ast::HasGenericArgs::generic_arg_list(&p.path()?.segment()?)?;
    let arg = args
        .generic_args()
        .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
        .nth(field.arg)?;
    Some(arg.syntax().text_range())
}

/// The file that declares the item `index` of `module`, with what `find` makes of the first
/// item written in that module of the file that it accepts (given the item's name, its syntax
/// and its offset there): where an edit of its definition goes. An item a macro generated is
/// not written where it sits: no edit reaches it.
fn find_written<T>(
    db: &dyn salsa::Database,
    file: SourceFile,
    map: &DefMap,
    (module, index): (usize, usize),
    mut find: impl FnMut(&str, SyntaxNode, u32) -> Option<T>,
) -> Option<(SourceFile, T)> {
    let name = map.item_name(module, index)?;
    let m = map.modules.get(module)?;
    let def_file = if m.file == *file.path(db) {
        file
    } else {
        *db::workspace_file(db, &m.file)?
    };
    let found = db::file_layout(db, def_file)
        .modules
        .get(m.in_file)?
        .items
        .iter()
        .filter(|item| item.generated.is_none())
        .find_map(|item| find(name, SyntaxNode::new_root(item.green.0.clone()), item.at))?;
    Some((def_file, found))
}

/// The associated type `assoc` of an `impl` block for `ty` (`node`); its positions are the
/// block's.
fn associated_alias(node: &SyntaxNode, ty: &str, assoc: &str) -> Option<ast::TypeAlias> {
    let imp = ast::Impl::cast(node.clone())?;
    if crate::resolve::self_type(&imp)? != ty {
        return None;
    }
    imp.assoc_item_list()?.assoc_items().find_map(|a| match a {
        ast::AssocItem::TypeAlias(t) if t.name().is_some_and(|n| n.text() == assoc) => Some(t),
        _ => None,
    })
}

/// The `m![...]` of an alias declared in a body (a rename there is not followed).
fn alias_body(file: SourceFile, alias: &ast::TypeAlias) -> Option<(SourceFile, Span)> {
    // `m![...]`, or the types it expands to (`Padding<Identity, 1>`), which the padded `m![...]`
    // replaces whole.
    let r = match alias.ty()? {
        ast::Type::MacroType(mt) => mt.syntax().text_range(),
        ast::Type::PathType(p) if crate::syntax::is_type_form(&p) => p.syntax().text_range(),
        _ => return None,
    };
    Some((
        file,
        Span::new(u32::from(r.start()) as usize, u32::from(r.end()) as usize),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_other_uses_are_named_up_to_three_then_counted() {
        let uses = |n: usize| (1..=n).map(|i| format!("k.rs:{i}")).collect::<Vec<_>>();
        assert_eq!(changing(&uses(1)), "also changing its use at k.rs:1");
        assert_eq!(
            changing(&uses(3)),
            "also changing its uses at k.rs:1, k.rs:2, k.rs:3"
        );
        assert_eq!(
            changing(&uses(5)),
            "also changing its uses at k.rs:1, k.rs:2, k.rs:3 and 2 more"
        );
    }
}
