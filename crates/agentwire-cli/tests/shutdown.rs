//! SIGTERM: the server stops within one drain, whatever is still running, and says what it did.
#![cfg(unix)]

mod common;

use std::time::Duration;

use common::{Server, TempDir};
use serde_json::json;
use tokio::time::Instant;

/// The server's drain (`DRAIN` in `serve.rs`).
const DRAIN: Duration = Duration::from_secs(10);

#[tokio::test]
async fn sigterm_with_a_task_running_and_a_stream_open_stops_within_one_drain() {
    let dir = TempDir::new("sigterm");
    let mut server = Server::start(&dir.0, &["--agent", "conformance", "--store", "memory"]).await;
    let client = reqwest::Client::new();
    let message = json!({"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "tck-cancel"}]});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": message}});
    let request = client.post(format!("{}/", server.base)).header("A2A-Version", "1.0").json(&body);
    let mut stream = request.send().await.unwrap();
    // The task is running once its first event arrives; the stream stays open.
    let first = tokio::time::timeout(Duration::from_secs(20), stream.chunk()).await.expect("the task starts");
    assert!(first.unwrap().is_some());

    let started = Instant::now();
    let (exit, log) = server.terminate().await;
    let took = started.elapsed();
    assert!(exit.success(), "{exit:?}");
    assert!(took < DRAIN + Duration::from_secs(3), "the executions got a second drain: {took:?}");
    assert!(!log.contains("panic"), "the agent is blamed for the shutdown: {log}");
    let line = log.lines().find(|line| line.contains("stopped unfinished")).unwrap_or_else(|| panic!("{log}"));
    assert!(line.contains("the server is shutting down"), "{log}");
}

/// A clean stop folds SQLite's write-ahead log into the database: the file (and its lock) stays,
/// with everything answered in it, and no `-wal` or `-shm` file beside it.
#[tokio::test]
async fn sigterm_leaves_the_sqlite_file_without_its_write_ahead_log() {
    let dir = TempDir::new("sigterm-wal");
    let mut server = Server::start(&dir.0, &["--agent", "echo", "--store", "sqlite:tasks.db"]).await;
    let client = reqwest::Client::new();
    let message = json!({"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hello"}]});
    let sent = common::rpc(&client, &server.base, "SendMessage", json!({"message": message})).await.unwrap();
    let task_id = sent["result"]["task"]["id"].as_str().expect("a task").to_owned();
    let (wal, shm) = (dir.0.join("tasks.db-wal"), dir.0.join("tasks.db-shm"));
    assert!(wal.exists(), "a running server writes ahead");

    let (exit, log) = server.terminate().await;
    assert!(exit.success(), "{exit:?}\n{log}");
    assert!(!wal.exists() && !shm.exists(), "{:?}", std::fs::read_dir(&dir.0).unwrap().collect::<Vec<_>>());

    let server = Server::start(&dir.0, &["--agent", "echo", "--store", "sqlite:tasks.db"]).await;
    let task = common::rpc(&client, &server.base, "GetTask", json!({"id": task_id})).await.unwrap();
    assert_eq!(task["result"]["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
}
