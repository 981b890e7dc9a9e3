//! One trace across a delegation and a push notification. A client command calls a delegating
//! agent (served by this test), which hands the message on to a downstream agent (an `agentwire
//! serve` process) with a webhook for the downstream task; every process exports its spans to one
//! collector. The spans make one trace, each the child of the one that caused it, down to the
//! webhook's POST, whose `traceparent` names that POST's span.

#[path = "it/common/mod.rs"]
mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentwire_client::Client;
use agentwire_server::agent::{AgentExecutor, EventStream, ExecutionContext};
use agentwire_server::telemetry::OtlpTraces;
use agentwire_server::{router, OperationSpans, RequestHandler, ServeOptions};
use agentwire_test::{ReceivedSpan, SpanCollector};
use agentwire_types::{Message, SendMessageConfiguration, SendMessageRequest, TaskPushNotificationConfig};
use common::{run_agentwire, Idp, Server, TempDir};
use tower::ServiceBuilder;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

const INTERNAL_KIND: i32 = 1;
const SERVER_KIND: i32 = 2;
const CLIENT_KIND: i32 = 3;

/// Hands each message on to the downstream agent, asking it to notify `webhook`, and completes
/// once the downstream agent has answered.
struct Delegate {
    downstream: Client,
    webhook: String,
}

impl AgentExecutor for Delegate {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        let (downstream, webhook) = (self.downstream.clone(), self.webhook.clone());
        ctx.run(|ctx, updater| async move {
            let push = TaskPushNotificationConfig { url: webhook, ..Default::default() };
            let message = Message::user(format!("{}-downstream", ctx.message.message_id), ctx.message.text());
            let mut request = SendMessageRequest::new(message);
            request.configuration =
                Some(SendMessageConfiguration { task_push_notification_config: Some(push), ..Default::default() });
            match downstream.send_message(request).await {
                Ok(_) => updater.complete().await,
                Err(error) => updater.fail(format!("the downstream agent: {error}")).await,
            }
        })
    }
}

/// A webhook that keeps the `traceparent` of every notification it receives, and is unavailable
/// the first time.
async fn webhook() -> (String, Arc<Mutex<Vec<String>>>) {
    let received = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&received);
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: axum::http::HeaderMap| {
            let traceparent = headers.get("traceparent").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
            let mut kept = kept.lock().unwrap();
            kept.push(traceparent);
            std::future::ready(match kept.len() {
                1 => axum::http::StatusCode::SERVICE_UNAVAILABLE,
                _ => axum::http::StatusCode::NO_CONTENT,
            })
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, received)
}

fn find<'a>(spans: &'a [ReceivedSpan], service: &str, kind: i32, name: &str) -> Option<&'a ReceivedSpan> {
    spans.iter().find(|span| span.service == service && span.kind == kind && span.name == name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delegated_request_and_its_push_notification_make_one_trace() {
    let collector = SpanCollector::start().await;
    let dir = TempDir::new("traces");
    // A prompt export.
    let downstream = Server::start_with_env(
        &dir.0,
        &[
            "--store",
            "memory",
            "--allow-private-webhooks",
            "--log-format",
            "json",
            "--otlp-endpoint",
            &collector.endpoint,
        ],
        &[("OTEL_BSP_SCHEDULE_DELAY", "100"), ("OTEL_SERVICE_NAME", "the-downstream")],
    )
    .await;

    // The delegating agent, in this process.
    let traces = OtlpTraces::builder(&collector.endpoint)
        .service_name("the-delegate")
        .batch_delay(Duration::from_millis(100))
        .build()
        .unwrap();
    tracing_subscriber::registry().with(traces.layer()).init();
    let (hook_url, notifications) = webhook().await;
    let agent = Delegate { downstream: Client::connect(&downstream.base).await.unwrap(), webhook: hook_url };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let delegate = format!("http://{}", listener.local_addr().unwrap());
    let handler = RequestHandler::builder(agent).card_url(&delegate).build();
    let app = router(ServiceBuilder::new().layer(OperationSpans).service(handler));
    tokio::spawn(agentwire_server::serve(listener, app, std::future::pending(), ServeOptions::default()));

    let send = tokio::process::Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["send", &delegate, "hello"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.endpoint)
        .env("OTEL_SERVICE_NAME", "the-caller")
        .output();
    let sent = tokio::time::timeout(Duration::from_secs(30), send).await.unwrap().unwrap();
    assert!(sent.status.success(), "{}", String::from_utf8_lossy(&sent.stderr));

    let spans = collector
        .wait_for(Duration::from_secs(15), |spans| {
            spans.iter().any(|span| {
                span.name == "POST" && span.attributes.get("http.response.status_code").is_some_and(|s| s == "204")
            }) && find(spans, "the-delegate", INTERNAL_KIND, "invoke_agent").is_some()
                && find(spans, "the-caller", CLIENT_KIND, "SendMessage").is_some()
        })
        .await;
    let span = |service, kind, name| {
        find(&spans, service, kind, name).unwrap_or_else(|| panic!("no {name} span of {service}: {spans:#?}"))
    };
    let attribute = |span: &ReceivedSpan, name: &str| span.attributes.get(name).cloned().unwrap_or_default();
    let chain = [
        span("the-caller", CLIENT_KIND, "SendMessage"),
        span("the-delegate", SERVER_KIND, "SendMessage"),
        span("the-delegate", INTERNAL_KIND, "invoke_agent"),
        span("the-delegate", CLIENT_KIND, "SendMessage"),
        span("the-downstream", SERVER_KIND, "SendMessage"),
        span("the-downstream", INTERNAL_KIND, "invoke_agent"),
    ];
    for pair in chain.windows(2) {
        let (parent, child) = (pair[0], pair[1]);
        assert_eq!(child.trace_id, parent.trace_id, "one trace: {spans:#?}");
        assert_eq!(
            child.parent_span_id, parent.span_id,
            "{} of {} is a child of {parent:#?}",
            child.name, child.service
        );
    }
    let execution = chain[5];
    let commit = span("the-downstream", INTERNAL_KIND, "commit");
    assert_eq!(commit.parent_span_id, execution.span_id, "a commit is a child of the execution making it");
    let posts: Vec<&ReceivedSpan> =
        spans.iter().filter(|span| span.service == "the-downstream" && span.name == "POST").collect();
    for post in &posts {
        assert_eq!(post.trace_id, execution.trace_id, "the push notification continues the trace");
        assert_eq!(post.parent_span_id, execution.span_id, "{post:#?}");
    }
    let post_answered = |status: &str| {
        posts.iter().copied().find(|post| post.attributes.get("http.response.status_code").is_some_and(|s| s == status))
    };
    let (refused, post) =
        (post_answered("503").expect("the refused attempt"), post_answered("204").expect("a delivery"));
    assert_eq!(attribute(refused, "error.type"), "503");

    // Attribute names as the draft A2A conventions (and OpenTelemetry's HTTP and GenAI ones) say.
    let server = chain[4];
    assert_eq!(attribute(server, "a2a.method.name"), "SendMessage");
    assert_eq!(attribute(server, "a2a.protocol.version"), "1.0");
    assert_eq!(attribute(server, "a2a.task.state"), "TASK_STATE_COMPLETED");
    assert!(!server.attributes.contains_key("thread.id"), "only the conventions' attributes: {server:#?}");
    assert_eq!(attribute(server, "a2a.task.id"), attribute(execution, "a2a.task.id"));
    assert_eq!(attribute(server, "gen_ai.conversation.id"), attribute(execution, "gen_ai.conversation.id"));
    assert_eq!(attribute(execution, "gen_ai.operation.name"), "invoke_agent");
    assert!(!attribute(execution, "gen_ai.agent.name").is_empty(), "{execution:#?}");
    assert_eq!(attribute(post, "http.request.method"), "POST");
    assert_eq!(attribute(post, "a2a.task.id"), attribute(execution, "a2a.task.id"));
    assert!(posts.iter().any(|post| attribute(post, "http.request.resend_count") == "1"), "the retry: {posts:#?}");

    // The log line of the refused attempt names its trace and span.
    let logged = std::fs::read_to_string(&downstream.log).unwrap();
    let line = logged
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|line| line["fields"]["message"] == "push notification attempt failed")
        .unwrap_or_else(|| panic!("no log line of the refused attempt:\n{logged}"));
    assert_eq!(line["trace_id"], refused.trace_id.as_str(), "{line}");
    assert_eq!(line["span_id"], refused.span_id.as_str(), "{line}");

    // The webhook was told the trace: its request's parent is the POST's span.
    let traceparents = notifications.lock().unwrap().clone();
    let expected = format!("00-{}-{}-01", post.trace_id, post.span_id);
    assert!(traceparents.contains(&expected), "{expected} among {traceparents:?}");
    drop(downstream);
    traces.shut_down().await;
}

/// An MCP tool call continues its caller's trace, and is the parent of the A2A operation it runs,
/// down to the agent's execution.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_tool_call_is_the_parent_of_its_a2a_operations() {
    let collector = SpanCollector::start().await;
    let dir = TempDir::new("traces-mcp");
    let args = ["--store", "memory", "--mcp", "--otlp-endpoint", &collector.endpoint];
    let agent = Server::start_with_env(
        &dir.0,
        &args,
        &[("OTEL_BSP_SCHEDULE_DELAY", "100"), ("OTEL_SERVICE_NAME", "the-agent")],
    )
    .await;
    let (trace_id, caller_span) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let meta = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "send_message", "arguments": {"message": "hello"}, "_meta": meta}});
    let answer = reqwest::Client::new()
        .post(format!("{}/mcp", agent.base))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "send_message")
        .header("traceparent", format!("00-{trace_id}-{caller_span}-01"))
        .json(&call)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let body = answer.text().await.unwrap();
    assert!(body.contains("\"isError\":false"), "{body}");

    let spans = collector
        .wait_for(Duration::from_secs(15), |spans| find(spans, "the-agent", INTERNAL_KIND, "invoke_agent").is_some())
        .await;
    let span =
        |kind, name| find(&spans, "the-agent", kind, name).unwrap_or_else(|| panic!("no {name} span: {spans:#?}"));
    let (tool_call, operation, execution) = (
        span(SERVER_KIND, "tools/call send_message"),
        span(SERVER_KIND, "SendStreamingMessage"),
        span(INTERNAL_KIND, "invoke_agent"),
    );
    assert_eq!(tool_call.trace_id, trace_id, "the caller's trace");
    assert_eq!(tool_call.parent_span_id, caller_span, "the caller's span is the tool call's parent");
    assert_eq!(tool_call.attributes.get("mcp.method.name").map(String::as_str), Some("tools/call"));
    assert_eq!(tool_call.attributes.get("gen_ai.tool.name").map(String::as_str), Some("send_message"));
    assert_eq!(
        (operation.trace_id.as_str(), operation.parent_span_id.as_str()),
        (trace_id, tool_call.span_id.as_str())
    );
    assert_eq!(execution.parent_span_id, operation.span_id, "{spans:#?}");
}

/// The operation's span names its caller, and the parties its token says act for it (the RFC 8693
/// `act` chain of a token exchanged through a gateway or an agent).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_caller_and_those_acting_for_it_are_on_the_operations_span() {
    let collector = SpanCollector::start().await;
    let dir = TempDir::new("traces-caller");
    let idp = Idp::new(&dir.0).await;
    let mut args = vec!["--store", "memory", "--audience", "the-agent", "--otlp-endpoint", &collector.endpoint];
    let jwt = idp.auth_args();
    args.extend(jwt.iter().map(String::as_str));
    let env = [("OTEL_BSP_SCHEDULE_DELAY", "100"), ("OTEL_SERVICE_NAME", "the-agent")];
    let agent = Server::start_with_env(&dir.0, &args, &env).await;
    let key = idp.key().display().to_string();
    let mut minted = vec!["jwt", "--key", &key, "--issuer", Idp::ISSUER, "--subject", "alice"];
    minted.extend(["--audience", "the-agent", "--actor", "model-agent", "--actor", "gateway"]);
    let (code, token, _) = run_agentwire(&minted).await;
    assert_eq!(code, 0, "{token}");
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "none"}});
    let answer = reqwest::Client::new()
        .post(format!("{}/", agent.base))
        .bearer_auth(token.trim())
        .header("A2A-Version", "1.0")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);

    let spans = collector
        .wait_for(Duration::from_secs(15), |spans| find(spans, "the-agent", SERVER_KIND, "GetTask").is_some())
        .await;
    let operation = find(&spans, "the-agent", SERVER_KIND, "GetTask").unwrap();
    assert_eq!(operation.attributes.get("user.id").map(String::as_str), Some("https://idp.test#alice"));
    assert_eq!(
        operation.attributes.get("agentwire.caller.actors").map(String::as_str),
        Some("model-agent,gateway"),
        "{operation:#?}"
    );
}
