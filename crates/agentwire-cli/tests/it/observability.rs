//! What an operator sees of a running server: `--metrics` after known traffic on every binding,
//! read with the Prometheus Python client's parser (in both text formats); `/healthz`, `/readyz`
//! and the gRPC health service; readiness following PostgreSQL down and back; and the request
//! span, id and CORS on every front.

use std::collections::HashMap;
use std::time::Duration;

use crate::common::{rpc, Cluster, Server, TempDir};
use agentwire_client::Client;
use agentwire_types::{Binding, Message, SendMessageRequest};
use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio::time::Instant;

/// The web page `--cors-origin` allows in the fronts' test.
const APP: &str = "https://app.example";

/// A sample's name and labels.
type Series = (String, Vec<(String, String)>);

/// A sample: its name, its labels and its value.
type Sample = (String, Vec<(String, String)>, f64);

/// The samples of a scrape, by series.
type Samples = HashMap<Series, f64>;

/// Parses a scrape with the official Prometheus Python client (`openmetrics`: its OpenMetrics
/// parser), or `None` when the interpreter is not set (the test is skipped, except under CI).
fn parse(text: &str, openmetrics: bool) -> Option<Samples> {
    let Some(python) = std::env::var_os(agentwire_test::PYTHON_VARIABLE) else {
        assert!(std::env::var_os("CI").is_none(), "CI runs need the Python SDK interpreter (scripts/test sets it)");
        eprintln!("skipped: {} is not set", agentwire_test::PYTHON_VARIABLE);
        return None;
    };
    let parser = if openmetrics { "prometheus_client.openmetrics.parser" } else { "prometheus_client.parser" };
    let script = format!(
        "import json, sys\nfrom {parser} import text_string_to_metric_families\n\
         print(json.dumps([[s.name, sorted(s.labels.items()), s.value]\n\
         for f in text_string_to_metric_families(sys.stdin.read()) for s in f.samples]))"
    );
    let mut child = std::process::Command::new(python)
        .args(["-c", &script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python starts");
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the parser refused the scrape: {}\n{text}", String::from_utf8_lossy(&out.stderr));
    // Each sample as the script prints it: `[name, [[label, value], …], value]`.
    let samples: Vec<Sample> = serde_json::from_slice(&out.stdout).unwrap();
    Some(samples.into_iter().map(|(name, labels, value)| ((name, labels), value)).collect())
}

/// The value of the sample `name` whose labels include `labels`, summed over the others.
fn value(samples: &Samples, name: &str, labels: &[(&str, &str)]) -> f64 {
    samples
        .iter()
        .filter(|((n, l), _)| n == name && labels.iter().all(|(k, v)| l.iter().any(|(lk, lv)| lk == k && lv == v)))
        .map(|(_, value)| value)
        .sum()
}

async fn scrape(client: &reqwest::Client, base: &str, accept: &str) -> (String, String) {
    let response = client.get(format!("{base}/metrics")).header("accept", accept).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let media_type = response.headers()["content-type"].to_str().unwrap().to_owned();
    (media_type, response.text().await.unwrap())
}

fn user_message(id: &str) -> Value {
    json!({"messageId": id, "role": "ROLE_USER", "parts": [{"text": "hello"}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_what_every_binding_served() {
    let dir = TempDir::new("metrics");
    let server = Server::start(&dir.0, &["--metrics", "--grpc", "127.0.0.1:0"]).await;
    let (base, client) = (server.base.clone(), reqwest::Client::new());

    // v1.0 JSON-RPC: two sends, a GetTask of no task, a streaming send read to its end.
    for id in ["m1", "m2"] {
        let reply = rpc(&client, &base, "SendMessage", json!({"message": user_message(id)})).await.unwrap();
        assert_eq!(reply["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{reply}");
    }
    let missing = rpc(&client, &base, "GetTask", json!({"id": "no-such-task"})).await.unwrap();
    assert!(missing["error"].is_object(), "{missing}");
    let stream =
        json!({"jsonrpc": "2.0", "id": 2, "method": "SendStreamingMessage", "params": {"message": user_message("m3")}});
    let body = client.post(format!("{base}/")).json(&stream).send().await.unwrap().text().await.unwrap();
    assert!(body.contains("TASK_STATE_COMPLETED"), "{body}");
    // v0.3 JSON-RPC.
    let v03 = json!({"message": {"kind": "message", "messageId": "m4", "role": "user", "parts": [{"kind": "text", "text": "hi"}]}});
    let reply = rpc(&client, &base, "message/send", v03).await.unwrap();
    assert_eq!(reply["result"]["status"]["state"], "completed", "{reply}");
    // v1.0 HTTP+JSON.
    let rest =
        client.post(format!("{base}/message:send")).json(&json!({"message": user_message("m5")})).send().await.unwrap();
    assert_eq!(rest.status(), 200);
    // gRPC, as the client speaks it.
    let grpc = Client::builder(&base).only(Binding::Grpc).connect().await.unwrap();
    grpc.send_message(SendMessageRequest::new(Message::user("m6", "hi"))).await.unwrap();

    // What the feed of commits counts arrives shortly after the answers.
    let deadline = Instant::now() + Duration::from_secs(10);
    let samples = loop {
        let (media_type, text) = scrape(&client, &base, "text/plain").await;
        assert!(media_type.starts_with("text/plain; version=0.0.4"), "{media_type}");
        let Some(samples) = parse(&text, false) else { return };
        let ended = value(&samples, "a2a_tasks_ended_total", &[("state", "TASK_STATE_COMPLETED")]);
        let open = value(&samples, "a2a_server_open_streams", &[]);
        if (ended, open) == (6.0, 0.0) || Instant::now() > deadline {
            break samples;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let served = |operation: &str, generation: &str, binding: &str, outcome: &str| {
        let labels = [("operation", operation), ("generation", generation), ("binding", binding), ("outcome", outcome)];
        value(&samples, "a2a_server_requests_total", &labels)
    };
    assert_eq!(served("SendMessage", "1.0", "JSONRPC", "ok"), 2.0);
    assert_eq!(served("SendMessage", "0.3", "JSONRPC", "ok"), 1.0);
    assert_eq!(served("SendMessage", "1.0", "HTTP+JSON", "ok"), 1.0);
    assert_eq!(served("SendMessage", "1.0", "GRPC", "ok"), 1.0);
    assert_eq!(served("SendStreamingMessage", "1.0", "JSONRPC", "ok"), 1.0);
    let not_found = [("operation", "GetTask"), ("outcome", "error"), ("error_type", "TASK_NOT_FOUND")];
    assert_eq!(value(&samples, "a2a_server_requests_total", &not_found), 1.0);
    let timed = [("operation", "SendMessage"), ("generation", "1.0"), ("binding", "JSONRPC")];
    assert_eq!(value(&samples, "a2a_server_request_duration_seconds_count", &timed), 2.0);
    assert_eq!(value(&samples, "a2a_tasks_ended_total", &[("state", "TASK_STATE_COMPLETED")]), 6.0);
    assert_eq!(value(&samples, "a2a_server_open_streams", &[]), 0.0, "the stream ended");
    assert_eq!(value(&samples, "a2a_tenant_tasks_in_progress", &[]), 0.0, "every task ended");
    assert!(value(&samples, "agentwire_store_commit_duration_seconds_count", &[]) >= 6.0);
    let (groups, writes) = (
        value(&samples, "agentwire_store_commit_groups_total", &[]),
        value(&samples, "agentwire_store_grouped_writes_total", &[]),
    );
    assert!(groups >= 1.0 && writes >= groups, "SQLite's group commits: {groups} groups of {writes} writes");
    assert!(value(&samples, "agentwire_connections_total", &[]) >= 3.0, "HTTP/1.1 clients and gRPC's");
    assert!(value(&samples, "agentwire_connections_open", &[]) >= 1.0, "the scrape's own");

    // A scraper that asks for OpenMetrics gets it, and the OpenMetrics parser reads it.
    let (media_type, text) = scrape(&client, &base, "application/openmetrics-text; version=1.0.0").await;
    assert!(media_type.starts_with("application/openmetrics-text"), "{media_type}");
    assert!(text.ends_with("# EOF\n"), "{text}");
    let samples = parse(&text, true).unwrap();
    assert_eq!(
        value(&samples, "a2a_server_requests_total", &[("operation", "SendMessage"), ("generation", "0.3")]),
        1.0
    );
}

#[tokio::test]
async fn without_metrics_there_is_no_metrics_route() {
    let dir = TempDir::new("no-metrics");
    let server = Server::start(&dir.0, &["--store", "memory"]).await;
    let response = reqwest::get(format!("{}/metrics", server.base)).await.unwrap();
    assert_eq!(response.status(), 404);
}

#[tokio::test]
async fn metrics_on_an_address_of_their_own() {
    let dir = TempDir::new("metrics-port");
    let server = Server::start(&dir.0, &["--store", "memory", "--metrics", "127.0.0.1:0"]).await;
    let metrics = server.address_logged_as("serving metrics").await;
    let on_serve_port = reqwest::get(format!("{}/metrics", server.base)).await.unwrap();
    assert_eq!(on_serve_port.status(), 404, "metrics are not on the agent's port");
    let text = reqwest::get(format!("http://{metrics}/metrics")).await.unwrap().text().await.unwrap();
    assert!(text.contains("# TYPE agentwire_connections_open gauge"), "{text}");
}

/// The gRPC health service's answer for `service`.
async fn grpc_health(base: &str, service: &str) -> Result<i32, tonic::Status> {
    use tonic_health::pb::{health_client::HealthClient, HealthCheckRequest};
    let channel = tonic::transport::Endpoint::from_shared(base.to_owned()).unwrap().connect().await.unwrap();
    let request = HealthCheckRequest { service: service.to_owned() };
    HealthClient::new(channel).check(request).await.map(|r| r.into_inner().status)
}

const SERVING: i32 = 1;
const NOT_SERVING: i32 = 2;
const SERVICE_UNKNOWN: i32 = 3;

#[tokio::test]
async fn health_and_readiness_answer() {
    let dir = TempDir::new("health");
    let server = Server::start(&dir.0, &[]).await;
    let live = reqwest::get(format!("{}/healthz", server.base)).await.unwrap();
    assert_eq!((live.status().as_u16(), live.text().await.unwrap()), (200, "ok\n".to_owned()));
    let ready = reqwest::get(format!("{}/readyz", server.base)).await.unwrap();
    assert_eq!((ready.status().as_u16(), ready.text().await.unwrap()), (200, "ready\n".to_owned()));
    assert_eq!(grpc_health(&server.base, "").await.unwrap(), SERVING);
    assert_eq!(grpc_health(&server.base, "lf.a2a.v1.A2AService").await.unwrap(), SERVING);
    let unknown = grpc_health(&server.base, "no.such.Service").await.unwrap_err();
    assert_eq!(unknown.code(), tonic::Code::NotFound);

    // A watch is told the status at once, and an unknown service is SERVICE_UNKNOWN.
    use tonic_health::pb::{health_client::HealthClient, HealthCheckRequest};
    let channel = tonic::transport::Endpoint::from_shared(server.base.clone()).unwrap().connect().await.unwrap();
    let mut health = HealthClient::new(channel);
    for (service, status) in [("", SERVING), ("no.such.Service", SERVICE_UNKNOWN)] {
        let request = HealthCheckRequest { service: service.to_owned() };
        let mut watch = health.watch(request).await.unwrap().into_inner();
        let first = tokio::time::timeout(Duration::from_secs(5), watch.message()).await.unwrap().unwrap();
        assert_eq!(first.map(|r| r.status), Some(status), "{service:?}");
    }
}

/// Polls `/readyz` until its status is `status`, for at most `within`; returns its body.
async fn ready_becomes(base: &str, status: u16, within: Duration) -> String {
    let deadline = Instant::now() + within;
    loop {
        let response = reqwest::get(format!("{base}/readyz")).await.unwrap();
        let seen = response.status().as_u16();
        let body = response.text().await.unwrap();
        if seen == status {
            return body;
        }
        assert!(Instant::now() < deadline, "/readyz still {seen} after {within:?}: {body}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// PostgreSQL stopped under a server: it stays up (`/healthz`) but turns unready, on HTTP and
/// gRPC, and is ready again once the database is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_follows_postgresql() {
    let Some(cluster) = Cluster::start("readiness") else { return };
    let dir = TempDir::new("readiness");
    let server = Server::start(&dir.0, &["--store", &cluster.url]).await;
    ready_becomes(&server.base, 200, Duration::from_secs(5)).await;

    cluster.stop();
    let why = ready_becomes(&server.base, 503, Duration::from_secs(15)).await;
    assert!(why.starts_with("not ready: "), "{why}");
    assert_eq!(grpc_health(&server.base, "").await.unwrap(), NOT_SERVING);
    let live = reqwest::get(format!("{}/healthz", server.base)).await.unwrap();
    assert_eq!(live.status(), 200, "the process is up");

    cluster.resume();
    ready_becomes(&server.base, 200, Duration::from_secs(30)).await;
    assert_eq!(grpc_health(&server.base, "").await.unwrap(), SERVING);
    let client = reqwest::Client::new();
    let reply = rpc(&client, &server.base, "SendMessage", json!({"message": user_message("m1")})).await;
    assert_eq!(reply.unwrap()["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED");
}

#[tokio::test]
async fn an_open_stream_is_counted_until_it_ends() {
    let dir = TempDir::new("open-streams");
    let server = Server::start(&dir.0, &["--store", "memory", "--metrics", "--agent", "conformance"]).await;
    let client = reqwest::Client::new();
    let start = json!({"message": user_message("m1")});
    let mut start = start;
    start["message"]["parts"][0]["text"] = json!("tck-multi-turn start");
    let task = rpc(&client, &server.base, "SendMessage", start).await.unwrap();
    let task_id = task["result"]["task"]["id"].as_str().unwrap().to_owned();
    let subscribe = json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}});
    let response = client.post(format!("{}/", server.base)).json(&subscribe).send().await.unwrap();
    let mut body = response.bytes_stream();
    body.next().await.expect("the subscription opens").unwrap();
    let text = client.get(format!("{}/metrics", server.base)).send().await.unwrap().text().await.unwrap();
    assert!(text.contains("a2a_server_open_streams{operation=\"SubscribeToTask\"} 1"), "{text}");
    assert!(text.contains("a2a_tasks{state=\"TASK_STATE_INPUT_REQUIRED\"} 1"), "{text}");
    assert!(text.contains("a2a_tenant_tasks_in_progress{tenant=\"\"} 1"), "{text}");
    drop(body);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let text = client.get(format!("{}/metrics", server.base)).send().await.unwrap().text().await.unwrap();
        if text.contains("a2a_server_open_streams{operation=\"SubscribeToTask\"} 0") {
            break;
        }
        assert!(Instant::now() < deadline, "the closed stream is still counted: {text}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Every front a gateway serves is under the same HTTP layers as a mounted agent's routes: MCP,
/// the directory and the agent each get a request span with the caller's request id (in the log
/// line of the answered request), the id echoed, and the CORS answer `--cors-origin` asks for.
#[tokio::test]
async fn every_front_has_the_request_span_id_and_cors() {
    let dir = TempDir::new("fronts");
    let agent = Server::start(&dir.0, &["--store", "memory"]).await;
    let upstream = format!("hello={}", agent.base);
    let args = ["--upstream", &upstream, "--mcp", "--cors-origin", APP, "--log-format", "json"];
    let env = [("RUST_LOG", "info,agentwire_server::layers=debug,tower_http::trace=debug")];
    let gateway = Server::start_gateway_with_env(&dir.0, &args, &env).await;
    let client = reqwest::Client::new();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}});
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message":
        {"messageId": "m-fronts", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}});
    let requests = [
        (
            "/mcp",
            client
                .post(format!("{}/mcp", gateway.base))
                .header("accept", "application/json, text/event-stream")
                .json(&initialize),
        ),
        ("/agents", client.get(format!("{}/agents", gateway.base))),
        ("/agents/hello/", client.post(format!("{}/agents/hello/", gateway.base)).json(&send)),
    ];
    for (path, request) in requests {
        let id = format!("front-{}", path.trim_matches('/').replace('/', "-"));
        let response = request.header("origin", APP).header("x-request-id", &id).send().await.unwrap();
        assert!(response.status().is_success(), "{path}: {}", response.status());
        let header = |name: &str| response.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
        assert_eq!(header("x-request-id").as_deref(), Some(id.as_str()), "{path} echoes the request id");
        assert_eq!(header("access-control-allow-origin").as_deref(), Some(APP), "{path} answers the allowed page");
        let traced = |log: &str| {
            log.lines().filter_map(|line| serde_json::from_str::<Value>(line).ok()).any(|line| {
                let span = &line["span"];
                span["name"] == "request" && span["request_id"] == id.as_str() && span["path"] == path
            })
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !traced(&std::fs::read_to_string(&gateway.log).unwrap()) {
            assert!(Instant::now() < deadline, "no line of {path}'s request span; see {}", gateway.log.display());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// An MCP tool call is counted under the MCP front, apart from the A2A calls beside it, though
/// both are sends to the same agent.
#[tokio::test]
async fn mcp_calls_are_counted_under_their_own_front() {
    let dir = TempDir::new("metrics-fronts");
    let server = Server::start(&dir.0, &["--store", "memory", "--mcp", "--metrics"]).await;
    let (base, client) = (server.base.clone(), reqwest::Client::new());
    let reply = rpc(&client, &base, "SendMessage", json!({"message": user_message("a2a-1")})).await.unwrap();
    assert_eq!(reply["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{reply}");
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "send_message", "arguments": {"message": "hello"}, "_meta": meta}});
    let answer = client
        .post(format!("{base}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "send_message")
        .json(&call)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert!(answer.text().await.unwrap().contains("\"isError\":false"));

    let (_, text) = scrape(&client, &base, "text/plain").await;
    let Some(samples) = parse(&text, false) else { return };
    let by_front = |front: &str| value(&samples, "a2a_server_requests_total", &[("front", front), ("outcome", "ok")]);
    let sends = |front: &str| {
        let streaming = [("front", front), ("operation", "SendStreamingMessage")];
        value(&samples, "a2a_server_requests_total", &[("front", front), ("operation", "SendMessage")])
            + value(&samples, "a2a_server_requests_total", &streaming)
    };
    assert_eq!(sends("A2A"), 1.0, "the JSON-RPC send: {text}");
    assert_eq!(sends("MCP"), 1.0, "the tool call's send: {text}");
    assert!(by_front("MCP") >= 1.0 && by_front("A2A") >= 1.0, "{text}");
}
