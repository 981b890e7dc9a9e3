//! What the exit status says: a cancel that canceled succeeded (0); 9 is for an agent from which
//! no answer came; an answer that is not A2A (a malformed body, an HTTP error without an A2A
//! error, a gateway's own refusal) is 11, and a gateway's refusal is shown as the sentence it is.

use axum::routing::{get, post};
use axum::Json;
use serde_json::Value;

use crate::common::stub::{agent, answer, task};
use crate::common::{run_agentwire as agentwire, Server, TempDir};

#[tokio::test]
async fn a_cancel_that_canceled_exits_0() {
    let dir = TempDir::new("exit-cancel");
    let server = Server::start(&dir.0, &["--store", "memory", "--agent", "conformance"]).await;
    let (code, out, err) = agentwire(&["send", &server.base, "tck-cancel x", "--no-wait", "--json"]).await;
    assert_eq!(code, 0, "{err}");
    let reply: Value = serde_json::from_str(&out).unwrap();
    let id = reply["task"]["id"].as_str().unwrap();

    let (code, out, err) = agentwire(&["cancel", &server.base, id]).await;
    assert_eq!(code, 0, "a successful cancel: {out}{err}");
    assert!(out.contains("canceled"), "{out}");
    // A task that cannot be canceled (it ended) is the agent's refusal.
    let (code, _, err) = agentwire(&["cancel", &server.base, id]).await;
    assert_eq!(code, 8, "{err}");
}

#[tokio::test]
async fn an_answer_that_is_not_a2a_exits_11() {
    let malformed = agent(post(|| async { ([("content-type", "application/json")], "{\"jsonrpc\": \"2.0\", ") })).await;
    let html = agent(post(|| async { ([("content-type", "text/html")], "<html>a login page</html>") })).await;
    // POST is not allowed at the root: 405.
    let wrong_method = agent(get(|| async { "hello" })).await;
    let wrong_shape = agent(post(|Json(request): Json<Value>| async move {
        Json(answer(&request, serde_json::json!({"not": "a task"})))
    }))
    .await;
    for base in [&malformed, &html, &wrong_method, &wrong_shape] {
        let (code, _, err) = agentwire(&["get", base, "task-1"]).await;
        assert_eq!(code, 11, "{base}: {err}");
        assert!(err.contains(base.as_str()), "names the agent: {err}");
    }
    let (_, _, err) = agentwire(&["get", &wrong_method, "task-1"]).await;
    assert!(err.contains("405"), "{err}");

    // The same agent answering in A2A: its answer is shown.
    let working = agent(post(|Json(request): Json<Value>| async move {
        Json(answer(&request, task("task-1", "TASK_STATE_WORKING")))
    }))
    .await;
    let (code, out, err) = agentwire(&["get", &working, "task-1"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("task task-1 working"), "{out}");
}

#[tokio::test]
async fn a_gateways_own_refusals_read_as_sentences() {
    let dir = TempDir::new("exit-gateway");
    let one = Server::start(&dir.0, &["--store", "memory"]).await;
    let two = Server::start(&dir.0, &["--store", "memory"]).await;
    let first = format!("first={}", one.base);
    let second = format!("second={}", two.base);
    let gateway = Server::start_gateway(&dir.0, &["--upstream", &first, "--upstream", &second]).await;

    // Two agents and none at the root: the gateway says to name one.
    for args in [vec!["card", &gateway.base], vec!["send", &gateway.base, "hello"]] {
        let (code, _, err) = agentwire(&args).await;
        assert_eq!(code, 11, "{err}");
        assert!(err.contains("this gateway serves several agents (first, second)"), "{err}");
        assert!(!err.contains('{'), "no JSON: {err}");
    }
    let (code, _, err) = agentwire(&["card", &format!("{}/agents/third", gateway.base)]).await;
    assert_eq!(code, 11, "{err}");
    assert!(err.contains("no agent named \"third\""), "{err}");
    assert!(!err.contains("no agent card at"), "{err}");
}
