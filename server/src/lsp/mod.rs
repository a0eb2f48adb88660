//! `visa-lsp`: the language server over the engine (tower-lsp-server on tokio).
//!
//! Concurrency (the handlers run up to four at a time, so notifications may be handled out of
//! order):
//! - full document sync; each document keeps its version, and a change whose version is not
//!   newer than the stored one is dropped;
//! - the engine's host sits behind one `std::sync::Mutex`, held only to set an input or clone
//!   a snapshot, never across an `.await` and never while reading a file;
//! - every query runs on a snapshot inside `spawn_blocking`; an edit cancels it, and the
//!   request answers `ContentModified`;
//! - publishing follows [`publish`]: whatever may change a document's diagnostics marks it,
//!   and a mark is cleared only by publishing an analysis of its latest version that started
//!   after the mark; a cancelled analysis leaves it, and a worker task takes it again;
//! - snapshots are taken on the blocking thread that uses them, never held by an async task
//!   (setting an input waits for every other handle to drop);
//! - files are read through the engine's one gate (`project::Gate`): regular files under the
//!   workspace folders and the open documents' packages, never under the state lock; a
//!   document that is no file (`untitled:`) is never looked for on disk.
//!
//! Why tower-lsp-server rather than the synchronous `lsp-server`: with the rules above, the
//! out-of-order handling it allows is harmless (tests: a flood of edits interleaved with
//! hovers ends with the last version's diagnostics, no deadlock). Its one weakness, ending the
//! session at the first message it cannot decode, is why [`transport`] reads, checks and
//! writes the messages itself and hands the library only what it can take.

pub mod actions;
pub mod complete;
pub mod config;
pub mod convert;
pub mod diagnostics;
pub mod engine;
pub mod fix_cache;
pub mod hover;
pub mod publish;
pub mod transport;

use config::Settings;
use convert::Lines;
use engine::{Cancellable, FileId, Host, Package, Snapshot};
use publish::{Epoch, Queue};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Once};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, ClientSocket, LanguageServer, LspService};

/// One open document at one version.
#[derive(Clone)]
pub struct Doc {
    pub version: i32,
    pub text: Arc<str>,
    pub lines: Arc<Lines>,
    pub file: FileId,
    /// Its axes, aliases and their uses, made when a request first needs them.
    symbols: Arc<std::sync::OnceLock<Arc<complete::Symbols>>>,
}

impl Doc {
    fn new(version: i32, text: Arc<str>, file: FileId) -> Doc {
        Doc {
            version,
            text,
            lines: Arc::default(),
            file,
            symbols: Arc::default(),
        }
    }

    /// The document's symbols, from the engine's models of this version's items (made once;
    /// a file nested past the limit has none).
    pub fn symbols(&self, snap: &Snapshot) -> Cancellable<Arc<complete::Symbols>> {
        if let Some(s) = self.symbols.get() {
            return Ok(s.clone());
        }
        let items = snap.item_models(self.file)?.unwrap_or_default();
        let made = Arc::new(complete::symbols_of(&items, &self.text));
        Ok(self.symbols.get_or_init(|| made).clone())
    }
}

#[derive(Default)]
struct State {
    host: Host,
    docs: HashMap<Uri, Doc>,
    settings: Settings,
    /// The client's workspace folders (none: the package of each open document is its
    /// workspace).
    roots: Vec<PathBuf>,
    /// What the client sent (`initializationOptions`, then each `didChangeConfiguration`).
    client_settings: Vec<Value>,
    /// The Cargo packages of the open documents, read from disk when their first document
    /// opened: their other files are analysed as the disk has them (and followed through
    /// `workspace/didChangeWatchedFiles`), so names resolve across the crate.
    packages: Vec<Package>,
    /// Whether the client may be asked to watch files.
    watch_dynamic: bool,
    /// Whether the client takes versioned `documentChanges` in a workspace edit.
    document_changes: bool,
    /// The library each crate seen is checked against (its package's directory, or the
    /// document alone), logged once when first seen or when it changes.
    libraries: HashMap<PathBuf, engine::library::Library>,
    /// Log lines waiting for the async side to send.
    to_log: Vec<String>,
}

impl State {
    fn package_of(&self, path: &Path) -> Option<&Package> {
        self.packages
            .iter()
            .filter(|p| p.contains(path))
            .max_by_key(|p| p.dir.components().count())
    }

    fn is_open(&self, path: &Path) -> bool {
        self.docs.keys().any(|u| path_of(u) == path)
    }

    /// The open documents whose diagnostics may change with `uri`'s text: those of its
    /// package (it may declare what they use).
    fn crate_mates(&self, uri: &Uri) -> Vec<Uri> {
        let Some(pkg) = self.package_of(&path_of(uri)) else {
            return Vec::new();
        };
        self.docs
            .keys()
            .filter(|u| *u != uri && pkg.contains(&path_of(u)))
            .cloned()
            .collect()
    }

    /// The gate for files of the loaded packages that are not open.
    fn package_gate(&self) -> engine::project::Gate {
        engine::project::Gate::new(self.packages.iter().map(|p| &p.dir))
    }
}

pub struct Backend {
    client: Client,
    state: Arc<Mutex<State>>,
    /// The latest version of every open document. Its own lock (taken after `state`'s, never
    /// before) so the async side can check versions without waiting for an input to be set.
    versions: Arc<Mutex<HashMap<Uri, i32>>>,
    publisher: Publisher,
    /// The fixes code actions checked, for the host's current revision (its own lock, taken
    /// alone).
    fixes: Arc<Mutex<fix_cache::FixCache>>,
}

/// The service, for driving in-process (tests) or over a transport.
pub fn service() -> (LspService<Backend>, ClientSocket) {
    LspService::new(|client| {
        let state = Arc::new(Mutex::new(State::default()));
        let versions = Arc::new(Mutex::new(HashMap::new()));
        Backend {
            publisher: Publisher {
                client: client.clone(),
                state: state.clone(),
                versions: versions.clone(),
                queue: Arc::default(),
                wake: Arc::default(),
                order: Arc::default(),
                worker: Arc::new(Once::new()),
            },
            client,
            state,
            versions,
            fixes: Arc::default(),
        }
    })
}

/// Serves LSP over stdin/stdout until `exit` or the end of the input, with every message
/// decoded and checked by [`transport`] first; returns the process's exit status.
pub async fn run_stdio() -> i32 {
    let (service, socket) = service();
    let (to_server, from_input) = tokio::sync::mpsc::channel(transport::INPUT_QUEUE);
    let (out, frames) = tokio::sync::mpsc::channel(transport::OUTPUT_QUEUE);
    let lifecycle = Arc::new(transport::Lifecycle::default());
    let (replies, seen) = (out.clone(), lifecycle.clone());
    std::thread::spawn(move || {
        transport::read_input(std::io::stdin().lock(), to_server, replies, seen)
    });
    let output = std::thread::spawn(move || transport::write_output(frames, std::io::stdout()));
    transport::serve(service, socket, from_input, out.clone()).await;
    // Everything queued is written, then the output thread ends.
    let _ = out.send(None).await;
    let _ = tokio::task::spawn_blocking(move || output.join()).await;
    lifecycle.exit_code()
}

/// The code action kind of "apply all safe visa-lint fixes".
pub const FIX_ALL: &str = "source.fixAll.visa-lint";

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves the state as consistent as each step is atomic.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A document's diagnostics, converted for the client: `None` when a newer version was stored
/// before the analysis started; `Err` when an edit cancelled it.
type Computed =
    std::result::Result<Option<Vec<tower_lsp_server::ls_types::Diagnostic>>, salsa::Cancelled>;

/// Stores `text` as `version` of `uri` (unless the stored version is as new), marks the
/// document and its crate mates as owing diagnostics, and claims the document's analysis when
/// nobody else holds it: the claimed document and its epoch.
fn store(
    state: &Mutex<State>,
    versions: &Mutex<HashMap<Uri, i32>>,
    queue: &Mutex<Queue>,
    uri: &Uri,
    version: i32,
    text: String,
) -> Option<(Doc, Epoch)> {
    let s = &mut *lock(state);
    if let Some(doc) = s.docs.get(uri)
        && doc.version >= version
    {
        return None; // stale or duplicate: the stored text is as new
    }
    let text: Arc<str> = Arc::from(text);
    let file = s.host.set_file(&path_of(uri), text.to_string());
    let doc = Doc::new(version, text, file);
    s.docs.insert(uri.clone(), doc.clone());
    lock(versions).insert(uri.clone(), version);
    let mut queue = lock(queue);
    for mate in s.crate_mates(uri) {
        queue.mark(&mate);
    }
    queue.mark(uri);
    queue.claim(uri).map(|epoch| (doc, epoch))
}

/// Computes a document's diagnostics. Runs on a blocking thread, which takes the snapshot
/// itself: a snapshot held by an async task could keep an input from being set while that task
/// waits for a worker.
fn diagnostics_of(
    state: &Mutex<State>,
    versions: &Mutex<HashMap<Uri, i32>>,
    uri: &Uri,
    doc: &Doc,
) -> Computed {
    let (snap, settings) = {
        let s = lock(state);
        if lock(versions).get(uri) != Some(&doc.version) {
            return Ok(None); // superseded before it started
        }
        (s.host.snapshot(), s.settings.clone())
    };
    let diags = snap.diagnostics(doc.file)?;
    let library = snap.library(doc.file)?;
    // The snapshot goes before the state is locked again: whoever holds the state may be
    // applying an edit, which waits until every snapshot is dropped.
    drop(snap);
    {
        let mut s = lock(state);
        let path = path_of(uri);
        let krate = s.package_of(&path).map_or(path, |p| p.dir.clone());
        if s.libraries.insert(krate.clone(), library) != Some(library) {
            let line = format!("visa-lsp: {}: checked against {library}", krate.display());
            s.to_log.push(line);
        }
    }
    Ok(Some(
        diags
            .iter()
            .map(|d| diagnostics::to_lsp(d, uri, doc, &settings))
            .collect(),
    ))
}

/// The document's key for the engine: its file path, or for a document that is no file
/// (`untitled:`) a name no package's directory holds (`/<untitled:Untitled-1>`), never taken
/// as a path relative to the working directory nor looked for on disk (see [`disk_path`]).
fn path_of(uri: &Uri) -> PathBuf {
    disk_path(uri).unwrap_or_else(|| PathBuf::from(format!("/<{}>", uri.as_str())))
}

/// The absolute path of a `file:` URI; `None` for every other URI.
fn disk_path(uri: &Uri) -> Option<PathBuf> {
    if !uri.scheme().as_str().eq_ignore_ascii_case("file") {
        return None;
    }
    uri.to_file_path()
        .map(|p| p.into_owned())
        .filter(|p| p.is_absolute())
}

/// Publishes diagnostics so that every open document ends with those of its latest version
/// (see [`publish`]): the handler of an edit analyses its document at once when nobody else
/// is; a worker task takes every document still owed, the one marked last first.
#[derive(Clone)]
struct Publisher {
    client: Client,
    state: Arc<Mutex<State>>,
    versions: Arc<Mutex<HashMap<Uri, i32>>>,
    queue: Arc<Mutex<Queue>>,
    wake: Arc<tokio::sync::Notify>,
    /// Publishes one at a time, each checking under it that its version is still the latest.
    order: Arc<tokio::sync::Mutex<()>>,
    worker: Arc<Once>,
}

impl Publisher {
    /// Marks documents as owing their diagnostics and wakes the worker.
    fn mark(&self, uris: impl IntoIterator<Item = Uri>) {
        {
            let mut queue = lock(&self.queue);
            for uri in uris {
                queue.mark(&uri);
            }
        }
        self.wake();
    }

    fn wake(&self) {
        self.worker.call_once(|| {
            tokio::spawn(self.clone().work());
        });
        self.wake.notify_one();
    }

    /// The worker: analyses and publishes every owed document until the session ends.
    async fn work(self) {
        loop {
            // The claim and the document's version are read together (under the state lock,
            // which every mark is made under), so the analysis is of the marked version.
            let next = {
                let s = lock(&self.state);
                let claimed = lock(&self.queue).claim_next();
                claimed.map(|(uri, epoch)| {
                    let doc = s.docs.get(&uri).cloned();
                    (uri, epoch, doc)
                })
            };
            let Some((uri, epoch, doc)) = next else {
                self.wake.notified().await;
                continue;
            };
            let Some(doc) = doc else {
                lock(&self.queue).finish(&uri, epoch, true); // closed: nothing owed
                continue;
            };
            self.analyse(uri, epoch, doc).await;
        }
    }

    /// Analyses `doc`, claimed at `epoch`, and publishes its diagnostics (or leaves it owed).
    async fn analyse(&self, uri: Uri, epoch: Epoch, doc: Doc) {
        let (state, versions, key) = (self.state.clone(), self.versions.clone(), uri.clone());
        let version = doc.version;
        let computed =
            tokio::task::spawn_blocking(move || diagnostics_of(&state, &versions, &key, &doc))
                .await
                .map_err(|e| e.to_string());
        self.finish(uri, version, epoch, computed).await;
    }

    /// Publishes what an analysis claimed at `epoch` computed, and ends the claim.
    async fn finish(
        &self,
        uri: Uri,
        version: i32,
        epoch: Epoch,
        computed: std::result::Result<Computed, String>,
    ) {
        let published = match computed {
            Ok(Ok(Some(diags))) => self.send(&uri, version, diags).await,
            // Superseded or cancelled: still owed, taken again.
            Ok(Ok(None) | Err(_)) => false,
            Err(e) => {
                self.client
                    .log_message(
                        MessageType::ERROR,
                        format!("visa-lsp: analysis of {} failed: {e}", uri.as_str()),
                    )
                    .await;
                true // a failure would fail again: not retried until the next change
            }
        };
        let lines = std::mem::take(&mut lock(&self.state).to_log);
        for line in lines {
            self.client.log_message(MessageType::INFO, line).await;
        }
        lock(&self.queue).finish(&uri, epoch, published);
        if !published {
            self.wake.notify_one();
        }
    }

    /// Sends `diags` for `version` of `uri` unless a newer version exists (`false` then).
    async fn send(
        &self,
        uri: &Uri,
        version: i32,
        diags: Vec<tower_lsp_server::ls_types::Diagnostic>,
    ) -> bool {
        let _order = self.order.lock().await;
        if lock(&self.versions).get(uri) != Some(&version) {
            return false;
        }
        self.client
            .publish_diagnostics(uri.clone(), diags, Some(version))
            .await;
        true
    }

    /// Clears a closed document's diagnostics (unless it was opened again meanwhile).
    async fn clear(&self, uri: Uri) {
        let _order = self.order.lock().await;
        if !lock(&self.versions).contains_key(&uri) {
            self.client.publish_diagnostics(uri, Vec::new(), None).await;
        }
    }
}

impl Backend {
    /// Runs `f` with the host locked, on a blocking thread (setting an input waits for the
    /// queries it cancels to let go of their snapshots).
    async fn with_state<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut State) -> T + Send + 'static,
    ) -> Option<T> {
        let state = self.state.clone();
        tokio::task::spawn_blocking(move || f(&mut lock(&state)))
            .await
            .ok()
    }

    /// Reads the package of `uri` from disk when it is a file of a package not loaded yet
    /// (outside the state lock; the files read through the package's gate). With workspace
    /// folders, only a document inside one has its package read.
    async fn load_package(&self, uri: &Uri) {
        let Some(path) = disk_path(uri) else {
            return;
        };
        let state = self.state.clone();
        let _ = tokio::task::spawn_blocking(move || {
            let roots = {
                let s = lock(&state);
                if s.package_of(&path).is_some() {
                    return;
                }
                s.roots.clone()
            };
            let ceiling = roots.iter().find(|r| path.starts_with(r));
            if !roots.is_empty() && ceiling.is_none() {
                return; // outside the workspace: analysed alone
            }
            let Some(pkg) = engine::project::discover_under(&path, ceiling.map(PathBuf::as_path))
            else {
                return;
            };
            let files = engine::project::load(&pkg);
            let s = &mut *lock(&state);
            if s.packages.iter().any(|p| p.dir == pkg.dir) {
                return; // loaded meanwhile
            }
            let open: HashSet<PathBuf> = s.docs.keys().map(path_of).collect();
            s.host
                .set_files(files.into_iter().filter(|(p, _)| !open.contains(p)));
            s.packages.push(pkg);
            let packages = s.packages.clone();
            s.host.set_packages(packages);
        })
        .await;
    }

    /// Stores a new version of a document and starts publishing its diagnostics (and marks
    /// those of its crate mates, which may use what it declares). It returns once the text is
    /// stored: the transport hands over the next edit only then, so edits, opens and closes
    /// take effect in the client's order. The document being typed in is analysed at once, on
    /// the blocking thread that stored it (one handoff per edit), ahead of the worker's queue.
    async fn update(&self, uri: Uri, version: i32, text: String) {
        let (state, versions, queue) = (
            self.state.clone(),
            self.versions.clone(),
            self.publisher.queue.clone(),
        );
        let key = uri.clone();
        let (stored_tx, stored_rx) = tokio::sync::oneshot::channel();
        let job = tokio::task::spawn_blocking(move || {
            let claimed = store(&state, &versions, &queue, &key, version, text);
            let _ = stored_tx.send(());
            let (doc, epoch) = claimed?;
            let computed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                diagnostics_of(&state, &versions, &key, &doc)
            }))
            .map_err(|panic| crate::lint::panic_message(panic.as_ref()));
            Some((doc.version, epoch, computed))
        });
        let publisher = self.publisher.clone();
        tokio::spawn(async move {
            match job.await {
                Ok(Some((version, epoch, computed))) => {
                    publisher.finish(uri, version, epoch, computed).await;
                }
                Ok(None) => {}
                Err(e) => {
                    let line = format!("visa-lsp: storing {} failed: {e}", uri.as_str());
                    publisher.client.log_message(MessageType::ERROR, line).await;
                }
            }
            publisher.wake();
        });
        let _ = stored_rx.await; // dropped unsent only if storing panicked
    }

    /// Marks every open document (the configuration or a file on disk changed).
    async fn mark_all(&self) {
        let docs = self
            .with_state(|s| s.docs.keys().cloned().collect::<Vec<_>>())
            .await
            .unwrap_or_default();
        self.publisher.mark(docs);
    }

    /// Re-reads the settings (file, then the client's) and re-publishes every open document.
    async fn reconfigure(&self) {
        let state = self.state.clone();
        let read = tokio::task::spawn_blocking(move || {
            let (root, client) = {
                let s = lock(&state);
                (s.roots.first().cloned(), s.client_settings.clone())
            };
            // Read outside the lock: the file may be slow, or not a file at all.
            let (mut settings, mut problems) = Settings::for_workspace(root.as_deref());
            for v in &client {
                problems.extend(settings.merge(v));
            }
            let s = &mut *lock(&state);
            s.host.set_config(settings.engine());
            s.settings = settings;
            problems
        })
        .await;
        for p in read.unwrap_or_default() {
            self.client.log_message(MessageType::WARNING, p).await;
        }
        self.mark_all().await;
    }

    /// Runs a query on a snapshot of `uri` (none when the document is not open).
    async fn query<T: Send + 'static>(
        &self,
        uri: &Uri,
        f: impl FnOnce(&Snapshot, &Doc, &Settings) -> Cancellable<T> + Send + 'static,
    ) -> Result<Option<T>> {
        let state = self.state.clone();
        let uri = uri.clone();
        let run = move || {
            let taken = {
                let s = lock(&state);
                s.docs
                    .get(&uri)
                    .map(|d| (d.clone(), s.host.snapshot(), s.settings.clone()))
            };
            let Some((doc, snap, settings)) = taken else {
                return Ok(None);
            };
            salsa::Cancelled::catch(std::panic::AssertUnwindSafe(|| f(&snap, &doc, &settings)))
                .and_then(|r| r)
                .map(Some)
        };
        match tokio::task::spawn_blocking(run).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(_)) => Err(Error::content_modified()),
            Err(_) => Err(Error::internal_error()),
        }
    }
}

/// What a change of files on disk does to the host: each file's new text (`None`: it is gone
/// or cannot be read, and leaves the analysis).
type DiskChanges = Vec<(PathBuf, Option<String>)>;

/// Reads the changed files that belong to a loaded package and are not open, through the
/// packages' gate (outside the state lock).
fn read_changes(state: &Mutex<State>, changes: Vec<FileEvent>) -> DiskChanges {
    let (gate, wanted) = {
        let s = lock(state);
        let wanted: Vec<(PathBuf, bool)> = changes
            .into_iter()
            .filter_map(|c| Some((disk_path(&c.uri)?, c.typ == FileChangeType::DELETED)))
            // An open document's text is the editor's; a file outside the loaded packages is
            // nobody's dependency.
            .filter(|(p, _)| !s.is_open(p) && s.package_of(p).is_some())
            .collect();
        (s.package_gate(), wanted)
    };
    wanted
        .into_iter()
        .map(|(path, deleted)| {
            let text = (!deleted).then(|| gate.read(&path).ok()).flatten();
            (path, text)
        })
        .collect()
}

/// Applies what [`read_changes`] read; whether anything changed.
fn apply_changes(s: &mut State, changes: DiskChanges) -> bool {
    let mut changed = false;
    for (path, text) in changes {
        if s.is_open(&path) {
            continue; // opened meanwhile: the editor's text wins
        }
        match (text, s.host.file_id(&path)) {
            (Some(t), _) => {
                s.host.set_file(&path, t);
                changed = true;
            }
            (None, Some(id)) => {
                s.host.remove_file(id);
                changed = true;
            }
            (None, None) => {}
        }
    }
    changed
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        #[allow(deprecated)] // root_uri: older clients send only that
        let uris: Vec<Uri> = match &params.workspace_folders {
            Some(folders) if !folders.is_empty() => folders.iter().map(|f| f.uri.clone()).collect(),
            _ => params.root_uri.iter().cloned().collect(),
        };
        let roots: Vec<PathBuf> = uris.iter().filter_map(disk_path).collect();
        let options = params.initialization_options;
        let watch_dynamic = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|d| d.dynamic_registration)
            .unwrap_or(false);
        let document_changes = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.workspace_edit.as_ref())
            .and_then(|e| e.document_changes)
            .unwrap_or(false);
        self.with_state(move |s| {
            s.roots = roots;
            s.watch_dynamic = watch_dynamic;
            s.document_changes = document_changes;
            s.client_settings = options.into_iter().collect();
        })
        .await;
        self.reconfigure().await;
        let kinds = vec![CodeActionKind::QUICKFIX, CodeActionKind::new(FIX_ALL)];
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                text_document_sync: Some(TextDocumentSyncCapability::Options(
                    TextDocumentSyncOptions {
                        open_close: Some(true),
                        change: Some(TextDocumentSyncKind::FULL),
                        ..Default::default()
                    },
                )),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                code_action_provider: Some(CodeActionProviderCapability::Options(
                    CodeActionOptions {
                        code_action_kinds: Some(kinds),
                        ..Default::default()
                    },
                )),
                completion_provider: Some(CompletionOptions {
                    trigger_characters: Some(
                        ["(", ",", "[", " "].iter().map(|s| s.to_string()).collect(),
                    ),
                    ..Default::default()
                }),
                definition_provider: Some(OneOf::Left(true)),
                inlay_hint_provider: Some(OneOf::Left(true)),
                references_provider: Some(OneOf::Left(true)),
                ..Default::default()
            },
            server_info: Some(ServerInfo {
                name: "visa-lsp".to_string(),
                version: Some(env!("CARGO_PKG_VERSION").to_string()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        // Files that are not open are read from disk: ask the client to tell us when they
        // change (a client that cannot be asked still sends what it watches by itself).
        let dynamic = self.with_state(|s| s.watch_dynamic).await.unwrap_or(false);
        if dynamic {
            let options = DidChangeWatchedFilesRegistrationOptions {
                watchers: vec![FileSystemWatcher {
                    glob_pattern: GlobPattern::String("**/*.rs".to_string()),
                    kind: None,
                }],
            };
            let registration = Registration {
                id: "visa-lsp-watch-rs".to_string(),
                method: "workspace/didChangeWatchedFiles".to_string(),
                register_options: serde_json::to_value(options).ok(),
            };
            if let Err(e) = self.client.register_capability(vec![registration]).await {
                self.client
                    .log_message(
                        MessageType::WARNING,
                        format!("visa-lsp: cannot watch files ({e}); closed files are read when a document opens"),
                    )
                    .await;
            }
        }
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        let state = self.state.clone();
        let changed = tokio::task::spawn_blocking(move || {
            let read = read_changes(&state, params.changes);
            apply_changes(&mut lock(&state), read)
        })
        .await;
        // Every open document may use what changed.
        if changed.unwrap_or(false) {
            self.mark_all().await;
        }
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let d = params.text_document;
        // Its package is read once, when it opens (an edit needs no look at the disk).
        self.load_package(&d.uri).await;
        self.update(d.uri, d.version, d.text).await;
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        // Full sync: the last change holds the whole text.
        if let Some(change) = params.content_changes.into_iter().last() {
            let d = params.text_document;
            self.update(d.uri, d.version, change.text).await;
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        let (state, versions, queue) = (
            self.state.clone(),
            self.versions.clone(),
            self.publisher.queue.clone(),
        );
        let key = uri.clone();
        let mates = tokio::task::spawn_blocking(move || {
            let (doc, mates, gate) = {
                let s = &mut *lock(&state);
                let doc = s.docs.remove(&key);
                lock(&versions).remove(&key);
                lock(&queue).forget(&key);
                (doc, s.crate_mates(&key), s.package_gate())
            };
            let doc = doc?;
            // A file of a loaded package stays in its crate, as the disk has it (read outside
            // the lock, through the packages' gate).
            let path = path_of(&key);
            let text = disk_path(&key).and_then(|p| gate.read(&p).ok());
            let s = &mut *lock(&state);
            if s.docs.contains_key(&key) {
                return None; // opened again meanwhile
            }
            match text.filter(|_| s.package_of(&path).is_some()) {
                Some(text) => {
                    s.host.set_file(&path, text);
                }
                None => s.host.remove_file(doc.file),
            }
            Some(mates)
        })
        .await;
        self.publisher.clear(uri).await;
        if let Ok(Some(mates)) = mates {
            self.publisher.mark(mates);
        }
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        self.with_state(move |s| s.client_settings.push(params.settings))
            .await;
        self.reconfigure().await;
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let p = params.text_document_position_params;
        let pos = p.position;
        Ok(self
            .query(&p.text_document.uri, move |snap, doc, _| {
                hover::hover(snap, doc, pos)
            })
            .await?
            .flatten())
    }

    /// Estimated cycles after each engine call and each kernel name, when `inlay-hints` is on.
    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let uri = params.text_document.uri;
        let range = params.range;
        let hints = self
            .query(&uri, move |snap, doc, settings| {
                if !settings.inlay_hints {
                    return Ok(Vec::new());
                }
                let text = &doc.text;
                let (from, to) = (
                    doc.lines.offset(text, range.start),
                    doc.lines.offset(text, range.end),
                );
                Ok(snap
                    .cost_hints(doc.file)?
                    .into_iter()
                    .filter(|h| from <= h.at && h.at <= to)
                    .map(|h| InlayHint {
                        position: doc.lines.position(text, h.at),
                        label: InlayHintLabel::String(if h.kernel {
                            format!("≈ {} cycles in all", h.cycles)
                        } else {
                            format!("≈ {} cycles", h.cycles)
                        }),
                        kind: None,
                        text_edits: None,
                        tooltip: None,
                        padding_left: Some(true),
                        padding_right: None,
                        data: None,
                    })
                    .collect())
            })
            .await?;
        Ok(hints.filter(|h| !h.is_empty()))
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri.clone();
        let style = self
            .with_state(|s| actions::EditStyle {
                document_changes: s.document_changes,
                versions: s.docs.iter().map(|(u, d)| (u.clone(), d.version)).collect(),
            })
            .await
            .unwrap_or_default();
        let fixes = self.fixes.clone();
        let actions = self
            .query(&uri.clone(), move |snap, doc, settings| {
                // This document's edits are placed in the text of the version queried.
                let mut style = style;
                style.versions.insert(uri.clone(), doc.version);
                let diags = snap.diagnostics(doc.file)?;
                let range = doc.lines.span(&doc.text, params.range);
                let under: Vec<_> = diags
                    .iter()
                    .filter(|d| d.span.start <= range.end && range.start <= d.span.end)
                    .cloned()
                    .collect();
                let checked = fix_cache::checked(&fixes, snap, doc.file, under)?;
                Ok(actions::code_actions(
                    &uri, doc, &diags, &checked, &params, settings, &style,
                ))
            })
            .await?;
        Ok(actions.filter(|a| !a.is_empty()))
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let p = params.text_document_position;
        let pos = p.position;
        let items = self
            .query(&p.text_document.uri, move |snap, doc, _| {
                Ok(complete::completions(doc, &*doc.symbols(snap)?, pos))
            })
            .await?;
        Ok(items
            .filter(|i| !i.is_empty())
            .map(CompletionResponse::Array))
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        let p = params.text_document_position_params;
        let uri = p.text_document.uri.clone();
        let pos = p.position;
        let found = self
            .query(&uri.clone(), move |snap, doc, _| {
                Ok(complete::definition(doc, &*doc.symbols(snap)?, pos)
                    .map(|range| GotoDefinitionResponse::Scalar(Location::new(uri, range))))
            })
            .await?;
        Ok(found.flatten())
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let p = params.text_document_position;
        let uri = p.text_document.uri.clone();
        let pos = p.position;
        let with_decl = params.context.include_declaration;
        let found = self
            .query(&uri.clone(), move |snap, doc, _| {
                Ok(
                    complete::references(doc, &*doc.symbols(snap)?, pos, with_decl)
                        .into_iter()
                        .map(|r| Location::new(uri.clone(), r))
                        .collect::<Vec<_>>(),
                )
            })
            .await?;
        Ok(found.filter(|l| !l.is_empty()))
    }
}
