//! From source text to the mapping-level model of a file: every `axes!`, `m!` and `i!` call,
//! the `type X = m![...]` aliases, and which function each one lives in.
//!
//! Parsing uses ra_ap_syntax, which always returns a tree, so half-typed files are analysed as
//! far as they go. (The engine-chain model of issue 3 grows from here.)

pub mod limits;
pub mod macros;
pub(crate) mod type_form;

use crate::diagnostic::Span;
use crate::mapping::{self, Problem, Scope, ast, parse};
use ra_ap_syntax::{
    AstNode, Edition, GreenNode, SourceFile, SyntaxKind, SyntaxNode, TextRange, TextSize, ast as ra,
};
use std::collections::HashMap;

/// Which of the crate's three macros a call is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacroKind {
    Axes,
    Mapping,
    Index,
}

/// One call of `axes!`, `m!` or `i!`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MacroSite {
    pub kind: MacroKind,
    /// The text between the delimiters.
    pub body: String,
    /// Byte offset of `body` in the file.
    pub body_start: u32,
    /// The whole call, `m![...]`.
    pub span: Span,
    /// Enclosing functions, innermost first (as text ranges, which identify them in a file).
    pub fns: Vec<Span>,
}

/// A `type X = m![...];` alias.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AliasSite {
    pub name: ast::Name,
    /// Index into [`FileModel::sites`] of its `m![...]`.
    pub site: usize,
    /// Its type and const parameters (`type LaneBus<Ln> = m![{ Ln } # 8];`), which its body
    /// names as each use gives them.
    pub generics: Vec<String>,
}

/// `type Strip = Slice;` or `type Strip = layouts::Slice;`: another name for whatever the
/// path names (a mapping alias, when it names one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenameSite {
    pub name: ast::Name,
    /// The named path as the environment keys it (`Slice`, `layouts::Slice`).
    pub target: String,
    /// Where the path is written.
    pub target_span: Span,
    /// Enclosing functions, innermost first.
    pub fns: Vec<Span>,
}

/// `type E = Padding<Identity, { CFG.clusters }>;`: a mapping alias written as the types `m!`
/// expands to (manual L632-L886).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeFormSite {
    pub name: ast::Name,
    /// The expression the type spells, its spans in the file; or why it cannot be read.
    pub body: Result<ast::Expr, String>,
    /// The whole type.
    pub span: Span,
    pub fns: Vec<Span>,
    /// Its type and const parameters (`type Scalar<const N: usize> = Padding<m![1], N>;`),
    /// which each use gives.
    pub generics: Vec<String>,
}

/// The mapping-level model of one file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileModel {
    pub sites: Vec<MacroSite>,
    pub aliases: Vec<AliasSite>,
    pub renames: Vec<RenameSite>,
    /// Aliases written as the types `m!` expands to (`type E = Resize<Symbol<F>, N>;`).
    pub type_forms: Vec<TypeFormSite>,
    /// Generic type and const parameter names per function.
    pub generics: HashMap<Span, Vec<String>>,
    /// A mapping written inside a generic type alias that is no mapping alias (`type Flit<L>
    /// = CastTensor<.., m![{ L } # 16]>;`): its site and the alias's parameters, which its
    /// uses give.
    pub in_generic_aliases: Vec<(usize, Vec<String>)>,
}

fn span_of(r: TextRange) -> Span {
    Span::new(u32::from(r.start()) as usize, u32::from(r.end()) as usize)
}

fn macro_kind(call: &ra::MacroCall) -> Option<MacroKind> {
    let path = call.path()?;
    let seg = path.segment()?.name_ref()?;
    match seg.text() {
        "axes" => Some(MacroKind::Axes),
        "m" => Some(MacroKind::Mapping),
        "i" => Some(MacroKind::Index),
        _ => None,
    }
}

/// How deep macro arguments are searched for `m!`/`i!` calls.
const MAX_MACRO_NESTING: u32 = 8;

/// Finds `m!`/`i!` calls in the arguments of another macro by parsing the arguments as
/// expressions (which is what `assert_eq!`, `assert!`, `vec!` and friends take).
/// A node's text: sliced from the text its tree was parsed from when the caller has it (cheap),
/// else gathered from its tokens.
fn text_of(node: &SyntaxNode, src: Option<&str>) -> String {
    let r = node.text_range();
    src.and_then(|s| s.get(usize::from(r.start())..usize::from(r.end())))
        .map_or_else(|| node_text(node), str::to_string)
}

fn nested_sites(
    call: &ra::MacroCall,
    src: Option<&str>,
    fns: Vec<Span>,
    depth: u32,
    model: &mut FileModel,
) {
    let Some(tt) = call.token_tree() else { return };
    let text = text_of(tt.syntax(), src);
    if depth >= MAX_MACRO_NESTING || !(text.contains("m!") || text.contains("i!")) {
        return;
    }
    // `(a, b)` parses as a tuple expression whatever the delimiters were.
    let inner = text.get(1..text.len().saturating_sub(1)).unwrap_or("");
    let prefix = "fn __visa_lint() { (";
    let wrapped = format!("{prefix}{inner}); }}");
    let shift = i64::from(u32::from(tt.syntax().text_range().start())) + 1 - prefix.len() as i64;
    let moved = |r: TextRange| {
        let start = (i64::from(u32::from(r.start())) + shift).max(0) as usize;
        let end = (i64::from(u32::from(r.end())) + shift).max(0) as usize;
        Span::new(start, end)
    };
    let sub = SourceFile::parse(&wrapped, Edition::Edition2024).tree();
    for node in sub.syntax().descendants() {
        let Some(c) = ra::MacroCall::cast(node) else {
            continue;
        };
        let Some(kind) = macro_kind(&c) else {
            nested_sites(&c, Some(&wrapped), fns.clone(), depth + 1, model);
            continue;
        };
        let Some(ctt) = c.token_tree() else { continue };
        let ctext = text_of(ctt.syntax(), Some(&wrapped));
        let mut body = ctext.get(1..).unwrap_or("");
        if let Some(last) = body.chars().last()
            && matches!(last, ']' | ')' | '}')
        {
            body = &body[..body.len() - last.len_utf8()];
        }
        model.sites.push(MacroSite {
            kind,
            body: body.to_string(),
            body_start: moved(ctt.syntax().text_range()).start + 1,
            span: moved(c.syntax().text_range()),
            fns: fns.clone(),
        });
    }
}

fn enclosing_fns(node: &SyntaxNode) -> Vec<Span> {
    node.ancestors()
        .filter_map(ra::Fn::cast)
        .map(|f| span_of(f.syntax().text_range()))
        .collect()
}

/// Parses a file and collects its mapping-level model.
pub fn file_model(text: &str) -> FileModel {
    file_model_of(&SourceFile::parse(text, Edition::Edition2024).tree())
}

/// The nodes of the given kinds under `root` (itself included), in preorder. The walk goes over
/// the green tree, which makes no cursor for the nodes it passes (a cursor per node was most of
/// a file's traversal time); cursors are made for each node found and its ancestors, each
/// ancestor once for all the nodes found under it.
pub fn nodes_of_kinds(root: &SyntaxNode, kinds: &[SyntaxKind]) -> Vec<SyntaxNode> {
    use rowan::Language;
    struct Walk<'k> {
        kinds: &'k [rowan::SyntaxKind],
        /// The path from the root to the node visited: each node's range and, once made, its
        /// cursor (the root's is always made).
        path: Vec<(TextRange, Option<SyntaxNode>)>,
        out: Vec<SyntaxNode>,
    }
    impl Walk<'_> {
        /// The cursor of the node at the end of the path.
        fn cursor(&mut self) -> Option<SyntaxNode> {
            let made = self.path.iter().rposition(|(_, c)| c.is_some())?;
            for k in made + 1..self.path.len() {
                let parent = self.path[k - 1].1.clone()?;
                let range = self.path[k].0;
                // Siblings partition their parent's text, so the one child holding this
                // non-empty range is the node itself.
                let child = parent
                    .child_or_token_at_range(range)
                    .and_then(|c| c.into_node())
                    .filter(|c| c.text_range() == range)?;
                self.path[k].1 = Some(child);
            }
            self.path.last().and_then(|(_, c)| c.clone())
        }
        fn walk(&mut self, green: &rowan::GreenNodeData, at: TextSize) {
            if self.kinds.contains(&green.kind()) {
                let found = if green.text_len() == 0.into() {
                    None
                } else {
                    self.cursor()
                };
                // A node the path cannot reach (an empty one): found from the root instead.
                let found = found.or_else(|| {
                    let range = TextRange::at(at, green.text_len());
                    let root = self.path.first()?.1.clone()?;
                    let start = match root.covering_element(range) {
                        rowan::NodeOrToken::Node(n) => n,
                        rowan::NodeOrToken::Token(t) => t.parent()?,
                    };
                    start
                        .ancestors()
                        .take_while(|n| n.text_range() == range)
                        .find(|n| {
                            let raw = ra_ap_syntax::RustLanguage::kind_to_raw(n.kind());
                            self.kinds.contains(&raw)
                        })
                });
                self.out.extend(found);
            }
            let mut offset = at;
            for child in green.children() {
                match child {
                    rowan::NodeOrToken::Node(n) => {
                        self.path.push((TextRange::at(offset, n.text_len()), None));
                        self.walk(n, offset);
                        self.path.pop();
                        offset += n.text_len();
                    }
                    rowan::NodeOrToken::Token(t) => offset += t.text_len(),
                }
            }
        }
    }
    let raw: Vec<rowan::SyntaxKind> = kinds
        .iter()
        .map(|k| ra_ap_syntax::RustLanguage::kind_to_raw(*k))
        .collect();
    let mut walk = Walk {
        kinds: &raw,
        path: vec![(root.text_range(), Some(root.clone()))],
        out: Vec::new(),
    };
    walk.walk(root.green(), root.text_range().start());
    walk.out
}

/// The expression written `text`, parsed in a tree of its own (a body kept as text by an
/// environment, `Self` written out).
/// Whether `text` names `name` (a variable, or a field path `taps.main`) as a whole: not as a
/// part of a longer name, nor as the field of something else (`x.taps.main`).
pub fn mentions(text: &str, name: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    !name.is_empty()
        && text.match_indices(name).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + name.len()..].chars().next();
            !before.is_some_and(|c| ident(c) || c == '.') && !after.is_some_and(ident)
        })
}

pub fn expr_of_text(text: &str) -> Option<ra::Expr> {
    ra::SourceFile::parse(&format!("const _: () = {text};"), Edition::Edition2024)
        .tree()
        .syntax()
        .descendants()
        .find_map(ra::Const::cast)?
        .body()
}

/// The pattern written `text`, parsed in a tree of its own.
pub fn pat_of_text(text: &str) -> Option<ra::Pat> {
    ra::SourceFile::parse(
        &format!("fn f() {{ let {text} = 0; }}"),
        Edition::Edition2024,
    )
    .tree()
    .syntax()
    .descendants()
    .find_map(ra::LetStmt::cast)?
    .pat()
}

/// The type written `text`, parsed in a tree of its own.
pub fn type_of_text(text: &str) -> Option<ra::Type> {
    ra::SourceFile::parse(&format!("type T = {text};"), Edition::Edition2024)
        .tree()
        .syntax()
        .descendants()
        .find_map(ra::TypeAlias::cast)?
        .ty()
}

/// A node's text, written from its green tree (`SyntaxNode::text` walks the tokens with a
/// cursor each, several times slower).
pub fn node_text(node: &SyntaxNode) -> String {
    node.green().to_string()
}

/// A node's text for a message: its first line, at most 40 characters (`..` when cut).
pub fn snippet(node: &SyntaxNode) -> String {
    let text = node_text(node);
    let line = text.lines().next().unwrap_or("").trim();
    let short: String = line.chars().take(40).collect();
    if short.len() < text.trim().len() {
        format!("{short}..")
    } else {
        short
    }
}

/// A node's text without its whitespace (`a :: b` and `{ Tile }` as `a::b` and `{Tile}`).
pub fn compact_text(node: &SyntaxNode) -> String {
    node_text(node)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

/// The head of an `impl` block as a method's `Self` is kept for a library tensor type
/// (`impl<E: M> DmTensor<bf16, Chip, Cluster, Slice, E>`, see `resolve::self_type_written`);
/// `None` for any other `Self` (a type's name).
pub fn impl_head(text: &str) -> Option<ra::Impl> {
    let rest = text.strip_prefix("impl")?;
    // `impl<..> Ty<..> { type Weights = ..; }`: the head with the block's associated types.
    let text = match rest.trim_end().ends_with('}') {
        true => format!("impl{rest}"),
        false => format!("impl{rest} {{}}"),
    };
    let file = ra::SourceFile::parse(&text, Edition::Edition2024);
    file.tree().syntax().descendants().find_map(ra::Impl::cast)
}

/// How the environment marks a method of an `impl` block for a library tensor type, written
/// as a free function (`#[visa_extension = "DmTensor·3f2a19c0::stage"] fn stage(this: ..)`):
/// the attribute's opening, up to the key.
pub const EXTENSION_ATTR: &str = "visa_extension = \"";

/// The key a function written by the environment for a tensor type's method carries (see
/// [`EXTENSION_ATTR`]); `None` for any other function.
pub fn extension_key(f: &ra_ap_syntax::ast::Fn) -> Option<String> {
    use ra_ap_syntax::ast::HasAttrs;
    f.attrs().find_map(|a| {
        let text = node_text(a.syntax());
        let rest = text.strip_prefix("#[")?.strip_prefix(EXTENSION_ATTR)?;
        Some(rest.strip_suffix("\"]")?.to_string())
    })
}

/// A function as a declaration without its body: its signature and `;` (how a module's or a
/// body's environment writes a function, and what reading its syntax there stands for).
pub fn signature_decl(f: &SyntaxNode) -> String {
    format!("{};", text_before(f, SyntaxKind::BLOCK_EXPR).trim_end())
}

/// A node's text up to its first direct child of kind `stop` (all of it when it has none):
/// a function's signature, without its body.
pub fn text_before(node: &SyntaxNode, stop: SyntaxKind) -> String {
    use rowan::Language;
    use std::fmt::Write;
    let raw = ra_ap_syntax::RustLanguage::kind_to_raw(stop);
    let mut out = String::new();
    for child in node.green().children() {
        let _ = match child {
            rowan::NodeOrToken::Node(n) if n.kind() == raw => break,
            rowan::NodeOrToken::Node(n) => write!(out, "{n}"),
            rowan::NodeOrToken::Token(t) => write!(out, "{t}"),
        };
    }
    out
}

/// One token met by [`green_tokens`]: its kind, its text, where it starts and whether it
/// lies inside a node of the kind the walk marks.
#[derive(Clone, Copy, Debug)]
pub struct Tok<'g> {
    pub kind: SyntaxKind,
    pub text: &'g str,
    pub start: TextSize,
    pub marked: bool,
}

impl Tok<'_> {
    pub fn end(&self) -> TextSize {
        self.start + TextSize::of(self.text)
    }
}

/// A syntax subtree as a query key. Equal when the texts are (a subtree the incremental
/// reparse kept is the same allocation, compared in one step); hashed by its whole content,
/// once per allocation (see [`content_hash`]), so that keying every item of a file on each
/// keystroke reads only what the edit made new.
#[derive(Clone, Debug)]
pub struct GreenKey(pub GreenNode);

impl PartialEq for GreenKey {
    fn eq(&self, other: &GreenKey) -> bool {
        std::ptr::eq::<rowan::GreenNodeData>(&*self.0, &*other.0) || self.0 == other.0
    }
}

impl Eq for GreenKey {}

impl std::hash::Hash for GreenKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(content_hash(&self.0));
    }
}

/// A hash of a subtree's kind, length and every token's text (equal subtrees hash equal).
///
/// Every item of a file is keyed on each keystroke; a hash of the first tokens only made the
/// edited function's new version hash like its previous ones, and the interner then compared
/// them token by token. The whole hash is computed once per allocation: the incremental
/// reparse keeps the unedited subtrees, so only the edited item is read again. Each thread
/// keeps the hashes of the subtrees it saw recently, with a clone of each, so that an address
/// in the table is never one that was freed and reused (two generations of at most
/// `GENERATION` entries: one still in use is carried into the next).
pub fn content_hash(g: &GreenNode) -> u64 {
    use std::cell::RefCell;
    use std::hash::Hasher;
    const GENERATION: usize = 1 << 10;
    type Seen = rustc_hash::FxHashMap<usize, (GreenNode, u64)>;
    thread_local! {
        static SEEN: RefCell<(Seen, Seen)> = RefCell::default();
    }
    let key = &**g as *const rowan::GreenNodeData as usize;
    SEEN.with(|seen| {
        let mut seen = seen.borrow_mut();
        let (current, previous) = &mut *seen;
        if let Some((_, hash)) = current.get(&key) {
            return *hash;
        }
        let hash = match previous.remove(&key) {
            Some((_, hash)) => hash,
            None => {
                let mut state = rustc_hash::FxHasher::default();
                state.write_u16(g.kind().0);
                state.write_u32(u32::from(g.text_len()));
                // Every token in order, with an explicit stack (no recursion on deep trees).
                let mut stack = vec![g.children()];
                while let Some(children) = stack.last_mut() {
                    match children.next() {
                        Some(rowan::NodeOrToken::Node(n)) => stack.push(n.children()),
                        Some(rowan::NodeOrToken::Token(t)) => state.write(t.text().as_bytes()),
                        None => {
                            stack.pop();
                        }
                    }
                }
                state.finish()
            }
        };
        if current.len() >= GENERATION {
            *previous = std::mem::take(current);
        }
        current.insert(key, (g.clone(), hash));
        hash
    })
}

impl FileModel {
    /// The model with every position moved by `by` (a subtree's model placed in its file).
    pub fn shifted(mut self, by: u32) -> FileModel {
        let span = |s: &mut Span| *s = s.shift(by);
        for site in &mut self.sites {
            site.body_start += by;
            span(&mut site.span);
            site.fns.iter_mut().for_each(span);
        }
        for a in &mut self.aliases {
            span(&mut a.name.span);
        }
        for r in &mut self.renames {
            span(&mut r.name.span);
            span(&mut r.target_span);
            r.fns.iter_mut().for_each(span);
        }
        for t in &mut self.type_forms {
            span(&mut t.name.span);
            span(&mut t.span);
            t.fns.iter_mut().for_each(span);
            if let Ok(e) = &mut t.body {
                mapping::shift_expr(e, by);
            }
        }
        self.generics = self
            .generics
            .into_iter()
            .map(|(s, g)| (s.shift(by), g))
            .collect();
        self
    }

    /// Only what sits outside every function: the module-level mappings and declarations.
    pub fn module_level(self) -> FileModel {
        let mut out = FileModel::default();
        let mut index = vec![None; self.sites.len()];
        for (i, site) in self.sites.into_iter().enumerate() {
            if site.fns.is_empty() {
                index[i] = Some(out.sites.len());
                out.sites.push(site);
            }
        }
        out.aliases = self
            .aliases
            .into_iter()
            .filter_map(|mut a| {
                a.site = index.get(a.site).copied().flatten()?;
                Some(a)
            })
            .collect();
        out.renames = self
            .renames
            .into_iter()
            .filter(|r| r.fns.is_empty())
            .collect();
        out.type_forms = self
            .type_forms
            .into_iter()
            .filter(|r| r.fns.is_empty())
            .collect();
        out.in_generic_aliases = self
            .in_generic_aliases
            .into_iter()
            .filter_map(|(site, g)| Some((index.get(site).copied().flatten()?, g)))
            .collect();
        out
    }

    /// Appends `other` (positions already in this model's coordinates).
    pub fn append(&mut self, other: FileModel) {
        let base = self.sites.len();
        self.sites.extend(other.sites);
        self.aliases.extend(other.aliases.into_iter().map(|mut a| {
            a.site += base;
            a
        }));
        self.renames.extend(other.renames);
        self.type_forms.extend(other.type_forms);
        self.generics.extend(other.generics);
        self.in_generic_aliases.extend(
            other
                .in_generic_aliases
                .into_iter()
                .map(|(site, g)| (site + base, g)),
        );
    }
}

/// The non-trivia tokens of a green tree starting at `at`, in order, over the green tree
/// itself (a cursor per token was most of the cost of scanning a file). A direct child node of
/// a kind in `skip` is left out (a function's body, when only its signature matters); tokens
/// under a node of kind `mark` are marked.
pub fn green_tokens<'g>(
    green: &'g rowan::GreenNodeData,
    at: TextSize,
    skip: &[SyntaxKind],
    mark: Option<SyntaxKind>,
) -> Vec<Tok<'g>> {
    use rowan::Language;
    fn walk<'g>(
        green: &'g rowan::GreenNodeData,
        at: TextSize,
        skip: &[SyntaxKind],
        mark: Option<SyntaxKind>,
        marked: bool,
        out: &mut Vec<Tok<'g>>,
    ) {
        let mut offset = at;
        for child in green.children() {
            match child {
                rowan::NodeOrToken::Node(n) => {
                    let kind = ra_ap_syntax::RustLanguage::kind_from_raw(n.kind());
                    if !skip.contains(&kind) {
                        let marked = marked || mark == Some(kind);
                        walk(n, offset, &[], mark, marked, out);
                    }
                    offset += n.text_len();
                }
                rowan::NodeOrToken::Token(t) => {
                    let kind = ra_ap_syntax::RustLanguage::kind_from_raw(t.kind());
                    if !kind.is_trivia() {
                        out.push(Tok {
                            kind,
                            text: t.text(),
                            start: offset,
                            marked,
                        });
                    }
                    offset += t.text_len();
                }
            }
        }
    }
    let mut out = Vec::new();
    let kind = ra_ap_syntax::RustLanguage::kind_from_raw(green.kind());
    walk(green, at, skip, mark, mark == Some(kind), &mut out);
    out
}

/// Collects the mapping-level model of an already parsed file.
pub fn file_model_of(root: &SourceFile) -> FileModel {
    model_of(root.syntax(), None)
}

/// [`file_model_of`] for any root: a file, or a function's subtree of it; `src` is the text
/// the root was parsed from, when the caller has it.
pub fn model_of(root: &SyntaxNode, src: Option<&str>) -> FileModel {
    let mut model = FileModel::default();
    let mut site_of_call: HashMap<TextRange, usize> = HashMap::new();
    let nodes = nodes_of_kinds(
        root,
        &[
            SyntaxKind::MACRO_CALL,
            SyntaxKind::FN,
            SyntaxKind::TYPE_ALIAS,
        ],
    );
    for node in &nodes {
        if let Some(call) = ra::MacroCall::cast(node.clone()) {
            let Some(kind) = macro_kind(&call) else {
                // `assert_eq!(<m![B / 64]>::map(0), Some(i![..]))`: look inside other macros.
                nested_sites(&call, src, enclosing_fns(call.syntax()), 0, &mut model);
                continue;
            };
            let Some(tt) = call.token_tree() else {
                continue;
            };
            let tt_range = tt.syntax().text_range();
            let tt_text = text_of(tt.syntax(), src);
            // Strip the delimiters; a half-typed call may lack the closing one.
            let mut body = tt_text.get(1..).unwrap_or("");
            if let Some(last) = body.chars().last()
                && matches!(last, ']' | ')' | '}')
            {
                body = &body[..body.len() - last.len_utf8()];
            }
            site_of_call.insert(call.syntax().text_range(), model.sites.len());
            // In a generic `impl` block's head or associated types (`impl<E: M> Stage for
            // DmTensor<.., m![{ E }, G]>`), the block's parameters are generics.
            if let Some(generics) = impl_generics_around(call.syntax()) {
                model.in_generic_aliases.push((model.sites.len(), generics));
            }
            model.sites.push(MacroSite {
                kind,
                body: body.to_string(),
                body_start: u32::from(tt_range.start()) + 1,
                span: span_of(call.syntax().text_range()),
                fns: enclosing_fns(call.syntax()),
            });
        } else if let Some(f) = ra::Fn::cast(node.clone()) {
            model
                .generics
                .insert(span_of(f.syntax().text_range()), generic_names(&f));
        }
    }
    for node in nodes {
        let Some(alias) = ra::TypeAlias::cast(node) else {
            continue;
        };
        let Some(name) = ra::HasName::name(&alias) else {
            continue;
        };
        let generics = generic_names(&alias);
        if !generics.is_empty() && !matches!(alias.ty(), Some(ra::Type::MacroType(_))) {
            for call in alias.syntax().descendants().filter_map(ra::MacroCall::cast) {
                if let Some(&site) = site_of_call.get(&call.syntax().text_range()) {
                    model.in_generic_aliases.push((site, generics.clone()));
                }
            }
        }
        // An associated type of an `impl` block is `Type::Name` (and `<Type as Trait>::Name`),
        // never the bare name another alias may have.
        let names = {
            let text = name.text().to_string();
            let keys = assoc_keys(alias.syntax(), &text);
            let span = span_of(name.syntax().text_range());
            let keys = if keys.is_empty() { vec![text] } else { keys };
            keys.into_iter().map(move |text| ast::Name { text, span })
        };
        if let Some(ra::Type::PathType(p)) = alias.ty()
            && let Some(path) = p.path()
            && let Some(target) = path_key(&path)
        {
            for name in names {
                model.renames.push(RenameSite {
                    name,
                    target: target.clone(),
                    target_span: span_of(path.syntax().text_range()),
                    fns: enclosing_fns(alias.syntax()),
                });
            }
            continue;
        }
        if let Some(ra::Type::PathType(p)) = alias.ty()
            && is_type_form(&p)
        {
            let body = type_form::expr_of(&ra::Type::PathType(p.clone()));
            for name in names {
                model.type_forms.push(TypeFormSite {
                    name,
                    body: body.clone(),
                    span: span_of(p.syntax().text_range()),
                    fns: enclosing_fns(alias.syntax()),
                    generics: generics.clone(),
                });
            }
            continue;
        }
        let Some(ra::Type::MacroType(mt)) = alias.ty() else {
            continue;
        };
        let Some(call) = mt.macro_call() else {
            continue;
        };
        if let Some(&site) = site_of_call.get(&call.syntax().text_range())
            && model.sites[site].kind == MacroKind::Mapping
        {
            for name in names {
                model.aliases.push(AliasSite {
                    name,
                    site,
                    generics: generic_names(&alias),
                });
            }
        }
    }
    model
}

/// Whether `p` is a mapping written as the types `m!` expands to (manual L632-L886):
/// `Symbol<F>`, `Pair<L, R>`, `Padding<L, N>`, `Resize<L, N>`, `Stride<L, N>`, `Modulo<L, N>`.
pub fn is_type_form(p: &ra::PathType) -> bool {
    let Some(seg) = p.path().and_then(|p| p.segment()) else {
        return false;
    };
    let forms = [
        "Symbol",
        "Pair",
        "Padding",
        "Resize",
        "Stride",
        "Modulo",
        "Broadcast",
    ];
    let named = seg
        .name_ref()
        .is_some_and(|n| forms.iter().any(|f| n.text() == *f));
    named && ra::HasGenericArgs::generic_arg_list(&seg).is_some()
}

/// The key a path is looked up by in the environment: a plain name (`BASE`) or a qualified
/// path written without spaces (`consts::BASE`, `crate::layouts::Slice`), which the
/// environment binds to what the path names (`db::bind_path`). `None` for paths with generic
/// arguments (`HbmTensor::<..>::from_addr`) or a leading `::`.
pub fn path_key(path: &ra::Path) -> Option<String> {
    let mut key = String::new();
    for seg in path.segments() {
        if ra::HasGenericArgs::generic_arg_list(&seg).is_some()
            || seg.coloncolon_token().is_some() && key.is_empty()
        {
            return None;
        }
        let text = match seg.kind()? {
            ra::PathSegmentKind::Name(n) => n.text().to_string(),
            // `<Paged as KvLayout>::Slice`: an associated item of a trait's impl, keyed by
            // the type's and the trait's names.
            ra::PathSegmentKind::Type {
                type_ref: Some(ty),
                trait_ref: Some(tr),
            } if key.is_empty() => format!(
                "<{} as {}>",
                last_path_name(&ty)?,
                tr.path()?.segment()?.name_ref()?.text()
            ),
            ra::PathSegmentKind::CrateKw => "crate".to_string(),
            ra::PathSegmentKind::SelfKw => "self".to_string(),
            // `Self::BASE` in a method: the builder names the `impl` type's items `Self::..`.
            ra::PathSegmentKind::SelfTypeKw => "Self".to_string(),
            ra::PathSegmentKind::SuperKw => "super".to_string(),
            _ => return None,
        };
        if !key.is_empty() {
            key.push_str("::");
        }
        key.push_str(&text);
    }
    (!key.is_empty()).then_some(key)
}

/// A trait-qualified key (`<Bf16 as Elem>::BYTES`) as the item of the type it names
/// (`Bf16::BYTES`): a value looked up under its type's name; `None` for other keys.
pub fn without_trait(key: &str) -> Option<String> {
    let rest = key.strip_prefix('<')?;
    let (ty, after) = rest.split_once(" as ")?;
    let (_, item) = after.split_once(">::")?;
    Some(format!("{ty}::{item}"))
}

/// Whether `text` is a path to an item: `Slice`, `layouts::Slice`, `Tile16::Slice` (what an
/// alias use can be).
pub fn is_item_path(text: &str) -> bool {
    !text.is_empty()
        && text
            .split("::")
            .all(|seg| !seg.is_empty() && seg.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

/// Whether `s` is a plain identifier (`A`, `rhs_vrf`).
pub fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// The `from_addr(..)` call an expression is, seen through parentheses and blocks (`unsafe {
/// DmTensor::from_addr(a) }`).
pub fn from_addr_call(e: &ra::Expr) -> Option<ra::CallExpr> {
    match e {
        ra::Expr::CallExpr(c) => {
            let ra::Expr::PathExpr(p) = c.expr()? else {
                return None;
            };
            (p.path()?.segment()?.name_ref()?.text() == "from_addr").then(|| c.clone())
        }
        ra::Expr::ParenExpr(p) => from_addr_call(&p.expr()?),
        ra::Expr::BlockExpr(b) => from_addr_call(&b.stmt_list()?.tail_expr()?),
        _ => None,
    }
}

/// Where a helper places the tensors it returns: for a body whose tail (seen through blocks
/// such as `unsafe { .. }`) is `T::from_addr(a)`, or a tuple with such elements, each
/// element's address expression (`None` for another element). `None` when the function
/// returns no tensor it places.
pub fn returned_placements(f: &ra::Fn) -> Option<Vec<Option<ra::Expr>>> {
    let mut tail = f.body()?.stmt_list()?.tail_expr()?;
    while let ra::Expr::BlockExpr(b) = &tail {
        tail = b.stmt_list()?.tail_expr()?;
    }
    let address = |e: &ra::Expr| {
        let args: Vec<ra::Expr> = ra::HasArgList::arg_list(&from_addr_call(e)?)?
            .args()
            .collect();
        match <[ra::Expr; 1]>::try_from(args) {
            Ok([a]) => Some(a),
            Err(_) => None,
        }
    };
    let placed: Vec<Option<ra::Expr>> = match &tail {
        ra::Expr::TupleExpr(t) => t.fields().map(|e| address(&e)).collect(),
        e => vec![address(e)],
    };
    placed.iter().any(Option::is_some).then_some(placed)
}

/// Whether `f` takes a reference to something it works on: anything by `&mut`, or an engine,
/// a tensor or a view by `&`. Such a function does the kernel's work (its calls are traced);
/// one that reads a plan by `&` (`dm_addr(self, plan: &DmPlan)`, `for_config(cfg:
/// &LnConfig)`) computes a value, which the evaluator runs at its calls.
pub fn takes_a_working_reference(f: &ra::Fn) -> bool {
    f.param_list().is_none_or(|l| {
        l.params().any(|p| match p.ty() {
            Some(ra::Type::RefType(r)) => {
                let text = node_text(r.syntax());
                r.mut_token().is_some()
                    || ["Tensor", "Context", "View"]
                        .iter()
                        .any(|w| text.contains(w))
            }
            _ => false,
        })
    })
}

/// The `key = value` entries of `f`'s `#[device(..)]` attribute (`chip = 2`, `pe = 4`), each
/// with where its value is written; `None` when `f` has no `#[device]` attribute (an empty list
/// for a bare `#[device]`).
pub fn device_entries(f: &ra::Fn) -> Option<Vec<(String, String, Span)>> {
    use ra::HasAttrs;
    let attr = f
        .attrs()
        .find(|a| a.simple_name().as_deref() == Some("device"))?;
    let Some((_, tree)) = attr.as_simple_call() else {
        return Some(Vec::new());
    };
    let tokens: Vec<_> = tree
        .syntax()
        .children_with_tokens()
        .filter_map(|t| t.into_token())
        .filter(|t| !t.kind().is_trivia())
        .filter(|t| !matches!(t.kind(), SyntaxKind::L_PAREN | SyntaxKind::R_PAREN))
        .collect();
    let entries = tokens.split(|t| t.kind() == SyntaxKind::COMMA);
    Some(
        entries
            .filter_map(|entry| {
                let [key, eq, value @ ..] = entry else {
                    return None;
                };
                let (first, last) = (value.first()?, value.last()?);
                (eq.kind() == SyntaxKind::EQ).then(|| {
                    let text: String = value.iter().map(|t| t.text()).collect();
                    let at = Span::new(
                        usize::from(first.text_range().start()),
                        usize::from(last.text_range().end()),
                    );
                    (key.text().to_string(), text, at)
                })
            })
            .collect(),
    )
}

/// Whether `f` is a method that takes `&mut self` (`fn place(&mut self, bytes: usize)`).
pub fn changes_self(f: &ra::Fn) -> bool {
    f.param_list()
        .and_then(|l| l.self_param())
        .is_some_and(|s| s.amp_token().is_some() && s.mut_token().is_some())
}

/// Whether `f`'s body ends in a tuple expression (`(parked, vrf + SLOT)`).
pub fn returns_a_tuple(f: &ra::Fn) -> bool {
    f.body()
        .and_then(|b| b.stmt_list()?.tail_expr())
        .is_some_and(|t| matches!(t, ra::Expr::TupleExpr(_)))
}

/// The last segment's name of a path type (`Paged` of `crate::axes::Paged`).
pub fn last_path_name(ty: &ra::Type) -> Option<String> {
    let ra::Type::PathType(p) = ty else {
        return None;
    };
    Some(p.path()?.segment()?.name_ref()?.text().to_string())
}

/// The names an associated item `name` of an `impl` block is found by: `Type::name`, and for
/// a trait's impl `<Type as Trait>::name` too. Empty when `node` is not in an `impl` block.
pub fn assoc_keys(node: &ra_ap_syntax::SyntaxNode, name: &str) -> Vec<String> {
    let Some(imp) = node
        .parent()
        .filter(|p| p.kind() == ra_ap_syntax::SyntaxKind::ASSOC_ITEM_LIST)
        .and_then(|l| l.parent())
        .and_then(ra::Impl::cast)
    else {
        return Vec::new();
    };
    let Some(ty) = imp.self_ty().as_ref().and_then(last_path_name) else {
        return Vec::new();
    };
    let mut keys = vec![format!("{ty}::{name}")];
    if let Some(tr) = imp.trait_().as_ref().and_then(last_path_name) {
        keys.push(format!("<{ty} as {tr}>::{name}"));
    }
    keys
}

/// The names of an item's type and const parameters.
/// The parameters of the generic `impl` block a node outside any function is written in (its
/// self type, its trait's arguments, its associated types); `None` elsewhere.
fn impl_generics_around(node: &SyntaxNode) -> Option<Vec<String>> {
    for a in node.ancestors().skip(1) {
        match a.kind() {
            SyntaxKind::FN => return None,
            SyntaxKind::IMPL => {
                let generics = generic_names(&ra::Impl::cast(a)?);
                return (!generics.is_empty()).then_some(generics);
            }
            _ => {}
        }
    }
    None
}

fn generic_names(item: &impl ra::HasGenericParams) -> Vec<String> {
    let Some(gpl) = item.generic_param_list() else {
        return Vec::new();
    };
    gpl.generic_params()
        .filter_map(|p| match p {
            ra::GenericParam::TypeParam(t) => ra::HasName::name(&t),
            ra::GenericParam::ConstParam(c) => ra::HasName::name(&c),
            ra::GenericParam::LifetimeParam(_) => None,
        })
        .map(|n| n.text().to_string())
        .collect()
}

/// A site's parsed body, in file coordinates.
enum Parsed {
    Axes(Vec<ast::AxisDecl>),
    Mapping(ast::Expr),
    Index(Vec<ast::IndexEntry>),
    Failed,
}

/// What [`check_sites`] found: the problems (file coordinates), the resulting scope, and each
/// mapping it parsed with its site's index in the model (file coordinates), for a check that
/// reads the written form (which library's grammar it is) without parsing it again.
pub struct SitesCheck {
    pub problems: Vec<Problem>,
    pub scope: Scope,
    pub mappings: Vec<(usize, ast::Expr)>,
}

/// Parses the bodies of the sites `take` selects, adds their axes and aliases (and the
/// generic parameters of `generics_of`) to `base`, and lowers their mappings.
pub fn check_sites(
    model: &FileModel,
    base: &Scope,
    take: impl Fn(&MacroSite) -> bool,
    generics_of: Option<Span>,
) -> SitesCheck {
    let (problems, scope, parsed) = sites_scope(model, base, take, generics_of, true);
    let mappings = parsed
        .into_iter()
        .enumerate()
        .filter_map(|(i, p)| match p {
            Parsed::Mapping(e) => Some((i, e)),
            _ => None,
        })
        .collect();
    SitesCheck {
        problems,
        scope,
        mappings,
    }
}

/// The scope [`check_sites`] returns for all of `model`'s sites, without its problems: only
/// the declarations are read (`axes!` bodies and the bodies of mapping aliases); the other
/// mappings, which add nothing to a scope, are neither parsed nor lowered. An environment is
/// built this way (its problems are reported where its declarations are written).
pub fn scope_of(model: &FileModel, base: &Scope) -> Scope {
    sites_scope(model, base, |_| true, None, false).1
}

fn sites_scope(
    model: &FileModel,
    base: &Scope,
    take: impl Fn(&MacroSite) -> bool,
    generics_of: Option<Span>,
    diagnose: bool,
) -> (Vec<Problem>, Scope, Vec<Parsed>) {
    let mut diags = Vec::new();
    let parsed = parse_sites(model, &take, diagnose, &mut diags);
    let mut scope = base.clone();
    // Declarations in source order; redeclarations with another size are reported.
    for p in &parsed {
        if let Parsed::Axes(decls) = p {
            scope.declare_axes(decls, &mut diags);
        }
    }
    let mut aliases: Vec<mapping::lower::Alias> = model
        .aliases
        .iter()
        .filter(|a| take(&model.sites[a.site]))
        .map(|a| mapping::lower::Alias {
            name: a.name.clone(),
            body: match &parsed[a.site] {
                Parsed::Mapping(e) => Some(e.clone()),
                _ => None,
            },
            generics: a.generics.clone(),
        })
        .collect();
    add_renames(model, &scope, &take, &mut aliases);
    // An alias written as types: the expression it spells; known even when it cannot be read
    // (a use is not an unknown alias).
    let mut forms = Vec::new();
    for t in &model.type_forms {
        let at = MacroSite {
            kind: MacroKind::Mapping,
            body: String::new(),
            body_start: t.name.span.start,
            span: t.name.span,
            fns: t.fns.clone(),
        };
        if !take(&at) {
            continue;
        }
        if let (true, Err(why)) = (diagnose, &t.body) {
            diags.push(
                mapping::problem::Unevaluated::TypeForm {
                    name: t.name.clone(),
                    why: why.clone(),
                }
                .into(),
            );
        }
        forms.extend(t.body.as_ref().ok().map(|b| (b, t.generics.as_slice())));
        aliases.push(mapping::lower::Alias {
            name: t.name.clone(),
            body: t.body.clone().ok(),
            generics: t.generics.clone(),
        });
    }
    if diagnose {
        diags.extend(mapping::lower::alias_cycles(&aliases, &base.aliases));
    }
    for a in aliases {
        scope.aliases.insert(a.name.text.clone(), a);
    }
    if let Some(g) = generics_of.and_then(|f| model.generics.get(&f)) {
        // A generic parameter shadows an alias of the crate with its name (`Slice: M`).
        for name in g {
            scope.aliases.remove(name);
        }
        scope.generics.extend(g.iter().cloned());
    }
    if diagnose {
        // A generic alias's body names its parameters, which only its uses give.
        let generic: HashMap<usize, &[String]> = model
            .aliases
            .iter()
            .filter(|a| !a.generics.is_empty())
            .map(|a| (a.site, a.generics.as_slice()))
            .chain(
                model
                    .in_generic_aliases
                    .iter()
                    .map(|(site, g)| (*site, g.as_slice())),
            )
            .collect();
        lower_all(&parsed, &scope, &generic, &mut diags);
        for (e, params) in forms {
            if params.is_empty() {
                mapping::lower(e, &scope, &mut diags);
            } else {
                let mut with = scope.clone();
                with.generics.extend(params.iter().cloned());
                mapping::lower(e, &with, &mut diags);
            }
        }
    }
    (diags, scope, parsed)
}

/// Each site's parse, in order (`Parsed::Failed` for a site not taken, and, without
/// diagnostics, for a mapping that is no alias's body: only those are read then).
fn parse_sites(
    model: &FileModel,
    take: &impl Fn(&MacroSite) -> bool,
    diagnose: bool,
    diags: &mut Vec<Problem>,
) -> Vec<Parsed> {
    let mut parsed = Vec::with_capacity(model.sites.len());
    let mut alias_body = vec![diagnose; model.sites.len()];
    for a in &model.aliases {
        if let Some(b) = alias_body.get_mut(a.site) {
            *b = true;
        }
    }
    for (site, wanted) in model.sites.iter().zip(&alias_body) {
        if !take(site) || (site.kind != MacroKind::Axes && !wanted) {
            parsed.push(Parsed::Failed);
            continue;
        }
        parsed.push(parse_site(site, diags));
    }
    parsed
}

/// One macro site parsed, its positions in the file.
fn parse_site(site: &MacroSite, diags: &mut Vec<Problem>) -> Parsed {
    let p = match site.kind {
        MacroKind::Axes => {
            let (mut decls, problems) = parse::parse_axes(&site.body);
            diags.extend(
                problems
                    .into_iter()
                    .map(|p| Problem::parse(p, site.body_start)),
            );
            mapping::shift_axes(&mut decls, site.body_start);
            Ok(Parsed::Axes(decls))
        }
        MacroKind::Mapping => parse::parse_mapping(&site.body).map(|mut e| {
            mapping::shift_expr(&mut e, site.body_start);
            Parsed::Mapping(e)
        }),
        MacroKind::Index => parse::parse_index(&site.body).map(|mut entries| {
            for entry in &mut entries {
                mapping::shift_expr(&mut entry.key, site.body_start);
            }
            Parsed::Index(entries)
        }),
    };
    match p {
        Ok(p) => p,
        Err(problem) => {
            diags.push(Problem::parse(problem, site.body_start));
            Parsed::Failed
        }
    }
}

/// `type Strip = Slice;` naming a mapping alias is a mapping alias: `m![{ Slice }]`, and
/// `type Lane = Q;` naming an axis of `base` is `m![Q]` (an associated type bounded by
/// `AxisName`, read where a turbofish wants an axis). Renames of renames resolve in rounds.
fn add_renames(
    model: &FileModel,
    base: &Scope,
    take: &impl Fn(&MacroSite) -> bool,
    aliases: &mut Vec<mapping::lower::Alias>,
) {
    let renames: Vec<&RenameSite> = model
        .renames
        .iter()
        .filter(|r| {
            take(&MacroSite {
                kind: MacroKind::Mapping,
                body: String::new(),
                body_start: r.name.span.start,
                span: r.name.span,
                fns: r.fns.clone(),
            })
        })
        .collect();
    let mut known: std::collections::HashSet<String> = base
        .aliases
        .keys()
        .cloned()
        .chain(aliases.iter().map(|a| a.name.text.clone()))
        .collect();
    let mut done = vec![false; renames.len()];
    for _round in 0..=renames.len().min(64) {
        let mut changed = false;
        for (k, r) in renames.iter().enumerate() {
            let axis = !known.contains(&r.target) && base.axes.contains_key(&r.target);
            if done[k] || !(axis || known.contains(&r.target)) {
                continue;
            }
            done[k] = true;
            changed = true;
            known.insert(r.name.text.clone());
            let target = ast::Name {
                text: r.target.clone(),
                span: r.target_span,
            };
            let body = match axis {
                true => ast::Expr::Symbol(target),
                false => ast::Expr::Escape(target, r.target_span),
            };
            aliases.push(mapping::lower::Alias {
                name: r.name.clone(),
                body: Some(body),
                generics: Vec::new(),
            });
        }
        if !changed {
            break;
        }
    }
}

/// Lowers every parsed mapping in `scope`, reporting what is wrong with it; an index's keys
/// (`i![B / 64: i]`) are each a factor of an axis.
fn lower_all(
    parsed: &[Parsed],
    scope: &Scope,
    generic: &HashMap<usize, &[String]>,
    diags: &mut Vec<Problem>,
) {
    for (k, p) in parsed.iter().enumerate() {
        match p {
            Parsed::Mapping(e) => match generic.get(&k) {
                Some(params) => {
                    let mut with = scope.clone();
                    with.generics.extend(params.iter().cloned());
                    mapping::lower(e, &with, diags);
                }
                None => {
                    mapping::lower(e, scope, diags);
                }
            },
            Parsed::Index(entries) => {
                for entry in entries {
                    mapping::lower(&entry.key, scope, diags);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    /// The first function of `text`'s parse, as a query key.
    fn first_fn(text: &str) -> super::GreenKey {
        use ra_ap_syntax::AstNode;
        let file = ra_ap_syntax::SourceFile::parse(text, ra_ap_syntax::Edition::Edition2024);
        let f = file
            .tree()
            .syntax()
            .descendants()
            .find_map(ra_ap_syntax::ast::Fn::cast);
        super::GreenKey(
            f.map(|f| f.syntax().green().to_owned())
                .expect("a function"),
        )
    }

    /// Two parses of one text give equal keys with one hash; an edit that keeps the length and
    /// the first tokens (typing over a digit deep in a body) changes the hash, so the interner
    /// does not compare the versions token by token. The hash survives its table's turnover.
    #[test]
    fn a_key_hashes_its_whole_content() {
        let hash = |k: &super::GreenKey| super::content_hash(&k.0);
        let text = "fn f() {\n    let a = 1;\n    let b = 2;\n}\n";
        let (one, two) = (first_fn(text), first_fn(text));
        assert!(!std::ptr::eq(&*one.0, &*two.0));
        assert_eq!(one, two);
        assert_eq!(hash(&one), hash(&two));
        let edited = first_fn(&text.replace("b = 2", "b = 3"));
        assert_ne!(one, edited);
        assert_ne!(hash(&one), hash(&edited));
        // More keys than two generations of the table hold: the first is hashed again, alike.
        let before = hash(&one);
        let others: Vec<super::GreenKey> = (0..2100)
            .map(|i| first_fn(&format!("fn g{i}() {{}}")))
            .collect();
        others.iter().for_each(|k| {
            hash(k);
        });
        assert_eq!(hash(&one), before);
    }

    fn codes(text: &str) -> Vec<(String, &'static str)> {
        crate::check_text(text)
            .iter()
            .map(|d| (text[d.span.range()].to_string(), d.code()))
            .collect()
    }

    #[test]
    fn aliases_and_function_scopes() {
        let text = r#"
axes![A = 8, B = 512];
type L = m![A];
fn f() {
    axes![C = 63];
    type E = m![{ L }, C / 8];
}
fn g() {
    type F = m![C];
}
"#;
        assert_eq!(
            codes(text),
            vec![
                ("C / 8".to_string(), "MAP-001"),
                ("C".to_string(), "MAP-005")
            ]
        );
    }

    #[test]
    fn half_typed_files_still_check() {
        let text = "axes![A = 8];\nfn f() { let x: DmTensor<i8, m![A / 3";
        assert_eq!(codes(text), vec![("A / 3".to_string(), "MAP-001")]);
    }

    #[test]
    fn generic_escapes_are_unknown_not_errors() {
        let text = "axes![A = 8];\nfn f<Time: M>() { type X = m![{ Time }, A]; }";
        assert!(codes(text).is_empty());
    }

    #[test]
    fn alias_errors_are_reported_once_at_the_alias() {
        let text =
            "axes![A = 8];\ntype L = m![A / 3];\ntype E = m![{ L }, A];\ntype F = m![{ L }];";
        assert_eq!(codes(text), vec![("A / 3".to_string(), "MAP-001")]);
    }

    #[test]
    fn mappings_inside_other_macros_are_checked() {
        let text = "axes![B = 512];\nfn t() { assert_eq!(<m![B / 63]>::map(0), Some(i![B / 64: 1, B / 7: 0])); }";
        assert_eq!(
            codes(text),
            vec![
                ("B / 63".to_string(), "MAP-001"),
                ("B / 7".to_string(), "MAP-001")
            ]
        );
    }

    #[test]
    fn a_plain_type_naming_a_mapping_alias_is_that_alias() {
        let text = "axes![A = 8];\ntype L = m![A];\ntype R = L;\ntype S = R;\ntype E = m![{ S } # 4];\ntype N = u64;";
        assert_eq!(codes(text), vec![("{ S } # 4".to_string(), "MAP-003")]);
    }

    #[test]
    fn alias_cycles() {
        let text = "type L = m![{ R }];\ntype R = m![{ L }];";
        let c = codes(text);
        assert!(
            c.iter().all(|(_, code)| *code == "MAP-006") && !c.is_empty(),
            "{c:?}"
        );
    }
}
