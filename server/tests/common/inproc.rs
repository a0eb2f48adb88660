//! An in-process client: requests go straight to `LspService::call`, and what the server sends
//! the client (diagnostics, log messages) is read from its `ClientSocket`.

use futures::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::sync::mpsc;
use tower::{Service, ServiceExt};
use tower_lsp_server::LspService;
use tower_lsp_server::jsonrpc::Request;
use visa_server::lsp::Backend;

pub struct InProcess {
    service: LspService<Backend>,
    from_server: mpsc::UnboundedReceiver<Value>,
    backlog: Vec<Value>,
    next_id: i64,
}

impl InProcess {
    pub fn new() -> InProcess {
        let (service, mut socket) = visa_server::lsp::service();
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Some(req) = socket.next().await {
                let v = serde_json::to_value(&req).unwrap_or(Value::Null);
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        InProcess {
            service,
            from_server: rx,
            backlog: Vec::new(),
            next_id: 1,
        }
    }

    /// Starts a request or notification; the future resolves to the response (if any).
    pub async fn start(
        &mut self,
        method: &'static str,
        params: Value,
        request: bool,
    ) -> impl Future<Output = Option<Value>> + Send + 'static {
        let mut b = Request::build(method).params(params);
        if request {
            b = b.id(self.next_id);
            self.next_id += 1;
        }
        let ready = self.service.ready().await.expect("service ready");
        let fut = ready.call(b.finish());
        async move {
            fut.await
                .ok()
                .flatten()
                .map(|r| serde_json::to_value(&r).unwrap_or(Value::Null))
        }
    }

    /// A request's whole response object.
    pub async fn request(&mut self, method: &'static str, params: Value) -> Value {
        self.start(method, params, true)
            .await
            .await
            .unwrap_or(Value::Null)
    }

    pub async fn notify(&mut self, method: &'static str, params: Value) {
        self.start(method, params, false).await.await;
    }

    pub async fn initialize(&mut self, options: Value) -> Value {
        let r = self
            .request("initialize", super::initialize_params(options))
            .await;
        self.notify("initialized", json!({})).await;
        r
    }

    /// The next message from the server satisfying `pred`, within 30 s.
    pub async fn wait_for(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.backlog.iter().position(&pred) {
            return self.backlog.remove(i);
        }
        loop {
            match tokio::time::timeout(Duration::from_secs(30), self.from_server.recv()).await {
                Ok(Some(m)) if pred(&m) => return m,
                Ok(Some(m)) => self.backlog.push(m),
                _ => panic!("no expected message; backlog {:?}", self.backlog),
            }
        }
    }

    pub async fn diagnostics(&mut self, uri: &str, version: i32) -> Value {
        let m = self
            .wait_for(|m| {
                m["method"] == "textDocument/publishDiagnostics"
                    && m["params"]["uri"] == uri
                    && m["params"]["version"] == json!(version)
            })
            .await;
        m["params"]["diagnostics"].clone()
    }

    /// The messages that arrive from now on, until none has for `quiet`.
    pub async fn drain_new(&mut self, quiet: Duration) -> Vec<Value> {
        let mut out = Vec::new();
        while let Ok(Some(m)) = tokio::time::timeout(quiet, self.from_server.recv()).await {
            out.push(m);
        }
        out
    }
}
