//! Test helpers: start a server on a loopback port and talk to it over the wire.

use std::time::Duration;

mod otlp;
mod pki;
mod proxy;
mod sdk;
mod ticker;

pub use otlp::{ReceivedSpan, SpanCollector};
pub use pki::{Issued, Pki};
pub use proxy::CuttingProxy;
pub use sdk::{free_port, port_to_serve_later, SdkOptions, SdkServer, PYTHON_VARIABLE};
pub use ticker::{ticker_behind_a_proxy, Ticker, TICKS};

use agentwire_server::agent::ConformanceAgent;
use agentwire_server::{
    App, CardConfig, HttpOptions, PushSettings, RequestHandler, RequestHandlerBuilder, ServeOptions, Server,
    WebhookGuard,
};
use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// How long any single wire interaction in a test may take.
pub const TIMEOUT: Duration = Duration::from_secs(15);

/// A server running on `127.0.0.1:<ephemeral port>`; stopped when dropped.
pub struct TestServer {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// An HTTP client with no default headers.
    pub http: reqwest::Client,
    task: JoinHandle<std::io::Result<()>>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The conformance agent with every feature on, as `agentwire serve --agent conformance` runs it.
pub fn conformance() -> RequestHandlerBuilder {
    let card = ConformanceAgent::card();
    let config = CardConfig {
        extended_card: Some(ConformanceAgent::extended_card(&card)),
        extended_card_enabled: true,
        card,
        ..CardConfig::default()
    };
    let push = PushSettings {
        guard: WebhookGuard { allow_private: true },
        initial_backoff: Duration::from_millis(50),
        ..PushSettings::default()
    };
    RequestHandler::builder(ConformanceAgent::new()).card(config).push_settings(push)
}

/// A signal a test and the agent it serves share: [`Gate::wait`] returns once [`Gate::open`] has
/// been called, however the two calls are ordered.
#[derive(Debug, Clone)]
pub struct Gate(std::sync::Arc<tokio::sync::watch::Sender<bool>>);

impl Default for Gate {
    fn default() -> Self {
        Self(std::sync::Arc::new(tokio::sync::watch::Sender::new(false)))
    }
}

impl Gate {
    /// Lets every waiter through, now and later.
    pub fn open(&self) {
        self.0.send_replace(true);
    }

    /// Waits until the gate is open; fails the test after [`TIMEOUT`].
    pub async fn wait(&self) {
        let mut open = self.0.subscribe();
        tokio::time::timeout(TIMEOUT, open.wait_for(|open| *open)).await.expect("the gate should open").ok();
    }
}

/// An agent that asks for credentials (AUTH_REQUIRED), waits until its [`Gate`] opens, as when
/// credentials arrive out of band, then completes.
pub struct NeedsAuth(pub Gate);

impl agentwire_server::agent::AgentExecutor for NeedsAuth {
    fn execute(&self, ctx: agentwire_server::agent::ExecutionContext) -> agentwire_server::agent::EventStream {
        let credentials_arrived = self.0.clone();
        ctx.run(|_, updater| async move {
            updater.auth_required("sign in at https://auth.example").await?;
            credentials_arrived.wait().await;
            updater.complete_with("signed in").await
        })
    }
}

/// An agent that works until its [`Gate`] opens, then completes, and counts the executions it
/// starts: a test tells by it whether a send ran the agent.
#[derive(Clone, Default)]
pub struct Counted {
    /// Opened, the executions complete.
    pub gate: Gate,
    executions: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Counted {
    /// How many executions the agent started.
    pub fn executions(&self) -> usize {
        self.executions.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl agentwire_server::agent::AgentExecutor for Counted {
    fn execute(&self, ctx: agentwire_server::agent::ExecutionContext) -> agentwire_server::agent::EventStream {
        self.executions.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let gate = self.gate.clone();
        ctx.run(|_, updater| async move {
            updater.working().await?;
            gate.wait().await;
            updater.complete_with("done").await
        })
    }
}

/// An agent that works until its task is canceled, then says so.
pub struct Cooperative;

impl agentwire_server::agent::AgentExecutor for Cooperative {
    fn execute(&self, ctx: agentwire_server::agent::ExecutionContext) -> agentwire_server::agent::EventStream {
        ctx.run(|ctx, updater| async move {
            updater.working().await?;
            ctx.cancellation().cancelled().await;
            updater.canceled().await
        })
    }
}

/// A user message in the v1.0 JSON shape.
pub fn user_message(message_id: &str, text: &str) -> Value {
    json!({"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]})
}

impl TestServer {
    /// Binds a loopback port, then serves `handler` on it, as `agentwire serve` does.
    pub async fn start(builder: RequestHandlerBuilder) -> Self {
        Self::start_app(builder, App::new()).await
    }

    /// Serves `handler` with `app` in front of it (authentication, quotas, layers).
    pub async fn start_app(builder: RequestHandlerBuilder, app: App) -> Self {
        Self::start_app_with(builder, app, HttpOptions::default(), ServeOptions::default()).await
    }

    /// [`TestServer::start`] with HTTP and listener options of the test's own.
    pub async fn start_with(builder: RequestHandlerBuilder, http: HttpOptions, options: ServeOptions) -> Self {
        Self::start_app_with(builder, App::new(), http, options).await
    }

    /// Serves `handler` with `app` in front of it, and HTTP and listener options of the test's own.
    pub async fn start_app_with(
        builder: RequestHandlerBuilder,
        app: App,
        http: HttpOptions,
        options: ServeOptions,
    ) -> Self {
        let serve = |base: &str| app.router(builder.card_url(base).build(), http);
        Self::start_router_with(serve, options).await
    }

    /// Serves the router `make` builds for the server's base URL.
    pub async fn start_router(make: impl FnOnce(&str) -> axum::Router) -> Self {
        Self::start_router_with(make, ServeOptions::default()).await
    }

    async fn start_router_with(make: impl FnOnce(&str) -> axum::Router, options: ServeOptions) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
        let scheme = if options.tls.is_some() { "https" } else { "http" };
        let base = format!("{scheme}://{}", listener.local_addr().expect("local address"));
        let router = make(&base);
        let options = ServeOptions { drain: Duration::ZERO, ..options };
        let task = tokio::spawn(Server::builder(listener).options(options).serve(router, std::future::pending()));
        Self { base, http: reqwest::Client::builder().timeout(TIMEOUT).build().expect("client"), task }
    }

    /// A JSON-RPC call with `A2A-Version: 1.0`; returns the whole response envelope.
    pub async fn rpc(&self, method: &str, params: Value) -> Value {
        self.rpc_with_headers(method, params, &[("A2A-Version", "1.0")]).await
    }

    /// A JSON-RPC call with exactly these extra headers; returns the whole response envelope.
    pub async fn rpc_with_headers(&self, method: &str, params: Value, headers: &[(&str, &str)]) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let request = headers
            .iter()
            .fold(self.http.post(format!("{}/", self.base)), |request, (name, value)| request.header(*name, *value));
        let response = request.json(&body).send().await.expect("JSON-RPC request");
        response.json().await.expect("JSON-RPC response body")
    }

    /// The JSON-RPC `result`, failing the test on an error response.
    pub async fn rpc_ok(&self, method: &str, params: Value) -> Value {
        let envelope = self.rpc(method, params).await;
        assert!(envelope.get("error").is_none(), "{method} failed: {envelope}");
        envelope["result"].clone()
    }

    /// The JSON-RPC error code of a call that must fail.
    pub async fn rpc_error_code(&self, method: &str, params: Value) -> i64 {
        let envelope = self.rpc(method, params).await;
        envelope["error"]["code"].as_i64().unwrap_or_else(|| panic!("{method} should fail: {envelope}"))
    }

    /// A REST request with `A2A-Version: 1.0`; returns the status and the JSON body (`null` if empty).
    pub async fn rest(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut request = self.http.request(method, format!("{}{path}", self.base)).header("A2A-Version", "1.0");
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("REST request");
        let status = response.status().as_u16();
        let bytes = response.bytes().await.expect("REST body");
        let value = if bytes.is_empty() { Value::Null } else { serde_json::from_slice(&bytes).expect("JSON body") };
        (status, value)
    }

    /// Sends a streaming request and reads SSE `data:` payloads until the server closes the stream.
    pub async fn sse(&self, request: reqwest::RequestBuilder) -> Vec<Value> {
        let response = request.header("A2A-Version", "1.0").send().await.expect("stream request");
        let content_type = response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("");
        assert!(content_type.starts_with("text/event-stream"), "not an event stream: {content_type}");
        read_sse(response, usize::MAX).await
    }

    /// A JSON-RPC streaming call, read to its end.
    pub async fn rpc_stream(&self, method: &str, params: Value) -> Vec<Value> {
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
        self.sse(self.http.post(format!("{}/", self.base)).json(&body)).await
    }

    /// Opens a JSON-RPC streaming call, to be read one event at a time.
    pub async fn open_rpc_stream(&self, method: &str, params: Value) -> SseReader {
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
        let request = self.http.post(format!("{}/", self.base)).header("A2A-Version", "1.0").json(&body);
        let response = request.send().await.expect("stream request");
        let content_type = response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("");
        assert!(content_type.starts_with("text/event-stream"), "not an event stream: {content_type}");
        SseReader::new(response)
    }
}

/// A loopback port that takes every connection and never answers, as a hung agent does; the
/// connections close when it is dropped.
pub struct SilentPort {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    holder: JoinHandle<()>,
}

impl SilentPort {
    /// Listens on an ephemeral port.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
        let url = format!("http://{}", listener.local_addr().expect("a bound address"));
        let holder = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((connection, _)) = listener.accept().await {
                held.push(connection);
            }
        });
        Self { url, holder }
    }
}

impl Drop for SilentPort {
    fn drop(&mut self) {
        self.holder.abort();
    }
}

/// Reads SSE `data:` payloads (at most `limit`) until the stream ends.
pub async fn read_sse(response: reqwest::Response, limit: usize) -> Vec<Value> {
    let mut stream = SseReader::new(response);
    let mut events = Vec::new();
    while events.len() < limit {
        match stream.next_event().await {
            Some(event) => events.push(event.data),
            None => break,
        }
    }
    events
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    /// Its `id:` line, if it had one.
    pub id: Option<String>,
    /// Its `data:` payload.
    pub data: Value,
}

/// What a stream carries: events, and comments (keep-alives) between them.
#[derive(Debug, Clone, PartialEq)]
pub enum SseItem {
    /// An event.
    Event(SseEvent),
    /// A comment line.
    Comment,
}

/// Reads a `text/event-stream` response one event at a time.
pub struct SseReader {
    body: std::pin::Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>,
    buffer: String,
}

impl SseReader {
    /// Reads `response`'s body.
    pub fn new(response: reqwest::Response) -> Self {
        Self { body: Box::pin(response.bytes_stream()), buffer: String::new() }
    }

    /// The next event, skipping comments, or `None` once the server has closed the stream.
    pub async fn next_event(&mut self) -> Option<SseEvent> {
        loop {
            match self.next_item().await? {
                SseItem::Event(event) => return Some(event),
                SseItem::Comment => continue,
            }
        }
    }

    /// The next event or comment, or `None` once the server has closed the stream. Fails the
    /// test if nothing arrives within [`TIMEOUT`].
    pub async fn next_item(&mut self) -> Option<SseItem> {
        loop {
            if let Some(frame) = self.take_frame() {
                let mut event = SseEvent { id: None, data: Value::Null };
                let mut has_data = false;
                for line in frame.lines() {
                    if let Some(id) = line.strip_prefix("id:") {
                        event.id = Some(id.trim().to_owned());
                    } else if let Some(data) = line.strip_prefix("data:") {
                        event.data = serde_json::from_str(data.trim()).expect("SSE data is JSON");
                        has_data = true;
                    }
                }
                if has_data {
                    return Some(SseItem::Event(event));
                }
                if frame.lines().any(|line| line.starts_with(':')) {
                    return Some(SseItem::Comment);
                }
                continue;
            }
            let chunk = tokio::time::timeout(TIMEOUT, self.body.next()).await.expect("an SSE event in time")?;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk.expect("stream chunk")));
        }
    }

    fn take_frame(&mut self) -> Option<String> {
        let end = self.buffer.find("\n\n")?;
        Some(self.buffer.drain(..end + 2).collect())
    }
}
