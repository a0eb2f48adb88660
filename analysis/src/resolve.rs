//! Crates, not files: the module tree of a crate and `use` resolution across its files, so an
//! axis, alias, const or type declared anywhere in the crate is found where it is used.
//!
//! Two steps, each a salsa query in `db`:
//!
//! 1. [`file_items`]: what one file declares, module by module (the file's top level and each
//!    inline `mod name { .. }`): its items (axes, mapping and type aliases, consts, statics,
//!    function signatures, types), its `use` imports and its `mod name;` declarations. Editing a
//!    function body leaves it equal, so nothing downstream re-runs.
//! 2. [`DefMap::build`]: from a crate root, the module tree (`mod name;` to `name.rs`,
//!    `name/mod.rs` or `#[path]`), then imports resolved to a fixpoint with Rust's rules:
//!    `crate::`, `super::`, `self::`, globs, renames, `pub use` re-exports, explicit imports
//!    shadowing glob ones, private items visible in their module and its descendants. Another
//!    crate of the same package (the library, from tests or examples) is reached by its name.
//!
//! [`DefMap::env_text`] then writes, for one module, the declarations visible in it as Rust
//! text (the functions' *environment*, which the model reads). A glob import that cannot be
//! read (an external crate other than the vendor's library, a missing file) makes the module
//! *open*: names it does not declare may come from there, so they are unknown, not errors.

use crate::library::Generation;
use crate::mapping::parse;
use crate::syntax::macros::{self, MacroDef};
use crate::syntax::{self, Tok};
use ra_ap_syntax::ast::{self, HasAttrs, HasName, HasVisibility};
use ra_ap_syntax::{AstNode, SyntaxKind, SyntaxNode, TextSize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Crates whose names need no resolution: the vendor's library is built into the engine, and
/// the standard library declares no axes.
const KNOWN_EXTERNAL: &[&str] = &["furiosa_visa_std", "std", "core", "alloc"];

/// How an environment's text names a library item imported under another name (the
/// generation does not matter: the environment reads only the item's name).
pub const LIBRARY_PATH: &str = "furiosa_visa_std::prelude";

/// What one file declares, per module.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileItems {
    /// Index 0 is the file's top level; inline modules follow, parents before children.
    pub modules: Vec<ModItems>,
}

/// The declarations of one module body. It holds no positions, so an edit inside a function
/// body leaves it equal (where each module sits is in [`FileLayout`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModItems {
    /// Its items' declarations, item by item (shared with each item's query: an edit that
    /// leaves an item's declarations equal copies nothing).
    pub decls: Vec<std::sync::Arc<ItemDecls>>,
    pub mods: Vec<ModDecl>,
}

impl ModItems {
    /// Its declarations, in order.
    pub fn items(&self) -> impl Iterator<Item = &Item> {
        self.decls.iter().flat_map(|d| d.items.iter())
    }

    /// Its `use` imports' leaves, in order.
    pub fn imports(&self) -> impl Iterator<Item = &Import> {
        self.decls.iter().flat_map(|d| d.imports.iter())
    }
}

/// What one item other than a module declares (a `use` gives imports; an `impl` its methods;
/// `axes!` one item per axis).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ItemDecls {
    pub items: Vec<Item>,
    pub imports: Vec<Import>,
    /// `impl Trait for Type`: the type, and the trait's path as written.
    pub trait_impls: Vec<(String, Vec<String>)>,
    /// An `impl` block whose methods a library tensor type may have.
    pub extension_blocks: Vec<ExtensionBlock>,
}

/// Where a file's modules and items sit: the file's top level and each inline module (index as
/// in [`FileItems::modules`]), with its range and its items other than modules, each as its
/// syntax and its offset in the file. Cheap to rebuild after an edit: a walk over the items,
/// not their contents.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileLayout {
    pub modules: Vec<ModuleLayout>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModuleLayout {
    /// The inline module's start offset in the file (0 for the top level; a module a macro
    /// generated sits where the macro is invoked).
    pub offset: u32,
    /// Where its text ends (the file's length for the top level).
    pub end: u32,
    pub items: Vec<LayoutItem>,
    pub mods: Vec<ModDecl>,
    /// The item macros invoked here whose items are not read, and why (reported as "not
    /// checked").
    pub not_expanded: Vec<NotExpanded>,
}

/// An item of a module: its syntax, its offset in the file, and the macro invocation that
/// generated it (its syntax is then the expansion's, and its offset the invocation's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutItem {
    pub green: syntax::GreenKey,
    pub at: u32,
    pub generated: Option<std::sync::Arc<Generated>>,
}

/// A macro invocation that generated items: where it is written and the macro's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generated {
    pub call: (u32, u32),
    pub macro_name: String,
}

/// An item macro invocation whose items are not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotExpanded {
    pub call: (u32, u32),
    pub macro_name: String,
    pub reason: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ItemKind {
    Axis,
    /// `type X = ...;` (a mapping alias or a whole tensor type).
    Alias,
    Const,
    Fn,
    /// A struct, enum, union or trait (it shadows the library's type of that name).
    Type,
}

/// One named declaration, with its text as the environment reads it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Item {
    pub name: String,
    pub kind: ItemKind,
    pub public: bool,
    /// The declaration as Rust text (`axes![A = 64];`, a signature without its body, ...).
    pub text: String,
    /// Where `name` sits in `text` (for an import's rename).
    pub name_at: (u32, u32),
    /// Identifiers the text refers to (other items it needs: an alias's axes, a const's
    /// operands, a signature's types).
    pub refs: Vec<String>,
    /// The qualified paths in `text` (`consts::BASE`, `{ layouts::Slice }`), resolved from
    /// the item's own module when the item is written into an environment.
    pub paths: Vec<QPath>,
    /// The item's own syntax, when `text` is read from it as it stands (see [`Verbatim`]).
    pub syntax: Verbatim,
}

/// The syntax an item's `text` was read from, for an environment to read instead of parsing
/// the text again: a type alias or a const is its whole text; a function's text is its
/// signature (then `;`), and the environment reads only the signature of the syntax. It is
/// not part of the item's identity (see [`Untracked`]): the syntax says exactly what the text
/// says, so any item with the same text may stand in.
pub type Verbatim = Untracked<Option<rowan::GreenNode>>;

/// A value carried beside a key without being part of it: always equal, never hashed. For
/// what the rest of the key determines (an item's syntax, given its text).
#[derive(Clone, Debug, Default)]
pub struct Untracked<T>(pub T);

impl<T> PartialEq for Untracked<T> {
    fn eq(&self, _: &Untracked<T>) -> bool {
        true
    }
}

impl<T> Eq for Untracked<T> {}

impl<T> std::hash::Hash for Untracked<T> {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

/// A stretch of an environment's text that is one item written as it stands, with that item's
/// syntax (see [`DefMap::env_text`]).
#[derive(Clone, Debug)]
pub struct EnvPiece {
    pub start: usize,
    pub end: usize,
    pub green: rowan::GreenNode,
}

/// A module's environment as Rust text, the glob imports that could not be read, and the
/// stretches of the text that are items as they stand.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EnvSource {
    pub text: String,
    pub unresolved: Vec<String>,
    pub pieces: Untracked<Vec<EnvPiece>>,
}

/// A path of two or more segments as written (`consts::BASE`, `crate::layouts::Slice`,
/// `super::Tile` inside `m![{ super::Tile }]`), found token by token so that paths in macro
/// bodies count too. Offsets are relative to the text scanned.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct QPath {
    /// Where the first segment starts.
    pub start: u32,
    /// Each segment with the offset where it ends.
    pub segs: Vec<(String, u32)>,
}

impl QPath {
    /// The first `k` segments' names.
    pub fn names(&self, k: usize) -> Vec<String> {
        self.segs.iter().take(k).map(|(s, _)| s.clone()).collect()
    }
}

/// The qualified paths written in `node` (offsets relative to its start); with `skip_use`,
/// not those of `use` items (imports are resolved on their own).
pub fn qualified_paths(node: &SyntaxNode, skip_use: bool) -> Vec<QPath> {
    let green = node.green();
    let mark = skip_use.then_some(SyntaxKind::USE);
    let tokens = syntax::green_tokens(green, TextSize::from(0), &[], mark);
    paths_in(&tokens)
}

/// The qualified paths among `tokens` (offsets as theirs), leaving out marked tokens.
fn paths_in(tokens: &[Tok<'_>]) -> Vec<QPath> {
    let segment = |t: &Tok<'_>| {
        matches!(
            t.kind,
            SyntaxKind::IDENT | SyntaxKind::CRATE_KW | SyntaxKind::SELF_KW | SyntaxKind::SUPER_KW
        )
    };
    // `::` is one token in the tree and two adjacent `:` inside macro bodies.
    let sep = |i: usize| -> Option<usize> {
        let t = tokens.get(i)?;
        match t.kind {
            SyntaxKind::COLON2 => Some(1),
            SyntaxKind::COLON => {
                let n = tokens.get(i + 1)?;
                (n.kind == SyntaxKind::COLON && n.start == t.end()).then_some(2)
            }
            _ => None,
        }
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        // A path's first segment: not the continuation of another path (`<X>::SIZE`,
        // `Foo::<T>::bar`) nor a field or method name.
        let continues = i > 0
            && (sep(i - 1).is_some()
                || (i > 1 && sep(i - 2) == Some(2))
                || tokens[i - 1].kind == SyntaxKind::DOT);
        if let Some((q, next)) = trait_qualified(tokens, i) {
            out.push(q);
            i = next;
            continue;
        }
        if !segment(t) || continues {
            i += 1;
            continue;
        }
        let mut segs = vec![(t.text.to_string(), u32::from(t.end()))];
        let mut j = i + 1;
        while let Some(w) = sep(j) {
            match tokens.get(j + w) {
                Some(n) if segment(n) => {
                    segs.push((n.text.to_string(), u32::from(n.end())));
                    j += w + 1;
                }
                _ => break,
            }
        }
        if segs.len() >= 2 && !t.marked {
            out.push(QPath {
                start: u32::from(t.start),
                segs,
            });
        }
        i = j.max(i + 1);
    }
    out
}

/// `<Type as Trait>::ITEM` (or `<Type<bf16> as Trait>::ITEM`) starting at token `i` (the `<`):
/// the path `Type::ITEM`, from the `<` on (an environment that writes it under another name
/// rewrites all of it), and the token after it.
fn trait_qualified(tokens: &[Tok<'_>], i: usize) -> Option<(QPath, usize)> {
    let kind = |k: usize| tokens.get(k).map(|t| t.kind);
    if kind(i)? != SyntaxKind::L_ANGLE || kind(i + 1)? != SyntaxKind::IDENT || tokens[i].marked {
        return None;
    }
    // The type's own generic arguments (`<RowDm<bf16> as Ring>`), balanced.
    let mut j = i + 2;
    if kind(j)? == SyntaxKind::L_ANGLE {
        let mut open = 0usize;
        loop {
            match kind(j)? {
                SyntaxKind::L_ANGLE => open += 1,
                SyntaxKind::R_ANGLE => open -= 1,
                SyntaxKind::SEMICOLON | SyntaxKind::L_CURLY => return None,
                _ => {}
            }
            j += 1;
            if open == 0 {
                break;
            }
        }
    }
    let shape = [
        SyntaxKind::AS_KW,
        SyntaxKind::IDENT,
        SyntaxKind::R_ANGLE,
        SyntaxKind::COLON2,
        SyntaxKind::IDENT,
    ];
    let kinds: Vec<SyntaxKind> = tokens.get(j..j + 5)?.iter().map(|t| t.kind).collect();
    if kinds != shape {
        return None;
    }
    let (ty, item) = (&tokens[i + 1], &tokens[j + 4]);
    let segs = vec![
        (ty.text.to_string(), u32::from(ty.end())),
        (item.text.to_string(), u32::from(item.end())),
    ];
    let start = u32::from(tokens[i].start);
    Some((QPath { start, segs }, j + 5))
}

/// One leaf of a `use` tree.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Import {
    /// The path before the leaf (`crate`, `super`, `self` and names).
    pub path: Vec<String>,
    pub leaf: Leaf,
    pub public: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Leaf {
    /// `path::name` or `path::name as alias`.
    Name { name: String, alias: Option<String> },
    /// `path::*`.
    Glob,
}

/// `mod name;` or `mod name { .. }`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ModDecl {
    pub name: String,
    pub public: bool,
    /// `#[path = ".."]`.
    pub path_attr: Option<String>,
    /// For an inline module, its index in [`FileItems::modules`].
    pub inline: Option<usize>,
}

/// What a file declares (the tree is the file's one parse).
pub fn file_items(root: &ast::SourceFile) -> FileItems {
    let layout = file_layout(root);
    items_of(&layout, |module, index| {
        layout.modules[module]
            .items
            .get(index)
            .map(|item| item_decls(&item.green))
            .unwrap_or_default()
    })
}

/// Where a file's modules and items sit (see [`FileLayout`]).
pub fn file_layout(root: &ast::SourceFile) -> FileLayout {
    let mut out = FileLayout::default();
    out.modules.push(ModuleLayout {
        end: u32::from(root.syntax().text_range().end()),
        ..ModuleLayout::default()
    });
    let mut walk = Walk {
        out: &mut out,
        macros: HashMap::new(),
        generated: None,
        depth: 0,
        expanded: 0,
    };
    walk.items(root.syntax().green(), 0, 0);
    out
}

/// Item macros generate items through at most this many nested invocations.
const MAX_EXPANSION_DEPTH: usize = 8;

/// A file's expansions together are at most this long: a macro that invokes itself many times
/// over is cut off, each invocation past the budget reported with the reason.
const MAX_EXPANDED_BYTES: usize = 1 << 20;

/// The walk over a module body's items (see [`Walk::items`]).
struct Walk<'o> {
    out: &'o mut FileLayout,
    /// The `macro_rules!` definitions in textual scope, each with its syntax.
    macros: HashMap<String, (std::sync::Arc<MacroDef>, rowan::GreenNode)>,
    /// The invocation whose expansion is walked (`None`: the file's own text).
    generated: Option<std::sync::Arc<Generated>>,
    depth: usize,
    /// The bytes of expansion text the file's walk has made so far.
    expanded: usize,
}

impl Walk<'_> {
    /// The items of a module body (`list`: the file or an inline module's item list, starting
    /// at `offset`), over the green tree: a syntax node is made only for an inline module's
    /// header and for macro definitions and invocations.
    fn items(&mut self, list: &rowan::GreenNodeData, offset: u32, at: usize) {
        use ra_ap_syntax::RustLanguage;
        use rowan::Language;
        let mut pos = offset;
        for child in list.children() {
            let start = pos;
            pos += u32::from(child.text_len());
            let rowan::NodeOrToken::Node(node) = child else {
                continue;
            };
            // Inside an expansion every item sits at the invocation.
            let (start, end) = match &self.generated {
                Some(g) => g.call,
                None => (start, pos),
            };
            match RustLanguage::kind_from_raw(node.kind()) {
                SyntaxKind::MODULE => self.module(node, start, end, at),
                kind if ast::Item::can_cast(kind) => {
                    // A definition is an item of its own (the mappings in its template are
                    // read as written) and, from here on, a macro to expand.
                    if kind == SyntaxKind::MACRO_RULES
                        && let Some(def) = macros::definition(&node.to_owned())
                    {
                        self.macros.insert(def.name.clone(), (def, node.to_owned()));
                    }
                    self.out.modules[at].items.push(LayoutItem {
                        green: syntax::GreenKey(node.to_owned()),
                        at: start,
                        generated: self.generated.clone(),
                    });
                    if kind == SyntaxKind::MACRO_CALL {
                        self.invocation(node, (start, end), at);
                    }
                }
                _ => {}
            }
        }
    }

    /// An inline module or a `mod name;` declaration.
    fn module(&mut self, node: &rowan::GreenNodeData, start: u32, end: u32, at: usize) {
        let Some(md) = ast::Module::cast(SyntaxNode::new_root(node.to_owned())) else {
            return;
        };
        let Some(name) = md.name() else { return };
        let inline = md.item_list().map(|list| {
            let idx = self.out.modules.len();
            self.out.modules.push(ModuleLayout {
                offset: start,
                end,
                ..ModuleLayout::default()
            });
            let list_at = start + u32::from(list.syntax().text_range().start());
            // A module sees the macros defined before it; what it defines stays inside.
            let outer = self.macros.clone();
            self.items(list.syntax().green(), list_at, idx);
            self.macros = outer;
            idx
        });
        self.out.modules[at].mods.push(ModDecl {
            name: name.text().to_string(),
            public: public(&md),
            path_attr: md.attrs().find_map(|a| path_attr(&a)),
            inline,
        });
    }

    /// An item-level macro invocation: a `macro_rules!` macro in scope is expanded and its
    /// items walked as this module's; any other (but the library's `axes!`) is recorded as
    /// not read.
    fn invocation(&mut self, node: &rowan::GreenNodeData, call: (u32, u32), at: usize) {
        // Most item macros are the library's `axes!`: told apart on the green tree, without
        // making a syntax node for each after every edit.
        if is_axes_call(node) {
            return;
        }
        let Some(mc) = ast::MacroCall::cast(SyntaxNode::new_root(node.to_owned())) else {
            return;
        };
        let (path, args) = (mc.path(), mc.token_tree());
        let Some(name) = path
            .as_ref()
            .and_then(|p| p.segment())
            .map(|s| s.to_string())
        else {
            return;
        };
        // The invocation as written: from its path (the comments before an item belong to
        // its node) to its arguments' end, without the `;` (an invocation inside an expansion
        // stands for the outer one).
        let call = match (&self.generated, &path, &args) {
            (None, Some(path), Some(tt)) => (
                call.0 + u32::from(path.syntax().text_range().start()),
                call.0 + u32::from(tt.syntax().text_range().end()),
            ),
            _ => call,
        };
        let expansion = match (self.macros.get(&name), &args) {
            _ if self.depth >= MAX_EXPANSION_DEPTH => Err(format!(
                "it is invoked through more than {MAX_EXPANSION_DEPTH} nested macro expansions"
            )),
            _ if self.expanded > MAX_EXPANDED_BYTES => Err(format!(
                "the file's macro expansions pass {MAX_EXPANDED_BYTES} bytes"
            )),
            (Some((def, syntax)), Some(args)) => macros::expansion(syntax, def, args),
            (None, _) => Err(format!(
                "`{name}!` is not a `macro_rules!` defined before it in this file"
            )),
            (Some(_), None) => Err("the invocation has no arguments".to_string()),
        };
        let expanded = match expansion {
            Ok(expanded) => expanded,
            Err(reason) => {
                // Inside an expansion every invocation stands for the outer one: it is
                // reported once.
                let here = &mut self.out.modules[at].not_expanded;
                if !here.iter().any(|n| n.call == call) {
                    here.push(NotExpanded {
                        call,
                        macro_name: name,
                        reason,
                    });
                }
                return;
            }
        };
        self.expanded += u32::from(expanded.text_len()) as usize;
        let outer = self.generated.replace(std::sync::Arc::new(Generated {
            call,
            macro_name: name,
        }));
        self.depth += 1;
        self.items(&expanded, call.0, at);
        self.depth -= 1;
        self.generated = outer;
    }
}

/// Whether a `MACRO_CALL` subtree invokes `axes!` (its path is the one word `axes`).
fn is_axes_call(call: &rowan::GreenNodeData) -> bool {
    use ra_ap_syntax::RustLanguage;
    use rowan::Language;
    let kind = |n: &rowan::GreenNodeData| RustLanguage::kind_from_raw(n.kind());
    let child = |n: &rowan::GreenNodeData, k: SyntaxKind| {
        n.children()
            .filter_map(|c| c.into_node())
            .find(|c| kind(c) == k)
            .map(|c| c.to_owned())
    };
    let name = child(call, SyntaxKind::PATH)
        .and_then(|p| child(&p, SyntaxKind::PATH_SEGMENT))
        .and_then(|s| child(&s, SyntaxKind::NAME_REF));
    name.is_some_and(|n| n.to_string() == "axes")
}

/// A file's declarations from its layout and each item's declarations (`decls(module,
/// index)`: computed, or remembered from an earlier version of the file).
pub fn items_of(
    layout: &FileLayout,
    mut decls: impl FnMut(usize, usize) -> std::sync::Arc<ItemDecls>,
) -> FileItems {
    let modules = layout
        .modules
        .iter()
        .enumerate()
        .map(|(i, m)| ModItems {
            decls: (0..m.items.len()).map(|k| decls(i, k)).collect(),
            mods: m.mods.clone(),
        })
        .collect();
    FileItems { modules }
}

fn public(v: &impl HasVisibility) -> bool {
    v.visibility()
        .is_some_and(|v| syntax::node_text(v.syntax()).replace(' ', "") != "pub(self)")
}

/// The identifiers among `tokens` other than `own`, each once, in order.
fn idents(tokens: &[Tok<'_>], own: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    tokens
        .iter()
        .filter(|t| t.kind == SyntaxKind::IDENT && t.text != own)
        .filter(|t| seen.insert(t.text))
        .map(|t| t.text.to_string())
        .collect()
}

/// An item whose text is its node's whole text, read from the node's syntax where an
/// environment holds it (see [`Verbatim`]).
fn verbatim(name: ast::Name, kind: ItemKind, public: bool, node: &SyntaxNode) -> Item {
    let mut it = item(name, kind, public, syntax::node_text(node), node, &[]);
    it.syntax = Untracked(Some(node.green().to_owned()));
    it
}

/// An item named `name` declared by `node`, whose references and paths are read from the
/// node's tokens less its direct children of the kinds in `skip` (a function's body).
fn item(
    name: ast::Name,
    kind: ItemKind,
    public: bool,
    text: String,
    node: &SyntaxNode,
    skip: &[SyntaxKind],
) -> Item {
    let start = u32::from(name.syntax().text_range().start() - node.text_range().start());
    let end = start + u32::from(name.syntax().text_range().len());
    let name = name.text().to_string();
    let green = node.green();
    let tokens = syntax::green_tokens(green, TextSize::from(0), skip, None);
    let refs = idents(&tokens, &name);
    let paths = paths_in(&tokens)
        .into_iter()
        .filter(|p| {
            p.segs
                .last()
                .is_some_and(|(_, end)| *end as usize <= text.len())
        })
        .collect();
    Item {
        name,
        kind,
        public,
        text,
        name_at: (start, end),
        refs,
        paths,
        syntax: Untracked::default(),
    }
}

/// What one item declares (a module declares nothing itself: see [`file_layout`]).
pub fn item_decls(green: &syntax::GreenKey) -> std::sync::Arc<ItemDecls> {
    let node = SyntaxNode::new_root(green.0.clone());
    let mut out = ItemDecls::default();
    let Some(it) = ast::Item::cast(node.clone()) else {
        return std::sync::Arc::new(out);
    };
    let m = &mut out;
    match it {
        ast::Item::Const(c) => {
            if let Some(n) = c.name() {
                m.items
                    .push(verbatim(n, ItemKind::Const, public(&c), &node));
            }
        }
        ast::Item::Static(s) => {
            // A static is a named constant for the address rules.
            if let Some(n) = s.name() {
                let p = public(&s);
                let text = syntax::node_text(&node);
                let name = n.text().to_string();
                let text = text
                    .replacen("static", "const", 1)
                    .replace("const mut", "const");
                let mut it = item(n, ItemKind::Const, p, text, &node, &[]);
                // Positions in the rewritten text: its name and paths found again.
                let tree =
                    ast::SourceFile::parse(&it.text, ra_ap_syntax::Edition::Edition2024).tree();
                it.name_at = tree
                    .syntax()
                    .descendants()
                    .find_map(ast::Const::cast)
                    .and_then(|c| c.name())
                    .filter(|c| c.text() == name.as_str())
                    .map_or((0, 0), |c| {
                        let r = c.syntax().text_range();
                        (u32::from(r.start()), u32::from(r.end()))
                    });
                it.paths = qualified_paths(tree.syntax(), false);
                m.items.push(it);
            }
        }
        ast::Item::TypeAlias(a) => {
            if let Some(n) = a.name() {
                m.items
                    .push(verbatim(n, ItemKind::Alias, public(&a), &node));
            }
        }
        ast::Item::Fn(f) => {
            if let Some(it) = fn_item(&f, None) {
                m.items.push(it);
            }
        }
        ast::Item::Impl(imp) => impl_items(&imp, m),
        // A struct with fields is written as it stands: a kernel's parameter of its type is
        // its tensors field by field (`inputs.a`, `out.1`), and the types of its fields come
        // along.
        ast::Item::Struct(s) => match (s.name(), s.field_list()) {
            (Some(n), Some(_)) => {
                m.items.push(verbatim(n, ItemKind::Type, public(&s), &node));
            }
            _ => type_item(s.name(), public(&s), m),
        },
        // A fieldless enum is written as it stands: `as usize` reads its discriminants.
        ast::Item::Enum(e) => match e.name() {
            Some(n) if fieldless(&e) => {
                let mut it = verbatim(n, ItemKind::Type, public(&e), &node);
                // Its variants' names are its own: it refers to what its discriminants name.
                let named = discriminant_idents(&e);
                it.refs.retain(|r| named.contains(r));
                m.items.push(it);
            }
            _ => type_item(e.name(), public(&e), m),
        },
        ast::Item::Union(u) => type_item(u.name(), public(&u), m),
        ast::Item::Trait(t) => {
            declared_type(t.name(), "trait", public(&t), m);
            if let Some(n) = t.name() {
                trait_defaults(&t, n.text(), m);
            }
        }
        ast::Item::MacroCall(call) => axes_items(&call, m),
        ast::Item::Use(u) => {
            let p = public(&u);
            if let Some(tree) = u.use_tree() {
                use_tree(&tree, &[], p, &mut m.imports);
            }
        }
        _ => {}
    }
    std::sync::Arc::new(out)
}

/// The items of an `impl Type { .. }` block, each named `Type::name`: its methods, its
/// associated functions whose body is one expression, and its associated constants.
fn impl_items(imp: &ast::Impl, m: &mut ItemDecls) {
    // Methods (with a `self` parameter), by `Type::name`: calls on values the
    // model cannot type (`self.apply(..)`) take their signatures.
    let Some(ty) = self_type(imp) else {
        return;
    };
    if crate::library::is_tensor_type(&ty) {
        extension_items(imp, &ty, m);
        return;
    }
    // `impl Stage for Row` with `type Row = DmTensor<..>`: whether the name is an alias of a
    // tensor type, one block cannot tell, so a trait's methods are also written as a tensor
    // type's, which a call on a tensor takes only when the alias names one.
    if imp.trait_().is_some() {
        extension_items(imp, &ty, m);
    }
    if let Some(segs) = trait_path(imp) {
        m.trait_impls.push((ty.clone(), segs));
    }
    for a in imp
        .assoc_item_list()
        .into_iter()
        .flat_map(|l| l.assoc_items())
    {
        // A method, and an associated function whose body is one expression
        // (`Tiler::new(..)`, `plan.addr(i)`): the compiler runs those when it traces
        // the kernel, and the value evaluator does too.
        if let ast::AssocItem::Fn(f) = &a
            && let Some(it) = assoc_fn_item(f, &ty)
        {
            m.items.push(it);
        }
        // An associated constant (`RouteTable::PAIRS`), read as `Type::NAME`.
        if let ast::AssocItem::Const(c) = &a
            && let Some(n) = c.name()
        {
            let mut it = verbatim(n, ItemKind::Const, true, c.syntax());
            it.name = format!("{ty}::{}", it.name);
            it.refs.retain(|r| r != &ty);
            in_impl(&mut it, &ty, c.syntax());
            m.items.push(it);
        }
        // An associated type (`type Slice = m![S / 8];` of `impl KvLayout for Paged`), read
        // as `Paged::Slice` and `<Paged as KvLayout>::Slice`.
        if let ast::AssocItem::TypeAlias(t) = &a
            && t.ty().is_some()
            && let Some(n) = t.name()
        {
            let mut it = verbatim(n, ItemKind::Alias, true, t.syntax());
            it.name = format!("{ty}::{}", it.name);
            it.refs.retain(|r| r != &ty);
            match imp.trait_().map(|tr| syntax::compact_text(tr.syntax())) {
                Some(tr) => within(&mut it, &format!("impl {tr} for {ty} {{\n")),
                None => in_impl(&mut it, &ty, t.syntax()),
            }
            m.items.push(it);
        }
    }
}

/// The methods of an `impl` block for a library tensor type (`impl Stage for DmTensor<bf16,
/// ..>`): a crate may implement one trait for several tensor types, and a call runs the `impl`
/// of its receiver's type, as rustc picks it. The block is named by its types
/// (`DmTensor·3f2a19c0`), and each method is written as a free function whose first parameter
/// is the receiver (its own generics first, as a turbofish gives them, then the block's),
/// `Self` and the block's associated types written out:
/// `#[visa_extension = "DmTensor·3f2a19c0::stage"] fn stage<E: M>(this: &DmTensor<bf16, ..>,
/// ctx: &mut Context) -> ..;`. The environment files it under the method's name, with the
/// receiver type a call matches.
fn extension_items(imp: &ast::Impl, ty: &str, m: &mut ItemDecls) {
    let Some(self_ty) = imp.self_ty() else {
        return;
    };
    let trait_text = imp.trait_().map(|t| syntax::compact_text(t.syntax()));
    let block = format!(
        "{ty}·{}",
        stable_tag(&format!(
            "{} for {}",
            trait_text.as_deref().unwrap_or(""),
            syntax::compact_text(self_ty.syntax())
        ))
    );
    if let Some(segs) = trait_path(imp) {
        m.trait_impls.push((block.clone(), segs));
    }
    let items = || {
        imp.assoc_item_list()
            .into_iter()
            .flat_map(|l| l.assoc_items())
    };
    let fns = || {
        items().filter_map(|a| match a {
            ast::AssocItem::Fn(f) => Some(f),
            _ => None,
        })
    };
    use ast::HasGenericParams;
    let ext = ExtensionBlock {
        block,
        self_text: syntax::node_text(self_ty.syntax()),
        self_type: self_type_written(imp),
        generics: imp
            .generic_param_list()
            .into_iter()
            .flat_map(|l| l.generic_params())
            .map(|p| syntax::node_text(p.syntax()))
            .collect(),
        assoc: items()
            .filter_map(|a| match a {
                ast::AssocItem::TypeAlias(t) => Some((
                    t.name()?.text().to_string(),
                    syntax::node_text(t.ty()?.syntax()),
                )),
                _ => None,
            })
            .collect(),
        defines: fns()
            .filter_map(|f| Some(f.name()?.text().to_string()))
            .collect(),
    };
    for f in fns() {
        if let Some(it) = ext.method_decl(&f) {
            m.items.push(it);
        }
    }
    m.extension_blocks.push(ext);
}

/// An `impl` block for a library tensor type, or a trait's for a type that may be an alias of
/// one (see [`extension_items`]): what writes its methods, and its trait's provided methods,
/// as functions of the receiver.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExtensionBlock {
    /// Its name, its type's and a tag of its head (`DmTensor·3f2a19c0`).
    pub block: String,
    /// The type it is for, as written (`DmTensor<bf16, Chip, E>`).
    pub self_text: String,
    /// Its methods' `Self` (see [`self_type_written`]).
    pub self_type: Option<String>,
    /// Its generic parameters, as written.
    generics: Vec<String>,
    /// Its associated types: each name, and the type it stands for.
    assoc: Vec<(String, String)>,
    /// The functions it writes itself (the trait's others are its defaults).
    defines: Vec<String>,
}

impl ExtensionBlock {
    /// The method `f` (of the block, or a provided method of its trait) written as a free
    /// function whose first parameter is the receiver, its own generics first, then the
    /// block's, `Self` and the block's associated types written out: `#[visa_extension =
    /// "DmTensor·3f2a19c0::stage"] fn stage<E: M>(this: &DmTensor<bf16, ..>, ctx: &mut
    /// Context) -> ..;`. `None` for a function without a receiver.
    fn method_decl(&self, f: &ast::Fn) -> Option<Item> {
        use ast::HasGenericParams;
        let (name, params) = (f.name()?, f.param_list()?);
        let assoc: HashMap<String, String> = self.assoc.iter().cloned().collect();
        let written = |n: &SyntaxNode| with_self_written(n, &self.self_text, &assoc);
        let this = receiver_param(&params.self_param()?, &self.self_text, &written);
        let generics: Vec<String> = f
            .generic_param_list()
            .into_iter()
            .flat_map(|l| l.generic_params())
            .map(|p| written(p.syntax()))
            .chain(self.generics.iter().cloned())
            .collect();
        let rest = params.params().map(|p| written(p.syntax()));
        let ret = f
            .ret_type()
            .map(|r| written(r.syntax()))
            .unwrap_or_default();
        let key = format!("{}::{}", self.block, name.text());
        let text = format!(
            "#[{}{key}\"]\nfn {}<{}>({}) {ret};",
            syntax::EXTENSION_ATTR,
            name.text(),
            generics.join(", "),
            std::iter::once(this)
                .chain(rest)
                .collect::<Vec<_>>()
                .join(", ")
        );
        let parsed = ast::SourceFile::parse(&text, ra_ap_syntax::Edition::Edition2024).tree();
        let decl = parsed.syntax().descendants().find_map(ast::Fn::cast)?;
        let node = decl.syntax().clone();
        let mut it = item(decl.name()?, ItemKind::Fn, true, text, &node, &[]);
        it.name = key;
        it.syntax = Untracked(Some(node.green().to_owned()));
        Some(it)
    }
}

/// The path of the trait an `impl Trait for Type` block implements, segment by segment
/// without generic arguments (`ops::Stage` of `impl ops::Stage<E> for ..`).
fn trait_path(imp: &ast::Impl) -> Option<Vec<String>> {
    let ast::Type::PathType(tr) = imp.trait_()? else {
        return None;
    };
    let segs = syntax::compact_text(tr.path()?.syntax())
        .split("::")
        .map(|s| s.split('<').next().unwrap_or(s).to_string())
        .collect();
    Some(segs)
}

/// A method's receiver as the first parameter of a free function: `&self` is `this:
/// &DmTensor<..>`, `self: Box<Self>` is `this: Box<DmTensor<..>>`.
fn receiver_param(
    p: &ast::SelfParam,
    self_text: &str,
    written: &dyn Fn(&SyntaxNode) -> String,
) -> String {
    if let Some(t) = p.ty() {
        return format!("this: {}", written(t.syntax()));
    }
    let lifetime = p
        .lifetime()
        .map(|l| format!("{} ", l.text()))
        .unwrap_or_default();
    match (p.amp_token().is_some(), p.mut_token().is_some()) {
        (true, true) => format!("this: &{lifetime}mut {self_text}"),
        (true, false) => format!("this: &{lifetime}{self_text}"),
        (false, _) => format!("this: {self_text}"),
    }
}

/// `node`'s text with `Self` written as the type it stands for, and `Self::Out` as the `impl`
/// block's associated type `Out` (`assoc`).
fn with_self_written(
    node: &SyntaxNode,
    self_text: &str,
    assoc: &HashMap<String, String>,
) -> String {
    let tokens: Vec<ra_ap_syntax::SyntaxToken> = node
        .descendants_with_tokens()
        .filter_map(|t| t.into_token())
        .collect();
    let mut out = String::new();
    let mut k = 0;
    while let Some(t) = tokens.get(k) {
        k += 1;
        if t.kind() != SyntaxKind::SELF_TYPE_KW {
            out.push_str(t.text());
            continue;
        }
        let next = |n: usize| tokens.get(k + n).map(|t| (t.kind(), t.text().to_string()));
        let associated = match (next(0), next(1)) {
            (Some((SyntaxKind::COLON2, _)), Some((SyntaxKind::IDENT, a))) => assoc.get(&a),
            _ => None,
        };
        match associated {
            Some(ty) => {
                out.push_str(ty);
                k += 2;
            }
            None => out.push_str(self_text),
        }
    }
    out
}

/// A short name for `text` that is the same on every run (FNV-1a, 32 bits, in hex).
fn stable_tag(text: &str) -> String {
    let hash = text.bytes().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    format!("{hash:08x}")
}

/// The type an `impl` block is for, by its last path segment (`impl Tiler`, `impl a::Tiler`).
pub fn self_type(imp: &ast::Impl) -> Option<String> {
    syntax::last_path_name(&imp.self_ty()?)
}

/// The type an `impl` block is for as its methods' `Self`: its name (`Tiler`), or for a
/// library tensor type the block's head as written with its associated types (`impl<E: M>
/// DmTensor<bf16, Chip, Cluster, Slice, E> { type Out = ..; }`), whose type a method's receiver
/// `self` is, its parameters the block's, and whose `Self::Out` its methods name.
pub fn self_type_written(imp: &ast::Impl) -> Option<String> {
    use ast::HasGenericParams;
    let name = self_type(imp)?;
    if !crate::library::is_tensor_type(&name) && !may_alias_a_generic_tensor(imp) {
        return Some(name);
    }
    let params = imp
        .generic_param_list()
        .map(|l| syntax::node_text(l.syntax()))
        .unwrap_or_default();
    // Its associated types, which its methods name `Self::Weights`.
    let assoc: Vec<String> = imp
        .assoc_item_list()
        .into_iter()
        .flat_map(|l| l.assoc_items())
        .filter_map(|a| match a {
            ast::AssocItem::TypeAlias(t) if t.ty().is_some() => Some(syntax::node_text(t.syntax())),
            _ => None,
        })
        .collect();
    Some(format!(
        "impl{params} {} {{ {} }}",
        syntax::node_text(imp.self_ty()?.syntax()),
        assoc.join(" ")
    ))
}

/// Whether `imp` is a trait's `impl` block for a type given the block's type parameters
/// (`impl<E: M> Stage<E> for Band<E>`) or lifetimes (`impl<'l> ToBf16<'l> for
/// DecodeFinal<'l>`): one block cannot tell whether `Band` is a generic alias of a tensor type
/// (`type Band<E> = DmTensor<f32, Chip, Cluster, Slice, E>;`), so its methods' `Self` is
/// written as a tensor type's is (see [`self_type_name`]).
fn may_alias_a_generic_tensor(imp: &ast::Impl) -> bool {
    use ast::{HasGenericArgs, HasGenericParams};
    let has_type_param = imp.generic_param_list().is_some_and(|l| {
        l.type_or_const_params()
            .any(|p| matches!(p, ast::TypeOrConstParam::Type(_)))
            || l.lifetime_params().next().is_some()
    });
    let has_args = match imp.self_ty() {
        Some(ast::Type::PathType(t)) => t
            .path()
            .and_then(|p| p.segment()?.generic_arg_list())
            .is_some(),
        _ => false,
    };
    imp.trait_().is_some() && has_type_param && has_args
}

/// The name of the type a method's `Self` ([`self_type_written`]) is: itself, or the type of
/// the `impl` block whose head it is (`Band` of `impl<E: M> Band<E> { }`).
pub fn self_type_name(written: &str) -> String {
    syntax::impl_head(written)
        .and_then(|imp| self_type(&imp))
        .unwrap_or_else(|| written.to_string())
}

/// The type parameters of the `impl` block or trait a function is declared in (`E` of
/// `impl<E: M> ..` or of `trait Stage<E: M>`): in its mappings they are generic parameters.
pub fn block_type_params(f: &ast::Fn) -> Vec<String> {
    use ast::HasGenericParams;
    let block = f.syntax().parent().and_then(|list| list.parent());
    let params = block.and_then(|b| match ast::Impl::cast(b.clone()) {
        Some(imp) => imp.generic_param_list(),
        None => ast::Trait::cast(b)?.generic_param_list(),
    });
    params
        .into_iter()
        .flat_map(|l| l.type_or_const_params())
        .filter_map(|p| match p {
            ast::TypeOrConstParam::Type(t) => Some(t.name()?.text().to_string()),
            ast::TypeOrConstParam::Const(_) => None,
        })
        .collect()
}

/// An associated function of `ty` (an `impl` block's or a trait's): a method (with `self`) as
/// its signature, or kept with its body when that is one expression (`Tiler::new(..)`,
/// `plan.addr(i)`: the compiler runs those when it traces the kernel, and the value evaluator
/// does too); an associated function without `self` is written inside `impl ty { .. }` so that
/// a call `ty::name(..)` finds it.
fn assoc_fn_item(f: &ast::Fn, ty: &str) -> Option<Item> {
    let method = f.param_list().and_then(|p| p.self_param()).is_some();
    let mut it = fn_item(f, Some(ty))?;
    if !method && !one_expression(f) {
        in_impl(&mut it, ty, f.syntax());
    }
    Some(it)
}

/// The items a trait declares with a default (`Trait::name`): its provided methods and
/// associated functions, and its associated constants with a value. A type whose `impl Trait`
/// block leaves one out has it (see [`DefMap::resolve_associated`]).
fn trait_defaults(t: &ast::Trait, name: &str, m: &mut ItemDecls) {
    for a in t
        .assoc_item_list()
        .into_iter()
        .flat_map(|l| l.assoc_items())
    {
        match &a {
            ast::AssocItem::Fn(f) if f.body().is_some() => {
                if let Some(it) = assoc_fn_item(f, name) {
                    m.items.push(it);
                }
            }
            ast::AssocItem::Const(c) if c.body().is_some() => {
                if let Some(n) = c.name() {
                    let mut it = verbatim(n, ItemKind::Const, true, c.syntax());
                    it.name = format!("{name}::{}", it.name);
                    it.refs.retain(|r| r != name);
                    in_impl(&mut it, name, c.syntax());
                    m.items.push(it);
                }
            }
            _ => {}
        }
    }
}

/// A function's item: its signature (a `const fn` and a function that computes a value or
/// places the tensors it returns keep their bodies), named `Type::name` for a
/// method of `Type`. Only what the item keeps is read: a body's names are its own.
fn fn_item(f: &ast::Fn, of: Option<&str>) -> Option<Item> {
    let n = f.name()?;
    let node = f.syntax().clone();
    let p = of.is_some() || public(f);
    // A helper returning tensors it places (`from_addr`) keeps its body too: a call binds
    // them at the addresses it computes. So does one returning a tuple, whose values beside
    // its tensors a call evaluates (`(parked, vrf + SLOT)`): the environment reads that body,
    // so the item's text, which is its identity, must hold it (an edit of the body alone
    // would otherwise leave the environment built from the body before it).
    let keeps_body = match of {
        None => {
            f.const_token().is_some() && f.body().is_some()
                || computes_a_value(f)
                || syntax::returns_a_tuple(f)
        }
        Some(_) => one_expression(f) || computes_a_value(f),
    } || syntax::returned_placements(f).is_some();
    let (text, skip): (String, &[SyntaxKind]) = if keeps_body {
        (syntax::node_text(&node), &[])
    } else {
        (syntax::signature_decl(&node), &[SyntaxKind::BLOCK_EXPR])
    };
    let mut it = item(n, ItemKind::Fn, p, text, &node, skip);
    it.syntax = Untracked(Some(node.green().to_owned()));
    if let Some(ty) = of {
        it.name = format!("{ty}::{}", it.name);
        it.refs.retain(|r| r != ty);
        if keeps_body && in_an_impl(f) {
            it.paths.extend(self_paths(&node, ty));
        }
        if keeps_body {
            in_impl(&mut it, ty, f.syntax());
        }
    }
    Some(it)
}

/// Whether `f` is declared in an `impl` block (not a trait's declaration, whose `Self` is
/// each implementing type in turn).
fn in_an_impl(f: &ast::Fn) -> bool {
    f.syntax()
        .parent()
        .and_then(|list| list.parent())
        .is_some_and(|b| ast::Impl::can_cast(b.kind()))
}

/// The paths `Self::ITEM` in the body of a function of an `impl` block for `ty`, as
/// `ty::ITEM`: the environment of a module that imports the function writes the item they
/// name (an associated constant of the block, wherever the block is) beside it.
fn self_paths(node: &SyntaxNode, ty: &str) -> Vec<QPath> {
    let tokens: Vec<ra_ap_syntax::SyntaxToken> = node
        .descendants_with_tokens()
        .filter_map(|t| t.into_token())
        .filter(|t| !t.kind().is_trivia())
        .collect();
    let base = node.text_range().start();
    tokens
        .windows(3)
        .filter(|w| {
            w[0].kind() == SyntaxKind::SELF_TYPE_KW
                && w[1].kind() == SyntaxKind::COLON2
                && w[2].kind() == SyntaxKind::IDENT
        })
        .map(|w| QPath {
            start: u32::from(w[0].text_range().start() - base),
            segs: vec![
                (ty.to_string(), u32::from(w[0].text_range().end() - base)),
                (
                    w[2].text().to_string(),
                    u32::from(w[2].text_range().end() - base),
                ),
            ],
        })
        .collect()
}

/// A function that computes a value from values (`fn plan() -> Placement { let q = BASE +
/// 12; .. }`, `const fn for_config(cfg: &LnConfig) -> Self`): it returns something that is no
/// tensor and takes nothing it works on by reference, so the evaluator can run it at a call
/// (a helper that takes `ctx: &mut Context` or returns a tensor is a step of the kernel,
/// followed by its signature).
fn computes_a_value(f: &ast::Fn) -> bool {
    // A method that returns nothing but changes its receiver (`arena.skip(4);`) computes the
    // receiver's next value.
    let returns_value = match f.ret_type().and_then(|r| r.ty()) {
        Some(t) => !syntax::node_text(t.syntax()).contains("Tensor"),
        None => syntax::changes_self(f),
    };
    returns_value && !syntax::takes_a_working_reference(f) && f.body().is_some()
}

/// Whether `f`'s body is one expression (no statements): a function the value evaluator runs.
fn one_expression(f: &ast::Fn) -> bool {
    f.body()
        .and_then(|b| b.stmt_list())
        .is_some_and(|l| l.statements().next().is_none() && l.tail_expr().is_some())
}

/// A method of `ty` kept with its body, written inside `impl ty { .. }` so that the
/// environment knows whose it is (its positions moved past the `impl` line).
fn in_impl(it: &mut Item, ty: &str, node: &SyntaxNode) {
    within(it, &impl_head(node, ty));
}

/// The line that opens the `impl` block `node` is written in, as the environment writes it:
/// `impl Tiler {`, or with the block's generics (`impl<const N: usize> Tiler<N> {`), which a
/// call binds from the type's turbofish or the value it is called on.
fn impl_head(node: &SyntaxNode, ty: &str) -> String {
    use ast::{HasGenericArgs, HasGenericParams};
    let Some(imp) = node.ancestors().find_map(ast::Impl::cast) else {
        return format!("impl {ty} {{\n");
    };
    let Some(params) = imp.generic_param_list() else {
        return format!("impl {ty} {{\n");
    };
    let args = match imp.self_ty() {
        Some(ast::Type::PathType(t)) => t
            .path()
            .and_then(|p| p.segment()?.generic_arg_list())
            .map(|a| syntax::compact_text(a.syntax()))
            .unwrap_or_default(),
        _ => String::new(),
    };
    format!("impl{} {ty}{args} {{\n", syntax::node_text(params.syntax()))
}

/// A trait's provided function `text` (as the environment writes it: bare, or in the `impl`
/// block of the trait's name) written in an `impl` block of the type `ty`.
fn as_function_of(text: &str, ty: &str) -> String {
    let mut body = text.trim();
    // Each `impl .. {` line around it (one, or two for a function with statements).
    while let Some(rest) = body.strip_prefix("impl")
        && let Some((_, inner)) = rest.split_once('\n')
        && let Some(inner) = inner.trim_end().strip_suffix('}')
    {
        body = inner.trim();
    }
    format!("impl {ty} {{\n{body}\n}}")
}

/// The type an associated constant `name` is declared with in `text` (`const GROUP: usize =
/// 128;` gives `usize`).
fn const_type<'t>(text: &'t str, name: &str) -> Option<&'t str> {
    let after = text.split_once(&format!("const {name}:"))?.1;
    Some(after.split_once('=')?.0.trim())
}

/// `it` written inside the block `head` opens (`impl Tiler {\n`), its positions moved past it.
fn within(it: &mut Item, head: &str) {
    let by = head.len() as u32;
    it.text = format!("{head}{}\n}}", it.text);
    it.name_at = (it.name_at.0 + by, it.name_at.1 + by);
    for p in &mut it.paths {
        p.start += by;
        for s in &mut p.segs {
            s.1 += by;
        }
    }
    // The text is not the function's syntax as it stands.
    it.syntax = Untracked(None);
}

/// An enum whose variants are all units (`enum Region { Taps, Skip = 2 }`).
fn fieldless(e: &ast::Enum) -> bool {
    e.variant_list()
        .is_some_and(|l| l.variants().all(|v| v.field_list().is_none()))
}

/// The identifiers an enum's explicit discriminants are written with (`Skip = BASE + 2`).
fn discriminant_idents(e: &ast::Enum) -> HashSet<String> {
    e.variant_list()
        .into_iter()
        .flat_map(|l| l.variants())
        .filter_map(|v| v.const_arg())
        .flat_map(|c| c.syntax().descendants_with_tokens())
        .filter_map(|t| t.into_token())
        .filter(|t| t.kind() == SyntaxKind::IDENT)
        .map(|t| t.text().to_string())
        .collect()
}

fn type_item(name: Option<ast::Name>, public: bool, m: &mut ItemDecls) {
    declared_type(name, "struct", public, m);
}

/// A type of the crate by its name only: a struct, enum or union is written as `struct Name;`
/// (it shadows the library's type of that name), a trait as `trait Name {}` (a call
/// `Type::f(..)` that the type leaves to a trait's default looks for the trait).
fn declared_type(name: Option<ast::Name>, keyword: &str, public: bool, m: &mut ItemDecls) {
    if let Some(n) = name {
        let name = n.text().to_string();
        let text = match keyword {
            "trait" => format!("trait {name} {{}}"),
            _ => format!("{keyword} {name};"),
        };
        let at = keyword.len() as u32 + 1;
        m.items.push(Item {
            text,
            name_at: (at, at + name.len() as u32),
            name,
            kind: ItemKind::Type,
            public,
            refs: Vec::new(),
            paths: Vec::new(),
            syntax: Untracked::default(),
        });
    }
}

/// `axes![A = 64, B = A * 2]`: one item per axis.
fn axes_items(call: &ast::MacroCall, m: &mut ItemDecls) {
    let is_axes = call
        .path()
        .and_then(|p| p.segment())
        .and_then(|s| s.name_ref())
        .is_some_and(|n| n.text() == "axes");
    let Some(tt) = call.token_tree().filter(|_| is_axes) else {
        return;
    };
    let text = syntax::node_text(tt.syntax());
    let body = text.get(1..text.len().saturating_sub(1)).unwrap_or("");
    let (decls, _) = parse::parse_axes(body);
    let public = true; // `axes!` expands to public items (the vendor's crates import them by glob).
    for d in decls {
        let Some(decl) = body.get(d.span.range()) else {
            continue;
        };
        let name = d.name.text.clone();
        let refs = decl
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty() && *w != name && !w.starts_with(|c: char| c.is_ascii_digit()))
            .map(str::to_string)
            .collect();
        m.items.push(Item {
            name_at: (6, 6 + name.len() as u32),
            text: format!("axes![{decl}];"),
            name,
            kind: ItemKind::Axis,
            public,
            refs,
            paths: Vec::new(),
            syntax: Untracked::default(),
        });
    }
}

fn path_attr(a: &ast::Attr) -> Option<String> {
    let text = syntax::node_text(a.syntax());
    let inner = text.strip_prefix("#[")?.strip_suffix(']')?.trim();
    let value = inner
        .strip_prefix("path")?
        .trim_start()
        .strip_prefix('=')?
        .trim();
    Some(value.strip_prefix('"')?.strip_suffix('"')?.to_string())
}

fn use_tree(tree: &ast::UseTree, prefix: &[String], public: bool, out: &mut Vec<Import>) {
    let mut path = prefix.to_vec();
    if let Some(p) = tree.path() {
        path.extend(
            p.segments()
                .map(|s| syntax::node_text(s.syntax()).trim().to_string()),
        );
    }
    if let Some(list) = tree.use_tree_list() {
        for t in list.use_trees() {
            use_tree(&t, &path, public, out);
        }
    } else if tree.star_token().is_some() {
        out.push(Import {
            path,
            leaf: Leaf::Glob,
            public,
        });
    } else if let Some(name) = path.pop() {
        let alias = tree
            .rename()
            .and_then(|r| r.name())
            .map(|n| n.text().to_string());
        // `use a::b::{self}` imports the module `b`.
        let (path, name) = if name == "self" {
            let Some(m) = path.pop() else { return };
            (path, m)
        } else {
            (path, name)
        };
        out.push(Import {
            path,
            leaf: Leaf::Name { name, alias },
            public,
        });
    }
}

/// A crate to build: its name and root file; `deps` are the crates it reaches by name (the
/// package's library, from a test or an example).
#[derive(Clone, Debug)]
pub struct CrateSpec {
    pub name: String,
    pub root: PathBuf,
}

/// What a name in a module's scope stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Def {
    Item {
        module: usize,
        index: usize,
    },
    Module(usize),
    /// Something of an external crate (its names are unknown).
    External,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Binding {
    def: Def,
    glob: bool,
    public: bool,
    /// The module that declared or imported it (for visibility).
    from: usize,
}

/// One module of a crate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Module {
    pub file: PathBuf,
    /// Index in the file's [`FileItems::modules`].
    pub in_file: usize,
    pub parent: Option<usize>,
    /// The crate (index in [`DefMap::crates`]) the module belongs to.
    pub krate: usize,
    scope: BTreeMap<String, Binding>,
    /// Functions and constants whose name `scope` binds to a module (Rust's two namespaces:
    /// `pub mod project; pub use project::*;` brings the function `project` in beside the
    /// module `project`).
    values: BTreeMap<String, Binding>,
    /// Glob imports that could not be read, as written (`use half::*`).
    pub unresolved: Vec<String>,
    /// Library items imported under another name (`use furiosa_visa_std::prelude::DmTensor as
    /// Dm;`): (the name here, the library's name).
    pub library_renames: Vec<(String, String)>,
}

/// A crate's module tree with every module's scope resolved.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DefMap {
    pub modules: Vec<Module>,
    /// Root module of each crate: the crate itself first, then the crates it reaches by name.
    pub crates: Vec<(String, usize)>,
    items: Vec<(PathBuf, usize, Vec<Item>)>,
    /// Each `impl Trait for Type` of the crates: its module, the type, the trait's path.
    trait_impls: Vec<(usize, String, Vec<String>)>,
    /// Each `impl` block whose methods a library tensor type may have, with its module.
    extension_blocks: Vec<(usize, ExtensionBlock)>,
}

/// Reads what a file declares (a query of the caller's database).
pub trait ItemSource {
    fn items(&self, path: &Path) -> Option<std::sync::Arc<FileItems>>;
}

/// The most modules a crate may have.
const MAX_MODULES: usize = 10_000;
/// The deepest module nesting followed across files (real crates nest a handful deep).
const MAX_DEPTH: usize = 64;

impl DefMap {
    /// Builds the crates (the first is the one analysed) and resolves every import.
    pub fn build(crates: &[CrateSpec], files: &dyn ItemSource) -> DefMap {
        let mut map = DefMap::default();
        let mut file_items: HashMap<PathBuf, std::sync::Arc<FileItems>> = HashMap::new();
        for (k, spec) in crates.iter().enumerate() {
            let root = map.modules.len();
            map.crates.push((spec.name.clone(), root));
            map.add_file_module(&spec.root, None, k, true, files, &mut file_items);
        }
        map.items = map
            .modules
            .iter()
            .map(|m| {
                let items = file_items
                    .get(&m.file)
                    .and_then(|f| f.modules.get(m.in_file))
                    .map(|mi| mi.items().cloned().collect())
                    .unwrap_or_default();
                (m.file.clone(), m.in_file, items)
            })
            .collect();
        map.trait_impls = map
            .each_module_decls(&file_items, |d| &d.trait_impls)
            .into_iter()
            .map(|(k, (ty, tr))| (k, ty, tr))
            .collect();
        map.extension_blocks = map.each_module_decls(&file_items, |d| &d.extension_blocks);
        map.resolve(&file_items);
        map
    }

    /// What `part` gives of each module's declarations, with the module's index.
    fn each_module_decls<T: Clone>(
        &self,
        file_items: &HashMap<PathBuf, std::sync::Arc<FileItems>>,
        part: impl Fn(&ItemDecls) -> &Vec<T>,
    ) -> Vec<(usize, T)> {
        let mut out = Vec::new();
        for (k, m) in self.modules.iter().enumerate() {
            let Some(mi) = file_items
                .get(&m.file)
                .and_then(|f| f.modules.get(m.in_file))
            else {
                continue;
            };
            for d in &mi.decls {
                out.extend(part(d).iter().map(|t| (k, t.clone())));
            }
        }
        out
    }

    /// The `impl` block named `block` (`ScoreFp·3f2a19c0`) whose methods a library tensor type
    /// may have.
    pub fn extension_block(&self, block: &str) -> Option<&ExtensionBlock> {
        self.extension_blocks
            .iter()
            .find_map(|(_, b)| (b.block == block).then_some(b))
    }

    fn add_file_module(
        &mut self,
        file: &Path,
        parent: Option<usize>,
        krate: usize,
        mod_rs: bool,
        files: &dyn ItemSource,
        cache: &mut HashMap<PathBuf, std::sync::Arc<FileItems>>,
    ) -> Option<usize> {
        // A `#[path]` that leads back to a file of an enclosing module would nest forever.
        let mut up = parent;
        let mut depth = 0;
        while let Some(p) = up {
            if self.modules[p].file == file || depth >= MAX_DEPTH {
                return None;
            }
            up = self.modules[p].parent;
            depth += 1;
        }
        let items = files.items(file)?;
        cache.insert(file.to_path_buf(), items.clone());
        let idx = self.push(file, 0, parent, krate);
        let dir = if mod_rs {
            file.parent().map(Path::to_path_buf).unwrap_or_default()
        } else {
            let stem = file.file_stem().map(PathBuf::from).unwrap_or_default();
            file.parent().map(|p| p.join(&stem)).unwrap_or(stem)
        };
        self.add_children(&items, 0, idx, &dir, file, krate, files, cache);
        Some(idx)
    }

    fn push(&mut self, file: &Path, in_file: usize, parent: Option<usize>, krate: usize) -> usize {
        self.modules.push(Module {
            file: file.to_path_buf(),
            in_file,
            parent,
            krate,
            scope: BTreeMap::new(),
            values: BTreeMap::new(),
            unresolved: Vec::new(),
            library_renames: Vec::new(),
        });
        self.modules.len() - 1
    }

    #[allow(clippy::too_many_arguments)]
    fn add_children(
        &mut self,
        items: &FileItems,
        in_file: usize,
        module: usize,
        dir: &Path,
        file: &Path,
        krate: usize,
        files: &dyn ItemSource,
        cache: &mut HashMap<PathBuf, std::sync::Arc<FileItems>>,
    ) {
        let Some(mi) = items.modules.get(in_file) else {
            return;
        };
        for decl in &mi.mods {
            if self.modules.len() >= MAX_MODULES {
                return;
            }
            let child = if let Some(inline) = decl.inline {
                let c = self.push(file, inline, Some(module), krate);
                let sub = match &decl.path_attr {
                    Some(p) => dir.join(p),
                    None => dir.join(&decl.name),
                };
                self.add_children(items, inline, c, &sub, file, krate, files, cache);
                Some(c)
            } else if let Some(p) = &decl.path_attr {
                let base = file.parent().unwrap_or(Path::new(""));
                self.add_file_module(&base.join(p), Some(module), krate, true, files, cache)
            } else {
                let flat = dir.join(format!("{}.rs", decl.name));
                let nested = dir.join(&decl.name).join("mod.rs");
                if files.items(&flat).is_some() {
                    self.add_file_module(&flat, Some(module), krate, false, files, cache)
                } else {
                    self.add_file_module(&nested, Some(module), krate, true, files, cache)
                }
            };
            match child {
                Some(c) => {
                    let binding = Binding {
                        def: Def::Module(c),
                        glob: false,
                        public: decl.public,
                        from: module,
                    };
                    self.modules[module]
                        .scope
                        .insert(decl.name.clone(), binding);
                }
                None => {
                    // A missing file: its names are unknown.
                    let binding = Binding {
                        def: Def::External,
                        glob: false,
                        public: decl.public,
                        from: module,
                    };
                    self.modules[module]
                        .scope
                        .insert(decl.name.clone(), binding);
                }
            }
        }
    }

    fn is_ancestor(&self, anc: usize, mut m: usize) -> bool {
        loop {
            if m == anc {
                return true;
            }
            match self.modules[m].parent {
                Some(p) => m = p,
                None => return false,
            }
        }
    }

    fn crate_root(&self, m: usize) -> usize {
        self.crates
            .get(self.modules[m].krate)
            .map_or(0, |(_, root)| *root)
    }

    /// The module a path (without its leaf) leads to, from `m`.
    fn walk(&self, m: usize, path: &[String]) -> Option<Def> {
        let mut cur = m;
        for (i, seg) in path.iter().enumerate() {
            let next = match seg.as_str() {
                "crate" if i == 0 => Def::Module(self.crate_root(m)),
                "self" if i == 0 => Def::Module(m),
                "super" => Def::Module(self.modules[cur].parent?),
                name => {
                    // A path that goes on names a module or a type there: a function or a
                    // constant of that name is in the other namespace (`use
                    // fp8_gemm::kernels::fp8_gemm;` beside `use fp8_gemm::layouts::*;`).
                    let goes_on = i + 1 < path.len();
                    let binding = self.modules[cur]
                        .scope
                        .get(name)
                        .filter(|b| !(goes_on && self.is_value(b.def)));
                    if let Some(b) = binding {
                        b.def
                    } else if i == 0 {
                        if let Some((_, root)) = self.crates.iter().skip(1).find(|(n, _)| n == name)
                        {
                            Def::Module(*root)
                        } else if let Some((_, root)) =
                            self.crates.first().filter(|(n, _)| n == name)
                        {
                            Def::Module(*root)
                        } else {
                            // An external crate (or one the workspace does not hold).
                            return Some(Def::External);
                        }
                    } else {
                        return None;
                    }
                }
            };
            match next {
                Def::Module(n) => cur = n,
                other => return Some(other),
            }
        }
        Some(Def::Module(cur))
    }

    /// Whether `def` is a function or a constant (Rust's value namespace).
    fn is_value(&self, def: Def) -> bool {
        let Def::Item { module, index } = def else {
            return false;
        };
        self.items
            .get(module)
            .and_then(|m| m.2.get(index))
            .is_some_and(|it| matches!(it.kind, ItemKind::Fn | ItemKind::Const))
    }

    fn visible(&self, b: &Binding, to: usize) -> bool {
        b.public || self.is_ancestor(b.from, to)
    }

    fn resolve(&mut self, file_items: &HashMap<PathBuf, std::sync::Arc<FileItems>>) {
        // Own items first: they are never shadowed by imports.
        for m in 0..self.modules.len() {
            let n = self.items[m].2.len();
            for index in 0..n {
                let it = &self.items[m].2[index];
                let b = Binding {
                    def: Def::Item { module: m, index },
                    glob: false,
                    public: it.public,
                    from: m,
                };
                self.modules[m].scope.entry(it.name.clone()).or_insert(b);
            }
        }
        let imports: Vec<Vec<Import>> = self
            .modules
            .iter()
            .map(|m| {
                file_items
                    .get(&m.file)
                    .and_then(|f| f.modules.get(m.in_file))
                    .map(|mi| mi.imports().cloned().collect())
                    .unwrap_or_default()
            })
            .collect();
        // To a fixpoint: each round may bind names a later import goes through.
        for _round in 0..64 {
            let mut changed = false;
            for (m, list) in imports.iter().enumerate() {
                for imp in list {
                    changed |= self.apply(m, imp);
                }
            }
            if !changed {
                break;
            }
        }
        self.mark_unresolved(&imports);
    }

    /// Glob imports that lead to no module of the workspace (and not to the vendor's library
    /// or the standard library) open their module's scope, and the scopes of the modules that
    /// glob-import it in turn.
    fn mark_unresolved(&mut self, imports: &[Vec<Import>]) {
        for (m, list) in imports.iter().enumerate() {
            for imp in list.iter().filter(|i| i.leaf == Leaf::Glob) {
                let known = imp
                    .path
                    .first()
                    .is_some_and(|p| KNOWN_EXTERNAL.contains(&p.as_str()));
                if !known && !matches!(self.walk(m, &imp.path), Some(Def::Module(_))) {
                    let text = format!("use {}::*", imp.path.join("::"));
                    if !self.modules[m].unresolved.contains(&text) {
                        self.modules[m].unresolved.push(text);
                    }
                }
            }
        }
        for _round in 0..64 {
            let mut changed = false;
            for (m, list) in imports.iter().enumerate() {
                for imp in list.iter().filter(|i| i.leaf == Leaf::Glob) {
                    let Some(Def::Module(t)) = self.walk(m, &imp.path) else {
                        continue;
                    };
                    let inherited: Vec<String> = self.modules[t]
                        .unresolved
                        .iter()
                        .filter(|u| !self.modules[m].unresolved.contains(u))
                        .cloned()
                        .collect();
                    changed |= !inherited.is_empty();
                    self.modules[m].unresolved.extend(inherited);
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// Applies one import to module `m`; true when it bound something new.
    fn apply(&mut self, m: usize, imp: &Import) -> bool {
        let target = self.walk(m, &imp.path);
        match &imp.leaf {
            Leaf::Glob => match target {
                Some(Def::Module(t)) => {
                    let mut changed = false;
                    let names: Vec<(String, Binding)> = self.modules[t]
                        .scope
                        .iter()
                        .filter(|(_, b)| self.visible(b, m))
                        .map(|(n, b)| (n.clone(), *b))
                        .collect();
                    let values: Vec<(String, Binding)> = self.modules[t]
                        .values
                        .iter()
                        .filter(|(_, b)| self.visible(b, m))
                        .map(|(n, b)| (n.clone(), *b))
                        .collect();
                    for (name, b) in names.into_iter().chain(values) {
                        let new = Binding {
                            def: b.def,
                            glob: true,
                            public: imp.public,
                            from: m,
                        };
                        changed |= self.bind_glob(m, name, new);
                    }
                    changed
                }
                // Not (yet) a module: see `mark_unresolved`, after the fixpoint.
                _ => false,
            },
            Leaf::Name { name, alias } => {
                let bound = alias.clone().unwrap_or_else(|| name.clone());
                if bound == "_" {
                    return false;
                }
                // The function or constant of that name beside a module (the value namespace),
                // imported with it.
                let mut bound_value = false;
                if let Some(Def::Module(t)) = target
                    && let Some(b) = self.modules[t].values.get(name).copied()
                    && self.visible(&b, m)
                    && !self.modules[m].values.contains_key(&bound)
                {
                    let value = Binding {
                        public: imp.public,
                        from: m,
                        glob: false,
                        ..b
                    };
                    self.modules[m].values.insert(bound.clone(), value);
                    bound_value = true;
                }
                let def = match target {
                    Some(Def::Module(t)) => match self.modules[t].scope.get(name) {
                        Some(b) if self.visible(b, m) => b.def,
                        _ if imp.path.is_empty() => {
                            // `use name;`: an external crate or a module bound later.
                            match self.walk(m, std::slice::from_ref(name)) {
                                Some(d) => d,
                                None => return bound_value,
                            }
                        }
                        _ => return bound_value,
                    },
                    Some(Def::External) => {
                        let library = imp.path.first().is_some_and(|c| {
                            [Generation::VisaStd, Generation::OptStd]
                                .iter()
                                .any(|g| g.crate_name() == c)
                        });
                        let renamed =
                            (library && bound != *name).then(|| (bound.clone(), name.clone()));
                        if let Some(r) =
                            renamed.filter(|r| !self.modules[m].library_renames.contains(r))
                        {
                            self.modules[m].library_renames.push(r);
                        }
                        Def::External
                    }
                    _ => return bound_value,
                };
                let new = Binding {
                    def,
                    glob: false,
                    public: imp.public,
                    from: m,
                };
                match self.modules[m].scope.get(&bound) {
                    Some(b) if !b.glob => bound_value,
                    Some(b) if b.def == def => bound_value,
                    _ => {
                        self.modules[m].scope.insert(bound, new);
                        true
                    }
                }
            }
        }
    }

    /// Binds `name` in module `m` by a glob import, unless bound already; a function or a
    /// constant whose name the scope gives a module goes to the value namespace. Whether it
    /// bound anything.
    fn bind_glob(&mut self, m: usize, name: String, new: Binding) -> bool {
        let clash = match self.modules[m].scope.get(&name) {
            None => {
                self.modules[m].scope.insert(name, new);
                return true;
            }
            Some(b) => matches!(b.def, Def::Module(_)) && self.is_value(new.def),
        };
        if !clash || self.modules[m].values.contains_key(&name) {
            return false;
        }
        self.modules[m].values.insert(name, new);
        true
    }

    /// The module a file's inline module (or top level) is, in this crate.
    pub fn module_of(&self, file: &Path, in_file: usize) -> Option<usize> {
        self.modules
            .iter()
            .position(|m| m.file == file && m.in_file == in_file)
    }

    /// The path that names module `m` from anywhere in its crate (`crate::dequant`), from the
    /// `mod` declarations of its parents; `None` for a module of another crate.
    pub fn module_path(&self, m: usize) -> Option<String> {
        let module = self.modules.get(m)?;
        if module.krate != 0 {
            return None;
        }
        let Some(parent) = module.parent else {
            return Some("crate".to_string());
        };
        let declared = self
            .modules
            .get(parent)?
            .scope
            .iter()
            .find(|(_, b)| b.def == Def::Module(m) && !b.glob && b.from == parent)?;
        Some(format!("{}::{}", self.module_path(parent)?, declared.0))
    }

    /// The name an item of the crate is declared under.
    pub fn item_name(&self, module: usize, index: usize) -> Option<&str> {
        self.item(module, index).map(|it| it.name.as_str())
    }

    /// An item of the crate: the `index`-th declaration of `module`.
    pub fn item(&self, module: usize, index: usize) -> Option<&Item> {
        self.items.get(module).and_then(|(_, _, it)| it.get(index))
    }

    /// The item a qualified path written in module `from` names (`consts::BASE`,
    /// `crate::layouts::Slice`, `super::A`), if it names one of the crate's items.
    pub fn resolve_item(&self, from: usize, segs: &[String]) -> Option<(usize, usize)> {
        let (leaf, prefix) = segs.split_last()?;
        let Some(Def::Module(t)) = self.walk(from, prefix) else {
            return None;
        };
        let module = self.modules.get(t)?;
        // A name the scope gives a module is a function or a constant's in the value
        // namespace, where a path ending in it is read.
        // So is one imported beside a module the importer cannot see (`use ops::regroup;`
        // with `mod regroup; pub use regroup::*;` in `ops`): only its value is bound.
        let binding = match module.scope.get(leaf) {
            Some(b) if matches!(b.def, Def::Module(_)) => module.values.get(leaf),
            None => module.values.get(leaf),
            b => b,
        };
        match binding {
            Some(b) if self.visible(b, from) => match b.def {
                Def::Item { module, index } => Some((module, index)),
                _ => None,
            },
            _ => None,
        }
    }

    /// The associated item `item` (a method, a type, a constant: `kind`) of the type the path
    /// `ty` written in module `from` names (`GemvPlan`, `gemv::GemvPlan`): the item
    /// `GemvPlan::item` of an `impl` block in the type's module, else the crate's one item of
    /// that name (an `impl` block written elsewhere, a type the path does not resolve to from
    /// here).
    pub fn resolve_associated(
        &self,
        from: usize,
        ty: &[String],
        item: &str,
        kind: ItemKind,
    ) -> Option<(usize, usize)> {
        // The type's own name, which a rename (`use ops::DownProj as Down;`) hides.
        let resolved = self.resolve_item(from, ty);
        let name = match resolved.and_then(|(m, i)| self.item(m, i)) {
            Some(it) => it.name.clone(),
            None => ty.last()?.clone(),
        };
        let key = format!("{name}::{item}");
        let in_module = |m: usize| {
            let (_, _, items) = self.items.get(m)?;
            let i = items
                .iter()
                .position(|it| it.name == key && it.kind == kind)?;
            Some((m, i))
        };
        if let Some(found) = resolved.and_then(|(m, _)| in_module(m)) {
            return Some(found);
        }
        let krate = self.modules.get(from)?.krate;
        let mut all = (0..self.modules.len())
            .filter(|m| self.modules[*m].krate == krate)
            .filter_map(in_module);
        if let Some(first) = all.next() {
            return all.next().is_none().then_some(first);
        }
        self.trait_default(krate, &name, item, kind)
    }

    /// `Type::ITEM` or `<Type as Trait>::ITEM` (a constant, a function or an associated type)
    /// given by an `impl`
    /// block in another module than the type's (`impl DmSlot for BiasDm` in `slots.rs`): trait
    /// impls hold crate-wide, as rustc resolves them.
    fn associated_anywhere(&self, from: usize, segs: &[String]) -> Option<(usize, usize)> {
        // `<Type as Trait>::ITEM` comes as `Type::ITEM` (see `trait_qualified`).
        let (item, ty) = segs.split_last()?;
        if ty.is_empty() {
            return None;
        }
        [ItemKind::Const, ItemKind::Fn, ItemKind::Alias]
            .into_iter()
            .find_map(|kind| self.resolve_associated(from, ty, item, kind))
    }

    /// The default `item` of a trait the type named `ty` implements in crate `krate` and
    /// whose `impl` block leaves it out (`Router::normalize` for `SigmoidRouter`).
    fn trait_default(
        &self,
        krate: usize,
        ty: &str,
        item: &str,
        kind: ItemKind,
    ) -> Option<(usize, usize)> {
        self.trait_impls
            .iter()
            .filter(|(m, t, _)| t == ty && self.modules.get(*m).is_some_and(|x| x.krate == krate))
            .find_map(|(m, _, tr)| {
                let (tm, ti) = self.resolve_item(*m, tr)?;
                let trait_name = &self.item(tm, ti)?.name;
                let key = format!("{trait_name}::{item}");
                let (_, _, items) = self.items.get(tm)?;
                let i = items
                    .iter()
                    .position(|it| it.name == key && it.kind == kind)?;
                Some((tm, i))
            })
    }

    /// The declarations visible in `module` as Rust text (dependencies before the items that
    /// need them), and the glob imports that could not be read.
    ///
    /// `paths` are the qualified paths written in the module's functions (`consts::BASE`):
    /// each that names an item of the crate is written as `use consts::BASE as NAME;` after
    /// the item, declared under `NAME` (its own name unless that is taken by another item,
    /// then the path joined with `·`). The environment binds the path to what `NAME` is, so
    /// a qualified path resolves exactly as the plain imported name does. Paths inside the
    /// declarations themselves are resolved from the module that declares them and replaced
    /// by the name they are written under. An item written as it stands is also a piece of
    /// the result, with its syntax (see [`Verbatim`]).
    pub fn env_text(&self, module: usize, paths: &[Vec<String>]) -> EnvSource {
        let Some(m) = self.modules.get(module) else {
            return EnvSource::default();
        };
        let mut out = EnvSource::default();
        let mut emitted: HashMap<String, (usize, usize)> = HashMap::new();
        // Own items in source order, then imports by name.
        let own: Vec<(String, Def)> = (0..self.items[module].2.len())
            .filter_map(|index| {
                let it = self.item(module, index)?;
                let b = m.scope.get(&it.name)?;
                (b.def == Def::Item { module, index }).then(|| (it.name.clone(), b.def))
            })
            .collect();
        // Everything else the scope binds, `use self::Slice as Strip;` included.
        let imported: Vec<(String, Def)> = m
            .scope
            .iter()
            .filter(|(n, b)| !own.iter().any(|(o, d)| o == *n && *d == b.def))
            .map(|(n, b)| (n.clone(), b.def))
            .collect();
        // The functions and constants named like a module in scope (the value namespace).
        let values = m.values.iter().map(|(n, b)| (n.clone(), b.def));
        for (name, def) in own.into_iter().chain(imported).chain(values) {
            if let Def::Item { module: dm, index } = def {
                self.emit(&name, dm, index, module, &mut emitted, &mut out, 0);
            }
        }
        self.emit_trait_impl_fns(module, &mut emitted, &mut out);
        for p in paths {
            // The longest prefix that names an item (`layouts::Tile` of `layouts::Tile::SIZE`).
            for k in (2..=p.len()).rev() {
                let segs = &p[..k];
                if let Some(name) = self.emit_path(module, segs, module, &mut emitted, &mut out, 0)
                {
                    // An associated item written under its own path needs no binding.
                    if name != segs.join("::") {
                        out.text
                            .push_str(&format!("use {} as {name};\n", segs.join("::")));
                    }
                    break;
                }
            }
        }
        for (here, library) in &m.library_renames {
            out.text
                .push_str(&format!("use {LIBRARY_PATH}::{library} as {here};\n"));
        }
        out.unresolved = m.unresolved.clone();
        out
    }

    /// The functions of each `impl` of a trait in scope in `module` (`impl Projection for
    /// QDm` in another module, with `Projection` imported): as rustc resolves a method call,
    /// a method of the trait is callable on the type wherever the trait is in scope, so the
    /// evaluator can run `q_dm.sin_lane()`.
    fn emit_trait_impl_fns(
        &self,
        module: usize,
        emitted: &mut HashMap<String, (usize, usize)>,
        out: &mut EnvSource,
    ) {
        let Some(m) = self.modules.get(module) else {
            return;
        };
        let in_scope = |def: (usize, usize)| {
            m.scope.values().any(|b| {
                b.def
                    == Def::Item {
                        module: def.0,
                        index: def.1,
                    }
            })
        };
        for (im, ty, tr) in &self.trait_impls {
            if self.modules.get(*im).is_none_or(|x| x.krate != m.krate) {
                continue;
            }
            if !self.resolve_item(*im, tr).is_some_and(in_scope) {
                continue;
            }
            let prefix = format!("{ty}::");
            let fns: Vec<(usize, String)> = self.items[*im]
                .2
                .iter()
                .enumerate()
                .filter(|(_, it)| it.kind == ItemKind::Fn && it.name.starts_with(&prefix))
                .map(|(i, it)| (i, it.name.clone()))
                .collect();
            for (index, name) in fns {
                self.emit(&name, *im, index, module, emitted, out, 0);
            }
        }
    }

    /// Writes the item a qualified path written in module `from` names into the environment
    /// of `at` (once), and returns the name it is written under there.
    fn emit_path(
        &self,
        from: usize,
        segs: &[String],
        at: usize,
        emitted: &mut HashMap<String, (usize, usize)>,
        out: &mut EnvSource,
        depth: usize,
    ) -> Option<String> {
        let def = self
            .resolve_item(from, segs)
            .or_else(|| self.associated_anywhere(from, segs))?;
        let it = self.item(def.0, def.1)?;
        let leaf = segs.last()?;
        // An associated item named by its type (`StatDm::BASE`) keeps that name: it is
        // written in its `impl` block, where another type's `BASE` does not collide with it.
        let associated = it.name.contains("::") && segs.join("::") == it.name;
        let renamable = it.name_at.0 != it.name_at.1 && !associated;
        let plain = if renamable { leaf } else { &it.name };
        // Another item of the environment under that name: this module's own binding, or one
        // already written.
        let taken = |n: &str, emitted: &HashMap<String, (usize, usize)>| {
            emitted.get(n).is_some_and(|d| *d != def)
                || self.modules[at].scope.get(n).is_some_and(
                    |b| matches!(b.def, Def::Item { module, index } if (module, index) != def),
                )
        };
        // Already written under another name (an import's rename, another path to it).
        let written = emitted
            .iter()
            .filter(|(_, d)| **d == def)
            .map(|(n, _)| n)
            .min()
            .cloned();
        let name = if let Some(n) = written {
            n
        } else if !taken(plain, emitted) {
            plain.clone()
        } else if renamable {
            let base = segs.join("·");
            let mut name = base.clone();
            let mut k = 2;
            while taken(&name, emitted) {
                name = format!("{base}·{k}");
                k += 1;
            }
            name
        } else {
            return None;
        };
        self.emit(&name, def.0, def.1, at, emitted, out, depth + 1);
        (emitted.get(&name) == Some(&def)).then_some(name)
    }

    #[allow(clippy::too_many_arguments)]
    fn emit(
        &self,
        name: &str,
        dm: usize,
        index: usize,
        at: usize,
        emitted: &mut HashMap<String, (usize, usize)>,
        out: &mut EnvSource,
        depth: usize,
    ) {
        if depth > 64 || emitted.contains_key(name) {
            return;
        }
        emitted.insert(name.to_string(), (dm, index));
        let Some(it) = self.item(dm, index) else {
            return;
        };
        // Its dependencies, as its own module sees them, unless this module binds the name.
        for r in &it.refs {
            if emitted.contains_key(r) {
                continue;
            }
            let here = self.modules[at].scope.get(r).map(|b| b.def);
            let there = self.modules[dm].scope.get(r).map(|b| b.def);
            let dep = match (here, there) {
                (Some(Def::Item { module, index }), _) => Some((module, index)),
                (None, Some(Def::Item { module, index })) => Some((module, index)),
                _ => None,
            };
            if let Some((module, index)) = dep {
                self.emit(r, module, index, at, emitted, out, depth + 1);
            }
        }
        // A mapping alias already written under its own name and bound here under another
        // (`use self::Tile as Block;`) is an alias of it, so both are one alias (a cycle
        // through the rename is still a cycle).
        let is_mapping = it.kind == ItemKind::Alias
            && it
                .text
                .split_once('=')
                .is_some_and(|(_, ty)| ty.trim_start().starts_with("m!"));
        if is_mapping && it.name != name && emitted.get(&it.name) == Some(&(dm, index)) {
            out.text
                .push_str(&format!("type {name} = m![{{ {} }}];\n", it.name));
            return;
        }
        // Its qualified paths, resolved where it is declared, and its name: the edits that
        // write it under the names this environment knows.
        let mut edits: Vec<(usize, usize, String)> = Vec::new();
        if it.name != name && it.name_at.0 != it.name_at.1 {
            edits.push((
                it.name_at.0 as usize,
                it.name_at.1 as usize,
                name.to_string(),
            ));
        }
        for p in &it.paths {
            for k in (2..=p.segs.len()).rev() {
                let segs = p.names(k);
                if let Some(n) = self.emit_path(dm, &segs, at, emitted, out, depth + 1) {
                    // An associated item (`Self::BASE` of a method) is written in its `impl`
                    // block under its own path, where the path as written finds it.
                    if n != segs.join("::") {
                        edits.push((p.start as usize, p.segs[k - 1].1 as usize, n));
                    }
                    break;
                }
            }
        }
        if let (true, Some(green)) = (edits.is_empty(), &it.syntax.0) {
            let start = out.text.len();
            out.text.push_str(&it.text);
            out.pieces.0.push(EnvPiece {
                start,
                end: out.text.len(),
                green: green.clone(),
            });
        } else {
            edits.sort();
            let mut at_byte = 0;
            for (a, b, with) in edits {
                if a < at_byte {
                    continue;
                }
                out.text.push_str(it.text.get(at_byte..a).unwrap_or(""));
                out.text.push_str(&with);
                at_byte = b;
            }
            out.text.push_str(it.text.get(at_byte..).unwrap_or(""));
        }
        out.text.push('\n');
        if it.kind == ItemKind::Type {
            self.emit_impl(&it.name, dm, at, emitted, out, depth);
            if it.name != name {
                self.emit_renamed_impl(&it.name, name, dm, out);
            }
            self.emit_trait_defaults(&it.name, dm, at, emitted, out, depth);
            self.emit_extensions((dm, index), at, emitted, out, depth);
        }
    }

    /// The provided functions of the traits the type `ty` (declared in module `dm`) implements
    /// that no `impl` block of it writes, written as its own (`impl PingPong { fn region(..)
    /// .. }`): a call `PingPong::region(c)` runs the trait's body with `Self` as `PingPong`,
    /// as rustc resolves it.
    fn emit_trait_defaults(
        &self,
        ty: &str,
        dm: usize,
        at: usize,
        emitted: &mut HashMap<String, (usize, usize)>,
        out: &mut EnvSource,
        depth: usize,
    ) {
        let Some(krate) = self.modules.get(dm).map(|m| m.krate) else {
            return;
        };
        let in_crate = |m: usize| self.modules.get(m).is_some_and(|x| x.krate == krate);
        let traits: Vec<(usize, usize)> = self
            .trait_impls
            .iter()
            .filter(|(m, t, _)| t == ty && in_crate(*m))
            .filter_map(|(m, _, tr)| self.resolve_item(*m, tr))
            .collect();
        let declared = |name: &str| {
            self.items
                .iter()
                .enumerate()
                .any(|(m, (_, _, items))| in_crate(m) && items.iter().any(|i| i.name == name))
        };
        for (tm, ti) in traits {
            let Some(trait_name) = self.item_name(tm, ti) else {
                continue;
            };
            let prefix = format!("{trait_name}::");
            let Some((_, _, items)) = self.items.get(tm) else {
                continue;
            };
            for (index, it) in items.iter().enumerate() {
                let Some(function) = it.name.strip_prefix(&prefix) else {
                    continue;
                };
                let own = format!("{ty}::{function}");
                if it.kind != ItemKind::Fn || emitted.contains_key(&own) || declared(&own) {
                    continue;
                }
                // A value it computes; a helper that takes the context (`load(ctx, ..)`) is
                // traced at its calls with `Self` bound instead.
                let parsed = ast::SourceFile::parse(&it.text, ra_ap_syntax::Edition::Edition2024);
                let computes = parsed
                    .tree()
                    .syntax()
                    .descendants()
                    .find_map(ast::Fn::cast)
                    .is_some_and(|f| computes_a_value(&f));
                if !computes {
                    continue;
                }
                // What the default reads, as the trait's module sees it.
                self.emit(&it.name, tm, index, at, emitted, out, depth + 1);
                emitted.insert(own, (usize::MAX, usize::MAX));
                out.text.push_str(&as_function_of(&it.text, ty));
                out.text.push('\n');
            }
        }
    }

    /// The methods the crate's `impl` blocks of the trait `tr` (its module and index) give
    /// library tensor types (see [`extension_items`]): where the trait is in scope, a tensor
    /// has them.
    fn emit_extensions(
        &self,
        tr: (usize, usize),
        at: usize,
        emitted: &mut HashMap<String, (usize, usize)>,
        out: &mut EnvSource,
        depth: usize,
    ) {
        let blocks: Vec<(usize, &str)> = self
            .trait_impls
            .iter()
            .filter(|(_, ty, _)| ty.contains('·'))
            .filter(|(m, _, path)| self.resolve_item(*m, path) == Some(tr))
            .map(|(m, ty, _)| (*m, ty.as_str()))
            .collect();
        for (m, ty) in blocks {
            self.emit_impl(ty, m, at, emitted, out, depth);
            self.emit_extension_defaults((m, ty), tr, emitted, out);
        }
    }

    /// The provided methods of the trait `tr` that the `impl` block `block` (in module `m`)
    /// leaves out, as the block's own (see [`ExtensionBlock::method_decl`]): a tensor of its
    /// type has them, and a call runs the trait's body with `self` the tensor.
    fn emit_extension_defaults(
        &self,
        (m, block): (usize, &str),
        (tm, ti): (usize, usize),
        emitted: &mut HashMap<String, (usize, usize)>,
        out: &mut EnvSource,
    ) {
        let Some(ext) = self
            .extension_blocks
            .iter()
            .find_map(|(bm, b)| (*bm == m && b.block == block).then_some(b))
        else {
            return;
        };
        let (Some(trait_name), Some((_, _, items))) = (self.item_name(tm, ti), self.items.get(tm))
        else {
            return;
        };
        let prefix = format!("{trait_name}::");
        for it in items.iter().filter(|i| i.kind == ItemKind::Fn) {
            let Some(function) = it.name.strip_prefix(&prefix) else {
                continue;
            };
            let key = format!("{block}::{function}");
            if ext.defines.iter().any(|d| d == function) || emitted.contains_key(&key) {
                continue;
            }
            let parsed = ast::SourceFile::parse(&it.text, ra_ap_syntax::Edition::Edition2024);
            let Some(decl) = parsed
                .tree()
                .syntax()
                .descendants()
                .find_map(ast::Fn::cast)
                .and_then(|f| ext.method_decl(&f))
            else {
                continue;
            };
            emitted.insert(key, (usize::MAX, usize::MAX));
            out.text.push_str(&decl.text);
            out.text.push('\n');
        }
    }

    /// The associated types and constants of the type `orig` (declared in module `dm`), which
    /// this environment binds as `new` (`use crate::ops::UpProj as Up;`), written for `new`
    /// too, each naming `orig`'s (`impl Projection for Up { type Acc = UpProj::Acc; }`): a
    /// call `project::<Up>(..)` reads `Up::Acc`, as rustc resolves it.
    fn emit_renamed_impl(&self, orig: &str, new: &str, dm: usize, out: &mut EnvSource) {
        let prefix = format!("{orig}::");
        let Some((_, _, items)) = self.items.get(dm) else {
            return;
        };
        for it in items.iter().filter(|i| i.name.starts_with(&prefix)) {
            let item = &it.name[prefix.len()..];
            let Some((head, _)) = it.text.split_once('\n') else {
                continue;
            };
            // `impl Projection for UpProj {` or `impl UpProj {`; a generic block is left out.
            let renamed = head
                .strip_suffix(&format!(" {orig} {{"))
                .map(|h| format!("{h} {new} {{"));
            let Some(head) = renamed.filter(|h| h.starts_with("impl ")) else {
                continue;
            };
            let body = match it.kind {
                ItemKind::Alias => format!("type {item} = {orig}::{item};"),
                ItemKind::Const => {
                    let Some(ty) = const_type(&it.text, item) else {
                        continue;
                    };
                    format!("const {item}: {ty} = {orig}::{item};")
                }
                _ => continue,
            };
            out.text.push_str(&format!("{head}\n{body}\n}}\n"));
        }
    }

    /// The methods and associated functions of the type `ty` declared in module `dm` (items
    /// `ty::name`), written after it: a value of the type can be evaluated where it is used.
    fn emit_impl(
        &self,
        ty: &str,
        dm: usize,
        at: usize,
        emitted: &mut HashMap<String, (usize, usize)>,
        out: &mut EnvSource,
        depth: usize,
    ) {
        let prefix = format!("{ty}::");
        let Some((_, _, items)) = self.items.get(dm) else {
            return;
        };
        for (index, m) in items.iter().enumerate() {
            if m.name.starts_with(&prefix) {
                self.emit(&m.name, dm, index, at, emitted, out, depth + 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ra_ap_syntax::{Edition, SourceFile};
    use std::sync::Arc;

    struct Files(HashMap<PathBuf, Arc<FileItems>>);

    impl ItemSource for Files {
        fn items(&self, path: &Path) -> Option<Arc<FileItems>> {
            self.0.get(path).cloned()
        }
    }

    fn files(list: &[(&str, &str)]) -> Files {
        Files(
            list.iter()
                .map(|(p, t)| {
                    let tree = SourceFile::parse(t, Edition::Edition2024).tree();
                    (PathBuf::from(p), Arc::new(file_items(&tree)))
                })
                .collect(),
        )
    }

    fn env(map: &DefMap, file: &str, in_file: usize) -> String {
        let m = map.module_of(Path::new(file), in_file).expect("module");
        map.env_text(m, &[]).text
    }

    #[test]
    fn axes_of_a_parent_module_reach_a_child_file_through_use_super_glob() {
        let fs = files(&[
            ("src/lib.rs", "pub mod ve;"),
            (
                "src/ve.rs",
                "use furiosa_visa_std::prelude::*;\naxes![A = 64, B = 32];\nmod normal;\npub use normal::*;",
            ),
            ("src/ve/normal.rs", "use super::*;\npub fn k() {}"),
        ]);
        let spec = CrateSpec {
            name: "ex".into(),
            root: "src/lib.rs".into(),
        };
        let map = DefMap::build(&[spec], &fs);
        let e = env(&map, "src/ve/normal.rs", 0);
        assert!(
            e.contains("axes![A = 64];") && e.contains("axes![B = 32];"),
            "{e}"
        );
        // And the kernel is re-exported to the parent.
        assert!(env(&map, "src/ve.rs", 0).contains("pub fn k()"));
    }

    /// Rust's two namespaces: `ops` declares the module `project` and re-exports the
    /// function `project` of it by a glob; `use crate::ops::project;` brings both, and a call
    /// `project::<Up>(..)` is the function's (round 23's swiglu_ffn lost its projections).
    #[test]
    fn a_function_named_like_its_module_is_imported_beside_it() {
        let fs = files(&[
            ("src/lib.rs", "pub mod ops;\npub mod kernels;"),
            ("src/ops/mod.rs", "pub mod project;\npub use project::*;"),
            (
                "src/ops/project.rs",
                "pub fn project() {}\npub fn other() {}",
            ),
            (
                "src/kernels.rs",
                "use crate::ops::{other, project};\npub fn k() {}",
            ),
        ]);
        let spec = CrateSpec {
            name: "ex".into(),
            root: "src/lib.rs".into(),
        };
        let map = DefMap::build(&[spec], &fs);
        let e = env(&map, "src/kernels.rs", 0);
        assert!(e.contains("pub fn project()"), "{e}");
        assert!(e.contains("pub fn other()"), "{e}");
        let kernels = map
            .module_of(Path::new("src/kernels.rs"), 0)
            .expect("module");
        let f = map
            .resolve_item(kernels, &["crate".into(), "ops".into(), "project".into()])
            .and_then(|(m, i)| map.item_name(m, i).map(str::to_string));
        assert_eq!(f.as_deref(), Some("project"));
    }

    /// `mod regroup; pub use regroup::*;`: the module is private to `ops`, so `use
    /// crate::ops::regroup;` elsewhere binds only the function (round 25's channel_shuffle).
    #[test]
    fn a_function_beside_a_private_module_of_its_name_is_imported_alone() {
        let fs = files(&[
            ("src/lib.rs", "pub mod ops;\npub mod kernels;"),
            ("src/ops/mod.rs", "mod regroup;\npub use regroup::*;"),
            ("src/ops/regroup.rs", "pub fn regroup() {}"),
            ("src/kernels.rs", "use crate::ops::regroup;\npub fn k() {}"),
        ]);
        let spec = CrateSpec {
            name: "ex".into(),
            root: "src/lib.rs".into(),
        };
        let map = DefMap::build(&[spec], &fs);
        let kernels = map
            .module_of(Path::new("src/kernels.rs"), 0)
            .expect("module");
        let f = map
            .resolve_item(kernels, &["regroup".into()])
            .and_then(|(m, i)| map.item_name(m, i).map(str::to_string));
        assert_eq!(f.as_deref(), Some("regroup"));
    }

    /// A type imported under another name keeps its associated items under that name too:
    /// `project::<Up>` reads `Up::Acc` (round 23's swiglu_ffn, `UpProj as Up`).
    #[test]
    fn a_renamed_type_keeps_its_associated_items() {
        let fs = files(&[
            ("src/lib.rs", "pub mod ops;\npub mod kernels;"),
            (
                "src/ops.rs",
                "pub trait Projection { type Acc; const LANES: usize; }\npub struct UpProj;\nimpl Projection for UpProj {\n    type Acc = m![F % 8];\n    const LANES: usize = 8;\n}",
            ),
            (
                "src/kernels.rs",
                "use crate::ops::UpProj as Up;\npub fn k() {}",
            ),
        ]);
        let spec = CrateSpec {
            name: "ex".into(),
            root: "src/lib.rs".into(),
        };
        let map = DefMap::build(&[spec], &fs);
        let e = env(&map, "src/kernels.rs", 0);
        assert!(
            e.contains("impl Projection for Up {\ntype Acc = UpProj::Acc;\n}"),
            "{e}"
        );
        assert!(e.contains("const LANES: usize = UpProj::LANES;"), "{e}");
    }

    /// The path a helper copy is named by from another module: each module's `mod` name from
    /// the crate root, an inline module too.
    #[test]
    fn module_paths_follow_the_mod_declarations() {
        let fs = files(&[
            ("src/lib.rs", "pub mod t;\nmod user { pub fn f() {} }"),
            ("src/t/mod.rs", "pub mod axes;"),
            ("src/t/axes.rs", "pub const BASE: usize = 0x1000;"),
        ]);
        let spec = CrateSpec {
            name: "ex".into(),
            root: "src/lib.rs".into(),
        };
        let map = DefMap::build(&[spec], &fs);
        let path = |file: &str, in_file| {
            let m = map.module_of(std::path::Path::new(file), in_file)?;
            map.module_path(m)
        };
        assert_eq!(path("src/lib.rs", 0).as_deref(), Some("crate"));
        assert_eq!(path("src/t/axes.rs", 0).as_deref(), Some("crate::t::axes"));
        assert_eq!(path("src/lib.rs", 1).as_deref(), Some("crate::user"));
    }

    #[test]
    fn crate_paths_renames_and_inline_modules() {
        let fs = files(&[
            (
                "src/lib.rs",
                "pub mod t;\nmod user { use crate::t::axes::{D as Dh, H}; type X = m![Dh, H]; }",
            ),
            ("src/t/mod.rs", "pub mod axes;"),
            (
                "src/t/axes.rs",
                "axes![D = 64, H = 896];\npub const BASE: usize = 0x1000;",
            ),
        ]);
        let spec = CrateSpec {
            name: "ex".into(),
            root: "src/lib.rs".into(),
        };
        let map = DefMap::build(&[spec], &fs);
        let e = env(&map, "src/lib.rs", 1);
        assert!(
            e.contains("axes![Dh = 64];") && e.contains("axes![H = 896];"),
            "{e}"
        );
        assert!(!e.contains("BASE"), "not imported: {e}");
        // The top level sees neither (they are the inline module's).
        assert!(!env(&map, "src/lib.rs", 0).contains("axes!"));
    }

    #[test]
    fn an_alias_brings_the_axes_it_names_along() {
        let fs = files(&[
            ("src/lib.rs", "mod a; mod b;"),
            ("src/a.rs", "axes![A = 8];\npub type Row = m![A];"),
            ("src/b.rs", "use crate::a::Row;"),
        ]);
        let spec = CrateSpec {
            name: "ex".into(),
            root: "src/lib.rs".into(),
        };
        let map = DefMap::build(&[spec], &fs);
        let e = env(&map, "src/b.rs", 0);
        let (axis, alias) = (e.find("axes![A = 8]"), e.find("type Row"));
        assert!(axis.is_some() && alias.is_some() && axis < alias, "{e}");
    }

    #[test]
    fn tests_reach_the_library_by_its_name_and_unknown_globs_open_the_scope() {
        let fs = files(&[
            ("src/lib.rs", "pub mod k { axes![A = 4]; }"),
            ("tests/t.rs", "use ex::k::*;\nuse half::*;"),
        ]);
        let lib = CrateSpec {
            name: "ex".into(),
            root: "src/lib.rs".into(),
        };
        let test = CrateSpec {
            name: "t".into(),
            root: "tests/t.rs".into(),
        };
        let map = DefMap::build(&[test, lib], &fs);
        let m = map.module_of(Path::new("tests/t.rs"), 0).expect("module");
        let EnvSource {
            text: e,
            unresolved: open,
            ..
        } = map.env_text(m, &[]);
        assert!(e.contains("axes![A = 4];"), "{e}");
        assert_eq!(open, vec!["use half::*".to_string()]);
    }

    #[test]
    fn a_path_attribute_leading_back_to_an_enclosing_file_is_not_followed() {
        let fs = files(&[
            (
                "src/lib.rs",
                "axes![A = 4];\n#[path = \"lib.rs\"] mod again;\nmod b;",
            ),
            ("src/b.rs", "#[path = \"b.rs\"] mod me; use super::*;"),
        ]);
        let spec = CrateSpec {
            name: "ex".into(),
            root: "src/lib.rs".into(),
        };
        let map = DefMap::build(&[spec], &fs);
        assert_eq!(map.modules.len(), 2);
        assert!(env(&map, "src/b.rs", 0).contains("axes![A = 4]"));
    }

    #[test]
    fn qualified_paths_are_found_in_code_and_macro_bodies() {
        let text = "use crate::a::B;\nfn f() { let x = consts::BASE + super::X; type T = m![{ layouts::Tile } / layouts::A::SIZE]; HbmTensor::<u8>::from_addr(0); y.z::<q::R>(); }";
        let tree = SourceFile::parse(text, Edition::Edition2024).tree();
        let found: Vec<String> = qualified_paths(tree.syntax(), true)
            .iter()
            .map(|p| p.names(p.segs.len()).join("::"))
            .collect();
        assert_eq!(
            found,
            [
                "consts::BASE",
                "super::X",
                "layouts::Tile",
                "layouts::A::SIZE",
                "q::R"
            ]
        );
        // Offsets point at the written text.
        let p = &qualified_paths(tree.syntax(), true)[2];
        let end = p.segs[1].1 as usize;
        assert_eq!(&text[p.start as usize..end], "layouts::Tile");
    }

    #[test]
    fn qualified_paths_resolve_to_the_items_they_name_under_a_free_name() {
        let fs = files(&[(
            "src/lib.rs",
            "pub mod a { pub const BASE: u64 = 8; pub const TOP: u64 = super::b::BASE + 1; }\npub mod b { pub const BASE: u64 = 16; }\nmod k { use crate::a::BASE; }",
        )]);
        let spec = CrateSpec {
            name: "ex".into(),
            root: "src/lib.rs".into(),
        };
        let map = DefMap::build(&[spec], &fs);
        let k = map.module_of(Path::new("src/lib.rs"), 3).expect("module k");
        let path = |p: &str| p.split("::").map(str::to_string).collect::<Vec<_>>();
        let e = map
            .env_text(
                k,
                &[
                    path("crate::b::BASE"),
                    path("super::a::TOP"),
                    path("std::u64::MAX"),
                ],
            )
            .text;
        // `BASE` is `a::BASE` here, so `b::BASE` is written under its path's name, and `TOP`'s
        // own `super::b::BASE` (from module `a`) is the same item under the same name.
        assert!(e.contains("const BASE: u64 = 8;"), "{e}");
        assert!(e.contains("const crate·b·BASE: u64 = 16;"), "{e}");
        assert!(e.contains("use crate::b::BASE as crate·b·BASE;"), "{e}");
        assert!(e.contains("const TOP: u64 = crate·b·BASE + 1;"), "{e}");
        assert!(e.contains("use super::a::TOP as TOP;"), "{e}");
        assert!(!e.contains("MAX"), "{e}");
    }

    /// The items of the file's top level, with their kinds, and what was not expanded.
    fn top_level(src: &str) -> (Vec<SyntaxKind>, Vec<NotExpanded>) {
        let root = ast::SourceFile::parse(src, ra_ap_syntax::Edition::Edition2024).tree();
        let layout = file_layout(&root);
        let top = &layout.modules[0];
        let kinds = top
            .items
            .iter()
            .map(|i| SyntaxNode::new_root(i.green.0.clone()).kind());
        (kinds.collect(), top.not_expanded.clone())
    }

    #[test]
    fn an_invocation_generates_its_items_at_the_invocation() {
        let src = "macro_rules! two { ($a:ident) => { fn $a() {} const B: u8 = 1; }; }\ntwo!(f);";
        let root = ast::SourceFile::parse(src, ra_ap_syntax::Edition::Edition2024).tree();
        let layout = file_layout(&root);
        let call = (
            src.find("two!(f)").unwrap_or(0) as u32,
            src.len() as u32 - 1,
        );
        let generated: Vec<_> = layout.modules[0]
            .items
            .iter()
            .filter_map(|i| Some((i.at, i.generated.as_ref()?.call)))
            .collect();
        assert_eq!(generated, [(call.0, call), (call.0, call)]);
    }

    #[test]
    fn a_macro_that_invokes_itself_stops_at_the_depth_limit() {
        let src = "macro_rules! again { () => { fn f() {} again!(); }; }\nagain!();";
        let (kinds, not_expanded) = top_level(src);
        let fns = kinds.iter().filter(|k| **k == SyntaxKind::FN).count();
        assert_eq!(fns, MAX_EXPANSION_DEPTH);
        assert_eq!(not_expanded.len(), 1, "one report for the invocation");
        assert!(not_expanded[0].reason.contains("nested"));
    }

    #[test]
    fn a_macro_that_multiplies_is_cut_off_by_the_byte_budget() {
        // Each level invokes the next ten times: 10^7 expansions without the budget.
        let mut src = String::from("macro_rules! l0 { () => { fn f() {} }; }\n");
        for level in 1..8 {
            let calls = format!("l{}!(); ", level - 1).repeat(10);
            // And writes a 6 KB array.
            let zeros = vec!["0"; 3000].join(",");
            src.push_str(&format!(
                "macro_rules! l{level} {{ () => {{ {calls} const P: [u8; 3000] = [{zeros}]; }}; }}\n"
            ));
        }
        src.push_str("l7!();");
        let (kinds, not_expanded) = top_level(&src);
        assert!(kinds.len() < 100_000, "{} items", kinds.len());
        assert_eq!(not_expanded.len(), 1);
        assert!(
            not_expanded[0].reason.contains("bytes"),
            "{:?}",
            not_expanded[0]
        );
    }

    #[test]
    fn private_items_are_visible_to_descendants_only() {
        let fs = files(&[(
            "src/lib.rs",
            "mod a { axes![A = 4]; const SECRET: usize = 1; pub mod c { use super::*; } }\nmod b { use crate::a::*; }",
        )]);
        let spec = CrateSpec {
            name: "ex".into(),
            root: "src/lib.rs".into(),
        };
        let map = DefMap::build(&[spec], &fs);
        assert!(env(&map, "src/lib.rs", 2).contains("SECRET"));
        let b = env(&map, "src/lib.rs", 3);
        assert!(!b.contains("SECRET") && b.contains("axes![A = 4]"), "{b}");
    }
}
