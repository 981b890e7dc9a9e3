//! What `send --stream` prints of an agent that reports each step of its work as a status in the
//! same state, as the model agent does around its tool calls (a text and a `{"toolCalls": …}`
//! data part): the state line once, each step as its text, and the data named, not written out.

use std::process::Command;

use axum::routing::post;
use axum::Json;
use serde_json::{json, Value};

use crate::common::binary;
use crate::common::stub::{agent, answer, events, task};

/// A status update of task-1 in `state`, with an agent message of `parts` if there are any.
fn status(state: &str, parts: Value) -> Value {
    let mut status = json!({"state": state});
    if parts.as_array().is_some_and(|parts| !parts.is_empty()) {
        status["message"] = json!({"messageId": format!("m-{parts}"), "role": "ROLE_AGENT", "parts": parts});
    }
    json!({"statusUpdate": {"taskId": "task-1", "contextId": "context-1", "status": status}})
}

#[tokio::test]
async fn steps_reported_in_one_state_show_the_state_once_and_their_data_named() {
    let base = agent(post(|Json(request): Json<Value>| async move {
        let call = json!({"toolCalls": {"calls": [{"id": "c1", "name": "add", "arguments": "{\"a\":2,\"b\":3}"}]}});
        let result = json!({"toolResult": {"id": "c1", "name": "add", "content": "5"}});
        events(
            [
                json!({"task": task("task-1", "TASK_STATE_SUBMITTED")}),
                status("TASK_STATE_WORKING", json!([])),
                status("TASK_STATE_WORKING", json!([{"text": "Calling add(a=2, b=3)"}, {"data": call}])),
                status("TASK_STATE_WORKING", json!([{"text": "add returned 5"}, {"data": result}])),
                status("TASK_STATE_COMPLETED", json!([{"text": "2 + 3 = 5"}])),
            ]
            .map(|event| answer(&request, event)),
        )
    }))
    .await;
    let output =
        tokio::task::spawn_blocking(move || Command::new(binary()).args(["send", &base, "add", "--stream"]).output())
            .await
            .unwrap()
            .unwrap();
    let out = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{out}{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(out.matches("● working").count(), 1, "{out}");
    assert!(out.contains("  agent: Calling add(a=2, b=3) [data: toolCalls]\n"), "{out}");
    assert!(out.contains("  agent: add returned 5 [data: toolResult]\n"), "{out}");
    assert!(out.contains("● completed\n  agent: 2 + 3 = 5"), "{out}");
    assert!(!out.contains('{'), "no JSON: {out}");
}
