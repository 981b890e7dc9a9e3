//! What the client commands print for a person (output to a pipe, no color): the reply an agent
//! puts in a task's status message, and a task's history.

use std::process::Command;

use crate::common::stub::answer;
use crate::common::{Server, TempDir};
use axum::routing::post;
use axum::Json;
use serde_json::{json, Value};

/// Runs `agentwire ARGS…`; returns the exit status and what it printed.
fn agentwire(args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_agentwire")).args(args).output().expect("agentwire runs");
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    let stderr = String::from_utf8_lossy(&output.stderr);
    (output.status.code().expect("an exit status"), format!("{stdout}{stderr}"))
}

/// An agent that answers a streamed send with one event, the task, its reply in the status
/// message, as the official Rust SDK's server does.
async fn task_event_agent() -> String {
    let stream = |Json(request): Json<Value>| async move {
        let task = json!({
            "id": "task-1",
            "contextId": "context-1",
            "status": {
                "state": "TASK_STATE_COMPLETED",
                "message": {"messageId": "reply-1", "role": "ROLE_AGENT", "parts": [{"text": "the reply"}]},
            },
        });
        let event = answer(&request, json!({"task": task}));
        ([("content-type", "text/event-stream")], format!("data: {event}\n\n"))
    };
    crate::common::stub::agent(post(stream)).await
}

#[tokio::test]
async fn a_reply_in_a_streamed_task_is_shown() {
    let base = task_event_agent().await;
    let (code, out) =
        tokio::task::spawn_blocking(move || agentwire(&["send", &base, "hello", "--stream"])).await.unwrap();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("task task-1 completed"), "{out}");
    assert!(out.contains("  agent: the reply"), "{out}");
}

#[tokio::test]
async fn get_with_history_shows_the_messages() {
    let dir = TempDir::new("text-history");
    let server = Server::start(&dir.0, &["--store", "memory", "--agent", "conformance"]).await;
    let url = server.base.clone();
    tokio::task::spawn_blocking(move || {
        let (code, out) = agentwire(&["send", &url, "tck-multi-turn start", "--json"]);
        assert_eq!(code, 6, "{out}");
        let reply: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        let (id, context) = (reply["task"]["id"].as_str().unwrap(), reply["task"]["contextId"].as_str().unwrap());
        let (code, out) = agentwire(&["send", &url, "done", "--task", id, "--context", context]);
        assert_eq!(code, 0, "{out}");

        let (code, out) = agentwire(&["get", &url, id, "--history", "10"]);
        assert_eq!(code, 0, "{out}");
        let history: Vec<&str> = out.lines().skip_while(|line| *line != "  history:").skip(1).collect();
        assert_eq!(history.first(), Some(&"    user: tck-multi-turn start"), "{out}");
        assert!(history.contains(&"    user: done"), "{out}");

        let (_, out) = agentwire(&["get", &url, id, "--history", "1"]);
        let history: Vec<&str> = out.lines().skip_while(|line| *line != "  history:").skip(1).collect();
        assert!(history.first().is_some_and(|line| line.starts_with("    agent: ")), "the most recent: {out}");

        let (_, out) = agentwire(&["get", &url, id]);
        assert!(!out.contains("history"), "history only when asked: {out}");
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_reader_that_stops_reading_ends_no_command_with_a_panic() {
    let dir = TempDir::new("text-closed-pipe");
    let server = Server::start(&dir.0, &["--store", "memory"]).await;
    let url = server.base.clone();
    tokio::task::spawn_blocking(move || {
        assert_eq!(agentwire(&["send", &url, "hello"]).0, 0);
        for args in [&["list", &url][..], &["list", &url, "--json"], &["send", &url, "again", "--stream"]] {
            // `agentwire list URL | head -0`: the pipe's reader is gone before the first line.
            let mut child = Command::new(env!("CARGO_BIN_EXE_agentwire"))
                .args(args)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            drop(child.stdout.take());
            let output = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
            assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
        }
    })
    .await
    .unwrap();
}

/// A streamed artifact's chunks read as one text in `get` and a blocking `send`, as `--stream`
/// shows them ("Hello", not "Hel lo"); `list` has a header and fits 80 columns; an error names
/// no protocol enum and prints no backtrace.
#[tokio::test]
async fn what_a_person_reads_is_one_text_a_table_and_a_sentence() {
    let dir = TempDir::new("text-chunks");
    let server = Server::start(&dir.0, &["--store", "memory", "--agent", "conformance"]).await;
    let url = server.base.clone();
    tokio::task::spawn_blocking(move || {
        // Its chunks are "chunk-1 " and "chunk-2".
        let (code, streamed) = agentwire(&["send", &url, "tck-stream-chunked x", "--stream"]);
        assert_eq!(code, 0, "{streamed}");
        assert!(streamed.contains("chunk-1 chunk-2"), "{streamed}");
        let (code, blocking) = agentwire(&["send", &url, "tck-stream-chunked x"]);
        assert_eq!(code, 0, "{blocking}");
        assert!(blocking.contains("chunk-1 chunk-2") && !blocking.contains("chunk-1  chunk-2"), "{blocking}");

        let (code, list) = agentwire(&["list", &url]);
        assert_eq!(code, 0, "{list}");
        assert!(
            list.lines().next().is_some_and(|header| header.starts_with("TASK") && header.contains("STATE")),
            "{list}"
        );
        assert!(list.lines().all(|line| line.chars().count() <= 80), "{list}");

        let (code, refused) = agentwire(&["send", &url, "more", "--task", "no-such-task"]);
        assert_eq!(code, 8, "{refused}");
        let (_, done) = agentwire(&["send", &url, "tck-complete-task", "--json"]);
        let done: Value = serde_json::from_str(done.lines().next().unwrap()).unwrap();
        let (code, ended) = agentwire(&["send", &url, "again", "--task", done["task"]["id"].as_str().unwrap()]);
        assert_eq!(code, 8, "{ended}");
        assert!(ended.contains("is completed") && !ended.contains("TASK_STATE_"), "{ended}");
    })
    .await
    .unwrap();

    let output = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["serve", "--http", "127.0.0.1:0", "--store", "postgres://nobody@127.0.0.1:1/none"])
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success() && printed.starts_with("error: "), "{printed}");
    assert!(!printed.to_lowercase().contains("backtrace"), "{printed}");
}

#[tokio::test]
async fn an_agents_terminal_escapes_are_shown_not_obeyed() {
    let dir = TempDir::new("text-escapes");
    let server = Server::start(&dir.0, &["--store", "memory"]).await;
    // The echo agent answers with the text it got: here, sequences that would recolor the
    // terminal, retitle its window and overwrite the line.
    let base = server.base.clone();
    let (code, out) = tokio::task::spawn_blocking(move || {
        agentwire(&["send", &base, "\x1b[31mred\x1b]0;pwned\x07 and\rover", "--stream"])
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains('\x1b') && !out.contains('\r') && !out.contains('\x07'), "{out:?}");
    assert!(out.contains("echo: \\u{1b}[31mred\\u{1b}]0;pwned\\u{7} and\\u{d}over"), "{out}");
}
