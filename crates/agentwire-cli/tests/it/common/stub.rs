//! Agents made by a test to answer as it needs: a card at `/.well-known/agent-card.json` naming
//! one JSON-RPC v1.0 interface at the root, and whatever the test's router answers there.

use axum::response::{IntoResponse, Response};
use axum::routing::{get, MethodRouter};
use axum::Json;
use serde_json::{json, Value};

/// Serves `root` at `/` behind the card of an agent that streams, on a loopback port; its base
/// URL. The server lives as long as the test's runtime.
pub(crate) async fn agent(root: MethodRouter) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let card = json!({
        "name": "stub agent",
        "description": "answers as its test says",
        "version": "1.0.0",
        "supportedInterfaces": [{"url": format!("{base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    });
    let app = axum::Router::new()
        .route("/.well-known/agent-card.json", get(move || async move { Json(card) }))
        .route("/", root);
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

/// A task in `state` (`TASK_STATE_WORKING`, …), with no message or artifact.
pub(crate) fn task(id: &str, state: &str) -> Value {
    json!({"id": id, "contextId": "context-1", "status": {"state": state}})
}

/// The JSON-RPC response to `request` carrying `result`.
pub(crate) fn answer(request: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": request["id"], "result": result})
}

/// An event stream of `events` (JSON-RPC responses), which ends after the last.
pub(crate) fn events(events: impl IntoIterator<Item = Value>) -> Response {
    let body: String = events.into_iter().map(|event| format!("data: {event}\n\n")).collect();
    ([("content-type", "text/event-stream")], body).into_response()
}
