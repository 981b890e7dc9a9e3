//! SIGTERM: the server stops within one drain, whatever is still running, and says what it did.
#![cfg(unix)]

use crate::common;

use std::time::Duration;

use crate::common::{Server, TempDir};
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

/// A console tab following the task list does not hold a stop: the list ends when the server
/// starts to stop, so a server with nothing running exits at once rather than after its drain.
#[tokio::test]
async fn sigterm_with_a_console_list_followed_stops_without_waiting_for_the_drain() {
    let dir = TempDir::new("sigterm-console");
    let mut server = Server::start(&dir.0, &["--agent", "echo", "--store", "memory", "--console"]).await;
    let live = reqwest::Client::new().get(format!("{}/console/tasks/live", server.base));
    let mut list = live.send().await.unwrap();
    assert!(list.status().is_success(), "{}", list.status());
    // The list is followed once its first rows arrive.
    let first = tokio::time::timeout(Duration::from_secs(20), list.chunk()).await.expect("the list's first rows");
    assert!(first.unwrap().is_some());

    let started = Instant::now();
    let (exit, log) = server.terminate().await;
    let took = started.elapsed();
    assert!(exit.success(), "{exit:?}\n{log}");
    assert!(took < DRAIN / 2, "the followed list held the stop for {took:?}:\n{log}");
    assert!(!log.contains("connections still open"), "{log}");
}

/// A clean stop folds SQLite's write-ahead log into the database: the file (and its lock) stays,
/// with everything answered in it, and the log beside it is gone or empty.
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
    // The log is folded into the database and emptied; a reader sqlx was handing back as its pool
    // closed may keep the (empty) files from being removed.
    let left = |path: &std::path::Path| std::fs::metadata(path).map_or(0, |file| file.len());
    assert_eq!(left(&wal), 0, "{:?}", std::fs::read_dir(&dir.0).unwrap().collect::<Vec<_>>());
    assert!(!shm.exists() || wal.exists(), "the shared memory goes with the log");

    let server = Server::start(&dir.0, &["--agent", "echo", "--store", "sqlite:tasks.db"]).await;
    let task = common::rpc(&client, &server.base, "GetTask", json!({"id": task_id})).await.unwrap();
    assert_eq!(task["result"]["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
}

/// The first Ctrl-C says how long the server may take to stop; a second one stops it at once.
#[tokio::test]
async fn a_second_ctrl_c_stops_the_server_at_once() {
    let dir = TempDir::new("sigint-twice");
    let mut server = Server::start(&dir.0, &["--agent", "conformance", "--store", "memory"]).await;
    let client = reqwest::Client::new();
    let message = json!({"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "tck-cancel"}]});
    let send = json!({"message": message, "configuration": {"returnImmediately": true}});
    common::rpc(&client, &server.base, "SendMessage", send).await.unwrap();
    let interrupt = || {
        let sent = std::process::Command::new("kill").args(["-INT", &server.pid().to_string()]).status().unwrap();
        assert!(sent.success(), "kill -INT");
    };
    interrupt();
    let deadline = Instant::now() + Duration::from_secs(20);
    let log = loop {
        let log = std::fs::read_to_string(&server.log).unwrap();
        if log.contains("a second Ctrl-C stops at once") {
            break log;
        }
        assert!(Instant::now() < deadline, "the first Ctrl-C said nothing:\n{log}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(log.contains(&format!("for {} s at most", DRAIN.as_secs())), "{log}");
    let second = Instant::now();
    interrupt();
    let (exit, log) = server.wait_for_exit().await;
    assert!(second.elapsed() < Duration::from_secs(3), "the second Ctrl-C waited {:?}:\n{log}", second.elapsed());
    assert_eq!(exit.code(), Some(130), "{log}");
    assert!(log.contains("stopped at once"), "{log}");
}
