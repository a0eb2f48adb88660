//! The engine's public API: what the CLI and the language server call.
//!
//! [`AnalysisHost`] owns the salsa database: it takes file texts and the configuration
//! (inputs). [`AnalysisHost::snapshot`] hands out an [`Analysis`], a cheap handle on the same
//! storage that answers questions (diagnostics, fixes, hovers) and can move to another thread.
//! Setting an input cancels the queries running on snapshots: their calls then return
//! `Err(Cancelled)`, and the surface answers `ContentModified` or drops a stale result.

use crate::config::Config;
use crate::db::{self, Database, Settings, SourceFile, Workspace};
use crate::diagnostic::{Diagnostic, Fix, Span};
use crate::line_index::LineIndex;
use crate::mapping::{self, Layout, Scope};
use crate::model::{Step, TensorTy};
use crate::project::Package;
use crate::rule::Rule;
use crate::syntax::{self, MacroKind};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A query's answer, or the news that an edit cancelled it.
pub type Cancellable<T> = Result<T, salsa::Cancelled>;

/// A file known to the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(u32);

/// The files of a workspace and the configuration, as salsa inputs.
pub struct AnalysisHost {
    db: Database,
    settings: Settings,
    workspace: Workspace,
    files: Vec<(PathBuf, SourceFile)>,
    by_path: HashMap<PathBuf, FileId>,
    /// Counts the changes of the inputs (see [`Analysis::revision`]).
    revision: u64,
}

impl Default for AnalysisHost {
    fn default() -> Self {
        AnalysisHost::new()
    }
}

impl AnalysisHost {
    pub fn new() -> AnalysisHost {
        let db = Database::default();
        let settings = Settings::new(&db, Config::default());
        let workspace = Workspace::new(&db, Arc::default(), Arc::default());
        AnalysisHost {
            db,
            settings,
            workspace,
            files: Vec::new(),
            by_path: HashMap::new(),
            revision: 0,
        }
    }

    pub fn config(&self) -> &Config {
        self.settings.config(&self.db)
    }

    /// Replaces the configuration (a no-op when it is unchanged).
    pub fn set_config(&mut self, config: Config) {
        use salsa::Setter;
        if *self.settings.config(&self.db) != config {
            self.settings.set_config(&mut self.db).to(config);
            self.revision += 1;
        }
    }

    /// Adds a file or replaces its text (a no-op when the text is unchanged).
    pub fn set_file(&mut self, path: &Path, text: String) -> FileId {
        self.set_files([(path.to_path_buf(), text)]);
        self.by_path.get(path).copied().unwrap_or(FileId(u32::MAX))
    }

    /// Adds many files at once (one change of the workspace's file set, not one per file).
    pub fn set_files(&mut self, files: impl IntoIterator<Item = (PathBuf, String)>) {
        use salsa::Setter;
        let mut map = (**self.workspace.files(&self.db)).clone();
        let mut added = false;
        for (path, text) in files {
            if let Some(&id) = self.by_path.get(&path) {
                let input = self.files[id.0 as usize].1;
                let old = input.text(&self.db);
                let span = db::changed_span(old, &text);
                let unchanged = span.0 == old.len() && old.len() == text.len();
                if !unchanged {
                    // An edit reparses what it touched, not the whole file, and the nesting
                    // pre-scan reads only around it too.
                    let parsed = db::reparse_at(db::parse(&self.db, input), old, &text, span);
                    let (start, old_end, new_end) = span;
                    let nesting = match input.nesting(&self.db) {
                        Some(n) => n.after_edit(&text, start, old_end, new_end),
                        None => crate::syntax::limits::Nesting::of(&text),
                    };
                    input.set_text(&mut self.db).to(text);
                    input.set_reparsed(&mut self.db).to(Some(parsed));
                    input.set_nesting(&mut self.db).to(Some(nesting));
                    self.revision += 1;
                }
                continue;
            }
            let id = FileId(u32::try_from(self.files.len()).unwrap_or(u32::MAX));
            let abs = crate::project::absolute(&path);
            let input = SourceFile::new(&self.db, text, abs.clone());
            self.files.push((path.clone(), input));
            self.by_path.insert(path, id);
            map.insert(abs, input);
            added = true;
        }
        if added {
            self.workspace.set_files(&mut self.db).to(Arc::new(map));
            self.revision += 1;
        }
    }

    /// The Cargo packages of the workspace (see [`crate::project`]): files are analysed within
    /// their crate, and files the host does not hold are unknown.
    pub fn set_packages(&mut self, packages: Vec<Package>) {
        use salsa::Setter;
        if **self.workspace.packages(&self.db) != packages {
            self.workspace
                .set_packages(&mut self.db)
                .to(Arc::new(packages));
            self.revision += 1;
        }
    }

    /// The packages set by [`AnalysisHost::set_packages`].
    pub fn packages(&self) -> &[Package] {
        self.workspace.packages(&self.db)
    }

    /// Forgets a file's text (its id stays valid and answers as an empty file).
    pub fn remove_file(&mut self, file: FileId) {
        use salsa::Setter;
        if let Some((path, input)) = self.files.get(file.0 as usize).cloned() {
            self.revision += 1;
            if !input.text(&self.db).is_empty() {
                input.set_text(&mut self.db).to(String::new());
            }
            self.by_path.remove(&path);
            let mut files = (**self.workspace.files(&self.db)).clone();
            if files.remove(input.path(&self.db)).is_some() {
                self.workspace.set_files(&mut self.db).to(Arc::new(files));
            }
        }
    }

    pub fn file_id(&self, path: &Path) -> Option<FileId> {
        self.by_path.get(path).copied()
    }

    /// The paths of the files the host holds.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.by_path.keys().cloned().collect()
    }

    pub fn path(&self, file: FileId) -> Option<&Path> {
        self.files.get(file.0 as usize).map(|(p, _)| p.as_path())
    }

    /// A handle for answering questions, usable on another thread.
    pub fn snapshot(&self) -> Analysis {
        Analysis {
            db: self.db.clone(),
            settings: self.settings,
            files: self.files.iter().map(|(_, f)| *f).collect(),
            revision: self.revision,
        }
    }
}

/// A snapshot of the host: every question about the files it held when it was taken.
#[derive(Clone)]
pub struct Analysis {
    db: Database,
    settings: Settings,
    files: Arc<[SourceFile]>,
    revision: u64,
}

impl Analysis {
    /// The host's inputs as this snapshot saw them, counted: two snapshots of one host with
    /// the same revision answer every question alike (a key for caching their answers).
    pub fn revision(&self) -> u64 {
        self.revision
    }

    fn file(&self, file: FileId) -> Option<SourceFile> {
        self.files.get(file.0 as usize).copied()
    }

    fn with<T>(&self, f: impl FnOnce(&Database) -> T) -> Cancellable<T> {
        salsa::Cancelled::catch(std::panic::AssertUnwindSafe(|| f(&self.db)))
    }

    pub fn text(&self, file: FileId) -> Cancellable<Arc<str>> {
        self.with(|db| {
            self.file(file)
                .map_or_else(|| Arc::from(""), |f| Arc::from(f.text(db).as_str()))
        })
    }

    pub fn line_index(&self, file: FileId) -> Cancellable<Arc<LineIndex>> {
        self.with(|db| match self.file(file) {
            Some(f) => line_index(db, f).clone(),
            None => Arc::new(LineIndex::new("")),
        })
    }

    /// The file's diagnostics with suppression comments and rule levels applied.
    pub fn diagnostics(&self, file: FileId) -> Cancellable<Arc<[Diagnostic]>> {
        self.with(|db| match self.file(file) {
            Some(f) => crate::alias_fix::diagnostics(db, f, self.settings).clone(),
            None => Arc::from(Vec::new()),
        })
    }

    /// The library the file's crate is written against, and where visa-lint read it.
    pub fn library(&self, file: FileId) -> Cancellable<crate::library::Library> {
        self.with(|db| match self.file(file) {
            Some(f) => *db::library_of(db, f, self.settings),
            None => crate::library::Library::default(),
        })
    }

    /// The fixes of the diagnostics whose primary span meets `range`, each with its diagnostic.
    pub fn fixes(&self, file: FileId, range: Span) -> Cancellable<Vec<(Diagnostic, Fix)>> {
        let diags = self.diagnostics(file)?;
        Ok(diags
            .iter()
            .filter(|d| d.span.start <= range.end && range.start <= d.span.end)
            .flat_map(|d| d.fixes.iter().map(move |f| (d.clone(), f.clone())))
            .collect())
    }

    /// A host of its own holding `file`'s package as this snapshot sees it (the file alone
    /// outside any package), to try edits on without touching this one's.
    pub fn fork(&self, file: FileId) -> Cancellable<Option<(AnalysisHost, FileId)>> {
        self.with(|db| {
            let f = self.file(file)?;
            let path = f.path(db).clone();
            let workspace = Workspace::try_get(db);
            let packages: Vec<Package> =
                workspace.map_or_else(Vec::new, |w| w.packages(db).to_vec());
            let package = packages
                .iter()
                .filter(|p| p.contains(&path))
                .max_by_key(|p| p.dir.components().count());
            // A file no crate of its package holds is a crate of its own: an edit of it (or
            // of a module it declares) reaches no other file.
            let lone = package
                .is_some()
                .then(|| db::lone_crate_files(db, f))
                .flatten();
            let in_fork = |p: &PathBuf| match &lone {
                Some(files) => files.contains(p),
                None => package.is_some_and(|pkg| pkg.contains(p)),
            };
            let mut files: Vec<(PathBuf, String)> = workspace
                .iter()
                .flat_map(|w| w.files(db).iter())
                .filter(|(p, _)| **p != path && in_fork(p))
                .map(|(p, input)| (p.clone(), input.text(db).clone()))
                .collect();
            files.push((path.clone(), f.text(db).clone()));
            let mut host = AnalysisHost::new();
            host.set_config(self.settings.config(db).clone());
            host.set_packages(packages);
            host.set_files(files);
            let id = host.file_id(&path)?;
            Some((host, id))
        })
    }

    /// The estimated cycles of every engine call and every kernel of the file (file offsets),
    /// for inlay hints.
    pub fn cost_hints(&self, file: FileId) -> Cancellable<Vec<CostHint>> {
        self.with(|db| {
            let Some(f) = self.file(file) else {
                return Vec::new();
            };
            let mut out = Vec::new();
            for (start, func) in &db::file_analysis(db, f, self.settings).fns {
                if func.cost.ops.is_empty() {
                    continue;
                }
                out.push(CostHint {
                    at: func.model.span.end + start,
                    cycles: func.cost.total_cycles,
                    kernel: true,
                });
                out.extend(func.cost.ops.iter().map(|o| CostHint {
                    at: o.span.end + start,
                    cycles: o.cycles,
                    kernel: false,
                }));
            }
            out.sort_by_key(|h| h.at);
            out
        })
    }

    /// The file's mapping-level model (its `m!`, `axes!`, `i!` sites and aliases) as its
    /// items' models, each with the item's offset (memoised per item); `None` for a file
    /// nested past the limit.
    #[allow(clippy::type_complexity)]
    pub fn item_models(
        &self,
        file: FileId,
    ) -> Cancellable<Option<Vec<(u32, Arc<crate::syntax::FileModel>)>>> {
        self.with(|db| db::item_models(db, self.file(file)?))
    }

    /// The model of the item around `offset` (file positions); `None` for a file nested past
    /// the limit or an offset outside every item.
    pub fn model_at(
        &self,
        file: FileId,
        offset: u32,
    ) -> Cancellable<Option<crate::syntax::FileModel>> {
        self.with(|db| db::model_at(db, self.file(file)?, offset))
    }

    /// The file's raw analysis: every function's model, derivations, cost and findings,
    /// before suppression comments and rule levels (what `visa-lint model`, `derive` and
    /// `cost` print).
    pub fn file_analysis(&self, file: FileId) -> Cancellable<Arc<db::FileAnalysis>> {
        self.with(|db| match self.file(file) {
            Some(f) => db::file_analysis(db, f, self.settings).clone(),
            None => db::analyse_text(""),
        })
    }

    /// What to show when the pointer rests at `offset`.
    pub fn hover_at(&self, file: FileId, offset: u32) -> Cancellable<Option<Hover>> {
        self.with(|db| {
            let f = self.file(file)?;
            let text = f.text(db);
            let analysis = db::file_analysis(db, f, self.settings);
            hover(text, analysis, db::model_at(db, f, offset).as_ref(), offset)
        })
    }
}

#[salsa::tracked(returns(ref))]
fn line_index(db: &dyn salsa::Database, file: SourceFile) -> Arc<LineIndex> {
    Arc::new(LineIndex::new(file.text(db)))
}

/// One mapping evaluated on its own, as `visa-lint eval` and the mapping hovers show it: the
/// mapping engine's [`mapping::Evaluation`] with its problems reported as diagnostics.
#[derive(Clone, Debug)]
pub struct Evaluation {
    /// `axes![<axes>];\nm![<mapping>]`: what diagnostic spans point into.
    pub source: String,
    pub layout: Option<Layout>,
    /// The size of the innermost term as written (`m![B / 4, B % 4]` -> 4), for tables.
    pub inner_term_size: Option<u64>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Evaluates `mapping` (with or without the `m![...]` wrapper) under the axes `axes`
/// (`A = 8, B = 512`, with or without `axes![...]`), with the diagnostics of what is wrong.
pub fn evaluate(axes: &str, mapping: &str) -> Evaluation {
    let ev = mapping::evaluate(axes, mapping);
    Evaluation {
        diagnostics: ev
            .problems
            .iter()
            .map(crate::rules::mapping_diagnostic)
            .collect(),
        source: ev.source,
        layout: ev.layout,
        inner_term_size: ev.inner_term_size,
    }
}

/// Structured hover content; surfaces render it ([`Hover::markdown`] is one rendering).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hover {
    /// The range the hover is about.
    pub range: Span,
    pub content: HoverContent,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HoverContent {
    /// An `m![...]` mapping (or an alias naming one).
    Mapping {
        text: String,
        size: u64,
        normal_form: String,
        /// The layout table and digit layout that `visa-lint eval` prints.
        layout: String,
        /// The element type of the tensor the mapping belongs to and the bytes it spans, when
        /// known.
        element: Option<(String, u64)>,
    },
    /// An axis of an `axes!` declaration.
    Axis {
        name: String,
        size: u64,
        /// Where it is declared, when it is in this file.
        declared: Option<Span>,
    },
    /// A rule code in a suppression comment.
    Rule(&'static Rule),
    /// An engine call of a chain, with what the simulator says it costs.
    Call {
        method: String,
        engine: Option<String>,
        context: Option<String>,
        input: Option<String>,
        output: Option<String>,
        cost: Option<crate::sim::OpCost>,
    },
    /// A function with engine operations: what it costs as a whole.
    Kernel(Arc<crate::sim::KernelCost>),
}

/// The estimated cycles of one engine call or one kernel, for inlay hints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CostHint {
    /// Where the hint belongs: the end of the call's method name, or of the function's name.
    pub at: u32,
    pub cycles: u64,
    /// Whether it is a whole kernel's total (else one call's).
    pub kernel: bool,
}

impl Hover {
    /// Markdown, as editors show hovers.
    pub fn markdown(&self) -> String {
        match &self.content {
            HoverContent::Mapping {
                text,
                size,
                normal_form,
                layout,
                element,
            } => {
                let mut s = format!("```rust\n{text}\n```\n\nsize **{size}**");
                if let Some((dtype, bytes)) = element {
                    s.push_str(&format!(" · {bytes} bytes of `{dtype}`"));
                }
                s.push_str(&format!(
                    "\n\nnormal form `{normal_form}`\n\n```text\n{layout}\n```"
                ));
                s
            }
            HoverContent::Axis { name, size, .. } => format!("axis `{name}` = **{size}**"),
            HoverContent::Rule(r) => format!(
                "**{}** `{}` · {}\n\n{}\n\n{}",
                r.code,
                r.name,
                r.severity.as_str(),
                r.summary,
                r.docs
            ),
            HoverContent::Kernel(k) => {
                let mut s = format!("`{}` · about **{} cycles**", k.name, k.total_cycles);
                if let Some(b) = k.bottleneck {
                    s.push_str(&format!(" · bottleneck: {b}"));
                }
                s.push_str("\n\n| engine | busy cycles | share |\n|---|---:|---:|\n");
                for e in &k.engines {
                    s.push_str(&format!("| {} | {} | {}% |\n", e.engine, e.busy, e.percent));
                }
                for (op, hint, saves) in k.hints().into_iter().take(3) {
                    s.push_str(&format!(
                        "\n- `{}`: {hint} (saves about {saves} cycles)",
                        op.op
                    ));
                }
                if !k.assumptions.is_empty() {
                    s.push_str("\n\nassumed: ");
                    let a: Vec<&str> = k.assumptions.iter().map(|a| a.0.as_str()).collect();
                    s.push_str(&a.join("; "));
                }
                s
            }
            HoverContent::Call {
                method,
                engine,
                context,
                input,
                output,
                cost,
            } => {
                let mut s = format!("`.{method}()`");
                if let Some(e) = engine {
                    s.push_str(&format!(" · {e}"));
                }
                if let Some(c) = context {
                    s.push_str(&format!(" · `ctx.{c}`"));
                }
                if let Some(i) = input {
                    s.push_str(&format!("\n\nin: `{i}`"));
                }
                if let Some(o) = output {
                    s.push_str(&format!("\n\nout: `{o}`"));
                }
                if let Some(c) = cost {
                    s.push_str(&format!(
                        "\n\nabout **{} cycles** · {} bytes · limited by {}",
                        c.cycles, c.bytes, c.limit
                    ));
                    for (hint, saves) in &c.hints {
                        s.push_str(&format!("\n\n- {hint} (saves about {saves} cycles)"));
                    }
                }
                s
            }
        }
    }
}

/// The hover at `offset`, from the file's analysis and the model of the item around it
/// (`None` for a file nested past the limit: only what the analysis says).
fn hover(
    text: &str,
    analysis: &db::FileAnalysis,
    model: Option<&syntax::FileModel>,
    offset: u32,
) -> Option<Hover> {
    let inside = |s: Span| s.start <= offset && offset < s.end.max(s.start + 1);
    // A rule code in a suppression comment (on the line around `offset`).
    let at = (offset as usize).min(text.len());
    let line_start = memchr::memrchr(b'\n', &text.as_bytes()[..at]).map_or(0, |i| i + 1);
    let line_end = memchr::memchr(b'\n', &text.as_bytes()[at..]).map_or(text.len(), |i| at + i);
    let line = text.get(line_start..line_end).unwrap_or("");
    for sup in crate::suppress::scan(line) {
        for (code, span) in &sup.codes {
            let span = span.shift(line_start as u32);
            if inside(span) {
                let rule = crate::rules::registry::rule(code)?;
                return Some(Hover {
                    range: span,
                    content: HoverContent::Rule(rule),
                });
            }
        }
    }
    // Engine calls and the mappings of the functions' tensors and steps.
    for (start, f) in &analysis.fns {
        let shift = |s: Span| s.shift(*start);
        if inside(shift(f.model.span)) && !f.cost.ops.is_empty() {
            return Some(Hover {
                range: shift(f.model.span),
                content: HoverContent::Kernel(Arc::new(f.cost.clone())),
            });
        }
        for chain in &f.model.chains {
            for step in &chain.steps {
                if inside(shift(step.span)) {
                    let cost = f.cost.ops.iter().find(|o| o.span == step.span).cloned();
                    return Some(call_hover(step, shift(step.span), cost));
                }
                for ty in step.input.iter().chain(step.output.iter()) {
                    if let Some(h) = mapping_hover(ty, offset, *start) {
                        return Some(h);
                    }
                }
            }
        }
        for t in &f.model.tensors {
            if let Some(h) = mapping_hover(&t.ty, offset, *start) {
                return Some(h);
            }
        }
    }
    // Module-level mappings and axes, lowered with the scope of the innermost module around
    // them (what it declares and imports, from any file of the crate).
    let empty = Scope::default();
    let module = analysis
        .modules
        .iter()
        .filter(|m| m.range.start <= offset && offset <= m.range.end)
        .max_by_key(|m| m.range.start);
    let scope = module.map_or(&empty, |m| &*m.scope);
    let site = model.and_then(|m| {
        m.sites
            .iter()
            .find(|s| s.kind == MacroKind::Mapping && inside(s.span))
    });
    if let Some(site) = site {
        let layout = mapping::parse::parse_mapping(&site.body)
            .ok()
            .and_then(|e| mapping::lower::lower(&e, scope, &mut Vec::new()))?;
        return Some(Hover {
            range: site.span,
            content: mapping_content(text.get(site.span.range())?, &layout, None),
        });
    }
    let word = word_at(text, offset)?;
    let entry = scope.axes.get(&text[word.range()])?;
    Some(Hover {
        range: word,
        content: HoverContent::Axis {
            name: entry.axis.name.to_string(),
            size: entry.axis.size,
            declared: (entry.decl != Span::default())
                .then(|| module.map_or(entry.decl, |m| m.place(entry.decl))),
        },
    })
}

fn call_hover(step: &Step, range: Span, cost: Option<crate::sim::OpCost>) -> Hover {
    let ty = |t: &Option<TensorTy>| t.as_ref().map(|t| t.kind.type_name().to_string());
    Hover {
        range,
        content: HoverContent::Call {
            method: step.method.to_string(),
            engine: step.engine.map(|e| e.name().to_string()),
            context: step.context.map(|c| c.as_str().to_string()),
            input: ty(&step.input),
            output: ty(&step.output),
            cost,
        },
    }
}

fn mapping_hover(ty: &TensorTy, offset: u32, shift: u32) -> Option<Hover> {
    for mv in ty.maps.values() {
        let Some(span) = mv.span.map(|s| s.shift(shift)) else {
            continue;
        };
        if span.start <= offset && offset < span.end {
            let layout = mv.layout.as_deref()?;
            let element = ty
                .dtype
                .map(|d| (d.to_string(), crate::derive::bytes(layout.size, d.bits())));
            return Some(Hover {
                range: span,
                content: mapping_content(&mv.text, layout, element),
            });
        }
    }
    None
}

fn mapping_content(text: &str, layout: &Layout, element: Option<(String, u64)>) -> HoverContent {
    HoverContent::Mapping {
        text: text.to_string(),
        size: layout.size,
        normal_form: layout.to_expr(),
        layout: mapping::describe::describe(layout, None),
        element,
    }
}

/// The identifier around `offset`.
fn word_at(text: &str, offset: u32) -> Option<Span> {
    let at = (offset as usize).min(text.len());
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let start = text[..at]
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_word(*c))
        .last()
        .map_or(at, |(i, _)| i);
    let end = text[at..]
        .char_indices()
        .find(|(_, c)| !is_word(*c))
        .map_or(text.len(), |(i, _)| at + i);
    (start < end).then(|| Span::new(start, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Level;

    #[test]
    fn evaluation_spans_point_into_the_virtual_source() {
        let ev = evaluate("A = 63", "m![A / 8]");
        assert!(ev.layout.is_none());
        let d = &ev.diagnostics[0];
        assert_eq!(d.code(), "MAP-001");
        assert_eq!(&ev.source[d.span.range()], "A / 8");
        let fix = &d.fixes[0].edits[0];
        let mut fixed = ev.source.clone();
        fixed.replace_range(fix.span.range(), &fix.new_text);
        assert!(fixed.ends_with("m![A # 64 / 8]"), "{fixed}");
    }

    const KERNEL: &str = "axes![A = 2048, K = 63];\n\
        type Blocks = m![K / 8]; // visa-lint: allow(MAP-001)\n\
        type Lanes = m![A % 8 # 32];\n\
        #[device(chip = 1)]\n\
        fn first(ctx: &mut Context, a: &DmTensor<i8, m![1], m![1 # 2], m![A / 8 # 256], m![A % 8]>) {\n\
        \x20   let x = ctx.main.begin(a.view()).fetch::<i8, m![1], m![A % 8]>().collect::<m![1], m![A % 8 # 32]>();\n\
        \x20   let y = ctx.sub.begin(a.view()).fetch::<i8, m![1], m![A % 8]>().to_trf::<m![1], m![A % 8]>(TrfAddress::Full);\n\
        }\n";

    fn at(needle: &str) -> u32 {
        KERNEL.find(needle).map_or(0, |i| i as u32)
    }

    fn host() -> (AnalysisHost, FileId) {
        let mut host = AnalysisHost::new();
        let file = host.set_file(Path::new("k.rs"), KERNEL.to_string());
        (host, file)
    }

    #[test]
    fn diagnostics_follow_configuration_and_edits() {
        let (mut host, file) = host();
        let codes = |h: &AnalysisHost| -> Vec<&'static str> {
            h.snapshot()
                .diagnostics(file)
                .map(|d| d.iter().map(|d| d.code()).collect())
                .unwrap_or_default()
        };
        // KRN-002 (the sub context loads the TRF without a collect) is shown; MAP-001 is suppressed
        // by its comment.
        let before = codes(&host);
        assert_eq!(before, ["KRN-002"]);
        host.set_config(Config {
            levels: before
                .iter()
                .map(|c| (c.to_string(), Level::Allow))
                .collect(),
            ..Config::default()
        });
        assert_eq!(codes(&host), Vec::<&str>::new());
        // Editing the text away from the suppression makes it unused.
        host.set_file(Path::new("k.rs"), KERNEL.replace("m![K / 8]", "m![A / 8]"));
        assert_eq!(codes(&host), ["VL-006"]);
        assert_eq!(host.file_id(Path::new("k.rs")), Some(file));
    }

    #[test]
    fn hovers_on_mappings_axes_calls_and_rule_codes() {
        let (host, file) = host();
        let a = host.snapshot();
        let hover = |needle: &str, plus: u32| {
            a.hover_at(file, at(needle) + plus)
                .ok()
                .flatten()
                .map(|h| h.content)
        };
        match hover("m![A / 8 # 256]", 3) {
            Some(HoverContent::Mapping {
                size,
                normal_form,
                element,
                ..
            }) => {
                assert_eq!(size, 256);
                // A / 8 already has 256 positions: the padding is a no-op.
                assert_eq!(normal_form, "A / 8");
                assert_eq!(element, Some(("i8".to_string(), 256)));
            }
            other => panic!("{other:?}"),
        }
        match hover("MAP-001)", 2) {
            Some(HoverContent::Rule(r)) => assert_eq!(r.code, "MAP-001"),
            other => panic!("{other:?}"),
        }
        match hover("fetch::", 1) {
            Some(HoverContent::Call {
                method,
                engine,
                cost,
                ..
            }) => {
                assert_eq!(method, "fetch");
                assert_eq!(engine.as_deref(), Some("Fetch Engine"));
                // 8 i8 elements a slice in one 8-byte fetch (L1760: Time::SIZE x
                // ceil(Packet / fetch_size) = 1 x 1).
                assert_eq!(cost.map(|c| c.cycles), Some(1));
            }
            other => panic!("{other:?}"),
        }
        match hover("first", 1) {
            Some(HoverContent::Kernel(k)) => {
                assert_eq!(k.name, "first");
                assert!(k.total_cycles > 0 && !k.engines.is_empty());
            }
            other => panic!("{other:?}"),
        }
        match hover("K = 63", 0) {
            Some(HoverContent::Axis { name, size, .. }) => {
                assert_eq!((name.as_str(), size), ("K", 63))
            }
            other => panic!("{other:?}"),
        }
        match hover("m![A % 8 # 32]", 4) {
            Some(HoverContent::Mapping { size, .. }) => assert_eq!(size, 32),
            other => panic!("{other:?}"),
        }
        // A mapping that breaks a rule has no value to show.
        assert_eq!(hover("m![K / 8]", 4), None);
        assert_eq!(hover("#[device", 2), None);
    }

    #[test]
    fn fixes_in_a_range() {
        let (host, file) = host();
        let a = host.snapshot();
        let all = a
            .fixes(file, Span::new(0, KERNEL.len()))
            .unwrap_or_default();
        let none = a.fixes(file, Span::new(0, 3)).unwrap_or_default();
        assert!(none.is_empty());
        assert!(all.iter().all(|(d, f)| d.fixes.contains(f)));
    }

    #[test]
    fn cost_hints_sit_after_calls_and_kernel_names() {
        let (host, file) = host();
        let hints = host.snapshot().cost_hints(file).unwrap_or_default();
        let kernel = hints.iter().find(|h| h.kernel).map(|h| h.at);
        assert_eq!(kernel, Some(at("first") + 5));
        let fetch = at("fetch::") + 5;
        assert!(hints.iter().any(|h| !h.kernel && h.at == fetch));
    }
}
