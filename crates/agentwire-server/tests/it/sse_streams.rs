//! Event streams over the wire: `id:` lines, keep-alives, what ends a stream, and a reader that
//! falls behind.

use std::time::Duration;

use agentwire_server::agent::{AgentExecutor, EchoAgent, EventStream, ExecutionContext};
use agentwire_server::{HttpOptions, Limits, RequestHandler, ServeOptions};
use agentwire_test::{conformance, user_message, Gate, NeedsAuth, SseEvent, SseItem, SseReader, TestServer, TIMEOUT};
use agentwire_types::{Artifact, Part};
use serde_json::{json, Value};

fn kind(result: &Value) -> &str {
    result.as_object().and_then(|r| r.keys().next()).map(String::as_str).unwrap_or_default()
}

#[tokio::test]
async fn every_task_event_carries_its_sequence_number_as_id() {
    let server = TestServer::start(conformance()).await;
    let mut stream =
        server.open_rpc_stream("SendStreamingMessage", json!({"message": user_message("tck-stream-001", "s")})).await;
    let mut ids = Vec::new();
    while let Some(event) = stream.next_event().await {
        ids.push(event.id.expect("every event of a task has an id").parse::<u64>().expect("a number"));
    }
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>(), "consecutive, from the task's first event");
    assert!(ids.len() >= 4, "task, WORKING, the artifact, COMPLETED: {ids:?}");
}

#[tokio::test]
async fn an_agent_that_finishes_at_once_streams_task_artifact_status_in_order() {
    let server = TestServer::start(RequestHandler::builder(EchoAgent)).await;
    let events = server.rpc_stream("SendStreamingMessage", json!({"message": user_message("m1", "hello")})).await;
    let kinds: Vec<&str> = events.iter().map(|e| kind(&e["result"])).collect();
    assert_eq!(kinds, ["task", "artifactUpdate", "statusUpdate"], "{events:?}");
    assert_eq!(events[1]["result"]["artifactUpdate"]["artifact"]["parts"][0]["text"], "hello");
    assert_eq!(events[2]["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED");
}

#[tokio::test]
async fn an_idle_stream_gets_keep_alive_comments() {
    let http = HttpOptions { sse_keep_alive: Duration::from_millis(50), ..HttpOptions::default() };
    let server = TestServer::start_with(conformance(), http, ServeOptions::default()).await;
    let params = json!({"message": user_message("m1", "tck-cancel")});
    let mut stream = server.open_rpc_stream("SendStreamingMessage", params).await;
    let first = stream.next_event().await.expect("the task");
    let task_id = first.data["result"]["task"]["id"].clone();
    let working = stream.next_event().await.expect("WORKING");
    assert_eq!(working.data["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_WORKING");
    // Nothing happens to the task now: keep-alive comments follow, until it is canceled.
    for _ in 0..2 {
        assert_eq!(stream.next_item().await, Some(SseItem::Comment));
    }
    server.rpc_ok("CancelTask", json!({"id": task_id})).await;
    let canceled = stream.next_event().await.expect("CANCELED");
    assert_eq!(canceled.data["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_CANCELED");
}

#[tokio::test]
async fn auth_required_keeps_the_stream_open() {
    let gate = Gate::default();
    let server = TestServer::start(RequestHandler::builder(NeedsAuth(gate.clone()))).await;
    let mut stream = server.open_rpc_stream("SendStreamingMessage", json!({"message": user_message("m1", "hi")})).await;
    let mut states = Vec::new();
    while let Some(event) = stream.next_event().await {
        let state = event.data["result"]["statusUpdate"]["status"]["state"].as_str().unwrap_or("").to_owned();
        if state == "TASK_STATE_AUTH_REQUIRED" {
            gate.open();
        }
        states.push(state);
    }
    assert_eq!(states, ["", "TASK_STATE_AUTH_REQUIRED", "TASK_STATE_COMPLETED"], "task, AUTH_REQUIRED, COMPLETED");
}

/// Sends many large artifact chunks as fast as it can, then tells the test it is done.
struct Flood {
    chunks: usize,
    done: Gate,
}

impl AgentExecutor for Flood {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        let (chunks, done) = (self.chunks, self.done.clone());
        ctx.run(move |_, updater| async move {
            let text = "x".repeat(8 * 1024);
            for i in 0..chunks {
                let chunk = Artifact::new("flood", "flood", vec![Part::text(format!("{i}:{text}"))]);
                updater.artifact_chunk(chunk, i > 0, i + 1 == chunks).await?;
            }
            updater.complete().await?;
            done.open();
            Ok(())
        })
    }
}

/// The stream's reader holds one event at most, and the client reads nothing until the agent has
/// sent everything (about 1.6 MB, more than the socket buffers hold): the reader falls behind and
/// must catch up from the task's event log, losing and repeating nothing.
#[tokio::test]
async fn a_reader_that_falls_behind_catches_up_from_the_log() {
    let chunks = 200;
    let done = Gate::default();
    let limits = Limits { subscriber_buffer: 1, ..Limits::default() };
    let builder = RequestHandler::builder(Flood { chunks, done: done.clone() }).limits(limits);
    let server = TestServer::start(builder).await;
    let mut stream = server.open_rpc_stream("SendStreamingMessage", json!({"message": user_message("m1", "go")})).await;
    done.wait().await;
    let mut ids = Vec::new();
    let mut received = Vec::new();
    while let Some(event) = stream.next_event().await {
        ids.push(event.id.expect("an id").parse::<u64>().unwrap());
        if let Some(text) = event.data["result"]["artifactUpdate"]["artifact"]["parts"][0]["text"].as_str() {
            received.push(text.split(':').next().unwrap().parse::<usize>().unwrap());
        }
    }
    assert_eq!(received, (0..chunks).collect::<Vec<_>>(), "every chunk once, in order");
    assert_eq!(ids, (1..=chunks as u64 + 2).collect::<Vec<_>>(), "the task, the chunks, COMPLETED");
}

/// Sends numbered artifact chunks at a steady pace, then completes the task.
struct Ticker {
    chunks: usize,
    every: Duration,
}

impl AgentExecutor for Ticker {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        let (chunks, every) = (self.chunks, self.every);
        ctx.run(move |_, updater| async move {
            updater.working().await?;
            for i in 0..chunks {
                tokio::time::sleep(every).await;
                let chunk = Artifact::new("ticks", "ticks", vec![Part::text(i.to_string())]);
                updater.artifact_chunk(chunk, i > 0, i + 1 == chunks).await?;
            }
            updater.complete().await?;
            Ok(())
        })
    }
}

/// How a test reaches SubscribeToTask.
#[derive(Clone, Copy, Debug)]
enum Binding {
    JsonRpc,
    Rest,
}

/// Opens SubscribeToTask over `binding`, resuming after `last_event_id` if given.
async fn subscribe(server: &TestServer, binding: Binding, task_id: &str, last_event_id: Option<u64>) -> SseReader {
    let request = match binding {
        Binding::JsonRpc => {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}});
            server.http.post(format!("{}/", server.base)).json(&body)
        }
        Binding::Rest => server.http.get(format!("{}/tasks/{task_id}:subscribe", server.base)),
    };
    let request = match last_event_id {
        Some(id) => request.header("Last-Event-ID", id.to_string()),
        None => request,
    };
    let response = request.send().await.expect("subscribe");
    assert_eq!(response.status(), 200);
    SseReader::new(response)
}

/// What a reader saw: each event's id, and the chunk numbers among them.
#[derive(Default, Debug)]
struct Seen {
    ids: Vec<u64>,
    chunks: Vec<usize>,
    last_state: Option<String>,
}

impl Seen {
    fn add(&mut self, event: SseEvent, binding: Binding) {
        self.ids.push(event.id.expect("every event has an id").parse().expect("a number"));
        let result = match binding {
            Binding::JsonRpc => &event.data["result"],
            Binding::Rest => &event.data,
        };
        if let Some(text) = result["artifactUpdate"]["artifact"]["parts"][0]["text"].as_str() {
            self.chunks.push(text.parse().unwrap());
        }
        if let Some(state) = result["statusUpdate"]["status"]["state"].as_str() {
            self.last_state = Some(state.to_owned());
        }
    }
}

async fn start_ticking(server: &TestServer) -> String {
    let send = json!({"message": user_message("m1", "tick"), "configuration": {"returnImmediately": true}});
    let task = server.rpc_ok("SendMessage", send).await;
    task["task"]["id"].as_str().expect("a task id").to_owned()
}

/// A client drops its subscription mid-task and reconnects with `Last-Event-ID`, once while the
/// task runs and once after it ended: together the streams carry every event once, in order.
async fn reconnecting_loses_and_repeats_nothing(binding: Binding) {
    const CHUNKS: usize = 30;
    let builder = RequestHandler::builder(Ticker { chunks: CHUNKS, every: Duration::from_millis(10) });
    let server = TestServer::start(builder).await;
    let task_id = start_ticking(&server).await;
    let mut seen = Seen::default();

    let mut first = subscribe(&server, binding, &task_id, None).await;
    for _ in 0..5 {
        seen.add(first.next_event().await.expect("an event"), binding);
    }
    drop(first);
    // The task goes on while nobody listens: a chunk more than the reader saw.
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let task = server.rpc_ok("GetTask", json!({"id": task_id})).await;
        let chunks = task["artifacts"][0]["parts"].as_array().map_or(0, Vec::len);
        if chunks > seen.chunks.len() || task["status"]["state"] == "TASK_STATE_COMPLETED" {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the task made no progress: {task}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    let mut second = subscribe(&server, binding, &task_id, seen.ids.last().copied()).await;
    for _ in 0..5 {
        seen.add(second.next_event().await.expect("an event"), binding);
    }
    drop(second);
    // The task ends while nobody listens.
    for _ in 0..100 {
        let task = server.rpc_ok("GetTask", json!({"id": task_id})).await;
        if task["status"]["state"] == "TASK_STATE_COMPLETED" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let mut third = subscribe(&server, binding, &task_id, seen.ids.last().copied()).await;
    while let Some(event) = third.next_event().await {
        seen.add(event, binding);
    }
    let first_id = seen.ids[0];
    assert_eq!(seen.ids, (first_id..first_id + seen.ids.len() as u64).collect::<Vec<_>>(), "no gap, no repeat");
    let first_chunk = seen.chunks[0];
    assert_eq!(seen.chunks, (first_chunk..CHUNKS).collect::<Vec<_>>(), "every chunk after the first seen, once");
    assert_eq!(seen.last_state.as_deref(), Some("TASK_STATE_COMPLETED"));
}

#[tokio::test]
async fn a_json_rpc_subscription_resumes_after_the_last_event_id() {
    reconnecting_loses_and_repeats_nothing(Binding::JsonRpc).await;
}

#[tokio::test]
async fn a_rest_subscription_resumes_after_the_last_event_id() {
    reconnecting_loses_and_repeats_nothing(Binding::Rest).await;
}

/// The snapshot that opens a subscription has an id too: a client dropped right after it resumes
/// from there.
#[tokio::test]
async fn a_subscription_resumes_after_its_opening_snapshot() {
    let builder = RequestHandler::builder(Ticker { chunks: 5, every: Duration::from_millis(20) });
    let server = TestServer::start(builder).await;
    let task_id = start_ticking(&server).await;
    let mut stream = subscribe(&server, Binding::JsonRpc, &task_id, None).await;
    let snapshot = stream.next_event().await.expect("the task first");
    assert!(snapshot.data["result"]["task"].is_object(), "{snapshot:?}");
    let version: u64 = snapshot.id.expect("the snapshot has an id").parse().unwrap();
    drop(stream);
    let mut resumed = subscribe(&server, Binding::JsonRpc, &task_id, Some(version)).await;
    let mut seen = Seen::default();
    while let Some(event) = resumed.next_event().await {
        seen.add(event, Binding::JsonRpc);
    }
    assert_eq!(seen.ids.first(), Some(&(version + 1)), "the event right after the snapshot comes next");
    assert_eq!(seen.last_state.as_deref(), Some("TASK_STATE_COMPLETED"));
}

#[tokio::test]
async fn auth_required_is_not_final_in_a_v03_stream() {
    let gate = Gate::default();
    let server = TestServer::start(RequestHandler::builder(NeedsAuth(gate.clone()))).await;
    let message =
        json!({"kind": "message", "messageId": "m1", "role": "user", "parts": [{"kind": "text", "text": "hi"}]});
    let mut stream = server.open_rpc_stream("message/stream", json!({"message": message})).await;
    let mut updates = Vec::new();
    while let Some(event) = stream.next_event().await {
        let result = &event.data["result"];
        if result["kind"] != "status-update" {
            continue;
        }
        let state = result["status"]["state"].as_str().unwrap_or("").to_owned();
        if state == "auth-required" {
            gate.open();
        }
        updates.push((state, result["final"].as_bool()));
    }
    let expected = [("auth-required".to_owned(), Some(false)), ("completed".to_owned(), Some(true))];
    assert_eq!(updates, expected, "the stream goes on after AUTH_REQUIRED; only its last event is final");
}

/// A turn streamed to a task that waits for input opens with the task holding the new message,
/// then carries every event of the turn after it, with consecutive ids, to the end of the task.
#[tokio::test]
async fn a_streamed_turn_opens_with_its_message_then_follows_the_agent() {
    let server = TestServer::start(conformance()).await;
    let first = server.rpc_ok("SendMessage", json!({"message": user_message("tck-input-required-1", "hi")})).await;
    assert_eq!(first["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{first}");
    let mut turn = user_message("tck-complete-task-9", "go on");
    turn["taskId"] = first["task"]["id"].clone();
    let mut stream = server.open_rpc_stream("SendStreamingMessage", json!({"message": turn})).await;

    let opening = stream.next_event().await.expect("the task first");
    let history = opening.data["result"]["task"]["history"].as_array().expect("a task with its history").clone();
    assert_eq!(history.last().map(|m| &m["messageId"]), Some(&json!("tck-complete-task-9")), "{:?}", opening.data);
    let mut ids = vec![opening.id.expect("an id").parse::<u64>().unwrap()];
    let mut last = None;
    while let Some(event) = stream.next_event().await {
        ids.push(event.id.expect("an id").parse::<u64>().unwrap());
        last = Some(event.data);
    }
    assert_eq!(ids, (ids[0]..ids[0] + ids.len() as u64).collect::<Vec<_>>(), "consecutive after the opening");
    let last = last.expect("the turn's events after the opening");
    assert_eq!(last["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED", "{last}");
}
