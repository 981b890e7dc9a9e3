//! A hostile MCP client at `/mcp` (`serve --mcp`), speaking MCP 2025-11-25's streamable HTTP by
//! hand: it floods sessions, sends a page's `Origin`, uses another caller's session id, cancels
//! calls before the server has seen them, and never answers the question the agent asks. Each
//! case is bounded: opening a session is charged to the caller's rate and capped, a foreign
//! origin is refused, a session serves the principal that opened it, an early cancel still
//! cancels the A2A task, and an unanswered question ends its call.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::time::Instant;

use crate::common::{Server, TempDir};

const VERSION: &str = "2025-11-25";

/// One MCP caller: its token (if any) and `Origin` (if any).
#[derive(Clone)]
struct Client {
    http: reqwest::Client,
    url: String,
    token: Option<String>,
    origin: Option<String>,
}

impl Client {
    fn new(base: &str, token: Option<&str>) -> Self {
        let http = reqwest::Client::builder().timeout(Duration::from_secs(20)).build().unwrap();
        Self { http, url: format!("{base}/mcp"), token: token.map(str::to_owned), origin: None }
    }

    fn with_origin(&self, origin: &str) -> Self {
        Self { origin: Some(origin.to_owned()), ..self.clone() }
    }

    fn request(&self, method: reqwest::Method, session: Option<&str>) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .request(method, &self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json");
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(origin) = &self.origin {
            request = request.header("origin", origin);
        }
        if let Some(session) = session {
            request = request.header("mcp-session-id", session).header("mcp-protocol-version", VERSION);
        }
        request
    }

    /// `body` posted in `session`: the response, to read as it comes.
    async fn post(&self, session: Option<&str>, body: &Value) -> reqwest::Response {
        self.request(reqwest::Method::POST, session).body(body.to_string()).send().await.expect("the server answers")
    }

    /// `initialize` with `capabilities`: the status, and the session id when one was opened.
    async fn initialize_with(&self, capabilities: Value) -> (u16, Option<String>, String) {
        let params = json!({"protocolVersion": VERSION, "capabilities": capabilities, "clientInfo": {"name": "hostile", "version": "1"}});
        let response =
            self.post(None, &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})).await;
        let status = response.status().as_u16();
        let session = response.headers().get("mcp-session-id").map(|id| id.to_str().unwrap().to_owned());
        let body = response.text().await.unwrap_or_default();
        if let Some(session) = &session {
            let initialized =
                self.post(Some(session), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
            assert_eq!(initialized.status(), 202);
        }
        (status, session, body)
    }

    async fn initialize(&self) -> (u16, Option<String>, String) {
        self.initialize_with(json!({})).await
    }

    /// Opens a session, which must be served.
    async fn open(&self) -> String {
        let (status, session, body) = self.initialize().await;
        assert_eq!(status, 200, "{body}");
        session.expect("a session id")
    }

    /// The HTTP status of `tools/list` in `session`.
    async fn list_status(&self, session: &str) -> u16 {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
        let response = self.post(Some(session), &body).await;
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        assert!(status != 200 || text.contains("send_message"), "{text}");
        status
    }
}

/// The states of the tasks the server holds, read over A2A.
async fn task_states(base: &str) -> Vec<String> {
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"pageSize": 100, "historyLength": 0}});
    let request = reqwest::Client::new().post(format!("{base}/")).header("A2A-Version", "1.0").json(&body);
    let listed: Value = request.send().await.unwrap().json().await.unwrap();
    let tasks = listed["result"]["tasks"].as_array().cloned().unwrap_or_default();
    tasks.iter().map(|task| task["status"]["state"].as_str().unwrap_or_default().to_owned()).collect()
}

/// 2,000 `initialize` from one principal under `--rate-limit 5 --rate-burst 10`: past the burst,
/// opening a session is refused with 429 as any request over the rate, and the server's memory
/// does not follow the attack (before, all 2,000 were opened: +155 MB).
#[tokio::test]
async fn a_session_flood_is_charged_to_the_callers_rate() {
    let dir = TempDir::new("hostile-mcp-flood");
    let args = ["--store", "memory", "--mcp", "--auth", "bearer:alice=TA", "--rate-limit", "5", "--rate-burst", "10"];
    let server = Server::start(&dir.0, &args).await;
    let alice = Client::new(&server.base, Some("TA"));
    let before = server.rss_kib();
    let started = Instant::now();
    let workers: Vec<_> = (0..8)
        .map(|_| {
            let alice = alice.clone();
            tokio::spawn(async move {
                let (mut opened, mut refused) = (0_u32, 0_u32);
                for _ in 0..250 {
                    match alice.initialize().await {
                        (200, Some(_), _) => opened += 1,
                        (429, None, body) => {
                            // Over the rate; on a slow run, at the per-caller cap (50) first.
                            assert!(body.contains("requests per second") || body.contains("MCP sessions"), "{body}");
                            refused += 1;
                        }
                        (status, _, body) => panic!("initialize answered {status}: {body}"),
                    }
                }
                (opened, refused)
            })
        })
        .collect();
    let (mut opened, mut refused) = (0, 0);
    for worker in workers {
        let (o, r) = worker.await.unwrap();
        opened += o;
        refused += r;
    }
    let took = started.elapsed().as_secs_f64();
    let grown_mib = server.peak_rss_kib().saturating_sub(before) / 1024;
    eprintln!("2,000 initialize in {took:.1} s: {opened} opened, {refused} refused; peak RSS +{grown_mib} MiB");
    assert!(f64::from(opened) <= 10.0 + 5.0 * took + 10.0, "{opened} sessions opened in {took:.1} s");
    assert!(refused >= 1_800, "only {refused} of 2,000 refused");
    assert!(grown_mib < 80, "the server grew by {grown_mib} MiB");
}

/// A caller holds at most `--mcp-max-sessions-per-caller` sessions and the server at most
/// `--mcp-max-sessions`: past them `initialize` is refused with 429 and a message that says
/// which; a session ended (DELETE) or idle past `--mcp-session-idle` gives its place back.
#[tokio::test]
async fn sessions_are_capped_per_caller_and_in_all() {
    let dir = TempDir::new("hostile-mcp-cap");
    let auth = "bearer:alice=TA,bob=TB,carol=TC";
    let args = [
        "--store",
        "memory",
        "--mcp",
        "--auth",
        auth,
        "--mcp-max-sessions-per-caller",
        "3",
        "--mcp-max-sessions",
        "5",
        "--mcp-session-idle",
        "10s",
    ];
    let server = Server::start(&dir.0, &args).await;
    let (alice, bob, carol) = (
        Client::new(&server.base, Some("TA")),
        Client::new(&server.base, Some("TB")),
        Client::new(&server.base, Some("TC")),
    );
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(alice.open().await);
    }
    let (status, session, body) = alice.initialize().await;
    assert_eq!((status, session), (429, None), "{body}");
    assert!(body.contains("at most 3 MCP sessions"), "{body}");

    // Ending one gives its place back.
    let ended = alice.request(reqwest::Method::DELETE, Some(&held[0])).send().await.unwrap();
    assert!(ended.status().is_success(), "{}", ended.status());
    assert_eq!(alice.list_status(&held[0]).await, 404);
    held[0] = alice.open().await;

    bob.open().await;
    let bobs = bob.open().await;
    let (status, _, body) = carol.initialize().await;
    assert_eq!(status, 429, "{body}");
    assert!(body.contains("most MCP sessions (5)"), "{body}");

    // A session in use stays; the idle ones close, and their places are given back.
    let deadline = Instant::now() + Duration::from_secs(40);
    let carols = loop {
        assert_eq!(bob.list_status(&bobs).await, 200, "a session in use stays open");
        match carol.initialize().await {
            (200, Some(session), _) => break session,
            (429, None, _) => {}
            (status, _, body) => panic!("initialize answered {status}: {body}"),
        }
        assert!(Instant::now() < deadline, "no session was closed for idleness");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(carol.list_status(&carols).await, 200);
    assert_eq!(alice.list_status(&held[1]).await, 404, "an idle session is gone");
}

/// MCP's transport says a server must check `Origin`: a page elsewhere is refused with 403
/// (before, `https://evil.example` and `null` were served); loopback pages, the public URL and
/// the `--cors-origin` the operator names are served.
#[tokio::test]
async fn a_foreign_origin_is_refused() {
    let dir = TempDir::new("hostile-mcp-origin");
    let args =
        ["--store", "memory", "--mcp", "--public-url", "http://127.0.0.1:9", "--cors-origin", "https://app.example"];
    let server = Server::start(&dir.0, &args).await;
    let client = Client::new(&server.base, None);
    let session = client.open().await;
    for origin in ["https://evil.example", "null", "http://localhost.evil.example", "https://app.example:8443"] {
        let page = client.with_origin(origin);
        let (status, session_opened, body) = page.initialize().await;
        assert_eq!((status, session_opened), (403, None), "Origin {origin}: {body}");
        assert_eq!(page.list_status(&session).await, 403, "Origin {origin} in a session");
    }
    let port = server.base.rsplit_once(':').unwrap().1;
    for origin in [format!("http://127.0.0.1:{port}"), "http://localhost:3000".into(), "https://app.example".into()] {
        let page = client.with_origin(&origin);
        assert_eq!(page.initialize().await.0, 200, "Origin {origin}");
        assert_eq!(page.list_status(&session).await, 200, "Origin {origin} in a session");
    }
}

/// A session serves the principal that opened it: bob's token with alice's session id is
/// answered as an unknown session (404), and cannot end it (before, bob was served in it).
#[tokio::test]
async fn a_stolen_session_id_is_not_served() {
    let dir = TempDir::new("hostile-mcp-steal");
    let args = ["--store", "memory", "--mcp", "--auth", "bearer:alice=TA,bob=TB"];
    let server = Server::start(&dir.0, &args).await;
    let (alice, bob) = (Client::new(&server.base, Some("TA")), Client::new(&server.base, Some("TB")));
    let session = alice.open().await;
    assert_eq!(bob.list_status(&session).await, 404);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "send_message", "arguments": {"message": "hi"}}});
    assert_eq!(bob.post(Some(&session), &call).await.status(), 404);
    let ended = bob.request(reqwest::Method::DELETE, Some(&session)).send().await.unwrap();
    assert_eq!(ended.status(), 404);
    assert_eq!(alice.list_status(&session).await, 200, "alice's session goes on");
}

/// `notifications/cancelled` sent before, with, or just after its `tools/call` (the two are
/// separate HTTP requests, so the server may see the cancel first): every A2A task the calls
/// made ends CANCELED; none is left WORKING (before, 5 of 60 were).
#[tokio::test]
async fn early_cancels_leave_no_task_working() {
    let dir = TempDir::new("hostile-mcp-cancel");
    let server = Server::start(&dir.0, &["--agent", "conformance", "--store", "memory", "--mcp"]).await;
    let client = Client::new(&server.base, None);
    let session = client.open().await;
    let mut calls = Vec::new();
    for n in 0..30_i64 {
        let id = 100 + n;
        let (client, session) = (client.clone(), session.clone());
        // Cancels up to 50 ms before their call, with it, and up to 100 ms after.
        let cancel_after_ms = (n % 4) * 50 - 50;
        calls.push(tokio::spawn(async move {
            let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "send_message", "arguments": {"message": "tck-cancel"}}});
            let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id, "reason": "hostile"}});
            let canceling = async {
                tokio::time::sleep(Duration::from_millis(cancel_after_ms.max(0) as u64)).await;
                client.post(Some(&session), &cancel).await.status().as_u16()
            };
            let calling = async {
                tokio::time::sleep(Duration::from_millis((-cancel_after_ms).max(0) as u64)).await;
                // The answer to a canceled call is not read (MCP: the client ignores it).
                let _ = tokio::time::timeout(Duration::from_secs(5), client.post(Some(&session), &call)).await;
            };
            let (canceled, ()) = tokio::join!(canceling, calling);
            assert_eq!(canceled, 202);
        }));
    }
    for call in calls {
        call.await.unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let states = task_states(&server.base).await;
        if !states.iter().any(|state| state == "TASK_STATE_WORKING" || state == "TASK_STATE_SUBMITTED") {
            assert!(states.iter().all(|state| state == "TASK_STATE_CANCELED"), "{states:?}");
            eprintln!("{} tasks made by 30 canceled calls, all canceled", states.len());
            break;
        }
        assert!(Instant::now() < deadline, "tasks left running: {states:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A client that declared elicitation and never answers the agent's question: its call ends
/// within `--mcp-elicitation-timeout`, with an error result that says so, and the task waits
/// for input (before, the call was held for as long as the client cared to hold it).
#[tokio::test]
async fn an_unanswered_question_ends_its_call_in_time() {
    let dir = TempDir::new("hostile-mcp-elicit");
    let args = ["--agent", "conformance", "--store", "memory", "--mcp", "--mcp-elicitation-timeout", "2s"];
    let server = Server::start(&dir.0, &args).await;
    let client = Client::new(&server.base, None);
    let (status, session, body) = client.initialize_with(json!({"elicitation": {}})).await;
    assert_eq!(status, 200, "{body}");
    let session = session.unwrap();
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "send_message", "arguments": {"message": "tck-multi-turn"}}});
    let started = Instant::now();
    let mut response = client.post(Some(&session), &call).await;
    assert_eq!(response.status(), 200);
    let (mut seen, mut asked, mut answer) = (String::new(), false, None);
    let deadline = started + Duration::from_secs(15);
    while answer.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        let chunk = tokio::time::timeout(left, response.chunk()).await;
        let Ok(Ok(Some(chunk))) = chunk else { panic!("the call was held past its bound; it sent: {seen}") };
        seen.push_str(&String::from_utf8_lossy(&chunk));
        for message in seen.lines().filter_map(|line| line.strip_prefix("data:")) {
            let Ok(message) = serde_json::from_str::<Value>(message.trim()) else { continue };
            asked |= message["method"] == "elicitation/create";
            if message["id"] == 9 {
                answer = Some(message);
            }
        }
    }
    let took = started.elapsed();
    let answer = answer.unwrap();
    assert!(asked, "the question was put to the client: {seen}");
    assert!(took < Duration::from_secs(10), "the call ended after {took:?}");
    let result = &answer["result"];
    assert_eq!(result["isError"], true, "{answer}");
    assert!(result["content"][0]["text"].as_str().unwrap().contains("No answer to the agent's question"), "{answer}");
    assert_eq!(result["structuredContent"]["state"], "INPUT_REQUIRED", "{answer}");
    assert_eq!(task_states(&server.base).await, ["TASK_STATE_INPUT_REQUIRED"]);
}
