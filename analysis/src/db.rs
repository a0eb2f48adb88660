//! The salsa database: source files are inputs; the module-level check and every function's
//! analysis are tracked queries. A function is analysed from its own text and the text of the
//! declarations it can see (its *environment*), both position-independent, so editing one
//! function re-runs that function's query only.

use crate::config::{Config, TargetName};
use crate::diagnostic::{Diagnostic, Span};
use crate::library::{Generation, Library};
use crate::mapping::{self, Scope};
use crate::model::build::{self, Env};
use crate::model::{self, FnModel};
use crate::project::Package;
use crate::resolve::{
    self, CrateSpec, DefMap, EnvPiece, EnvSource, FileItems, FileLayout, ItemDecls, Untracked,
};
use crate::syntax::limits::TooDeep;
use crate::syntax::{self, GreenKey, MacroKind};
use crate::target::Target;
use ra_ap_syntax::ast::{self as ra, HasName};
use ra_ap_syntax::{AstNode, Edition, Parse, SourceFile as RaFile, SyntaxKind, TextRange};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A kernel source file.
#[salsa::input]
pub struct SourceFile {
    #[returns(ref)]
    pub text: String,
    /// Its absolute path (`<text>` and the like for texts that are not files).
    #[returns(ref)]
    pub path: PathBuf,
    /// The parse of `text` when the host made it from the previous text's parse (see
    /// [`reparse_at`]); `None`: [`parse`] parses the text.
    #[default]
    #[returns(ref)]
    pub reparsed: Option<Parse<RaFile>>,
    /// The nesting pre-scan of `text` when the host made it from the previous text's (see
    /// [`syntax::limits::Nesting::after_edit`]); `None`: [`file_analysis`] scans the text.
    #[default]
    #[returns(ref)]
    pub nesting: Option<syntax::limits::Nesting>,
}

/// The workspace: every file the host holds, by absolute path, and the Cargo packages around
/// them (one per database; a database without one analyses each file alone).
#[salsa::input(singleton)]
pub struct Workspace {
    #[returns(ref)]
    pub files: Arc<BTreeMap<PathBuf, SourceFile>>,
    #[returns(ref)]
    pub packages: Arc<Vec<Package>>,
}

/// The text of the declarations visible to a function (see [`module_envs`]), and the glob
/// imports that could not be read (names the text lacks may come from them).
#[salsa::interned]
pub struct EnvText<'db> {
    #[returns(ref)]
    pub text: String,
    #[returns(ref)]
    pub unresolved: Vec<String>,
    /// The stretches of `text` that are items as they stand, read from their syntax rather
    /// than parsed again (not part of the key: the text says what they say).
    #[returns(ref)]
    pub pieces: Untracked<Vec<EnvPiece>>,
}

/// A file's one parse.
#[salsa::tracked(returns(ref), no_eq)]
pub fn parse(db: &dyn salsa::Database, file: SourceFile) -> Parse<RaFile> {
    match file.reparsed(db) {
        Some(p) => p.clone(),
        None => RaFile::parse(file.text(db), Edition::Edition2024),
    }
}

/// Where two texts differ: the end of their common prefix, and where their common suffix
/// starts in `old` and in `new` (all on character boundaries).
pub fn changed_span(old: &str, new: &str) -> (usize, usize, usize) {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let mut prefix = common_len(a, b, |s, i, n| &s[i..i + n]);
    while !(old.is_char_boundary(prefix) && new.is_char_boundary(prefix)) {
        prefix -= 1;
    }
    // The suffix, within what the prefix left of the shorter text.
    let most = a.len().min(b.len()) - prefix;
    let (a_rest, b_rest) = (&a[a.len() - most..], &b[b.len() - most..]);
    let mut suffix = common_len(a_rest, b_rest, |s, i, n| &s[s.len() - i - n..s.len() - i]);
    while !(old.is_char_boundary(old.len() - suffix) && new.is_char_boundary(new.len() - suffix)) {
        suffix -= 1;
    }
    (prefix, old.len() - suffix, new.len() - suffix)
}

/// How many bytes `a` and `b` have in common, taken in the order `window(slice, i, n)` gives
/// (the `n` bytes at distance `i` from the start, or from the end): whole 64-byte windows
/// compared at once (a keystroke compares the 65 KB file's two versions), then byte by byte.
fn common_len(a: &[u8], b: &[u8], window: impl Fn(&[u8], usize, usize) -> &[u8]) -> usize {
    const CHUNK: usize = 64;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + CHUNK <= n && window(a, i, CHUNK) == window(b, i, CHUNK) {
        i += CHUNK;
    }
    while i < n && window(a, i, 1) == window(b, i, 1) {
        i += 1;
    }
    i
}

/// The parse of `new`, made from `old`'s parse by reparsing only what changed: the edit is
/// the texts' [`changed_span`], and ra_ap_syntax relexes one token or reparses the smallest
/// block around it when it can (a keystroke inside a function body), the whole text otherwise.
pub fn reparse_at(
    old_parse: &Parse<RaFile>,
    old: &str,
    new: &str,
    (prefix, old_end, new_end): (usize, usize, usize),
) -> Parse<RaFile> {
    let (Ok(start), Ok(end)) = (u32::try_from(prefix), u32::try_from(old_end)) else {
        return RaFile::parse(new, Edition::Edition2024);
    };
    let mut delete = TextRange::new(start.into(), end.into());
    let mut insert = new[prefix..new_end].to_string();
    // An edit inside one token is widened to the next token too, so that ra_ap_syntax reparses
    // the smallest block or token tree around it: its one-token path reads the character after
    // the token through the whole file's text, which cost more than the block's parse.
    if let rowan::NodeOrToken::Token(t) = old_parse.tree().syntax().covering_element(delete)
        && let Some(next) = t.next_token()
        && let Some(after) =
            old.get(usize::from(delete.end())..usize::from(next.text_range().end()))
    {
        insert.push_str(after);
        delete = TextRange::new(delete.start(), next.text_range().end());
    }
    old_parse.reparse(delete, &insert, Edition::Edition2024)
}

/// Where a file's modules and items sit (re-run on every edit: a walk over the items, not
/// their contents).
#[salsa::tracked(returns(ref))]
pub fn file_layout(db: &dyn salsa::Database, file: SourceFile) -> Arc<FileLayout> {
    Arc::new(resolve::file_layout(&parse(db, file).tree()))
}

/// One item of a file (not a module), by its syntax: an edit elsewhere in the file leaves it
/// the same id, so what was computed from it is reused.
#[salsa::interned]
pub struct ItemSyntax<'db> {
    #[returns(ref)]
    pub green: GreenKey,
}

/// What one item contributes to its file, positions relative to the item's start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ItemFacts {
    /// Its declarations, as the crate's name resolution reads them.
    pub decls: Arc<ItemDecls>,
    /// The qualified paths it writes outside `use` items, by their names.
    pub paths: Vec<Vec<String>>,
    /// Its mappings and declarations outside any function (the module-level check's input).
    pub model: syntax::FileModel,
    /// Every function in it (the item itself, an impl's methods, functions nested in bodies).
    pub fns: Vec<ItemFn>,
}

/// A function inside an item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ItemFn {
    /// Its start, relative to the item's.
    pub offset: u32,
    pub green: GreenKey,
    /// What the bodies around it declare (see [`BodyDecls`]).
    pub local: String,
    /// The stretches of `local` that are functions' signatures, with their syntax.
    pub local_pieces: Untracked<Vec<EnvPiece>>,
    /// The type of the `impl` block it is a method or associated function of (`Self`).
    pub self_type: Option<String>,
    /// The type parameters of the `impl` block or trait it is declared in (see
    /// [`resolve::block_type_params`]).
    pub block_params: Vec<String>,
}

/// An item's facts (tracked per item: an edit re-runs it for the edited item only).
#[salsa::tracked(returns(ref))]
pub fn item_facts<'db>(db: &'db dyn salsa::Database, item: ItemSyntax<'db>) -> Arc<ItemFacts> {
    let green = item.green(db);
    let root = ra_ap_syntax::SyntaxNode::new_root(green.0.clone());
    // The functions and types declared in the item, the item itself included.
    let declared = syntax::nodes_of_kinds(
        &root,
        &[
            SyntaxKind::FN,
            SyntaxKind::STRUCT,
            SyntaxKind::ENUM,
            SyntaxKind::TRAIT,
            SyntaxKind::CONST,
        ],
    );
    // A function with nothing declared in it (most items) has no sites outside a function and
    // declares nothing for another function: its sites are read by its own analysis.
    let (model, fns) = if root.kind() == SyntaxKind::FN && declared.len() == 1 {
        let only = ItemFn {
            offset: 0,
            green: green.clone(),
            local: String::new(),
            local_pieces: Untracked::default(),
            self_type: None,
            block_params: Vec::new(),
        };
        (syntax::FileModel::default(), vec![only])
    } else {
        let model = syntax::model_of(&root, None);
        // The item's text is written out only when a body declares axes or aliases (rare).
        let in_body = |(i, s): (usize, &syntax::MacroSite)| {
            !s.fns.is_empty()
                && (s.kind == MacroKind::Axes || model.aliases.iter().any(|a| a.site == i))
        };
        let text = if model.sites.iter().enumerate().any(in_body) {
            syntax::node_text(&root)
        } else {
            String::new()
        };
        let in_bodies = BodyDecls::new(&text, &declared, &model);
        let fns = declared
            .iter()
            .filter_map(|n| ra::Fn::cast(n.clone()))
            .map(|f| {
                let (local, pieces) = in_bodies.visible_in(&f);
                // `Self` of a method: the type of the `impl` block it is directly in.
                let self_type = f
                    .syntax()
                    .parent()
                    .and_then(|list| list.parent())
                    .and_then(ra::Impl::cast)
                    .and_then(|imp| resolve::self_type_written(&imp));
                ItemFn {
                    offset: u32::from(f.syntax().text_range().start()),
                    green: GreenKey(f.syntax().green().to_owned()),
                    local,
                    local_pieces: Untracked(pieces),
                    self_type,
                    block_params: resolve::block_type_params(&f),
                }
            })
            .collect();
        (model, fns)
    };
    let paths = resolve::qualified_paths(&root, true)
        .into_iter()
        .map(|p| p.names(p.segs.len()))
        .collect();
    Arc::new(ItemFacts {
        decls: resolve::item_decls(green),
        paths,
        model: model.module_level(),
        fns,
    })
}

/// The items of each module of a file (index as in [`FileLayout::modules`]), each with its
/// offset: interned once per version of the file, for the queries that read them.
#[salsa::tracked(returns(ref))]
pub fn layout_items(db: &dyn salsa::Database, file: SourceFile) -> Vec<Vec<(ItemSyntax<'_>, u32)>> {
    file_layout(db, file)
        .modules
        .iter()
        .map(|m| {
            m.items
                .iter()
                .map(|item| (ItemSyntax::new(db, item.green.clone()), item.at))
                .collect()
        })
        .collect()
}

/// The facts of each item of one module (see [`layout_items`]), with the item and its offset.
fn module_items<'db>(
    db: &'db dyn salsa::Database,
    items: &[(ItemSyntax<'db>, u32)],
) -> Vec<(ItemSyntax<'db>, u32, &'db Arc<ItemFacts>)> {
    items
        .iter()
        .map(|(item, at)| (*item, *at, item_facts(db, *item)))
        .collect()
}

/// What a file declares, module by module (equal after an edit inside a function body, so
/// the crate's module tree and scopes are not rebuilt).
#[salsa::tracked(returns(ref))]
pub fn file_items(db: &dyn salsa::Database, file: SourceFile) -> Arc<FileItems> {
    let items = layout_items(db, file);
    Arc::new(resolve::items_of(file_layout(db, file), |module, index| {
        items
            .get(module)
            .and_then(|m| m.get(index))
            .map(|(item, _)| item_facts(db, *item).decls.clone())
            .unwrap_or_default()
    }))
}

/// The qualified paths written in each module of a file (index as in
/// [`FileItems::modules`]), outside `use` items: what its functions name by path
/// (`consts::BASE`), which [`module_envs`] resolves. Tracked apart from [`file_items`] so that
/// writing a path in a function body does not rebuild the crate's module tree.
#[salsa::tracked(returns(ref))]
pub fn file_paths(db: &dyn salsa::Database, file: SourceFile) -> Arc<Vec<Vec<Vec<String>>>> {
    let per = layout_items(db, file).iter().map(|m| {
        let set: std::collections::BTreeSet<&Vec<String>> = module_items(db, m)
            .into_iter()
            .flat_map(|(_, _, facts)| facts.paths.iter())
            .collect();
        set.into_iter().cloned().collect()
    });
    Arc::new(per.collect())
}

/// The crates a def map is built from: the crate analysed, then the crates it reaches by
/// name (name, root path).
#[salsa::interned]
pub struct CrateKey<'db> {
    #[returns(ref)]
    pub specs: Vec<(String, PathBuf)>,
}

struct DbItems<'a> {
    db: &'a dyn salsa::Database,
    files: &'a BTreeMap<PathBuf, SourceFile>,
    /// A file analysed alone, which the workspace may not hold.
    alone: Option<SourceFile>,
}

impl resolve::ItemSource for DbItems<'_> {
    fn items(&self, path: &Path) -> Option<Arc<FileItems>> {
        let file = self
            .alone
            .filter(|f| f.path(self.db) == path)
            .or_else(|| self.files.get(path).copied())?;
        Some(file_items(self.db, file).clone())
    }
}

/// The workspace's files (none for a database without a workspace).
fn workspace_files(db: &dyn salsa::Database) -> &BTreeMap<PathBuf, SourceFile> {
    static EMPTY: BTreeMap<PathBuf, SourceFile> = BTreeMap::new();
    Workspace::try_get(db).map_or(&EMPTY, |w| &**w.files(db))
}

/// The workspace's file at an absolute path.
pub fn workspace_file<'db>(db: &'db dyn salsa::Database, path: &Path) -> Option<&'db SourceFile> {
    workspace_files(db).get(path)
}

/// A crate's module tree with every scope resolved.
#[salsa::tracked(returns(ref))]
pub fn def_map<'db>(db: &'db dyn salsa::Database, key: CrateKey<'db>) -> Arc<DefMap> {
    let files = workspace_files(db);
    let specs: Vec<CrateSpec> = key
        .specs(db)
        .iter()
        .map(|(name, root)| CrateSpec {
            name: name.clone(),
            root: root.clone(),
        })
        .collect();
    let alone = None;
    Arc::new(DefMap::build(&specs, &DbItems { db, files, alone }))
}

/// The environment of each module of a file (index as in [`FileItems::modules`]): what is
/// visible there, found in the file's crate.
#[salsa::tracked(returns(ref))]
pub fn module_envs(db: &dyn salsa::Database, file: SourceFile) -> Vec<EnvText<'_>> {
    module_env_texts(db, file)
        .iter()
        .map(|e| EnvText::new(db, e.text.clone(), e.unresolved.clone(), e.pieces.clone()))
        .collect()
}

/// The text of each module's environment (see [`module_envs`]).
#[salsa::tracked(returns(ref))]
pub fn module_env_texts(db: &dyn salsa::Database, file: SourceFile) -> Arc<Vec<EnvSource>> {
    let path = file.path(db);
    let items = file_items(db, file);
    let paths = file_paths(db, file);
    let from = |map: &DefMap| -> Option<Vec<EnvSource>> {
        map.module_of(path, 0)?;
        Some(
            (0..items.modules.len())
                .map(|i| {
                    let written = paths.get(i).map_or(&[][..], Vec::as_slice);
                    map.module_of(path, i)
                        .map(|m| map.env_text(m, written))
                        .unwrap_or_default()
                })
                .collect(),
        )
    };
    Arc::new(in_crate_of(db, file, from).unwrap_or_default())
}

/// `from` applied to the module tree of `file`'s crate: the first crate of its package whose
/// tree holds the file, else the file as its own crate root (`from` says whether a tree holds
/// the file by answering).
pub fn in_crate_of<T>(
    db: &dyn salsa::Database,
    file: SourceFile,
    from: impl Fn(&DefMap) -> Option<T>,
) -> Option<T> {
    if let Some(found) = package_crates(db, file).find_map(|map| from(map)) {
        return Some(found);
    }
    // Outside any package's module tree: the file is its own crate root.
    from(own_crate_def_map(db, file))
}

/// The module trees of the crates of `file`'s package, the library's first.
fn package_crates<'db>(
    db: &'db dyn salsa::Database,
    file: SourceFile,
) -> impl Iterator<Item = &'db Arc<DefMap>> + 'db {
    package_of(db, file.path(db))
        .into_iter()
        .flat_map(move |pkg| {
            let lib = pkg.lib_name.clone().zip(pkg.roots.first().cloned());
            pkg.roots.iter().map(move |root| {
                let mut specs = vec![(pkg.crate_name(root), root.clone())];
                if let Some((name, lib_root)) = &lib
                    && lib_root != root
                {
                    specs.push((name.clone(), lib_root.clone()));
                }
                def_map(db, CrateKey::new(db, specs))
            })
        })
}

/// The files of `file`'s crate when no crate of its package holds it (a file outside every
/// module tree is a crate of its own: its module tree's files); `None` when one does. A fix
/// of such a file can change no other crate's analysis.
pub fn lone_crate_files(db: &dyn salsa::Database, file: SourceFile) -> Option<Vec<PathBuf>> {
    let path = file.path(db);
    if package_crates(db, file).any(|map| map.module_of(path, 0).is_some()) {
        return None;
    }
    let mut files: Vec<PathBuf> = own_crate_def_map(db, file)
        .modules
        .iter()
        .map(|m| m.file.clone())
        .collect();
    files.sort();
    files.dedup();
    Some(files)
}

/// The module tree of `file` as a crate of its own (a file outside any package's tree):
/// tracked, as every helper call and alias fix of the file reads it. Only the latest few are
/// kept from one revision to the next (a language server with 50 such files open kept 16 MB
/// of them); a file's analysis reads its own many times within one revision.
#[salsa::tracked(returns(ref), lru = 8)]
fn own_crate_def_map(db: &dyn salsa::Database, file: SourceFile) -> Arc<DefMap> {
    let path = file.path(db);
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().replace('-', "_"))
        .unwrap_or_default();
    let spec = CrateSpec {
        name,
        root: path.clone(),
    };
    let files = workspace_files(db);
    let alone = Some(file);
    Arc::new(DefMap::build(&[spec], &DbItems { db, files, alone }))
}

/// One function's text, its environment and the chip it is checked for. The environment is
/// the module's declarations (one value shared by every function of the file) plus what the
/// functions around this one declare in their bodies (usually nothing), so building a
/// function's input costs the size of the function, not of the file.
#[salsa::interned]
pub struct FnInput<'db> {
    /// The function's syntax, shared with the file's tree (never parsed again): equal when
    /// the function's text is.
    #[returns(ref)]
    pub green: GreenKey,
    pub module_env: EnvText<'db>,
    pub local_env: EnvText<'db>,
    pub target: TargetName,
    pub library: Generation,
    /// `Self` of a method (see [`ItemFn::self_type`]).
    #[returns(ref)]
    pub self_type: Option<String>,
    /// The type parameters of its `impl` block or trait (see [`ItemFn::block_params`]).
    #[returns(ref)]
    pub block_params: Vec<String>,
}

/// The user's configuration (one per database).
#[salsa::input]
pub struct Settings {
    #[returns(ref)]
    pub config: Config,
}

/// The library `file`'s crate is written against ([`crate::library`]): the configured one,
/// else the dependency of the package around the file, else the first library the file's
/// text or its crate roots' name, else the manual's.
#[salsa::tracked]
pub fn library_of(db: &dyn salsa::Database, file: SourceFile, settings: Settings) -> Library {
    let package = package_of(db, file.path(db));
    let roots = package.iter().flat_map(|p| &p.roots);
    let root_files = roots.filter_map(|r| workspace_files(db).get(r).copied());
    let texts = std::iter::once(file)
        .chain(root_files)
        .map(|f| f.text(db).as_str());
    crate::library::detect(
        settings.config(db).library,
        package.and_then(|p| p.library),
        texts,
    )
}

/// The innermost package of the workspace whose directory holds `path`.
fn package_of<'db>(db: &'db dyn salsa::Database, path: &Path) -> Option<&'db Package> {
    Workspace::try_get(db)?
        .packages(db)
        .iter()
        .filter(|p| p.contains(path))
        .max_by_key(|p| p.dir.components().count())
}

/// Whether `file` is a crate root: a root of its package, or a file outside any package.
fn is_crate_root(db: &dyn salsa::Database, file: SourceFile) -> bool {
    let path = file.path(db);
    package_of(db, path).is_none_or(|p| p.roots.iter().any(|r| r == path))
}

/// The configured chip (tracked on its own so that a change of rule levels does not re-run
/// the analyses, which depend on the chip only).
#[salsa::tracked]
pub fn target_name(db: &dyn salsa::Database, settings: Settings) -> TargetName {
    settings.config(db).target
}

/// A function's analysis, with spans relative to the start of its text: its model, its
/// diagnostics and its cost, all from one derivation of its sequencer operations and DMA
/// transfers (the rules and the simulator read the same `FnContext`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FnAnalysis {
    pub model: FnModel,
    pub diagnostics: Vec<Diagnostic>,
    pub cost: crate::sim::KernelCost,
}

/// A file's analysis: its functions' analyses (each with the offset of its text) and the
/// diagnostics found outside any function (file positions). [`FileAnalysis::diagnostics`]
/// puts them together; they are not stored twice (a file's diagnostics, once per function,
/// once for the file and once as the user sees them, were a tenth of an open file's memory).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileAnalysis {
    pub module_diagnostics: Vec<Diagnostic>,
    pub fns: Vec<(u32, Arc<FnAnalysis>)>,
    /// The functions macro invocations generated (kept apart from `fns`: their positions are
    /// in the expansion, not the file).
    pub generated: Vec<GeneratedFn>,
    /// Each module of the file (its top level, then its inline modules) with what its
    /// module-level mappings see (hovers read it).
    pub modules: Vec<ModuleScope>,
}

/// A module's range in the file and the scope its module-level mappings see.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleScope {
    pub range: Span,
    /// Positions in it are those of the module's check (see [`module_check`]): [`Self::place`]
    /// puts them in the file.
    pub scope: Arc<Scope>,
    /// Each checked item: its start in the check and in the file, and its length.
    places: Vec<(u32, u32, u32)>,
}

impl ModuleScope {
    /// A position of the module's check, in the file.
    pub fn place(&self, span: Span) -> Span {
        place(&self.places, span)
    }
}

fn place(places: &[(u32, u32, u32)], span: Span) -> Span {
    if span == Span::default() {
        return span; // no place (a declaration the environment brought, its span cleared)
    }
    places
        .iter()
        .find(|(at, _, len)| *at <= span.start && span.start <= at + len)
        .map_or(span, |(at, real, _)| span.shift(real - at))
}

/// A function a macro invocation generated, analysed as written ones are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedFn {
    /// The invocation, in the file.
    pub call: Span,
    pub macro_name: String,
    pub analysis: Arc<FnAnalysis>,
    /// The invocation's arguments (its delimited token tree) in the file, and their text.
    pub args: (Span, String),
    /// The generated function's text, where its findings' edits are.
    pub text: Arc<str>,
}

impl GeneratedFn {
    /// The function's cost with every operation placed at the invocation.
    pub fn cost_at_call(&self) -> crate::sim::KernelCost {
        let mut cost = self.analysis.cost.clone();
        cost.span = Span::default();
        for op in &mut cost.ops {
            op.span = Span::default();
        }
        cost
    }

    /// A finding of the generated function, as reported at the invocation: its place in the
    /// expansion has no text in the file. A fix is kept where each of its edits replaces text
    /// an argument of the invocation gave (`m![K % 4]` of `$lane`), found once among them;
    /// the fix check then analyses the file with it.
    pub fn at_call(&self, d: &Diagnostic) -> Diagnostic {
        let name = &self.analysis.model.name;
        let within = format!(
            "in `{name}`, which this `{}!` invocation generates",
            self.macro_name
        );
        let fixes: Vec<crate::diagnostic::Fix> = d
            .fixes
            .iter()
            .filter_map(|f| self.in_arguments(f))
            .collect();
        let mut out = at_invocation(d, self.call, &within);
        out.fixes = fixes;
        // A finding on text an argument gave (`m![G # 16]` given as `flit = m![G # 16]`) is
        // reported on that argument; a short text (`8`) may be anyone's.
        if let Some(at) = self.in_argument(d.span).filter(|at| at.end - at.start >= 3) {
            out.span = at;
        }
        out
    }

    /// Where the invocation's arguments write the text at `span` of the generated function,
    /// when they write it exactly once.
    fn in_argument(&self, span: Span) -> Option<Span> {
        let text = self.text.get(span.range())?.trim();
        if text.is_empty() {
            return None;
        }
        let found = crate::body_macros::only_occurrence(&self.args.1, text)?;
        let start = self.args.0.start as usize + found;
        Some(Span::new(start, start + text.len()))
    }

    /// `fix` (edits of the generated function) as edits of the invocation's arguments.
    fn in_arguments(&self, fix: &crate::diagnostic::Fix) -> Option<crate::diagnostic::Fix> {
        if fix.edits.is_empty() || !fix.other_files.is_empty() || !fix.alias_pad.is_empty() {
            return None;
        }
        let mut edits = Vec::new();
        for e in &fix.edits {
            edits.push(crate::diagnostic::Edit {
                span: self.in_argument(e.span)?,
                new_text: e.new_text.clone(),
            });
        }
        Some(crate::diagnostic::Fix {
            edits,
            ..fix.clone()
        })
    }
}

impl FileAnalysis {
    /// Every raw finding of the file (file positions, sorted by position and code), before
    /// suppression comments and rule levels.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut all = self.module_diagnostics.clone();
        for (start, f) in &self.fns {
            all.extend(f.diagnostics.iter().map(|d| d.clone().shifted(*start)));
        }
        for g in &self.generated {
            all.extend(g.analysis.diagnostics.iter().map(|d| g.at_call(d)));
        }
        all.sort_by_key(|d| (d.span, d.code()));
        all.dedup();
        all
    }
}

/// The database. `Default` gives an empty one; [`Database::with_event_log`] records which
/// queries execute (for incrementality tests).
#[salsa::db]
#[derive(Clone, Default)]
pub struct Database {
    storage: salsa::Storage<Self>,
}

#[salsa::db]
impl salsa::Database for Database {}

impl Database {
    /// A database that passes every salsa event's debug text to `log`.
    pub fn with_event_log(log: impl Fn(String) + Send + Sync + 'static) -> Database {
        Database {
            storage: salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
                log(format!("{:?}", event.kind));
            }))),
        }
    }
}

fn span_of(r: TextRange) -> Span {
    Span::new(u32::from(r.start()) as usize, u32::from(r.end()) as usize)
}

/// The environment built from its text (tracked: shared by every function that sees it).
#[salsa::tracked(returns(ref))]
pub fn env<'db>(db: &'db dyn salsa::Database, text: EnvText<'db>) -> Arc<Env> {
    let mut env = env_on(None, text.text(db), &text.pieces(db).0);
    env.scope.unresolved = text.unresolved(db).clone();
    Arc::new(env)
}

/// The module's environment with the declarations of the enclosing functions added.
#[salsa::tracked(returns(ref))]
pub fn fn_env<'db>(
    db: &'db dyn salsa::Database,
    module: EnvText<'db>,
    local: EnvText<'db>,
) -> Arc<Env> {
    if local.text(db).is_empty() {
        return env(db, module).clone();
    }
    // The module's environment is built once; what enclosing bodies add is read on top of it
    // (parsing the module's text again for every nested function made one file of N kernels
    // cost N^2).
    Arc::new(env_on(
        Some(env(db, module)),
        local.text(db),
        &local.pieces(db).0,
    ))
}

/// Every `macro_rules!` definition of `file`'s crate by name, with its syntax and place.
#[salsa::tracked(returns(ref))]
pub fn crate_macros(
    db: &dyn salsa::Database,
    file: SourceFile,
) -> Arc<crate::body_macros::CrateMacros> {
    let files: Vec<std::path::PathBuf> = in_crate_of(db, file, |map| {
        let mut paths: Vec<std::path::PathBuf> =
            map.modules.iter().map(|m| m.file.clone()).collect();
        paths.sort();
        paths.dedup();
        Some(paths)
    })
    .unwrap_or_default();
    let own = file.path(db).clone();
    let sources = files
        .iter()
        .filter_map(|p| {
            if *p == own {
                Some(file)
            } else {
                workspace_file(db, p).copied()
            }
        })
        .chain((!files.contains(&own)).then_some(file));
    let mut found: HashMap<String, Option<GreenKey>> = HashMap::new();
    let mut places: HashMap<String, (PathBuf, u32)> = HashMap::new();
    for source in sources {
        let layout = file_layout(db, source);
        let defs = layout.modules.iter().flat_map(|m| &m.items).filter(|it| {
            it.generated.is_none()
                && <ra_ap_syntax::RustLanguage as rowan::Language>::kind_from_raw(it.green.0.kind())
                    == SyntaxKind::MACRO_RULES
        });
        for it in defs {
            let Some(def) = syntax::macros::definition(&it.green.0) else {
                continue;
            };
            places.insert(def.name.clone(), (source.path(db).clone(), it.at));
            found
                .entry(def.name.clone())
                .and_modify(|seen| {
                    if seen.as_ref() != Some(&it.green) {
                        *seen = None;
                    }
                })
                .or_insert_with(|| Some(it.green.clone()));
        }
    }
    places.retain(|name, _| found.get(name).is_some_and(Option::is_some));
    let mut out: Vec<(String, Option<GreenKey>)> = found.into_iter().collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Arc::new(crate::body_macros::CrateMacros {
        defs: out.into(),
        places,
    })
}

/// The macros a function's body invokes, but the library's (tracked: an edit elsewhere does
/// not scan it again).
#[salsa::tracked(returns(ref))]
pub fn body_macros<'db>(db: &'db dyn salsa::Database, input: FnInput<'db>) -> Arc<[String]> {
    let root = ra_ap_syntax::SyntaxNode::new_root(input.green(db).0.clone());
    crate::body_macros::invoked(&root).into()
}

/// Analyses one function (tracked: re-runs only when its text or environment changes).
#[salsa::tracked(returns(ref))]
pub fn fn_analysis<'db>(db: &'db dyn salsa::Database, input: FnInput<'db>) -> Arc<FnAnalysis> {
    let root = ra_ap_syntax::SyntaxNode::new_root(input.green(db).0.clone());
    Arc::new(analyse_fn(
        &root,
        fn_env(db, *input.module_env(db), *input.local_env(db)),
        input.target(db).target(),
        (*input.library(db), input.self_type(db).as_deref()),
        input.block_params(db),
        (&model::Bound::default(), &Vec::new()),
    ))
}

/// The items of one module that hold module-level mappings or declarations, in order.
#[salsa::interned]
pub struct ModuleSites<'db> {
    #[returns(ref)]
    pub items: Vec<ItemSyntax<'db>>,
}

/// A module's module-level mappings checked against its environment: the diagnostics and the
/// resulting scope, in the module's *check coordinates* (its checked items laid end to end),
/// so an edit that moves the items (typing in a function above them) does not re-run it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleCheck {
    pub diagnostics: Vec<Diagnostic>,
    pub scope: Arc<Scope>,
    /// Each item's start in the check coordinates and its length.
    pub items: Vec<(u32, u32)>,
}

/// Checks one module's module-level mappings (tracked: by its environment and its items).
#[salsa::tracked(returns(ref))]
pub fn module_check<'db>(
    db: &'db dyn salsa::Database,
    module_env: EnvText<'db>,
    sites: ModuleSites<'db>,
    library: Generation,
) -> Arc<ModuleCheck> {
    let mut model = syntax::FileModel::default();
    let mut items = Vec::new();
    let mut at = 0u32;
    for item in sites.items(db) {
        let len = u32::from(item.green(db).0.text_len());
        model.append(item_facts(db, *item).model.clone().shifted(at));
        items.push((at, len));
        at = at.saturating_add(len);
    }
    let module = env(db, module_env);
    // The Rust expressions the items escape (`{ consts::SPEC.width }`), as written here: the
    // environment knows them by the names it gives them.
    let mut with_escapes: Option<Scope> = None;
    for item in sites.items(db) {
        let node = ra_ap_syntax::SyntaxNode::new_root(item.green(db).0.clone());
        let values = escape_values(module, &node);
        if !values.is_empty() {
            let scope = with_escapes.get_or_insert_with(|| module.scope.clone());
            scope.consts.extend(values);
        }
    }
    let base = with_escapes.as_ref().unwrap_or(&module.scope);
    let mut instances = Vec::new();
    for ((start, _), item) in items.iter().zip(sites.items(db)) {
        let node = ra_ap_syntax::SyntaxNode::new_root(item.green(db).0.clone());
        let found = instance_diagnostics(&node, base);
        instances.extend(found.into_iter().map(|d| d.shifted(*start)));
    }
    let check = syntax::check_sites(&model, base, |_| true, None);
    let sites: Vec<Span> = model.sites.iter().map(|s| s.span).collect();
    let mut diagnostics =
        crate::rules::mapping_diagnostics(&check.problems, &sites, &model.type_forms);
    // The grammar of the mappings outside functions (a function's own are its analysis's).
    diagnostics.extend(other_library_forms(&model, &check, library, |s| {
        s.fns.is_empty()
    }));
    diagnostics.extend(instances);
    Arc::new(ModuleCheck {
        diagnostics,
        scope: Arc::new(check.scope),
        items,
    })
}

/// What the mappings that generic aliases given their arguments stand for break, outside
/// functions (`type Row = MacRows<m![Ch]>;` is `m![Ch % 8]`, and 8 does not divide Ch = 5):
/// reported at the instance, which is what the kernel writes (the generic alias is fine for
/// other arguments), with the fix that pads the argument where one does ([`padded_argument`]).
fn instance_diagnostics(node: &ra_ap_syntax::SyntaxNode, scope: &Scope) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    // A function's own aliases are its analysis's.
    if ra::Fn::can_cast(node.kind()) {
        return out;
    }
    let aliases = node
        .descendants()
        .filter(|n| !n.ancestors().any(|a| ra::Fn::can_cast(a.kind())))
        .filter_map(ra::TypeAlias::cast);
    for a in aliases {
        let Some(ra::Type::PathType(p)) = a.ty() else {
            continue;
        };
        let generic = p
            .path()
            .and_then(|p| p.segment())
            .and_then(|s| ra::HasGenericArgs::generic_arg_list(&s))
            .is_some();
        if !generic || ra::HasGenericParams::generic_param_list(&a).is_some() {
            continue;
        }
        let text = syntax::compact_text(p.syntax());
        let Some((problems, mapping)) = build::generic_alias_problems(&text, scope) else {
            continue;
        };
        let r = p.syntax().text_range();
        let at = Span::new(usize::from(r.start()), usize::from(r.end()));
        let stands_for = mapping.map_or_else(String::new, |m| format!(", which is {m}"));
        for problem in problems
            .iter()
            .filter(|p| matches!(p, mapping::Problem::Invalid(_)))
        {
            let mut d = crate::rules::mapping_diagnostic(problem);
            d.span = at;
            d.fixes.clear();
            d.related.clear();
            d.message
                .push_str(&format!(" (in `{}`{stands_for})", text.trim()));
            out.push(match padded_argument(&p, problem) {
                Some((span, new)) => {
                    let title = format!("pad the argument: {new}");
                    d.with_edit(title, false, span, new)
                }
                None => d,
            });
        }
    }
    out
}

/// A generic alias's one mapping argument written `m![..]` (`MacRows<m![Ch]>`), padded so
/// that the division or modulo the alias applies to the whole argument divides it
/// (`m![Ch # 8]`): where, and the new text.
fn padded_argument(p: &ra::PathType, problem: &mapping::Problem) -> Option<(Span, String)> {
    let mapping::Problem::Invalid(mapping::problem::Invalid::NotDivisible {
        operand, size, n, ..
    }) = problem
    else {
        return None;
    };
    // The operand is the parameter itself (`{ X }`), not a part of it.
    if !operand.trim().starts_with('{') {
        return None;
    }
    let seg = p.path()?.segment()?;
    let args: Vec<ra::GenericArg> = ra::HasGenericArgs::generic_arg_list(&seg)?
        .generic_args()
        .collect();
    let [ra::GenericArg::TypeArg(t)] = args.as_slice() else {
        return None;
    };
    let ra::Type::MacroType(m) = t.ty()? else {
        return None;
    };
    let text = syntax::node_text(m.syntax());
    let new = mapping::edit::pad_innermost(text.trim(), size.checked_next_multiple_of(*n)?)?;
    let r = m.syntax().text_range();
    Some((Span::new(usize::from(r.start()), usize::from(r.end())), new))
}

/// The forms of the mappings `check` parsed that `library`'s parser does not accept, as
/// VL-001 diagnostics (the model's coordinates), for the sites `keep` selects.
fn other_library_forms(
    model: &syntax::FileModel,
    check: &syntax::SitesCheck,
    library: Generation,
    keep: impl Fn(&syntax::MacroSite) -> bool,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (i, expr) in &check.mappings {
        let Some(site) = model.sites.get(*i).filter(|s| keep(s)) else {
            continue;
        };
        for (form, span) in mapping::dialect_forms(expr) {
            if form.accepted_by() == library {
                continue;
            }
            let from = span.start.saturating_sub(site.body_start) as usize;
            let to = span.end.saturating_sub(site.body_start) as usize;
            let written = site.body.get(from..to).unwrap_or_default();
            out.push(crate::rules::tool::mapping_form_of_other_library(
                form, span, written, library,
            ));
        }
    }
    out
}

/// Where the file first nests past the limit (docs/robustness.md); `None` within it.
#[salsa::tracked]
pub fn nesting_past_limit(db: &dyn salsa::Database, file: SourceFile) -> Option<TooDeep> {
    match file.nesting(db) {
        Some(n) => n.too_deep,
        None => syntax::limits::check_nesting(file.text(db)),
    }
}

/// An item's whole mapping-level model (its sites in functions too), positions relative to
/// the item (tracked per item: an edit re-runs it for the edited item only).
#[salsa::tracked(returns(ref))]
pub fn item_model<'db>(
    db: &'db dyn salsa::Database,
    item: ItemSyntax<'db>,
) -> Arc<syntax::FileModel> {
    let root = ra_ap_syntax::SyntaxNode::new_root(item.green(db).0.clone());
    Arc::new(syntax::model_of(&root, None))
}

/// The file's mapping-level model (every `m!`, `axes!` and `i!` site and alias), as its items'
/// models with each item's offset, in the order of the file's modules; `None` for a file
/// nested past the limit, which is never walked. After an edit only the edited item's model
/// is made again.
pub fn item_models(
    db: &dyn salsa::Database,
    file: SourceFile,
) -> Option<Vec<(u32, Arc<syntax::FileModel>)>> {
    if nesting_past_limit(db, file).is_some() {
        return None;
    }
    Some(
        written_items(db, file)
            .map(|(item, at)| (at, item_model(db, item).clone()))
            .collect(),
    )
}

/// The items of a file written in its text (not generated by a macro), with their offsets:
/// what the editor's views of the text (hovers, completion, highlighting) read.
fn written_items(
    db: &dyn salsa::Database,
    file: SourceFile,
) -> impl Iterator<Item = (ItemSyntax<'_>, u32)> {
    let layout = file_layout(db, file);
    let ids = layout_items(db, file);
    layout.modules.iter().zip(ids).flat_map(|(m, ids)| {
        m.items
            .iter()
            .zip(ids)
            .filter(|(it, _)| it.generated.is_none())
            .map(|(_, (item, at))| (*item, *at))
    })
}

/// The model of the item of `file` that holds `offset` (file positions); `None` for a file
/// nested past the limit or an offset outside every item. Reads one item, whatever the
/// file's size.
pub fn model_at(
    db: &dyn salsa::Database,
    file: SourceFile,
    offset: u32,
) -> Option<syntax::FileModel> {
    if nesting_past_limit(db, file).is_some() {
        return None;
    }
    let (item, at) = written_items(db, file).find(|(item, at)| {
        let len = u32::from(item.green(db).0.text_len());
        *at <= offset && offset < at.saturating_add(len)
    })?;
    Some(item_model(db, item).as_ref().clone().shifted(at))
}

/// Analyses a whole file (tracked per file): every rule's raw findings, before suppression
/// comments and rule levels. After an edit it re-runs, but what it reads is tracked per item
/// (an item's facts, a module's check, a function's analysis), so only the edited item's
/// queries execute again.
#[salsa::tracked(returns(ref))]
pub fn file_analysis(
    db: &dyn salsa::Database,
    file: SourceFile,
    settings: Settings,
) -> Arc<FileAnalysis> {
    let target = target_name(db, settings);
    let library = *library_of(db, file, settings);
    mapping::parse::forget_parsed();
    let mut out = FileAnalysis {
        module_diagnostics: Vec::new(),
        fns: Vec::new(),
        generated: Vec::new(),
        modules: Vec::new(),
    };
    if let Some(too_deep) = nesting_past_limit(db, file) {
        let note = crate::rules::tool::nesting_too_deep(too_deep);
        out.module_diagnostics.push(note);
        return Arc::new(out);
    }
    let layout = file_layout(db, file);
    let envs = module_envs(db, file);
    let no_env = || EnvText::new(db, String::new(), Vec::new(), Untracked::default());
    if is_crate_root(db, file) {
        let text = file.text(db);
        let crate_name = library.generation.crate_name();
        let name = text
            .find(crate_name)
            .map_or(Span::default(), |at| Span::new(at, at + crate_name.len()));
        let note = crate::rules::tool::library_checked_as_nearest(&library, name);
        out.module_diagnostics.extend(note);
    }
    let ids = layout_items(db, file);
    for (i, m) in layout.modules.iter().enumerate() {
        let module_env = envs.get(i).copied().unwrap_or_else(no_env);
        let items = module_items(db, ids.get(i).map_or(&[][..], Vec::as_slice));
        out.module_diagnostics
            .extend(m.not_expanded.iter().map(|n| {
                let call = Span::new(n.call.0 as usize, n.call.1 as usize);
                crate::rules::tool::macro_not_expanded(call, &n.macro_name, &n.reason)
            }));
        check_module(db, m, module_env, &items, library.generation, &mut out);
        for (k, (_, at, facts)) in items.iter().enumerate() {
            let origin = m.items.get(k).and_then(|it| it.generated.clone());
            for f in &facts.fns {
                // Each function of the module's items, analysed by its own query on its own
                // subtree of the file's one parse (rooted at offset 0, which keeps its
                // analysis independent of where it sits).
                let pieces = f.local_pieces.clone();
                let local = EnvText::new(db, f.local.clone(), Vec::new(), pieces);
                let generation = library.generation;
                let input = FnInput::new(
                    db,
                    f.green.clone(),
                    module_env,
                    local,
                    target,
                    generation,
                    f.self_type.clone(),
                    f.block_params.clone(),
                );
                let analysis = with_body_macros(db, file, input);
                match &origin {
                    Some(g) => {
                        let call = Span::new(g.call.0 as usize, g.call.1 as usize);
                        out.generated.push(GeneratedFn {
                            call,
                            macro_name: g.macro_name.clone(),
                            analysis,
                            args: invocation_args(file.text(db), call),
                            text: crate::syntax::node_text(&ra_ap_syntax::SyntaxNode::new_root(
                                f.green.0.clone(),
                            ))
                            .into(),
                        });
                    }
                    None => out.fns.push((at + f.offset, analysis)),
                }
            }
        }
    }
    out.fns.sort_by_key(|(start, _)| *start);
    Arc::new(out)
}

/// Checks a module's own mappings and declarations, each with what its module sees, and
/// records its scope: the findings placed in the file (a finding in an item a macro generated
/// is reported at the invocation).
fn check_module<'db>(
    db: &'db dyn salsa::Database,
    m: &resolve::ModuleLayout,
    module_env: EnvText<'db>,
    items: &[(ItemSyntax<'db>, u32, &'db Arc<ItemFacts>)],
    generation: Generation,
    out: &mut FileAnalysis,
) {
    let origin = |k: usize| m.items.get(k).and_then(|it| it.generated.clone());
    let checked: Vec<(ItemSyntax, u32, Option<Arc<resolve::Generated>>)> = items
        .iter()
        .enumerate()
        .filter(|(_, (_, _, f))| {
            let m = &f.model;
            !m.sites.is_empty() || !m.renames.is_empty() || !m.type_forms.is_empty()
        })
        .map(|(k, (item, at, _))| (*item, *at, origin(k)))
        .collect();
    let sites = ModuleSites::new(
        db,
        checked.iter().map(|(item, _, _)| *item).collect::<Vec<_>>(),
    );
    let check = module_check(db, module_env, sites, generation);
    let places: Vec<(u32, u32, u32)> = check
        .items
        .iter()
        .zip(&checked)
        .map(|((at, len), (_, real, _))| (*at, *real, *len))
        .collect();
    let invocations: Vec<(u32, u32, Span, String)> = check
        .items
        .iter()
        .zip(&checked)
        .filter_map(|((at, len), (_, _, g))| {
            let g = g.as_ref()?;
            let call = Span::new(g.call.0 as usize, g.call.1 as usize);
            let within = format!("in what this `{}!` invocation generates", g.macro_name);
            Some((*at, *len, call, within))
        })
        .collect();
    out.module_diagnostics
        .extend(check.diagnostics.iter().map(|d| {
            let call = invocations
                .iter()
                .find(|(at, len, _, _)| *at <= d.span.start && d.span.start <= at + len);
            match call {
                Some((_, _, call, within)) => at_invocation(d, *call, within),
                None => d.clone().relocated(|s| place(&places, s)),
            }
        }));
    out.modules.push(ModuleScope {
        range: Span::new(m.offset as usize, m.end as usize),
        scope: check.scope.clone(),
        places,
    });
}

/// The analysis of the function `input` holds, its findings those of its body with the crate's
/// macros it invokes expanded (as the compiler expands them before it traces the kernel),
/// placed back in the body as written.
fn with_body_macros(
    db: &dyn salsa::Database,
    file: SourceFile,
    input: FnInput<'_>,
) -> Arc<FnAnalysis> {
    let analysis = fn_analysis(db, input);
    let Some((expanded_input, expanded, macros)) = macros_expanded(db, file, input) else {
        return analysis.clone();
    };
    let found = &fn_analysis(db, expanded_input).diagnostics;
    Arc::new(FnAnalysis {
        diagnostics: found.iter().map(|d| expanded.place(d, macros)).collect(),
        ..(**analysis).clone()
    })
}

/// The function `input` holds with the macros of `file`'s crate it invokes expanded: its
/// input, how to place its findings back, and the crate's macros; `None` when it invokes none.
pub fn macros_expanded<'db>(
    db: &'db dyn salsa::Database,
    file: SourceFile,
    input: FnInput<'db>,
) -> Option<(
    FnInput<'db>,
    crate::body_macros::Expanded,
    &'db Arc<crate::body_macros::CrateMacros>,
)> {
    // Remembered per function: an edit elsewhere does not look at this one's body again.
    if body_macros(db, input).is_empty() {
        return None;
    }
    let green = input.green(db);
    let macros = crate_macros(db, file);
    let expanded = crate::body_macros::expand_fn(green, &macros.defs)?;
    let expanded_input = FnInput::new(
        db,
        expanded.green.clone(),
        *input.module_env(db),
        *input.local_env(db),
        *input.target(db),
        *input.library(db),
        input.self_type(db).clone(),
        input.block_params(db).clone(),
    );
    Some((expanded_input, expanded, macros))
}

/// The delimited arguments of the invocation at `call` (`name!(..)`), in the file, and their
/// text.
fn invocation_args(text: &str, call: Span) -> (Span, String) {
    let written = text.get(call.range()).unwrap_or("");
    let open = written
        .find('!')
        .and_then(|bang| {
            written[bang + 1..]
                .find(|c: char| !c.is_whitespace())
                .map(|k| bang + 1 + k)
        })
        .unwrap_or(written.len());
    let start = call.start as usize + open;
    (
        Span::new(start, call.end as usize),
        written.get(open..).unwrap_or("").to_string(),
    )
}

/// A finding in what a macro invocation generated, reported at the invocation (`call`) and
/// saying where in the expansion it is (`within`): the expansion has no text in the file, so
/// its related places and its fixes are dropped (see [`GeneratedFn::at_call`] for the fixes an
/// argument of the invocation can take).
fn at_invocation(d: &Diagnostic, call: Span, within: &str) -> Diagnostic {
    let mut d = d.clone();
    d.span = call;
    d.related.clear();
    d.fixes.clear();
    d.message = format!("{} ({within})", d.message);
    d
}

/// What function bodies declare for the functions inside them (the manual's
/// `fn main() { ... }` wrappers): `axes!`, mapping aliases and types, by the function whose
/// body holds them directly. Items declared in a function are seen by that function and the
/// functions nested in it, never by another function of the file.
struct BodyDecls {
    /// Innermost enclosing function -> (position, declaration text, and the syntax of a
    /// function whose signature the text is).
    by_fn: HashMap<Span, Vec<BodyDecl>>,
}

type BodyDecl = (u32, String, Option<rowan::GreenNode>);

impl BodyDecls {
    /// `declared`: the functions, structs, enums and traits of the item (see [`item_facts`]).
    fn new(
        text: &str,
        declared: &[ra_ap_syntax::SyntaxNode],
        model: &syntax::FileModel,
    ) -> BodyDecls {
        let mut by_fn: HashMap<Span, Vec<BodyDecl>> = HashMap::new();
        let alias_of: HashMap<Span, &str> = model
            .aliases
            .iter()
            .filter_map(|a| Some((model.sites.get(a.site)?.span, a.name.text.as_str())))
            .collect();
        for site in &model.sites {
            let Some(innermost) = site.fns.first() else {
                continue;
            };
            let Some(t) = text.get(site.span.range()) else {
                continue;
            };
            let decl = match site.kind {
                MacroKind::Axes => format!("{t};\n"),
                MacroKind::Mapping => match alias_of.get(&site.span) {
                    Some(name) => format!("type {name} = {t};\n"),
                    None => continue,
                },
                MacroKind::Index => continue,
            };
            by_fn
                .entry(*innermost)
                .or_default()
                .push((site.span.start, decl, None));
        }
        // Declarations inside function bodies only matter to the functions nested there.
        for node in declared {
            let Some(f) = node.ancestors().skip(1).find_map(ra::Fn::cast) else {
                continue;
            };
            let (decl, syntax) = if let Some(name) = local_type_name(node) {
                (format!("struct {name};\n"), None)
            } else if node.kind() == SyntaxKind::CONST {
                // `const LANES: usize = 8;` in a body shadows the module's `LANES` there.
                (format!("{}\n", syntax::node_text(node)), None)
            } else if let Some(nested) = ra::Fn::cast(node.clone()) {
                // Read from its syntax in the environment, unless a body would be read too
                // (a `const fn`'s, one returning a tuple or tensors it places): then the text
                // holds the body, so that an edit of the body alone is one of the text.
                let body_read = nested.const_token().is_some()
                    || syntax::returns_a_tuple(&nested)
                    || syntax::returned_placements(&nested).is_some();
                match body_read {
                    true => (format!("{}\n", syntax::node_text(node)), None),
                    false => (
                        format!("{}\n", syntax::signature_decl(node)),
                        Some(node.green().to_owned()),
                    ),
                }
            } else {
                continue;
            };
            let at = u32::from(node.text_range().start());
            by_fn
                .entry(span_of(f.syntax().text_range()))
                .or_default()
                .push((at, decl, syntax));
        }
        BodyDecls { by_fn }
    }

    /// The declarations `f` sees from its own body and the bodies around it, in file order.
    fn visible_in(&self, f: &ra::Fn) -> (String, Vec<EnvPiece>) {
        let mut decls: Vec<&BodyDecl> = Vec::new();
        let own = span_of(f.syntax().text_range());
        // The function's own body contributes its types and nested functions' signatures (its
        // axes and aliases are analysed with the function itself).
        if let Some(own_decls) = self.by_fn.get(&own) {
            decls.extend(
                own_decls
                    .iter()
                    .filter(|(_, d, _)| !d.starts_with("axes!") && !d.starts_with("type ")),
            );
        }
        for outer in f.syntax().ancestors().skip(1).filter_map(ra::Fn::cast) {
            if let Some(d) = self.by_fn.get(&span_of(outer.syntax().text_range())) {
                decls.extend(d);
            }
        }
        decls.sort_by_key(|(at, _, _)| *at);
        let mut text = String::new();
        let mut pieces = Vec::new();
        for (_, decl, syntax) in decls {
            let start = text.len();
            text.push_str(decl);
            if let Some(green) = syntax {
                // The signature and its `;`, without the line's end (as a module's pieces).
                pieces.push(EnvPiece {
                    start,
                    end: text.len().saturating_sub(1),
                    green: green.clone(),
                });
            }
        }
        (text, pieces)
    }
}

/// The declarations of `env_text` in an environment over `base` (as if that text followed
/// base's).
fn env_on(base: Option<&Arc<Env>>, env_text: &str, pieces: &[EnvPiece]) -> Env {
    let (model, decls) = read_declarations(env_text, pieces);
    let empty = Scope::default();
    let base_scope = base.map_or(&empty, |b| &b.scope);
    let scope = syntax::scope_of(&model, base_scope);
    let scope = strip_spans(scope);
    let mut env = match base {
        Some(b) => Env::child_of(Arc::clone(b), scope),
        None => Env {
            scope,
            ..Env::default()
        },
    };
    // `size_of::<TileHeader>()` in a constant, wherever the struct is written.
    for s in decls.iter().filter_map(|n| ra::Struct::cast(n.clone())) {
        if let (Some(name), Some(bytes)) = (s.name(), struct_size(&s, &env.consts)) {
            let key = model::consts::struct_size_key(name.text());
            env.consts.insert(key, bytes);
        }
    }
    for node in &decls {
        declare(&mut env, node.clone());
    }
    // `type Row = m![Z # { Table::row() }];`: the escaped expression's value, once every
    // constant it may read is declared (a module's items are in scope wherever they are
    // written).
    for a in decls.iter().filter_map(|n| ra::TypeAlias::cast(n.clone())) {
        let values = escape_values(&env, a.syntax());
        env.scope.consts.extend(values);
    }
    env
}

/// The stretches of `env_text` in order: those between pieces (each whole items), and each
/// piece with its own syntax.
fn env_stretches<'p>(
    env_text: &str,
    pieces: &'p [EnvPiece],
) -> Vec<(usize, usize, Option<&'p EnvPiece>)> {
    let mut stretches: Vec<(usize, usize, Option<&EnvPiece>)> = Vec::new();
    let mut at = 0;
    for p in pieces {
        let (start, end) = (p.start, p.end);
        if start < at || env_text.get(start..end).is_none() {
            continue;
        }
        if start > at {
            stretches.push((at, start, None));
        }
        stretches.push((start, end, Some(p)));
        at = end;
    }
    if at < env_text.len() {
        stretches.push((at, env_text.len(), None));
    }
    stretches
}

/// The declarations an environment's text holds, in order: those of the stretches between
/// pieces, parsed, and each piece read from its own syntax; and the model of their mapping
/// sites.
fn read_declarations(
    env_text: &str,
    pieces: &[EnvPiece],
) -> (syntax::FileModel, Vec<ra_ap_syntax::SyntaxNode>) {
    let kinds = [
        SyntaxKind::USE,
        SyntaxKind::CONST,
        SyntaxKind::STRUCT,
        SyntaxKind::ENUM,
        SyntaxKind::TRAIT,
        SyntaxKind::TYPE_ALIAS,
        SyntaxKind::FN,
    ];
    let stretches = env_stretches(env_text, pieces);
    let mut model = syntax::FileModel::default();
    let mut decls = Vec::new();
    for (start, end, piece) in stretches {
        let Some(src) = env_text.get(start..end) else {
            continue;
        };
        let root = match piece {
            Some(p) => ra_ap_syntax::SyntaxNode::new_root(p.green.clone()),
            None => RaFile::parse(src, Edition::Edition2024).syntax_node(),
        };
        // A function piece is the whole function: only its signature is read, and a
        // signature's mappings add nothing to a scope.
        if root.kind() != SyntaxKind::FN {
            let shift = u32::try_from(start).unwrap_or(u32::MAX);
            model.append(syntax::model_of(&root, Some(src)).shifted(shift));
        }
        match piece {
            Some(_) => decls.push(root),
            None => decls.extend(syntax::nodes_of_kinds(&root, &kinds)),
        }
    }
    (model, decls)
}

/// `size_of` of a struct of the crate whose fields are scalars, arrays of them or structs
/// sized before (`struct TileHeader { tile: u16, rows_done: u16 }`: 4): `#[repr(C)]` lays
/// the fields out in order, each at its alignment; `#[repr(packed)]` without padding; the
/// default representation orders them by alignment, so only the end is padded. `None` for
/// any field it cannot size, and for `repr(align(..))`.
fn struct_size(s: &ra::Struct, sized: &HashMap<String, u64>) -> Option<u64> {
    use ra_ap_syntax::ast::HasAttrs;
    let reprs: Vec<String> = s
        .attrs()
        .filter(|a| a.path().is_some_and(|p| p.syntax().text() == "repr"))
        .map(|a| syntax::node_text(a.syntax()))
        .collect();
    if reprs.iter().any(|r| r.contains("align")) {
        return None;
    }
    let (c, packed) = (
        reprs.iter().any(|r| r.contains("C")),
        reprs.iter().any(|r| r.contains("packed")),
    );
    let fields: Vec<(u64, u64)> = match s.field_list()? {
        ra::FieldList::RecordFieldList(l) => l
            .fields()
            .map(|f| field_size(&f.ty()?, sized))
            .collect::<Option<_>>()?,
        ra::FieldList::TupleFieldList(l) => l
            .fields()
            .map(|f| field_size(&f.ty()?, sized))
            .collect::<Option<_>>()?,
    };
    let align = if packed {
        1
    } else {
        fields.iter().map(|f| f.1).max().unwrap_or(1)
    };
    let mut end: u64 = 0;
    for (size, field_align) in &fields {
        if c && !packed {
            end = end.checked_next_multiple_of(*field_align)?;
        }
        end = end.checked_add(*size)?;
    }
    end.checked_next_multiple_of(align)
}

/// A field's size and alignment: a scalar (its size both), an array of sized elements with a
/// literal length, or a struct sized before (alignment taken as its size's largest power of
/// two up to 8, as for structs of scalars).
fn field_size(ty: &ra::Type, sized: &HashMap<String, u64>) -> Option<(u64, u64)> {
    match ty {
        ra::Type::PathType(p) => {
            let name = syntax::node_text(p.syntax());
            let name = name.trim();
            if let Some(b) = model::consts::scalar_bytes(name) {
                return Some((b, b.min(16)));
            }
            let b = *sized.get(&model::consts::struct_size_key(name))?;
            Some((b, (1u64 << b.trailing_zeros().min(3)).max(1)))
        }
        ra::Type::ArrayType(a) => {
            let (size, align) = field_size(&a.ty()?, sized)?;
            let len: u64 = syntax::node_text(a.const_arg()?.syntax())
                .trim()
                .replace('_', "")
                .parse()
                .ok()?;
            Some((size.checked_mul(len)?, align))
        }
        _ => None,
    }
}

/// Declares one item of an environment's text in `env`: a path binding, a const, a local
/// type, a tensor type alias, or a function's signature.
fn declare(env: &mut Env, node: ra_ap_syntax::SyntaxNode) {
    if let Some(u) = ra::Use::cast(node.clone()) {
        // `use consts::BASE as BASE;`: the environment's way of saying that the qualified
        // path names what `BASE` is (see `DefMap::env_text`).
        if let Some((path, name)) = path_binding(&u) {
            match path.strip_prefix(&format!("{}::", resolve::LIBRARY_PATH)) {
                Some(library) => {
                    env.library_renames.insert(name, library.to_string());
                }
                None => bind_path(env, &path, &name),
            }
        }
    } else if let Some(c) = ra::Const::cast(node.clone()) {
        if let (Some(name), Some(body)) = (c.name(), c.body()) {
            // An associated constant is `Type::NAME`, and `Self` in its body is the type.
            let (name, body) = match impl_type(c.syntax()) {
                Some(ty) => (format!("{ty}::{}", name.text()), of_type(&body, &ty)),
                None => (name.text().to_string(), Some(body)),
            };
            // Consts may refer to earlier consts, call `const fn`s and read sizes; one that
            // is not an integer (a `SwitchConfig`, a `TrfAddress`) is a value.
            match body.as_ref().map(|b| const_value(env, b)) {
                Some(Ok(model::value::Value::Int(v))) => {
                    env.consts.insert(name.clone(), v);
                    env.scope.consts.insert(name.clone(), v);
                }
                Some(Ok(v)) => {
                    env.values.insert(name.clone(), v);
                }
                // An associated constant that reads its `impl` block's parameters (`if
                // DOUBLE_BUF { .. }`): evaluated where a method is traced with them bound.
                Some(Err(_)) if impl_type(c.syntax()).is_some() => {
                    if let Some(b) = &body {
                        let text = syntax::node_text(b.syntax());
                        env.deferred_consts.insert(name.clone(), text);
                    }
                }
                Some(Err(u)) => {
                    env.unknown_consts.insert(name.clone(), u);
                }
                None => {}
            }
            // A value of a type (`PLAN: LayerNorm`, `PLAN_DB: GemmPlan<true>`): a method of the
            // crate called on it is traced with it as `self`, the type's generics bound.
            if let Some(ra::Type::PathType(t)) = c.ty()
                && t.path()
                    .and_then(|p| p.segment()?.name_ref())
                    .is_some_and(|n| n.text().starts_with(|c: char| c.is_ascii_uppercase()))
            {
                let text = syntax::compact_text(t.syntax());
                env.value_types.insert(name, text);
            }
        }
    } else if let Some(name) = local_type_name(&node) {
        if let Some(e) = ra::Enum::cast(node.clone()) {
            declare_discriminants(env, &e, &name);
        }
        env.declare_type(&node, name);
    } else if let Some(a) = ra::TypeAlias::cast(node.clone())
        && let (Some(name), Some(ty)) = (a.name(), a.ty())
    {
        declare_instantiated_alias(env, &a, &ty);
        // `type ActD = i8;`: an element type under another name; an associated one (`type
        // Elem = i8;` of `impl Format for I8Kt`) is `I8Kt::Elem`.
        if let ra::Type::PathType(p) = &ty
            && let Some(d) = p
                .path()
                .and_then(|p| p.segment()?.name_ref())
                .and_then(|n| crate::dtype::Dtype::from_name(n.text()))
        {
            let key = match impl_type(a.syntax()) {
                Some(t) => format!("{t}::{}", name.text()),
                None => name.text().to_string(),
            };
            env.scope.dtypes.insert(key, d);
        }
        // `type Hbm<D, E> = HbmTensor<D, Chip, E>;`: a tensor type once its uses give the
        // parameters (see `build::tensor_type`); as it stands for a use that gives none.
        if let Some(params) = generic_params(&a) {
            let alias = build::GenericAlias::new(params, &ty);
            env.generic_tensor_aliases
                .insert(name.text().to_string(), alias);
        }
        // `type Weights = TrfTensor<...>;`: a whole tensor type under another name. Its
        // mappings are written in the environment, not in the function, so carry no span.
        if let Some(mut t) = build::tensor_type(&ty, env, &env.scope, &mut Vec::new()) {
            for m in t.maps.values_mut() {
                m.span = None;
            }
            env.tensor_aliases.insert(name.text().to_string(), t);
        } else if let ra::Type::PathType(p) = &ty
            && let Some(named) = syntax::last_path_name(&ty)
            // `type SubUnit = TuContext<{ Tu::Sub }>;`: a parameter of it is that engine.
            && (env.is_local_type(&named) || matches!(named.as_str(), "TuContext" | "DmaContext"))
            && p.path()
                .and_then(|p| ra::HasGenericArgs::generic_arg_list(&p.segment()?))
                .is_some()
        {
            // `type NarrowTile = LaneTile<4>;`: a call through it binds the type's generics.
            let text = syntax::compact_text(p.syntax());
            env.type_aliases.insert(name.text().to_string(), text);
        }
    } else if let Some(f) = ra::Fn::cast(node)
        && let Some(name) = f.name()
    {
        let sig = build::LazySig::of(&f);
        // A method of an `impl` block for a library tensor type, written as a free function
        // (see `resolve::extension_items`).
        if let Some(key) = syntax::extension_key(&f) {
            env.tensor_methods
                .entry(name.text().to_string())
                .or_default()
                .push((key, sig));
            return;
        }
        if let Some(ty) = impl_type(f.syntax()) {
            // Kept with its body (see `resolve::fn_item`): the evaluator runs it as
            // `Type::name(..)`, or on a value of the type (`plan.addr(i)`).
            let generics = impl_generics(f.syntax());
            if let Some(c) = value_fn(&f).map(|c| c.of_impl(&ty, generics)) {
                env.value_fns.insert(format!("{ty}::{}", name.text()), c);
            }
            // Places the tensors it returns (`fn page(id) -> HbmTensor<..>`); a trait's
            // default keeps `Self`, which the type a call names stands for.
            if let Some(c) = returned_placements_fn(&f) {
                env.placing_fns.insert(format!("{ty}::{}", name.text()), c);
            }
            if f.param_list().and_then(|p| p.self_param()).is_some() {
                env.own_methods.insert(format!("{ty}::{}", name.text()));
                env.methods.insert(name.text().to_string(), sig);
            } else {
                // An associated function, called as `Type::name(..)`.
                env.fns.insert(format!("{ty}::{}", name.text()), sig);
            }
            return;
        }
        if f.param_list().and_then(|p| p.self_param()).is_some() {
            // A method of an `impl` of the crate (see `resolve::fn_item`).
            env.methods.insert(name.text().to_string(), sig);
            return;
        }
        env.fns.insert(name.text().to_string(), sig);
        if let Some(c) = value_fn(&f).or_else(|| returned_values_fn(&f)) {
            env.value_fns.insert(name.text().to_string(), c);
        }
        if let Some(c) = returned_placements_fn(&f) {
            env.placing_fns.insert(name.text().to_string(), c);
        }
    }
}

/// `type DualReduce = ExpertMajor<m![G, T % 8]>;`: a generic mapping alias given its
/// parameters, under a name of its own: a mapping alias of what it stands for.
fn declare_instantiated_alias(env: &mut Env, a: &ra::TypeAlias, ty: &ra::Type) {
    let ra::Type::PathType(p) = ty else {
        return;
    };
    let Some(seg) = p.path().and_then(|p| p.segment()) else {
        return;
    };
    // Through the names it is imported under (`use layouts::RRows as Rows;`).
    let generic = seg.name_ref().is_some_and(|n| {
        env.scope
            .alias_through_renames(n.text().as_ref())
            .is_some_and(|al| !al.generics.is_empty())
    });
    let Some(name) = a.name() else {
        return;
    };
    let own_params = ra::HasGenericParams::generic_param_list(a).is_some();
    let args = ra::HasGenericArgs::generic_arg_list(&seg).is_some();
    if !generic || own_params || !args {
        return;
    }
    let text = syntax::compact_text(p.syntax());
    let Some(layout) = build::generic_alias_layout(&text, &env.scope) else {
        return;
    };
    let Ok(body) = crate::mapping::parse::parse_mapping(&layout.to_expr()) else {
        return;
    };
    // An `impl` block's associated type (`type Flit = Way8<Quad>;` of `impl FlitOf for bf16`)
    // is `bf16::Flit` and `<bf16 as FlitOf>::Flit`, never the bare name.
    let text = name.text().to_string();
    let keys = syntax::assoc_keys(a.syntax(), &text);
    let keys = if keys.is_empty() { vec![text] } else { keys };
    for key in keys {
        let alias = crate::mapping::lower::Alias {
            name: crate::mapping::ast::Name {
                text: key.clone(),
                span: Span::default(),
            },
            body: Some(body.clone()),
            generics: Vec::new(),
        };
        env.scope.aliases.insert(key, alias);
    }
}

/// The discriminants of an enum's unit variants, as `as usize` reads them: each the value it
/// is given (`Skip = 2`) or one past the variant before it (the first is 0). A variant with
/// fields ends the count (its discriminant is not what `as` reads).
fn declare_discriminants(env: &mut Env, e: &ra::Enum, name: &str) {
    let mut next = Some(0u64);
    for v in e.variant_list().into_iter().flat_map(|l| l.variants()) {
        if v.field_list().is_some() {
            return;
        }
        let given = v
            .const_arg()
            .and_then(|c| c.expr())
            .map(|x| match const_value(env, &x) {
                Ok(model::value::Value::Int(d)) => Some(d),
                _ => None,
            });
        let Some(d) = given.unwrap_or(next) else {
            next = None;
            continue;
        };
        if let Some(n) = v.name() {
            let key = model::value::discriminant_key(&format!("{name}::{}", n.text()));
            env.consts.insert(key.clone(), d);
            env.scope.consts.insert(key, d);
        }
        next = d.checked_add(1);
    }
}

/// The type and const parameters of a generic type alias, in order (lifetimes left out);
/// `None` for an alias without them.
fn generic_params(a: &ra::TypeAlias) -> Option<Vec<String>> {
    use ra_ap_syntax::ast::HasGenericParams;
    let params: Vec<String> = a
        .generic_param_list()?
        .generic_params()
        .filter_map(|p| match p {
            ra::GenericParam::TypeParam(t) => Some(t.name()?.text().to_string()),
            ra::GenericParam::ConstParam(c) => Some(c.name()?.text().to_string()),
            ra::GenericParam::LifetimeParam(_) => None,
        })
        .collect();
    (!params.is_empty()).then_some(params)
}

/// The type whose `impl` block `item` is written in (`impl Tiler { .. }`).
fn impl_type(item: &ra_ap_syntax::SyntaxNode) -> Option<String> {
    resolve::self_type(&item.ancestors().find_map(ra::Impl::cast)?)
}

/// `body`, written in `impl ty { .. }`, with `Self` read as `ty`.
fn of_type(body: &ra::Expr, ty: &str) -> Option<ra::Expr> {
    let text = syntax::node_text(body.syntax());
    if !text.contains("Self") {
        return Some(body.clone());
    }
    let this = HashMap::from([("Self".to_string(), ty.to_string())]);
    syntax::expr_of_text(&model::consts::substituted(&text, &this))
}

/// The value of a `const` item's body in `env`.
fn const_value(env: &Env, body: &ra::Expr) -> model::value::Eval {
    let lookup = |key: &str| env.value_or_why(key);
    let names = model::value::Names {
        value: &lookup,
        ints: &env.consts,
        fns: &env.value_fns,
        mapping: &env.scope,
    };
    model::value::eval_partial(body, &names).0
}

/// A function with plain parameters that computes a value: a `const fn`, a host's
/// `Placement::plan()` with statements, or a helper the compiler runs when it traces the
/// kernel (`fn group(g: usize) -> SwitchConfig { SwitchConfig::Broadcast1 { slice1: g,
/// slice0: 1 } }`), evaluated at each call. A helper that takes a reference (`ctx: &mut Context`, a tensor) or returns a tensor is a step of the
/// kernel, followed by its signature, not a value.
fn value_fn(f: &ra::Fn) -> Option<model::consts::ConstFn> {
    let method = f.param_list()?.self_param().is_some() && impl_type(f.syntax()).is_some();
    if f.const_token().is_none() {
        // A method that changes its receiver and returns nothing (`arena.skip(4);`) is run
        // for what it leaves in `self`.
        let returns = match f.ret_type().and_then(|r| r.ty()) {
            Some(t) => syntax::node_text(t.syntax()),
            None if method && syntax::changes_self(f) => String::new(),
            None => return None,
        };
        let tensor = returns.contains("Tensor");
        let takes_reference = syntax::takes_a_working_reference(f);
        let receiver = f.param_list()?.self_param().is_some();
        if tensor || takes_reference || (receiver && !method) {
            return None;
        }
    }
    let list = f.body()?.stmt_list()?;
    // A function with statements (`let mut`, loops) is run whole, as the compiler traces it
    // or the host computes it: what it cannot evaluate (a call it does not know, a macro) is
    // unknown where it is read.
    let body = match list.statements().next() {
        None => syntax::node_text(list.tail_expr()?.syntax()),
        Some(_) => syntax::node_text(f.body()?.syntax()),
    };
    const_fn_with(f, body)
}

/// A helper that returns a tuple beside its tensors (`(stat, vrf_addr + VRF_STAT_SLOT)`): the
/// values its tail computes from its parameters and the crate's constants, as a function the
/// evaluator runs at each call (the tensors, and what reads the body's own variables, are
/// `()` there; the model follows the tensors). `None` when no element is such a value.
fn returned_values_fn(f: &ra::Fn) -> Option<model::consts::ConstFn> {
    if f.const_token().is_some() || f.param_list()?.self_param().is_some() {
        return None;
    }
    let body = f.body()?;
    let ra::Expr::TupleExpr(tail) = body.stmt_list()?.tail_expr()? else {
        return None;
    };
    let reads_local = reads_a_local(&body);
    let elements: Vec<Option<String>> = tail
        .fields()
        .map(|e| (!reads_local(&e)).then(|| syntax::node_text(e.syntax())))
        .collect();
    tuple_fn(f, elements)
}

/// A helper that returns tensors it places (`unsafe { (A::from_addr(BASE), B::from_addr(BASE +
/// BYTES)) }`): the addresses, as a function the evaluator runs at each call (a tuple of them
/// for a tuple, `()` for an element placed elsewhere or at an address computed from the
/// body's own variables). The caller's tensors are placed there.
fn returned_placements_fn(f: &ra::Fn) -> Option<model::consts::ConstFn> {
    if f.param_list()?.self_param().is_some() {
        return None;
    }
    let placed = syntax::returned_placements(f)?;
    let reads_local = reads_a_local(&f.body()?);
    let elements: Vec<Option<String>> = placed
        .iter()
        .map(|a| {
            a.as_ref()
                .filter(|a| !reads_local(a))
                .map(|a| syntax::node_text(a.syntax()))
        })
        .collect();
    match elements.as_slice() {
        [one] => const_fn_with(f, one.clone()?),
        _ => tuple_fn(f, elements),
    }
}

/// Whether an expression of `body` reads one of the body's own variables (what the
/// evaluator, running only an expression of it, cannot know).
fn reads_a_local(body: &ra::BlockExpr) -> impl Fn(&ra::Expr) -> bool + use<> {
    let locals: std::collections::HashSet<String> = body
        .syntax()
        .descendants()
        .filter_map(ra::IdentPat::cast)
        .filter_map(|i| Some(i.name()?.text().to_string()))
        .collect();
    move |e: &ra::Expr| {
        e.syntax()
            .descendants_with_tokens()
            .filter_map(|t| t.into_token())
            .any(|t| t.kind() == ra_ap_syntax::SyntaxKind::IDENT && locals.contains(t.text()))
    }
}

/// `f` run as a function whose body is the tuple of `elements` (`()` for each `None`); `None`
/// when no element is known.
fn tuple_fn(f: &ra::Fn, elements: Vec<Option<String>>) -> Option<model::consts::ConstFn> {
    if elements.iter().all(Option::is_none) {
        return None;
    }
    let text: Vec<String> = elements
        .into_iter()
        .map(|e| e.unwrap_or_else(|| "()".to_string()))
        .collect();
    const_fn_with(f, format!("({})", text.join(", ")))
}

/// `f` as the evaluator runs it, with `body` its body.
fn const_fn_with(f: &ra::Fn, body: String) -> Option<model::consts::ConstFn> {
    use ra_ap_syntax::ast::HasGenericParams;
    let mut params = Vec::new();
    let mut lengths = Vec::new();
    for p in f.param_list()?.params() {
        let ra::Pat::IdentPat(i) = p.pat()? else {
            return None;
        };
        params.push(i.name()?.text().to_string());
        lengths.push(match p.ty() {
            Some(ra::Type::ArrayType(a)) => a.const_arg().map(|c| syntax::node_text(c.syntax())),
            _ => None,
        });
    }
    Some(model::consts::ConstFn {
        params,
        body,
        generics: value_generics(f.generic_param_list())?,
        lengths,
        owner: None,
        mut_self: syntax::changes_self(f),
    })
}

/// The type and const parameters of a generic list, in order, lifetimes left out.
fn value_generics(list: Option<ra::GenericParamList>) -> Option<Vec<model::consts::GenericParam>> {
    use model::consts::GenericParam;
    let mut generics = Vec::new();
    for g in list.iter().flat_map(|l| l.generic_params()) {
        match g {
            ra::GenericParam::TypeParam(t) => {
                generics.push(GenericParam::Type(t.name()?.text().to_string()));
            }
            ra::GenericParam::ConstParam(c) => {
                let name = c.name()?.text().to_string();
                let flag = c
                    .ty()
                    .is_some_and(|t| syntax::compact_text(t.syntax()) == "bool");
                generics.push(match flag {
                    true => GenericParam::Flag(name),
                    false => GenericParam::Const(name),
                });
            }
            ra::GenericParam::LifetimeParam(_) => {}
        }
    }
    Some(generics)
}

/// What each generic argument of the type of the `impl` block `item` is written in names,
/// in the type's order: `impl<const TILES: usize> KvTiler<TILES>` gives `[Const(TILES)]`, so
/// `KvTiler::<4>` binds `TILES` to 4. An argument that is not one of the block's parameters
/// (`impl Plan<4>`) binds nothing (`Type("_")`).
fn impl_generics(item: &ra_ap_syntax::SyntaxNode) -> Vec<model::consts::GenericParam> {
    use model::consts::GenericParam;
    use ra_ap_syntax::ast::{HasGenericArgs, HasGenericParams};
    let Some(imp) = item.ancestors().find_map(ra::Impl::cast) else {
        return Vec::new();
    };
    let params = value_generics(imp.generic_param_list()).unwrap_or_default();
    let Some(ra::Type::PathType(t)) = imp.self_ty() else {
        return Vec::new();
    };
    let args = t
        .path()
        .and_then(|p| p.segment())
        .and_then(|s| s.generic_arg_list());
    args.iter()
        .flat_map(|l| l.generic_args())
        .filter(|a| !matches!(a, ra::GenericArg::LifetimeArg(_)))
        .map(|a| {
            let text = syntax::compact_text(a.syntax());
            let text = text.trim_matches(|c| c == '{' || c == '}');
            params
                .iter()
                .find(|p| {
                    matches!(p, GenericParam::Const(n) | GenericParam::Flag(n) | GenericParam::Type(n) if n == text)
                })
                .cloned()
                .unwrap_or_else(|| GenericParam::Type("_".to_string()))
        })
        .collect()
}

/// `use a::b::C as N;` in an environment text: the path (`a::b::C`) and the name.
fn path_binding(u: &ra::Use) -> Option<(String, String)> {
    let tree = u.use_tree()?;
    let path = syntax::compact_text(tree.path()?.syntax());
    let name = tree.rename()?.name()?.text().to_string();
    Some((path, name))
}

/// Binds a qualified path to everything `name` is in the environment: a const, an axis, a
/// mapping alias, a tensor type alias, a helper's signature or a type of the crate. Every
/// lookup then finds the path by its text, as it finds a plain name.
fn bind_path(env: &mut Env, path: &str, name: &str) {
    if let Some(v) = env.consts.get(name).copied() {
        env.consts.insert(path.to_string(), v);
        env.scope.consts.insert(path.to_string(), v);
    }
    match env.value_or_why(name) {
        Some(Ok(v)) => {
            env.values.insert(path.to_string(), v);
        }
        Some(Err(u)) => {
            env.unknown_consts.insert(path.to_string(), u);
        }
        None => {}
    }
    if let Some(t) = env.value_type(name).map(str::to_string) {
        env.value_types.insert(path.to_string(), t);
    }
    if let Some(t) = env.type_alias(name).map(str::to_string) {
        env.type_aliases.insert(path.to_string(), t);
    }
    if let Some(t) = env.tensor_alias(name).cloned() {
        env.tensor_aliases.insert(path.to_string(), t);
    }
    if let Some(t) = env.generic_tensor_alias(name).cloned() {
        env.generic_tensor_aliases.insert(path.to_string(), t);
    }
    // The same signature under the path (built where it is declared, when not here).
    let sig = env.lazy_sig(name).map(|(sig, owner)| {
        if !std::ptr::eq(owner, &*env) {
            let _ = owner.fn_sig(name);
        }
        sig.clone()
    });
    if let Some(sig) = sig {
        env.fns.insert(path.to_string(), sig);
    }
    if let Some(f) = env.value_fns.get(name).cloned() {
        env.value_fns.insert(path.to_string(), f);
    }
    if let Some(f) = env.placing_fns.get(name).cloned() {
        env.placing_fns.insert(path.to_string(), f);
    }
    if env.is_local_type(name) {
        env.local_types.insert(path.to_string());
    }
    env.scope.bind_path(path, name);
}

/// The name of a struct, enum or trait the file defines.
fn local_type_name(node: &ra_ap_syntax::SyntaxNode) -> Option<String> {
    let name = if let Some(s) = ra::Struct::cast(node.clone()) {
        s.name()
    } else if let Some(e) = ra::Enum::cast(node.clone()) {
        e.name()
    } else {
        ra::Trait::cast(node.clone())?.name()
    };
    Some(name?.text().to_string())
}

/// Positions in the environment text mean nothing to the function using it.
fn strip_spans(mut scope: Scope) -> Scope {
    for a in scope.axes.values_mut() {
        a.decl = Span::default();
    }
    scope
}

/// A diagnostic the rules word with the manual's method names, in the words of the crate's
/// library (its message, its related notes, its fixes' titles and texts).
fn in_library_words(d: &mut Diagnostic, library: Generation) {
    let rename = |text: &mut String| {
        if let Some(renamed) = model::methods::in_library_words(text, library) {
            *text = renamed;
        }
    };
    rename(&mut d.message);
    d.related.iter_mut().for_each(|r| rename(&mut r.message));
    for fix in &mut d.fixes {
        rename(&mut fix.title);
        fix.edits.iter_mut().for_each(|e| rename(&mut e.new_text));
    }
}

/// Analyses one function from its own syntax tree (rooted at the function, offsets relative
/// to its start) and its environment.
pub fn analyse_fn(
    tree: &ra_ap_syntax::SyntaxNode,
    env: &Env,
    target: &Target,
    (library, self_type): (Generation, Option<&str>),
    block_params: &[String],
    (bound, results): (&model::Bound, &model::CallResults),
) -> FnAnalysis {
    let model = syntax::model_of(tree, None);
    let root = Span::new(0, usize::from(tree.text_range().len()));
    // Only the sites directly in this function; nested functions are analysed on their own.
    let direct = |s: &syntax::MacroSite| s.fns.len() == 1;
    let mut with_escapes = scope_with_escapes(&model, tree, env);
    // In a function of `impl ty`, a mapping's `{ Self::LANES }` is `ty::LANES`.
    if let Some(ty) = self_type.filter(|_| model.sites.iter().any(|s| s.body.contains("Self::"))) {
        let scope = with_escapes.get_or_insert_with(|| env.scope.clone());
        let own = model::consts::under_self(&scope.consts, &resolve::self_type_name(ty));
        scope.consts.extend(own);
    }
    // A method: its block's type parameters (`E` of `impl<E: M>` or `trait Stage<E: M>`) are
    // generic parameters here, as the function's own are.
    if !block_params.is_empty() {
        let scope = with_escapes.get_or_insert_with(|| env.scope.clone());
        for p in block_params {
            scope.aliases.remove(p);
            scope.generics.insert(p.clone());
        }
    }
    let base = with_escapes.as_ref().unwrap_or(&env.scope);
    let check = syntax::check_sites(&model, base, direct, Some(root));
    let sites: Vec<Span> = model.sites.iter().map(|s| s.span).collect();
    let mut diagnostics =
        crate::rules::mapping_diagnostics(&check.problems, &sites, &model.type_forms);
    diagnostics.extend(other_library_forms(&model, &check, library, direct));
    let scope = check.scope;
    let Some(f) = tree.descendants().find_map(ra::Fn::cast) else {
        let model = FnModel::empty(String::new(), root, model::FnKind::Plain, library);
        let cost = crate::sim::simulate(&model, &[], &[], target);
        return FnAnalysis {
            model,
            diagnostics,
            cost,
        };
    };
    let (fn_model, scope) = build::build_fn(&f, env, scope, (library, self_type), (bound, results));
    // A constant of an escaped size that the call binds (`{ P::CHUNK }` with `P = QPath`, or
    // the const generic `{ W }` of `row::<2050>`) is known only now: the sites are lowered
    // again with it, and what they break is reported.
    let binds_escaped_generic = bound.generics.iter().any(Option::is_some)
        && model.sites.iter().any(|s| s.body.contains('{'));
    if bound.binds_any()
        && (binds_escaped_generic || check.problems.iter().any(names_unknown_const))
    {
        let again = syntax::check_sites(&model, &scope, direct, Some(root));
        diagnostics = crate::rules::mapping_diagnostics(&again.problems, &sites, &model.type_forms);
        // A fix made for this call's value (`{ W }` padded to fit 2050) edits the mapping
        // every call shares, and would be wrong for the others: the message says what breaks.
        if binds_escaped_generic {
            diagnostics.iter_mut().for_each(|d| d.fixes.clear());
        }
        diagnostics.extend(other_library_forms(&model, &again, library, direct));
    }
    diagnostics.extend(fn_model.problems.iter().map(crate::rules::model_diagnostic));
    // The function's derived facts, once: every rule family and the simulator read them.
    let cx = crate::rules::FnContext::new(&fn_model, &scope, target);
    let checked = crate::rules::check_fn(&cx);
    let cost = crate::sim::simulate(&fn_model, &cx.ops, &cx.dma_ops, target);
    drop(cx);
    diagnostics.extend(name_iterations(&fn_model, &scope, target, checked));
    for d in &mut diagnostics {
        in_library_words(d, library);
    }
    diagnostics.sort_by_key(|d| (d.span, d.code()));
    diagnostics.dedup();
    FnAnalysis {
        model: fn_model,
        diagnostics,
        cost,
    }
}

/// Whether a mapping problem is a constant of an escaped size lowering did not know.
fn names_unknown_const(p: &crate::mapping::Problem) -> bool {
    matches!(
        p,
        crate::mapping::Problem::Unevaluated(
            crate::mapping::problem::Unevaluated::NamedConst { .. }
        )
    )
}

/// The environment's scope with the value of each Rust expression escaped in the function's
/// mappings (`m![Z # { RouteTable::padded_row() }]`), evaluated with the module's constants
/// and `const fn`s, under the name the mapping grammar gives it; `None` when it has none. One
/// that is not known stays unknown: a "not checked" note where it is lowered.
fn scope_with_escapes(
    model: &syntax::FileModel,
    tree: &ra_ap_syntax::SyntaxNode,
    env: &Env,
) -> Option<Scope> {
    let may_escape = |s: &syntax::MacroSite| s.body.contains('{') && build::escapes_rust(&s.body);
    // A mapping written as types in place (`Padding<Symbol<D>, { TILES[1].lanes }>`).
    let escaping_type_arg = || {
        tree.descendants()
            .filter_map(ra_ap_syntax::ast::ConstArg::cast)
            .any(|a| build::escapes_rust(&a.syntax().text().to_string()))
    };
    if !model.sites.iter().any(may_escape) && model.type_forms.is_empty() && !escaping_type_arg() {
        return None;
    }
    let mut scope = env.scope.clone();
    scope.consts.extend(escape_values(env, tree));
    Some(scope)
}

/// The value of each Rust expression escaped in the mappings under `node`
/// ([`build::escaped_exprs`]: `m![Z # { Table::row() }]`, `Padding<L, { SPEC.width }>`) that
/// `env` evaluates to an integer, under the name the mapping grammar gives it.
fn escape_values(env: &Env, node: &ra_ap_syntax::SyntaxNode) -> Vec<(String, u64)> {
    build::escaped_exprs(node)
        .into_iter()
        .filter_map(|(key, e)| match const_value(env, &e) {
            Ok(model::value::Value::Int(v)) => Some((key, v)),
            _ => None,
        })
        .collect()
}

/// The rules' diagnostics of a function whose loops the model iterated, each named by the
/// iteration that breaks the rule: a diagnostic inside a loop body is kept once per rule and
/// place, from the first iteration that gives it on its own ("when i = 7"), with how many other
/// iterations do too. A diagnostic that only the iterations together give (two tiles that
/// overlap) is kept as it is.
fn name_iterations(
    model: &FnModel,
    scope: &Scope,
    target: &Target,
    diagnostics: Vec<Diagnostic>,
) -> Vec<Diagnostic> {
    // The code each iteration runs: its chains, and the tensors it places by hand.
    let runs_in = |d: &Diagnostic, k: Option<usize>| {
        let this = |i: Option<u32>| i.is_some_and(|i| k.is_none_or(|k| i as usize == k));
        let within = |s: Span| s.start <= d.span.start && d.span.end <= s.end;
        model
            .chains
            .iter()
            .any(|c| this(c.iteration) && within(c.span))
            || model
                .placements
                .iter()
                .any(|p| this(p.iteration) && within(p.arg.span))
    };
    let in_loop = |d: &Diagnostic| runs_in(d, None);
    if model.iterations.is_empty() || !diagnostics.iter().any(in_loop) {
        return diagnostics;
    }
    // Which iterations give each diagnostic on their own.
    let mut given_by: Vec<Vec<usize>> = vec![Vec::new(); diagnostics.len()];
    for k in 0..model.iterations.len() {
        let mut one = model.clone();
        one.chains
            .retain(|c| c.iteration.is_none_or(|i| i as usize == k));
        one.placements
            .retain(|p| p.iteration.is_none_or(|i| i as usize == k));
        let cx = crate::rules::FnContext::new(&one, scope, target);
        let found = crate::rules::check_fn(&cx);
        for (d, by) in diagnostics.iter().zip(given_by.iter_mut()) {
            if in_loop(d) && found.contains(d) {
                by.push(k);
            }
        }
    }
    // Per rule and place: every iteration that gives it, and the diagnostic of the first.
    let mut groups: HashMap<(&'static str, Span), (usize, std::collections::BTreeSet<usize>)> =
        HashMap::new();
    for (i, (d, by)) in diagnostics.iter().zip(&given_by).enumerate() {
        let Some(&k) = by.first() else { continue };
        let group = groups
            .entry((d.code(), d.span))
            .or_insert((i, std::collections::BTreeSet::new()));
        if given_by[group.0].first().is_none_or(|&j| k < j) {
            group.0 = i;
        }
        group.1.extend(by);
    }
    let mut out = Vec::new();
    for (i, (mut d, by)) in diagnostics.into_iter().zip(&given_by).enumerate() {
        let Some(&k) = by.first() else {
            out.push(d);
            continue;
        };
        let Some((kept, all)) = groups.get(&(d.code(), d.span)) else {
            continue;
        };
        if *kept != i {
            continue;
        }
        // A fix made for one iteration's values (an address rounded up) would be wrong in
        // the others: kept only when every iteration that runs this code breaks the rule.
        let runs = (0..model.iterations.len())
            .filter(|&j| runs_in(&d, Some(j)))
            .count();
        if all.len() < runs || by.len() < all.len() {
            d.fixes.clear();
        }
        let label = model
            .iterations
            .get(k)
            .map_or_else(String::new, |i| i.label.clone());
        d.message = match all.len() - 1 {
            0 => format!("{} (when {label})", d.message),
            n => format!(
                "{} (when {label}, and in {n} other iteration{})",
                d.message,
                if n == 1 { "" } else { "s" }
            ),
        };
        out.push(d);
    }
    out
}

/// Convenience: analyses a text in a fresh database with the default configuration.
pub fn analyse_text(text: &str) -> Arc<FileAnalysis> {
    let db = Database::default();
    let file = SourceFile::new(&db, text.to_string(), PathBuf::from("<text>"));
    let settings = Settings::new(&db, Config::default());
    file_analysis(&db, file, settings).clone()
}

/// Re-exported for callers that evaluate mappings against a function's scope.
pub use mapping::Layout;

#[cfg(test)]
mod tests {
    use super::*;
    use salsa::Setter;
    use std::sync::Mutex;

    const KERNEL: &str = r#"
axes![A = 2048];

#[device(chip = 1)]
fn first(ctx: &mut Context, a: &DmTensor<i8, m![1], m![1 # 2], m![A / 8 # 256], m![A % 8]>) {
    let x = ctx.main.begin(a.view()).fetch::<i8, m![1], m![A % 8]>().collect::<m![1], m![A % 8 # 32]>();
}

#[device(chip = 1)]
fn second(ctx: &mut Context, a: &DmTensor<i8, m![1], m![1 # 2], m![A / 8 # 256], m![A % 8]>) {
    let y = ctx.sub.begin(a.view()).fetch::<i8, m![1], m![A % 8]>().to_trf::<m![1], m![A % 8]>(TrfAddress::Full);
}
"#;

    /// An edit's parse, made from the previous parse, is the parse of the new text: the same
    /// tree as parsing it from scratch, for edits inside a body, across items, of whole lines,
    /// with non-ASCII text, at either end, and for a text that becomes empty.
    #[test]
    fn an_incremental_reparse_is_the_full_parse_of_the_new_text() {
        let base = KERNEL.replace("let y", "// é∀ comment\n    let y");
        let edits: Vec<String> = vec![
            base.replace("A % 8]>().collect", "A % 4]>().collect"),
            base.replace("let x = ", "let xx = "),
            base.replace("// é∀ comment", "// é comment ∀∀"),
            base.replace("fn second", "fn third"),
            base.replace("}\n\n#[device", "}\n#[device"),
            format!("{base}\nfn tail() {{}}\n"),
            format!("// head\n{base}"),
            base.replace("{\n    let x", "{\n    {\n    let x"),
            String::new(),
        ];
        for new in edits {
            let old = RaFile::parse(&base, Edition::Edition2024);
            let incremental = reparse_at(&old, &base, &new, changed_span(&base, &new));
            let full = RaFile::parse(&new, Edition::Edition2024);
            assert_eq!(
                format!("{:#?}", incremental.tree().syntax()),
                format!("{:#?}", full.tree().syntax()),
                "{new}"
            );
        }
    }

    /// The changed span compared window by window is the one compared byte by byte: texts of
    /// lengths around the 64-byte window, edits at either end, in the middle, growing,
    /// shrinking, and inside multi-byte characters (the span stays on their boundaries).
    #[test]
    fn the_changed_span_is_the_byte_by_byte_one() {
        fn naive(old: &str, new: &str) -> (usize, usize, usize) {
            let (a, b) = (old.as_bytes(), new.as_bytes());
            let mut p = a.iter().zip(b).take_while(|(x, y)| x == y).count();
            while !(old.is_char_boundary(p) && new.is_char_boundary(p)) {
                p -= 1;
            }
            let most = a.len().min(b.len()) - p;
            let pairs = a.iter().rev().zip(b.iter().rev()).take(most);
            let mut q = pairs.take_while(|(x, y)| x == y).count();
            while !(old.is_char_boundary(old.len() - q) && new.is_char_boundary(new.len() - q)) {
                q -= 1;
            }
            (p, old.len() - q, new.len() - q)
        }
        let mut texts = vec![String::new(), "é".to_string(), "∀é∀".repeat(40)];
        for len in [1, 63, 64, 65, 127, 128, 129, 300] {
            texts.push("ab".repeat(len).chars().take(len).collect());
        }
        for base in texts {
            let chars: Vec<(usize, char)> = base.char_indices().collect();
            let mut edits = vec![format!("x{base}"), format!("{base}x"), base.clone()];
            for &(at, _) in chars.iter().step_by(7) {
                edits.push(format!("{}∀{}", &base[..at], &base[at..]));
                edits.push(format!(
                    "{}{}",
                    &base[..at],
                    &base[at..].replacen(|_| true, "é", 1)
                ));
                edits.push(format!(
                    "{}{}",
                    &base[..at],
                    base[at..].chars().skip(1).collect::<String>()
                ));
            }
            for new in &edits {
                assert_eq!(
                    changed_span(&base, new),
                    naive(&base, new),
                    "{base:?} -> {new:?}"
                );
                assert_eq!(
                    changed_span(new, &base),
                    naive(new, &base),
                    "{new:?} -> {base:?}"
                );
            }
        }
    }

    /// Which functions' analyses executed since the last call.
    /// A database that logs its events, and the log.
    fn logged_db() -> (Database, Arc<Mutex<Vec<String>>>) {
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = log.clone();
        let db = Database::with_event_log(move |e| {
            sink.lock().unwrap_or_else(|p| p.into_inner()).push(e)
        });
        (db, log)
    }

    fn executed(log: &Mutex<Vec<String>>) -> Vec<String> {
        std::mem::take(&mut *log.lock().unwrap_or_else(|e| e.into_inner()))
            .into_iter()
            .filter(|e| e.contains("WillExecute") && e.contains("fn_analysis"))
            .collect()
    }

    #[test]
    fn mapping_spans_point_at_the_written_text() {
        let file = analyse_text(KERNEL);
        let (start, first) = &file.fns[0];
        let a = &first.model.tensors[0];
        let slice =
            a.ty.maps
                .get(&crate::model::Slot::Slice)
                .expect("a Slice mapping");
        let span = slice.span.expect("a written mapping has a span");
        let r = span.shift(*start).range();
        assert_eq!(&KERNEL[r], "m![A / 8 # 256]");
        // Equality ignores where a mapping is written.
        let moved = crate::model::MapVal {
            span: None,
            ..slice.clone()
        };
        assert_eq!(&moved, slice);
    }

    /// The items' models, put together, hold what a walk over the whole
    /// file finds (the same sites and aliases, at the same places), nested modules included;
    /// `model_at` finds the item around an offset.
    #[test]
    fn the_file_model_of_items_is_the_whole_files_model() {
        let text = format!(
            "{KERNEL}\nmod inner {{\n    type Tile = m![A / 4];\n    mod deeper {{\n        axes![B = 8];\n    }}\n}}\n"
        );
        let db = Database::default();
        let file = SourceFile::new(&db, text.clone(), PathBuf::from("k.rs"));
        let whole = syntax::file_model(&text);
        let mut of_items = syntax::FileModel::default();
        for (at, m) in item_models(&db, file).expect("within the limits") {
            of_items.append(m.as_ref().clone().shifted(at));
        }
        let sites = |m: &syntax::FileModel| {
            let mut v: Vec<(Span, String, Vec<Span>)> = m
                .sites
                .iter()
                .map(|s| (s.span, s.body.clone(), s.fns.clone()))
                .collect();
            v.sort_by_key(|(s, _, _)| (s.start, s.end));
            v
        };
        assert_eq!(sites(&of_items), sites(&whole));
        assert_eq!(of_items.sites.len(), 19);
        let alias =
            |m: &syntax::FileModel| m.aliases.iter().map(|a| a.name.span).collect::<Vec<_>>();
        assert_eq!(alias(&of_items), alias(&whole));
        let tile = text.find("A / 4").map_or(0, |i| i as u32);
        let around = model_at(&db, file, tile).expect("an item");
        assert!(
            around
                .sites
                .iter()
                .any(|s| s.span.start <= tile && tile < s.span.end)
        );
        assert_eq!(around.sites.len(), 1, "only the alias's item");
    }

    #[test]
    fn editing_one_function_reruns_only_that_function() {
        let (mut db, log) = logged_db();
        let file = SourceFile::new(&db, KERNEL.to_string(), PathBuf::from("k.rs"));
        let settings = Settings::new(&db, Config::default());
        let before = file_analysis(&db, file, settings).clone();
        assert_eq!(executed(&log).len(), 2, "both functions analysed once");
        assert!(before.diagnostics().iter().any(|d| d.code() == "KRN-002"));

        // Edit the body of `first` only (and shift `second` down by a line).
        let edited = KERNEL.replace("let x = ctx.main", "let x =\n        ctx.main");
        file.set_text(&mut db).to(edited.clone());
        let after = file_analysis(&db, file, settings).clone();
        assert_eq!(executed(&log).len(), 1, "only `first` is re-analysed");
        // `second`'s diagnostic moved with its text.
        let d = after
            .diagnostics()
            .iter()
            .find(|d| d.code() == "KRN-002")
            .map(|d| d.span);
        assert_eq!(d.map(|s| &edited[s.range()]), Some("to_trf"));

        // Editing a module-level declaration re-analyses both.
        file.set_text(&mut db)
            .to(edited.replace("A = 2048", "A = 4096"));
        file_analysis(&db, file, settings);
        assert_eq!(executed(&log).len(), 2);

        // Changing rule levels re-applies them without re-analysing any function.
        let mut config = Config::default();
        config
            .levels
            .push(("KRN".to_string(), crate::config::Level::Allow));
        settings.set_config(&mut db).to(config);
        let shown = crate::file_diagnostics::file_diagnostics(&db, file, settings).clone();
        assert!(shown.iter().all(|d| d.code() != "KRN-002"));
        assert_eq!(executed(&log).len(), 0);
    }

    /// A crate on furiosa-opt-std 0.4 is read as 0.6, and its root says so once (VL-010);
    /// its other files and a crate on 0.6 say nothing.
    #[test]
    fn an_older_opt_std_is_checked_as_0_6_with_one_note_on_the_crate_root() {
        let db = Database::default();
        let root = PathBuf::from("/q/src/lib.rs");
        let text = "use furiosa_opt_std::prelude::*;\nmod k;\n".to_string();
        let lib = SourceFile::new(&db, text, root.clone());
        let child = SourceFile::new(&db, "use super::*;\n".to_string(), "/q/src/k.rs".into());
        let files = [lib, child]
            .into_iter()
            .map(|f| (f.path(&db).clone(), f))
            .collect();
        let manifest = "[package]\nname = \"q\"\n[dependencies]\nfuriosa-opt-std = \"0.4\"\n";
        let library = Library::from_manifest(&manifest.parse().expect("TOML"));
        let package = Package {
            library,
            dir: PathBuf::from("/q"),
            lib_name: Some("q".to_string()),
            roots: vec![root],
        };
        Workspace::new(&db, Arc::new(files), Arc::new(vec![package]));
        let settings = Settings::new(&db, Config::default());
        assert_eq!(
            library_of(&db, child, settings).generation,
            Generation::OptStd
        );
        let codes = |f| -> Vec<&str> {
            file_analysis(&db, f, settings)
                .diagnostics()
                .iter()
                .map(|d| d.code())
                .collect()
        };
        assert_eq!(codes(lib), ["VL-010"]);
        assert!(codes(child).is_empty());
        let lib_diag = &file_analysis(&db, lib, settings).module_diagnostics[0];
        assert!(
            lib_diag.message.contains("furiosa-opt-std 0.4"),
            "{}",
            lib_diag.message
        );
    }

    /// How many times each of `queries` executed since the log was last read (and clears it).
    fn executions<const N: usize>(log: &Mutex<Vec<String>>, queries: [&str; N]) -> [usize; N] {
        let events = std::mem::take(&mut *log.lock().unwrap_or_else(|p| p.into_inner()));
        queries.map(|q| {
            events
                .iter()
                .filter(|e| e.starts_with("WillExecute") && e.contains(&format!("{q}(")))
                .count()
        })
    }

    #[test]
    fn typing_above_a_module_does_not_recheck_it_and_its_findings_move_with_it() {
        let text = "fn above() {\n    let x = 1;\n}\nmod layouts {\n    axes![A = 8];\n    type L = m![A / 3];\n}\n";
        let (mut db, log) = logged_db();
        let file = SourceFile::new(&db, text.to_string(), PathBuf::from("k.rs"));
        let settings = Settings::new(&db, Config::default());
        let found = |db: &Database, text: &str| -> Vec<(String, &'static str)> {
            file_analysis(db, file, settings)
                .diagnostics()
                .iter()
                .map(|d| (text[d.span.range()].to_string(), d.code()))
                .collect()
        };
        assert_eq!(found(&db, text), [("A / 3".to_string(), "MAP-001")]);
        // The top level and `layouts` are checked; `above`, and the two declarations of
        // `layouts`, are the file's three items.
        let queries = ["module_check", "item_facts", "fn_analysis"];
        assert_eq!(executions(&log, queries), [2, 3, 1]);
        // A longer body above moves the module: only the edited function's item and analysis
        // run again, and the module's finding is placed where its text now is.
        let edited = text.replace("let x = 1;", "let x = 1;\n    let y = x + 1;");
        file.set_text(&mut db).to(edited.clone());
        assert_eq!(found(&db, &edited), [("A / 3".to_string(), "MAP-001")]);
        assert_eq!(executions(&log, queries), [0, 1, 1]);
    }

    /// A kernel module split over three files: axes in the parent, kernels in the child.
    const PARENT: &str = "use furiosa_visa_std::prelude::*;\naxes![A = 2048];\nmod k;\npub use k::*;\n\npub fn helper(ctx: &mut Context) -> usize {\n    1\n}\n";
    const CHILD: &str = r#"use super::*;

#[device(chip = 1)]
fn first(ctx: &mut Context, a: &DmTensor<i8, m![1], m![1 # 2], m![A / 8 # 256], m![A % 8]>) {
    let x = ctx.main.begin(a.view()).fetch::<i8, m![1], m![A % 8]>().commit::<m![A % 8]>(0);
}

#[device(chip = 1)]
fn second(ctx: &mut Context, a: &DmTensor<i8, m![1], m![1 # 2], m![A / 8 # 256], m![A % 8]>) {
    let y = ctx.sub.begin(a.view()).fetch::<i8, m![1], m![A % 8]>().commit::<m![A % 8]>(0);
}
"#;

    #[test]
    fn a_crate_is_resolved_across_files_and_edits_rerun_only_what_depends_on_them() {
        let (mut db, log) = logged_db();
        let root = PathBuf::from("/p/src/lib.rs");
        let lib = SourceFile::new(&db, "mod ve;\n".to_string(), root.clone());
        let parent = SourceFile::new(&db, PARENT.to_string(), PathBuf::from("/p/src/ve.rs"));
        let child = SourceFile::new(&db, CHILD.to_string(), PathBuf::from("/p/src/ve/k.rs"));
        let files = [lib, parent, child]
            .into_iter()
            .map(|f| (f.path(&db).clone(), f))
            .collect();
        let package = Package {
            library: None,
            dir: PathBuf::from("/p"),
            lib_name: Some("p".to_string()),
            roots: vec![root],
        };
        Workspace::new(&db, Arc::new(files), Arc::new(vec![package]));
        let settings = Settings::new(&db, Config::default());

        // The child sees the parent's axes: no undeclared axis, the mappings are checked.
        let before = file_analysis(&db, child, settings).clone();
        assert!(
            before.diagnostics().iter().all(|d| d.code() != "MAP-005"),
            "{:?}",
            before.diagnostics()
        );
        assert!(before.diagnostics().iter().all(|d| d.code() != "MAP-003"));
        assert_eq!(executed(&log).len(), 2);

        // Editing the body of a kernel step in the parent (a helper that takes the context):
        // the child's functions are not re-analysed. (A helper that computes a value from
        // values is kept with its body: the child's calls run it.)
        parent
            .set_text(&mut db)
            .to(PARENT.replace("    1\n", "    2\n"));
        file_analysis(&db, child, settings);
        assert_eq!(executed(&log).len(), 0, "the child's analyses are reused");

        // Changing the axis in the parent re-analyses both of the child's functions.
        parent
            .set_text(&mut db)
            .to(PARENT.replace("A = 2048", "A = 4096"));
        let after = file_analysis(&db, child, settings).clone();
        assert_eq!(executed(&log).len(), 2);
        // `A / 8 # 256` now pads 512 down to 256: the new size reached the child.s mappings.
        assert!(after.diagnostics().iter().any(|d| d.code() == "MAP-003"));

        // Analysed alone (no workspace), the same child cannot see `A`, and says so: its
        // `use super::*` names a module it cannot read, so `A` is unknown, not an error.
        let alone_db = Database::default();
        let alone = SourceFile::new(&alone_db, CHILD.to_string(), PathBuf::from("k.rs"));
        let s = Settings::new(&alone_db, Config::default());
        let alone = file_analysis(&alone_db, alone, s).clone();
        assert!(alone.diagnostics().iter().any(|d| d.code() == "VL-008"));
        assert!(alone.diagnostics().iter().all(|d| d.code() != "MAP-005"));
    }
}
