//! Finding the agent and choosing its interface: the card kept with its validators, and the
//! move to another interface when one cannot be reached or does not speak the version.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::common::{message, send};
use agentwire_client::{Binding, CardCache, Client, Version};
use agentwire_test::{conformance, TestServer, TIMEOUT};
use agentwire_types::{SendMessageRequest, TaskState};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};
use tokio::net::TcpListener;

/// Serves `app` on a loopback port; returns its base URL.
async fn serve(app: Router) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

fn card(interfaces: Value) -> Value {
    json!({"name": "cached", "description": "", "version": "1", "supportedInterfaces": interfaces,
           "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": []})
}

/// An agent card with an `ETag` and `cache_control`, answering 304 to a request that names the
/// tag; counts the card requests and the 304s.
async fn card_with_etag(cache_control: &'static str) -> (String, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let (requests, not_modified) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (r, n) = (requests.clone(), not_modified.clone());
    let body = card(json!([{"url": "http://127.0.0.1:9", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]));
    let app = Router::new().route(
        "/.well-known/agent-card.json",
        get(move |headers: HeaderMap| async move {
            r.fetch_add(1, Ordering::SeqCst);
            let cache = [(header::ETAG, "\"v1\""), (header::CACHE_CONTROL, cache_control)];
            if headers.get(header::IF_NONE_MATCH).is_some_and(|tag| tag == "\"v1\"") {
                n.fetch_add(1, Ordering::SeqCst);
                return (StatusCode::NOT_MODIFIED, cache).into_response();
            }
            (cache, axum::Json(body.clone())).into_response()
        }),
    );
    (serve(app).await, requests, not_modified)
}

#[tokio::test]
async fn a_card_that_did_not_change_is_not_sent_again() {
    let (base, requests, not_modified) = card_with_etag("no-cache").await;
    let cards = CardCache::default();
    for _ in 0..3 {
        let client = Client::builder(&base).card_cache(&cards).connect().await.expect("connects");
        assert_eq!(client.card().name, "cached");
    }
    assert_eq!((requests.load(Ordering::SeqCst), not_modified.load(Ordering::SeqCst)), (3, 2));
    Client::builder(&base).connect().await.expect("a client with a cache of its own asks anew");
    assert_eq!(not_modified.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_fresh_card_is_not_asked_for_again() {
    let (base, requests, _) = card_with_etag("public, max-age=300").await;
    let cards = CardCache::default();
    for _ in 0..3 {
        Client::builder(&base).card_cache(&cards).connect().await.expect("connects");
    }
    assert_eq!(requests.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_unreachable_interface_moves_the_client_to_the_next() {
    let agent = TestServer::start(conformance()).await;
    let dead = format!("http://127.0.0.1:{}", agentwire_test::free_port());
    let interfaces = json!([
        {"url": dead, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": agent.base, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
    ]);
    let body = card(interfaces);
    let base =
        serve(Router::new().route("/.well-known/agent-card.json", get(move || async move { axum::Json(body) }))).await;
    let client = Client::builder(&base).timeout(TIMEOUT).connect().await.expect("connects");
    assert_eq!(client.endpoint().url, dead, "the card's first interface comes first");
    let task = send(&client, SendMessageRequest::new(message("tck-complete-task"))).await;
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!((client.endpoint().binding, client.endpoint().url.as_str()), (Binding::HttpJson, agent.base.as_str()));
}

#[tokio::test]
async fn a_v1_interface_refusing_the_version_moves_the_client_to_v03() {
    let agent = TestServer::start(conformance()).await;
    let refusals = Arc::new(AtomicUsize::new(0));
    let counted = refusals.clone();
    // A JSON-RPC endpoint that speaks no v1.0, listed first as v1.0.
    let refuse = post(move |body: axum::Json<Value>| async move {
        counted.fetch_add(1, Ordering::SeqCst);
        let error = json!({"code": -32009, "message": "A2A version 1.0 is not supported"});
        axum::Json(json!({"jsonrpc": "2.0", "id": body["id"], "error": error}))
    });
    let old = serve(Router::new().route("/rpc", refuse)).await;
    let interfaces = json!([
        {"url": format!("{old}/rpc"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": agent.base, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
    ]);
    let body = card(interfaces);
    let base =
        serve(Router::new().route("/.well-known/agent-card.json", get(move || async move { axum::Json(body) }))).await;
    let client = Client::builder(&base).timeout(TIMEOUT).connect().await.expect("connects");
    for _ in 0..2 {
        let task = send(&client, SendMessageRequest::new(message("tck-complete-task"))).await;
        assert_eq!(task.status.state, TaskState::Completed);
        assert_eq!(client.endpoint().version, Version::V03);
    }
    assert_eq!(refusals.load(Ordering::SeqCst), 1, "the client stays with the interface that answered");
}

/// What a hostile agent's server saw: each request's path and `Authorization`.
type Seen = Arc<std::sync::Mutex<Vec<(String, Option<String>)>>>;

/// A server on `host` that records every request and answers it with `answer(body)`.
async fn recorder(host: &str, answer: fn(&Value) -> Value) -> (String, Seen) {
    let seen: Seen = Arc::default();
    let record = seen.clone();
    let app = Router::new().fallback(move |uri: axum::http::Uri, headers: HeaderMap, body: axum::body::Bytes| {
        let record = record.clone();
        async move {
            let authorization = headers.get(header::AUTHORIZATION).map(|v| v.to_str().unwrap().to_owned());
            record.lock().unwrap().push((uri.path().to_owned(), authorization));
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            axum::Json(answer(&body))
        }
    });
    let listener = TcpListener::bind(format!("{host}:0")).await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, seen)
}

fn completed_task(body: &Value) -> Value {
    let task = json!({"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}});
    json!({"jsonrpc": "2.0", "id": body["id"], "result": {"task": task}})
}

/// A card at `base` whose interface is `interface`.
async fn card_naming(interface: Value) -> String {
    let body = card(json!([interface]));
    serve(Router::new().route("/.well-known/agent-card.json", get(move || async move { axum::Json(body) }))).await
}

/// The probe's gateway that followed an upstream card to another host with its token: the
/// client's credentials go to the host it was given (and hosts allowed) alone, and a client told
/// to keep to that host calls no other.
#[tokio::test]
async fn credentials_go_to_the_agents_own_host_only() {
    let (elsewhere, seen) = recorder("127.0.0.2", completed_task).await;
    let base = card_naming(json!({"url": elsewhere, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"})).await;

    let client = Client::builder(&base).bearer_token("T").timeout(TIMEOUT).connect().await.unwrap();
    send(&client, SendMessageRequest::new(message("hi"))).await;
    assert_eq!(seen.lock().unwrap().last().unwrap().1, None, "no token to a host the card chose");

    let allowed = Client::builder(&base).bearer_token("T").allow_host("127.0.0.2").timeout(TIMEOUT);
    send(&allowed.connect().await.unwrap(), SendMessageRequest::new(message("hi"))).await;
    assert_eq!(seen.lock().unwrap().last().unwrap().1.as_deref(), Some("Bearer T"), "a host allowed gets it");

    let calls = seen.lock().unwrap().len();
    let kept = Client::builder(&base).bearer_token("T").agent_host_only().connect().await.err().unwrap();
    assert!(kept.to_string().contains("only interfaces on 127.0.0.1"), "{kept}");
    assert_eq!(seen.lock().unwrap().len(), calls, "nothing was sent there");
}

/// The probe's `..` tenant and id, which walked the gateway's calls out of its agent's path: a
/// path segment of dots alone is a step in any URL, however it is encoded, so such a call is
/// refused before it is sent; every other stays under the interface's path.
#[tokio::test]
async fn a_request_path_never_leaves_the_interface() {
    let (host, seen) = recorder("127.0.0.1", |_| json!({"id": "t1", "status": {"state": "TASK_STATE_WORKING"}})).await;
    let interface = format!("{host}/agents/weather");
    let base = card_naming(json!({"url": interface, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"})).await;
    let client = Client::builder(&base).timeout(TIMEOUT).connect().await.unwrap();
    for (tenant, id) in [("..", "abc"), ("", ".."), ("..", ".."), (".", "x"), ("", "%2e%2e")] {
        let request = agentwire_types::GetTaskRequest { tenant: tenant.into(), id: id.into(), ..Default::default() };
        let result = client.get_task(request).await;
        if id != "%2e%2e" {
            let refused = result.unwrap_err();
            assert!(refused.to_string().contains("outside the interface"), "{tenant:?} {id:?}: {refused}");
        }
    }
    let request = agentwire_types::GetTaskRequest { tenant: "a..b".into(), id: "t1".into(), ..Default::default() };
    client.get_task(request).await.expect("dots within a segment are no step");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(seen.iter().all(|(path, _)| path.starts_with("/agents/weather/")), "{seen:?}");
}

/// The probe's answers of 300 MiB and answers that never come: a unary answer is read up to a
/// bound, and within the client's timeout.
#[tokio::test]
async fn unary_answers_are_bounded_in_size_and_time() {
    let (huge, _) =
        recorder("127.0.0.1", |body| json!({"jsonrpc": "2.0", "id": body["id"], "result": "x".repeat(2 << 20)})).await;
    let base = card_naming(json!({"url": huge, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"})).await;
    let client = Client::builder(&base).max_reply_size(1 << 20).connect().await.unwrap();
    let request = agentwire_types::GetTaskRequest { id: "t1".into(), ..Default::default() };
    let refused = client.get_task(request.clone()).await.unwrap_err();
    assert!(refused.to_string().contains("larger than 1048576 bytes"), "{refused}");

    let silent = agentwire_test::SilentPort::start().await;
    let base = card_naming(json!({"url": silent.url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"})).await;
    let client = Client::builder(&base).timeout(std::time::Duration::from_millis(300)).connect().await.unwrap();
    let started = tokio::time::Instant::now();
    assert!(client.get_task(request).await.is_err());
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "the call ended at its timeout");
}

/// An agent that offers an extended card and never answers for it: the client connects with the
/// public card within its card timeout, though its calls have no limit.
#[tokio::test]
async fn an_extended_card_that_never_comes_ends_at_the_card_timeout() {
    let silent = agentwire_test::SilentPort::start().await;
    let mut body = card(json!([{"url": silent.url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]));
    body["capabilities"]["extendedAgentCard"] = json!(true);
    let base =
        serve(Router::new().route("/.well-known/agent-card.json", get(move || async move { axum::Json(body) }))).await;
    let started = tokio::time::Instant::now();
    let connecting =
        Client::builder(&base).bearer_token("t").card_timeout(std::time::Duration::from_millis(300)).connect();
    let client = tokio::time::timeout(TIMEOUT, connecting).await.expect("connect ends").unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
    assert_eq!(client.card().name, "cached", "the public card");
}

/// The probe's upstream answer that was no task, read as an empty one: it is an error.
#[tokio::test]
async fn an_answer_that_is_no_task_is_an_error() {
    let (agent, _) = recorder("127.0.0.1", |body| json!({"jsonrpc": "2.0", "id": body["id"], "result": {}})).await;
    let base = card_naming(json!({"url": agent, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"})).await;
    let client = Client::builder(&base).connect().await.unwrap();
    let request = agentwire_types::CancelTaskRequest { id: "t1".into(), ..Default::default() };
    let refused = client.cancel_task(request).await.unwrap_err();
    assert!(refused.to_string().contains("not a task"), "{refused}");
}
