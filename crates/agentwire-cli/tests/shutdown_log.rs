//! What the server's log says about the executions it stops when it shuts down.

mod common;

use common::{rpc, Server, TempDir};
use serde_json::json;

#[tokio::test]
async fn executions_stopped_by_a_shutdown_are_logged_as_such() {
    let dir = TempDir::new("shutdown-log");
    let mut server = Server::start(&dir.0, &["--store", "memory", "--agent", "conformance"]).await;
    let message = json!({"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "tck-cancel me"}]});
    let params = json!({"message": message, "configuration": {"returnImmediately": true}});
    let reply = rpc(&reqwest::Client::new(), &server.base, "SendMessage", params).await.unwrap();
    let task_id = reply["result"]["task"]["id"].as_str().expect("a task").to_owned();

    // The task works until canceled: the server waits for it (10 s), then stops it.
    let log = server.terminate().await;
    let line = log.lines().find(|line| line.contains(&task_id)).unwrap_or_else(|| panic!("{log}"));
    assert!(line.contains("the server is shutting down"), "{log}");
    assert!(!log.contains("panic"), "{log}");
}
