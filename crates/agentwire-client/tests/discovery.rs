//! Finding the agent and choosing its interface: the card kept with its validators, and the
//! move to another interface when one cannot be reached or does not speak the version.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use agentwire_client::{Binding, CardCache, Client, Version};
use agentwire_test::{conformance, TestServer, TIMEOUT};
use agentwire_types::{SendMessageRequest, TaskState};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;
use common::{message, send};
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
