//! A padding fix through an alias, made at the alias's definition too.
//!
//! A rule pads a mapping where the function names it (see [`crate::model::pad_edit`]): an
//! alias (`Slice`, `layouts::Slice`) is replaced at that use by its padded mapping, which
//! changes nothing else. The other way to fix it is to pad the alias where it is defined,
//! which fixes every use at once, and may break the uses that needed the old size. This
//! module finds that definition, in the same file or in another module of the crate, and adds
//! the edit of its `m![...]` as a second, unsafe fix; checking the fixes (see
//! [`crate::fix_check`]) promotes it when the crate analysed with the edit has no new error.

use crate::db::{self, SourceFile};
use crate::diagnostic::{Diagnostic, Edit, FileEdits, Fix, Span};
use crate::resolve::DefMap;
use ra_ap_syntax::{AstNode, SyntaxKind, SyntaxNode, ast, ast::HasName};

/// How many renames (`type Strip = Slice;`) are followed to the alias's `m![...]`.
const MAX_RENAMES: usize = 8;

/// Adds, after each fix that replaces an alias by a padded mapping, the fix that pads the
/// alias where it is defined.
pub fn add_definition_fixes(db: &dyn salsa::Database, file: SourceFile, diags: &mut [Diagnostic]) {
    let text = file.text(db);
    for d in diags.iter_mut() {
        let mut added = Vec::new();
        for fix in &d.fixes {
            let [edit] = fix.edits.as_slice() else {
                continue;
            };
            let Some(path) = text.get(edit.span.range()).filter(|p| is_path(p)) else {
                continue;
            };
            if !edit.new_text.starts_with("m![") {
                continue;
            }
            let Some((def_file, body)) = definition(db, file, edit.span.start, path) else {
                continue;
            };
            added.push(definition_fix(
                db,
                file,
                def_file,
                body,
                path,
                &edit.new_text,
            ));
        }
        d.fixes.extend(added);
    }
}

/// `Slice`, `layouts::Slice`, `super::layouts::Slice`: what an alias use can be.
fn is_path(text: &str) -> bool {
    !text.is_empty()
        && text
            .split("::")
            .all(|seg| !seg.is_empty() && seg.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

fn definition_fix(
    db: &dyn salsa::Database,
    file: SourceFile,
    def_file: SourceFile,
    body: Span,
    name: &str,
    new_text: &str,
) -> Fix {
    let edit = Edit {
        span: body,
        new_text: new_text.to_string(),
    };
    let title = format!("pad `{name}` where it is defined, for every use");
    if def_file == file {
        return Fix {
            title,
            safe: false,
            edits: vec![edit],
            other_files: Vec::new(),
            edits_definition: true,
        };
    }
    Fix {
        title,
        safe: false,
        edits: Vec::new(),
        other_files: vec![FileEdits {
            path: def_file.path(db).clone(),
            edits: vec![edit],
        }],
        edits_definition: true,
    }
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
    let token = root.token_at_offset(at.into()).right_biased()?;
    token
        .parent_ancestors()
        .filter(|n| n.kind() == SyntaxKind::STMT_LIST)
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
    let (module, index) = map.resolve_item(from, segs)?;
    let name = map.item_name(module, index)?;
    let m = map.modules.get(module)?;
    let def_file = if m.file == *file.path(db) {
        file
    } else {
        *db::workspace_file(db, &m.file)?
    };
    let layout = db::file_layout(db, def_file);
    let (alias, offset) =
        layout
            .modules
            .get(m.in_file)?
            .items
            .iter()
            .find_map(|(green, offset)| {
                let a = ast::TypeAlias::cast(SyntaxNode::new_root(green.0.clone()))?;
                (a.name()?.text() == name).then_some((a, *offset))
            })?;
    match alias.ty()? {
        ast::Type::MacroType(mt) => {
            let r = mt.syntax().text_range();
            let start = offset + u32::from(r.start());
            Some((
                def_file,
                Span::new(start as usize, (offset + u32::from(r.end())) as usize),
            ))
        }
        ast::Type::PathType(p) => {
            let target = p.path()?.syntax().text().to_string();
            let segs: Vec<String> = target.split("::").map(|s| s.trim().to_string()).collect();
            item_alias(db, file, map, module, &segs, depth + 1)
        }
        _ => None,
    }
}

/// The `m![...]` of an alias declared in a body (a rename there is not followed).
fn alias_body(file: SourceFile, alias: &ast::TypeAlias) -> Option<(SourceFile, Span)> {
    let ast::Type::MacroType(mt) = alias.ty()? else {
        return None;
    };
    let r = mt.syntax().text_range();
    Some((
        file,
        Span::new(u32::from(r.start()) as usize, u32::from(r.end()) as usize),
    ))
}
