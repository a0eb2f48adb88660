//! Verdicts must not depend on how a kernel is written. Every fixture kernel
//! (`fixtures/rules/*.rs`, `fixtures/ok/*.rs` and the manual's `fixtures/manual/*.rs`) is
//! rewritten mechanically, syntax-aware (with ra_ap_syntax), into other forms an author could
//! have chosen:
//!
//! - `split-first`, `split-middle`, `split-last`: each statement-level engine chain
//!   `a.b().c().d()` split at one point into `let t = a.b(); t.c().d()`;
//! - `consts-module`: the top-level `const` items moved into `mod consts { pub const ..; }`
//!   and referred to as `consts::NAME`; `consts-glob`: the same, imported with `use consts::*;`;
//! - `renamed`: each top-level type alias and const imported under another name
//!   (`use self::Slice as SliceRenamed;`) and referred to by that name;
//! - `block`: each statement-level chain wrapped in a block `{ chain }`.
//!
//! The diagnostics of the rewritten kernel must be the original's: the same codes and
//! severities at the same places, positions mapped back through the rewrite (every byte of
//! the rewritten text that was copied knows where it came from). Where a rewrite legitimately
//! changes a verdict the difference is listed, with its reason, in [`EXCEPTIONS`].

use ra_ap_syntax::ast::{self, HasModuleItem, HasName, HasVisibility};
use ra_ap_syntax::{AstNode, Edition, SourceFile, SyntaxKind, SyntaxNode, TextRange};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// (fixture file name, rewrite, why its verdict may differ).
const EXCEPTIONS: &[(&str, &str, &str)] = &[];

/// A piece of the rewritten text: copied from the original, or new.
enum Piece {
    Orig(Range<usize>),
    New(String),
}

/// A rewritten text, with where every byte came from: a copied byte its own original range
/// (one byte), a byte written in place of original text the whole range it replaced (a
/// renamed identifier is its old name), an inserted byte nothing.
struct Rewritten {
    text: String,
    origin: Vec<Option<Range<usize>>>,
}

/// Replaces each range of `src` by its pieces (ranges sorted, not overlapping; an empty range
/// inserts).
fn apply(src: &str, mut edits: Vec<(Range<usize>, Vec<Piece>)>) -> Rewritten {
    edits.sort_by_key(|(r, _)| (r.start, r.end));
    let mut out = Rewritten {
        text: String::new(),
        origin: Vec::new(),
    };
    let copy = |out: &mut Rewritten, r: Range<usize>| {
        out.text.push_str(&src[r.clone()]);
        out.origin.extend(r.map(|i| Some(i..i + 1)));
    };
    let mut at = 0;
    for (range, pieces) in edits {
        assert!(range.start >= at, "overlapping edits");
        copy(&mut out, at..range.start);
        let replaced = (!range.is_empty()).then(|| range.clone());
        for p in pieces {
            match p {
                Piece::Orig(r) => copy(&mut out, r),
                Piece::New(s) => {
                    out.origin
                        .extend(std::iter::repeat_n(replaced.clone(), s.len()));
                    out.text.push_str(&s);
                }
            }
        }
        at = range.end;
    }
    copy(&mut out, at..src.len());
    out
}

fn range(r: TextRange) -> Range<usize> {
    usize::from(r.start())..usize::from(r.end())
}

/// A diagnostic as compared: code, severity and primary span (in the original's offsets;
/// `None` when it lies in text the rewrite wrote).
type Verdict = (String, String, Option<(usize, usize)>);

fn verdicts(text: &str) -> Vec<(String, String, usize, usize)> {
    let mut v: Vec<_> = visa_analysis::check_text(text)
        .iter()
        .map(|d| {
            (
                d.code().to_string(),
                d.severity.as_str().to_string(),
                d.span.start as usize,
                d.span.end as usize,
            )
        })
        .collect();
    v.sort();
    v
}

fn mapped(r: &Rewritten) -> Vec<Verdict> {
    let mut v: Vec<Verdict> = verdicts(&r.text)
        .into_iter()
        .map(|(code, sev, s, e)| {
            let start = r.origin.get(s).cloned().flatten().map(|o| o.start);
            let end = if e > s {
                r.origin.get(e - 1).cloned().flatten().map(|o| o.end)
            } else {
                start
            };
            (code, sev, start.zip(end))
        })
        .collect();
    v.sort();
    v
}

/// Statement-level expressions of function bodies: `let` initializers, expression statements
/// and block tails, each with the statement it starts (outer statements first).
fn statements(root: &SyntaxNode) -> Vec<(ast::Expr, Range<usize>)> {
    let mut out = Vec::new();
    for list in root.descendants().filter_map(ast::StmtList::cast) {
        if !list
            .syntax()
            .ancestors()
            .any(|a| ast::Fn::can_cast(a.kind()))
        {
            continue;
        }
        for stmt in list.statements() {
            let stmt_range = range(stmt.syntax().text_range());
            match stmt {
                ast::Stmt::LetStmt(l) => {
                    if let Some(init) = l.initializer() {
                        out.push((init, stmt_range));
                    }
                }
                ast::Stmt::ExprStmt(e) => {
                    if let Some(x) = e.expr() {
                        out.push((x, stmt_range));
                    }
                }
                ast::Stmt::Item(_) => {}
            }
        }
        if let Some(t) = list.tail_expr() {
            let r = range(t.syntax().text_range());
            out.push((t, r));
        }
    }
    out.sort_by_key(|(_, r)| (r.start, std::cmp::Reverse(r.end)));
    out
}

/// The method calls of an expression's spine, outermost first (`.await` and `?` looked
/// through).
fn spine(e: &ast::Expr) -> Vec<ast::MethodCallExpr> {
    let mut out = Vec::new();
    let mut cur = Some(e.clone());
    while let Some(x) = cur {
        cur = match x {
            ast::Expr::MethodCallExpr(m) => {
                let r = m.receiver();
                out.push(m);
                r
            }
            ast::Expr::AwaitExpr(a) => a.expr(),
            ast::Expr::TryExpr(t) => t.expr(),
            _ => None,
        };
    }
    out
}

/// The whitespace that indents the line `at` is on.
fn indent_at(src: &str, at: usize) -> String {
    let line_start = src[..at].rfind('\n').map_or(0, |i| i + 1);
    src[line_start..at]
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect()
}

fn overlaps(claimed: &[Range<usize>], r: &Range<usize>) -> bool {
    claimed.iter().any(|c| c.start < r.end && r.start < c.end)
}

#[derive(Clone, Copy, Debug)]
enum Split {
    First,
    Middle,
    Last,
}

/// Splits every statement-level chain at one point: `let t = a.b(); t.c().d()`.
fn split_chains(src: &str, root: &SyntaxNode, at: Split) -> Option<Rewritten> {
    let mut edits = Vec::new();
    let mut claimed: Vec<Range<usize>> = Vec::new();
    for (e, stmt) in statements(root) {
        if overlaps(&claimed, &stmt) {
            continue;
        }
        // Receivers that are themselves method calls, innermost first.
        let mut points: Vec<ast::MethodCallExpr> = spine(&e)
            .iter()
            .filter_map(|m| match m.receiver()? {
                ast::Expr::MethodCallExpr(r) => Some(r),
                _ => None,
            })
            .collect();
        points.reverse();
        let Some(prefix) = (match at {
            Split::First => points.first(),
            Split::Middle => points.get(points.len() / 2),
            Split::Last => points.last(),
        }) else {
            continue;
        };
        let name = format!("__split{}", claimed.len());
        let r = range(prefix.syntax().text_range());
        edits.push((
            stmt.start..stmt.start,
            vec![
                Piece::New(format!("let {name} = ")),
                Piece::Orig(r.clone()),
                Piece::New(format!(";\n{}", indent_at(src, stmt.start))),
            ],
        ));
        edits.push((r, vec![Piece::New(name)]));
        claimed.push(stmt);
    }
    (!edits.is_empty()).then(|| apply(src, edits))
}

/// Wraps every statement-level chain in a block: `{ chain }`.
fn block_chains(src: &str, root: &SyntaxNode) -> Option<Rewritten> {
    let mut edits = Vec::new();
    let mut claimed: Vec<Range<usize>> = Vec::new();
    for (e, stmt) in statements(root) {
        if overlaps(&claimed, &stmt) || spine(&e).is_empty() {
            continue;
        }
        let r = range(e.syntax().text_range());
        edits.push((r.start..r.start, vec![Piece::New("{ ".into())]));
        edits.push((r.end..r.end, vec![Piece::New(" }".into())]));
        claimed.push(stmt);
    }
    (!edits.is_empty()).then(|| apply(src, edits))
}

/// Identifier tokens inside macro bodies (which ra_ap_syntax does not parse), by text.
fn macro_idents(root: &SyntaxNode) -> Vec<(String, Range<usize>, Option<SyntaxKind>, bool)> {
    let mut out = Vec::new();
    for tt in root.descendants().filter_map(ast::TokenTree::cast) {
        if tt
            .syntax()
            .parent()
            .is_some_and(|p| p.kind() == SyntaxKind::TOKEN_TREE)
        {
            continue;
        }
        let toks: Vec<_> = tt
            .syntax()
            .descendants_with_tokens()
            .filter_map(|t| t.into_token())
            .filter(|t| !t.kind().is_trivia())
            .collect();
        for (i, t) in toks.iter().enumerate() {
            if t.kind() != SyntaxKind::IDENT {
                continue;
            }
            let prev = i.checked_sub(1).map(|p| toks[p].kind());
            let escaped = prev == Some(SyntaxKind::L_CURLY)
                && toks.get(i + 1).map(|n| n.kind()) == Some(SyntaxKind::R_CURLY);
            let next = |k: usize| toks.get(i + k).map(|n| n.kind());
            let sized = (next(1) == Some(SyntaxKind::COLON)
                && toks.get(i + 3).is_some_and(|n| n.text() == "SIZE"))
                || (next(1) == Some(SyntaxKind::COLON2)
                    && toks.get(i + 2).is_some_and(|n| n.text() == "SIZE"));
            out.push((
                t.text().to_string(),
                range(t.text_range()),
                prev,
                escaped || sized,
            ));
        }
    }
    out
}

/// Single-segment paths outside `use` items and outside the given ranges, by name.
fn plain_paths(root: &SyntaxNode, skip: &[Range<usize>]) -> Vec<(String, ast::Path)> {
    root.descendants()
        .filter_map(ast::Path::cast)
        .filter(|p| p.qualifier().is_none())
        .filter(|p| {
            !p.syntax()
                .parent()
                .is_some_and(|q| ast::Path::can_cast(q.kind()))
        })
        .filter(|p| !p.syntax().ancestors().any(|a| ast::Use::can_cast(a.kind())))
        .filter(|p| !overlaps(skip, &range(p.syntax().text_range())))
        .filter_map(|p| {
            let n = p.segment()?.name_ref()?.text().to_string();
            Some((n, p))
        })
        .collect()
}

/// Whether a path stands as a generic argument (`tile::<m![A], N, ..>`), where a qualified
/// const must be braced.
fn is_generic_arg(p: &ast::Path) -> bool {
    p.syntax()
        .ancestors()
        .nth(2)
        .is_some_and(|a| a.kind() == SyntaxKind::TYPE_ARG)
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum ConstsForm {
    Qualified,
    Glob,
}

/// Moves the top-level `const` items into `mod consts { pub const ..; }`.
fn consts_module(src: &str, file: &SourceFile, form: ConstsForm) -> Option<Rewritten> {
    let consts: Vec<ast::Const> = file
        .items()
        .filter_map(|i| match i {
            ast::Item::Const(c) => Some(c),
            _ => None,
        })
        .collect();
    let names: BTreeSet<String> = consts
        .iter()
        .filter_map(|c| Some(c.name()?.text().to_string()))
        .collect();
    if names.is_empty() {
        return None;
    }
    // A const named inside a macro body would need the path there too: not mechanical.
    if macro_idents(file.syntax())
        .iter()
        .any(|(t, ..)| names.contains(t))
    {
        return None;
    }
    let ranges: Vec<Range<usize>> = consts
        .iter()
        .map(|c| range(c.syntax().text_range()))
        .collect();
    let mut edits: Vec<(Range<usize>, Vec<Piece>)> = Vec::new();
    let mut module = vec![Piece::New("\nmod consts {\n    use super::*;\n".into())];
    for (c, r) in consts.iter().zip(&ranges) {
        edits.push((r.clone(), Vec::new()));
        let public = c.visibility().is_some();
        module.push(Piece::New(if public { "    " } else { "    pub " }.into()));
        module.push(Piece::Orig(r.clone()));
        module.push(Piece::New("\n".into()));
    }
    module.push(Piece::New("}\n".into()));
    edits.push((src.len()..src.len(), module));
    match form {
        ConstsForm::Qualified => {
            for (name, p) in plain_paths(file.syntax(), &ranges) {
                if !names.contains(&name) {
                    continue;
                }
                let text = if is_generic_arg(&p) {
                    format!("{{ consts::{name} }}")
                } else {
                    format!("consts::{name}")
                };
                edits.push((range(p.syntax().text_range()), vec![Piece::New(text)]));
            }
        }
        ConstsForm::Glob => {
            let at = first_item_start(file);
            edits.push((at..at, vec![Piece::New("use consts::*;\n".into())]));
        }
    }
    Some(apply(src, edits))
}

/// Where the file's first item starts (after its inner attributes and doc comments).
fn first_item_start(file: &SourceFile) -> usize {
    file.items()
        .next()
        .map_or(0, |i| usize::from(i.syntax().text_range().start()))
}

/// Imports each top-level type alias and const under another name (`use self::X as
/// XRenamed;`) and refers to it by that name everywhere but its definition.
fn renamed(src: &str, file: &SourceFile) -> Option<Rewritten> {
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    for item in file.items() {
        let name = match &item {
            ast::Item::TypeAlias(a) => a.name(),
            ast::Item::Const(c) => c.name(),
            _ => None,
        };
        if let Some(n) = name {
            let n = n.text().to_string();
            names.insert(n.clone(), format!("{n}Renamed"));
        }
    }
    if names.is_empty() {
        return None;
    }
    let idents = macro_idents(file.syntax());
    // A name that is also an axis, a generic parameter or anything else written bare in a
    // macro body cannot be told apart there: not mechanical.
    let bare_clash = idents
        .iter()
        .any(|(t, _, _, named)| names.contains_key(t) && !named);
    let declared_twice = file
        .syntax()
        .descendants()
        .filter_map(ast::Name::cast)
        .filter(|n| names.contains_key(n.text()))
        .count()
        > names.len();
    let all_text: BTreeSet<&str> = src
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    if bare_clash || declared_twice || names.values().any(|n| all_text.contains(n.as_str())) {
        return None;
    }
    let mut edits: Vec<(Range<usize>, Vec<Piece>)> = Vec::new();
    let imports: String = names
        .iter()
        .map(|(old, new)| format!("use self::{old} as {new};\n"))
        .collect();
    let at = first_item_start(file);
    edits.push((at..at, vec![Piece::New(imports)]));
    for (name, p) in plain_paths(file.syntax(), &[]) {
        if let Some(new) = names.get(&name) {
            edits.push((
                range(p.syntax().text_range()),
                vec![Piece::New(new.clone())],
            ));
        }
    }
    for (t, r, _, named) in idents {
        if named && let Some(new) = names.get(&t) {
            edits.push((r, vec![Piece::New(new.clone())]));
        }
    }
    Some(apply(src, edits))
}

fn fixture_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut out = Vec::new();
    for dir in ["rules", "ok", "manual"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .expect("fixture directory")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .collect();
        files.sort();
        out.extend(files);
    }
    out
}

const REWRITES: &[&str] = &[
    "split-first",
    "split-middle",
    "split-last",
    "consts-module",
    "consts-glob",
    "renamed",
    "block",
];

fn rewrite(kind: &str, src: &str) -> Option<Rewritten> {
    let file = SourceFile::parse(src, Edition::Edition2024).tree();
    let root = file.syntax();
    match kind {
        "split-first" => split_chains(src, root, Split::First),
        "split-middle" => split_chains(src, root, Split::Middle),
        "split-last" => split_chains(src, root, Split::Last),
        "consts-module" => consts_module(src, &file, ConstsForm::Qualified),
        "consts-glob" => consts_module(src, &file, ConstsForm::Glob),
        "renamed" => renamed(src, &file),
        "block" => block_chains(src, root),
        _ => None,
    }
}

#[test]
fn verdicts_do_not_depend_on_the_form_a_kernel_is_written_in() {
    let mut failures = Vec::new();
    let mut applied: BTreeMap<&str, usize> = BTreeMap::new();
    let mut used_exceptions = BTreeSet::new();
    for path in fixture_files() {
        let src = std::fs::read_to_string(&path).expect("UTF-8 fixture");
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        let dir = path
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let label = format!("{dir}/{name}");
        let original: Vec<Verdict> = verdicts(&src)
            .into_iter()
            .map(|(c, s, a, b)| (c, s, Some((a, b))))
            .collect();
        for kind in REWRITES {
            let Some(r) = rewrite(kind, &src) else {
                continue;
            };
            *applied.entry(kind).or_default() += 1;
            // The rewrite itself must be well-formed Rust where the original is.
            let parses = |t: &str| {
                SourceFile::parse(t, Edition::Edition2024)
                    .errors()
                    .is_empty()
            };
            if parses(&src) && !parses(&r.text) {
                failures.push(format!(
                    "{label} [{kind}]: the rewrite does not parse\n{}",
                    r.text
                ));
                continue;
            }
            let got = mapped(&r);
            if got == original {
                continue;
            }
            if EXCEPTIONS.iter().any(|(f, k, _)| *f == label && k == kind) {
                used_exceptions.insert((label.clone(), *kind));
                continue;
            }
            let show = |v: &[Verdict]| -> Vec<String> {
                v.iter()
                    .map(|(c, s, at)| match at {
                        Some((a, b)) => format!("{c} ({s}) `{}`", &src[*a..*b]),
                        None => format!("{c} ({s}) in rewritten text"),
                    })
                    .collect()
            };
            let lost: Vec<Verdict> = original
                .iter()
                .filter(|v| !got.contains(v))
                .cloned()
                .collect();
            let new: Vec<Verdict> = got
                .iter()
                .filter(|v| !original.contains(v))
                .cloned()
                .collect();
            failures.push(format!(
                "{label} [{kind}]\n  lost: {:?}\n  new:  {:?}\n--- rewritten ---\n{}",
                show(&lost),
                show(&new),
                r.text
            ));
        }
    }
    for (f, k, _) in EXCEPTIONS {
        assert!(
            used_exceptions.contains(&(f.to_string(), *k)),
            "stale exception: {f} [{k}] now keeps its verdict; remove it"
        );
    }
    eprintln!("rewrites applied: {applied:?}");
    // The rewrites must reach most fixtures, or the test proves little.
    for (kind, min) in [
        ("split-first", 300),
        ("split-middle", 300),
        ("split-last", 300),
        ("block", 450),
        ("consts-module", 6),
        ("consts-glob", 6),
        ("renamed", 50),
    ] {
        let n = applied.get(kind).copied().unwrap_or(0);
        assert!(n >= min, "{kind} applied to {n} fixtures only (want {min})");
    }
    assert!(
        failures.is_empty(),
        "{} rewrite(s) changed a verdict:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn rewrites_map_positions_back() {
    let src = "fn k() {\n    let x = a.b().c().d();\n}\n";
    let r = split_chains(
        src,
        SourceFile::parse(src, Edition::Edition2024).tree().syntax(),
        Split::Last,
    )
    .expect("a chain");
    assert_eq!(
        r.text,
        "fn k() {\n    let __split0 = a.b().c();\n    let x = __split0.d();\n}\n"
    );
    let d = r.text.find(".d()").expect("d") + 1;
    let at = src.find(".d()").map(|i| i + 1);
    assert_eq!(r.origin[d].clone().map(|o| o.start), at);
}
