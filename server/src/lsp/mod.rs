//! `visa-lsp`: the language server over the engine (tower-lsp-server on tokio).
//!
//! Concurrency (the handlers run up to four at a time, so notifications may be handled out of
//! order):
//! - full document sync; each document keeps its version, and a change whose version is not
//!   newer than the stored one is dropped;
//! - the engine's host sits behind one `std::sync::Mutex`, held only to set an input or clone
//!   a snapshot, never across an `.await`;
//! - every query runs on a snapshot inside `spawn_blocking`; an edit cancels it, and the
//!   request answers `ContentModified` (a publish is dropped: the newer version publishes);
//! - publishing goes through one async lock and re-checks, under it, that the version is still
//!   the document's latest, so a slow analysis of an old version never overwrites a newer one;
//! - snapshots are taken on the blocking thread that uses them, never held by an async task
//!   (setting an input waits for every other handle to drop).
//!
//! Why tower-lsp-server rather than the synchronous `lsp-server`: with the rules above, the
//! out-of-order handling it allows is harmless (tests: a flood of edits interleaved with
//! hovers ends with the last version's diagnostics, no deadlock). Its one weakness, ending the
//! session at the first undecodable message, is covered by [`framing`].

pub mod actions;
pub mod complete;
pub mod config;
pub mod convert;
pub mod diagnostics;
pub mod engine;
pub mod framing;
pub mod hover;

use config::Settings;
use convert::Lines;
use engine::{Cancellable, FileId, Host, Package, Snapshot};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, ClientSocket, LanguageServer, LspService, Server};

/// One open document at one version.
#[derive(Clone)]
pub struct Doc {
    pub version: i32,
    pub text: Arc<str>,
    pub lines: Arc<Lines>,
    pub file: FileId,
}

#[derive(Default)]
struct State {
    host: Host,
    docs: HashMap<Uri, Doc>,
    settings: Settings,
    root: Option<PathBuf>,
    /// What the client sent (`initializationOptions`, then each `didChangeConfiguration`).
    client_settings: Vec<Value>,
    /// The Cargo packages of the open documents, read from disk when their first document
    /// opened: their other files are analysed as the disk has them (and followed through
    /// `workspace/didChangeWatchedFiles`), so names resolve across the crate.
    packages: Vec<Package>,
    /// Whether the client may be asked to watch files.
    watch_dynamic: bool,
}

impl State {
    fn package_of(&self, path: &std::path::Path) -> Option<&Package> {
        self.packages
            .iter()
            .filter(|p| p.contains(path))
            .max_by_key(|p| p.dir.components().count())
    }

    fn is_open(&self, path: &std::path::Path) -> bool {
        self.docs.keys().any(|u| path_of(u) == path)
    }
}

pub struct Backend {
    client: Client,
    state: Arc<Mutex<State>>,
    /// The latest version of every open document. Its own lock (taken after `state`'s, never
    /// before) so the async side can check versions without waiting for an input to be set.
    versions: Arc<Mutex<HashMap<Uri, i32>>>,
    publish: tokio::sync::Mutex<()>,
}

/// The service, for driving in-process (tests) or over a transport.
pub fn service() -> (LspService<Backend>, ClientSocket) {
    LspService::new(|client| Backend {
        client,
        state: Arc::new(Mutex::new(State::default())),
        versions: Arc::new(Mutex::new(HashMap::new())),
        publish: tokio::sync::Mutex::new(()),
    })
}

/// Serves LSP over stdin/stdout until `exit`, with malformed input answered rather than fatal
/// (see [`framing`]).
pub async fn run_stdio() {
    let (service, socket) = service();
    let (to_server, from_input) = tokio::sync::mpsc::channel(framing::INPUT_FRAMES);
    let (out, to_output) = std::sync::mpsc::channel();
    let replies = out.clone();
    std::thread::spawn(move || framing::filter_input(std::io::stdin().lock(), to_server, replies));
    let output = std::thread::spawn(move || framing::merge_output(to_output, std::io::stdout()));
    Server::new(
        framing::ChannelReader::new(from_input),
        framing::ChannelWriter::new(out),
        socket,
    )
    .serve(service)
    .await;
    // The writer is dropped with the server: the output thread flushes and ends.
    let _ = tokio::task::spawn_blocking(move || output.join()).await;
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
    Ok(Some(
        diags
            .iter()
            .map(|d| diagnostics::to_lsp(d, uri, doc, &settings))
            .collect(),
    ))
}

/// The document's path for the engine (its file path, or the URI itself for unsaved buffers).
fn path_of(uri: &Uri) -> PathBuf {
    uri.to_file_path()
        .map(|p| p.into_owned())
        .unwrap_or_else(|| PathBuf::from(uri.as_str()))
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

    /// Stores a new version of a document and publishes its diagnostics.
    async fn update(&self, uri: Uri, version: i32, text: String) {
        let key = uri.clone();
        let versions = self.versions.clone();
        let state = self.state.clone();
        let target = uri.clone();
        // One blocking task stores the text and analyses it (the lock is let go in between).
        let stored = tokio::task::spawn_blocking(move || {
            let doc = {
                let s = &mut *lock(&state);
                let path = path_of(&key);
                if let Some(doc) = s.docs.get(&key)
                    && doc.version >= version
                {
                    return None; // stale or duplicate: the stored text is as new
                }
                if s.package_of(&path).is_none() {
                    // Read under the lock, once per package: a crate is never analysed half
                    // loaded.
                    if let Some(pkg) = engine::project::discover(&path) {
                        let open: Vec<PathBuf> = s.docs.keys().map(path_of).collect();
                        let files = engine::project::load(&pkg)
                            .into_iter()
                            .filter(|(p, _)| !open.contains(p));
                        s.host.set_files(files);
                        s.packages.push(pkg);
                        let packages = s.packages.clone();
                        s.host.set_packages(packages);
                    }
                }
                let text: Arc<str> = Arc::from(text);
                let file = s.host.set_file(&path, text.to_string());
                let doc = Doc {
                    version,
                    lines: Arc::new(Lines::default()),
                    text,
                    file,
                };
                s.docs.insert(key.clone(), doc.clone());
                lock(&versions).insert(key, version);
                doc
            };
            let computed = diagnostics_of(&state, &versions, &target, &doc);
            Some((doc, computed))
        })
        .await;
        match stored {
            Ok(Some((doc, computed))) => {
                self.send_diagnostics(uri.clone(), doc.version, Ok(computed))
                    .await;
                self.publish_crate_mates(&uri).await;
            }
            Ok(None) => {}
            Err(e) => self.send_diagnostics(uri, version, Err(e)).await,
        }
    }

    /// Re-publishes the other open documents of `uri`'s package: they may use what it
    /// declares (unchanged analyses come from salsa's memo, so this is cheap).
    async fn publish_crate_mates(&self, uri: &Uri) {
        let key = uri.clone();
        let mates = self
            .with_state(move |s| {
                let path = path_of(&key);
                let pkg = s.package_of(&path)?.dir.clone();
                Some(
                    s.docs
                        .iter()
                        .filter(|(u, _)| **u != key && path_of(u).starts_with(&pkg))
                        .map(|(u, d)| (u.clone(), d.clone()))
                        .collect::<Vec<_>>(),
                )
            })
            .await
            .flatten()
            .unwrap_or_default();
        for (uri, doc) in mates {
            self.publish(uri, doc).await;
        }
    }

    fn is_latest(&self, uri: &Uri, version: i32) -> bool {
        lock(&self.versions).get(uri) == Some(&version)
    }

    /// Analyses one version and publishes its diagnostics unless a newer version exists.
    async fn publish(&self, uri: Uri, doc: Doc) {
        let target = uri.clone();
        let version = doc.version;
        let state = self.state.clone();
        let versions = self.versions.clone();
        let computed =
            tokio::task::spawn_blocking(move || diagnostics_of(&state, &versions, &target, &doc))
                .await;
        self.send_diagnostics(uri, version, computed).await;
    }

    /// Publishes what [`diagnostics_of`] computed for `version` of `uri`, unless a newer version
    /// exists; a failed analysis is logged.
    async fn send_diagnostics(
        &self,
        uri: Uri,
        version: i32,
        computed: std::result::Result<Computed, tokio::task::JoinError>,
    ) {
        let diags = match computed {
            Ok(Ok(Some(d))) => d,
            // Superseded or cancelled by an edit: the newer version publishes.
            Ok(Ok(None) | Err(_)) => return,
            Err(e) => {
                self.client
                    .log_message(
                        MessageType::ERROR,
                        format!("visa-lsp: analysis failed: {e}"),
                    )
                    .await;
                return;
            }
        };
        let _order = self.publish.lock().await;
        if self.is_latest(&uri, version) {
            self.client
                .publish_diagnostics(uri, diags, Some(version))
                .await;
        }
    }

    /// Re-reads the settings (file, then the client's) and re-publishes every open document.
    async fn reconfigure(&self) {
        let done = self
            .with_state(|s| {
                let (mut settings, mut problems) = Settings::for_workspace(s.root.as_deref());
                for v in &s.client_settings {
                    problems.extend(settings.merge(v));
                }
                s.host.set_config(settings.engine());
                s.settings = settings;
                let docs: Vec<_> = s.docs.iter().map(|(u, d)| (u.clone(), d.clone())).collect();
                (problems, docs)
            })
            .await;
        let Some((problems, docs)) = done else {
            return;
        };
        for p in problems {
            self.client.log_message(MessageType::WARNING, p).await;
        }
        for (uri, doc) in docs {
            self.publish(uri, doc).await;
        }
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

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        #[allow(deprecated)] // root_uri: older clients send only that
        let root = params
            .workspace_folders
            .as_ref()
            .and_then(|f| f.first())
            .map(|f| f.uri.clone())
            .or(params.root_uri.clone())
            .and_then(|u| u.to_file_path().map(|p| p.into_owned()));
        let options = params.initialization_options;
        let watch_dynamic = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|d| d.dynamic_registration)
            .unwrap_or(false);
        self.with_state(move |s| {
            s.root = root;
            s.watch_dynamic = watch_dynamic;
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
        let docs = self
            .with_state(move |s| {
                let mut changed = false;
                for change in params.changes {
                    let path = path_of(&change.uri);
                    // An open document's text is the editor's; a file outside the loaded
                    // packages is nobody's dependency.
                    if s.is_open(&path) || s.package_of(&path).is_none() {
                        continue;
                    }
                    let text = (change.typ != FileChangeType::DELETED)
                        .then(|| std::fs::read_to_string(&path).ok())
                        .flatten();
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
                changed.then(|| {
                    s.docs
                        .iter()
                        .map(|(u, d)| (u.clone(), d.clone()))
                        .collect::<Vec<_>>()
                })
            })
            .await
            .flatten();
        // Every open document may use what changed.
        for (uri, doc) in docs.unwrap_or_default() {
            self.publish(uri, doc).await;
        }
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let d = params.text_document;
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
        let key = uri.clone();
        let versions = self.versions.clone();
        self.with_state(move |s| {
            if let Some(doc) = s.docs.remove(&key) {
                let path = path_of(&key);
                // A file of a loaded package stays in its crate, as the disk has it.
                match s
                    .package_of(&path)
                    .and_then(|_| std::fs::read_to_string(&path).ok())
                {
                    Some(text) => {
                        s.host.set_file(&path, text);
                    }
                    None => s.host.remove_file(doc.file),
                }
            }
            lock(&versions).remove(&key);
        })
        .await;
        let _order = self.publish.lock().await;
        if !lock(&self.versions).contains_key(&uri) {
            self.client.publish_diagnostics(uri, Vec::new(), None).await;
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
        let actions = self
            .query(&uri.clone(), move |snap, doc, settings| {
                let diags = snap.diagnostics(doc.file)?;
                Ok(actions::code_actions(&uri, doc, &diags, &params, settings))
            })
            .await?;
        Ok(actions.filter(|a| !a.is_empty()))
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let p = params.text_document_position;
        let pos = p.position;
        let items = self
            .query(&p.text_document.uri, move |_, doc, _| {
                Ok(complete::completions(doc, pos))
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
            .query(&uri.clone(), move |_, doc, _| {
                Ok(complete::definition(doc, pos)
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
            .query(&uri.clone(), move |_, doc, _| {
                Ok(complete::references(doc, pos, with_decl)
                    .into_iter()
                    .map(|r| Location::new(uri.clone(), r))
                    .collect::<Vec<_>>())
            })
            .await?;
        Ok(found.filter(|l| !l.is_empty()))
    }
}
