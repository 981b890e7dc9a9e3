//! An agent that ends each subscription after sending the task as it stands, while the task goes
//! on: the stream subscribes again after a wait that doubles each time nothing new came, and
//! gives up after `Reconnect::attempts` such subscriptions; a subscription with news (the task
//! changed) starts the count again.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentwire_client::{Client, Error, Reconnect};
use agentwire_test::TIMEOUT;
use agentwire_types::{StreamResponse, SubscribeToTaskRequest, TaskState};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Json;
use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio::time::Instant;

/// An agent whose `n`th subscription (from 0) sends `snapshot(n)` alone and ends (with `breaks`,
/// by breaking the connection, as a proxy's idle timeout or a flaky link does); `GetTask`
/// answers with the last snapshot. Returns its base URL and when each subscription came.
async fn ending_agent(snapshot: fn(usize) -> Value, breaks: bool) -> (String, Arc<Mutex<Vec<Instant>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let card = json!({
        "name": "early end", "description": "", "version": "1",
        "supportedInterfaces": [{"url": format!("{base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true}, "defaultInputModes": [], "defaultOutputModes": [], "skills": [],
    });
    let subscriptions = Arc::new(Mutex::new(Vec::new()));
    let counted = subscriptions.clone();
    let rpc = post(move |Json(request): Json<Value>| {
        let counted = counted.clone();
        async move {
            let mut made = counted.lock().unwrap();
            let answer = |task: Value| json!({"jsonrpc": "2.0", "id": request["id"], "result": task});
            if request["method"] != "SubscribeToTask" {
                return Json(answer(snapshot(made.len().saturating_sub(1)))).into_response();
            }
            let event = answer(json!({"task": snapshot(made.len())}));
            made.push(Instant::now());
            let sent = futures_util::stream::iter([Ok(format!("data: {event}\n\n"))]);
            // The event goes out before the link breaks.
            let broken = futures_util::stream::once(async {
                tokio::time::sleep(Duration::from_millis(50)).await;
                Err(std::io::Error::other("the link broke"))
            });
            let body = match breaks {
                true => axum::body::Body::from_stream(sent.chain(broken)),
                false => axum::body::Body::from_stream(sent),
            };
            ([("content-type", "text/event-stream")], body).into_response()
        }
    });
    let app = axum::Router::new()
        .route("/.well-known/agent-card.json", get(move || async move { Json(card) }))
        .route("/", rpc);
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, subscriptions)
}

fn working(_: usize) -> Value {
    json!({"id": "task-1", "contextId": "context-1", "status": {"state": "TASK_STATE_WORKING"}})
}

/// The task with one more artifact at each subscription, completed at the sixth.
fn growing(n: usize) -> Value {
    let artifacts: Vec<Value> =
        (0..n).map(|i| json!({"artifactId": format!("a{i}"), "parts": [{"text": format!("{i}")}]})).collect();
    let state = if n >= 5 { "TASK_STATE_COMPLETED" } else { "TASK_STATE_WORKING" };
    json!({"id": "task-1", "contextId": "context-1", "status": {"state": state}, "artifacts": artifacts})
}

async fn client(base: &str, reconnect: Reconnect) -> Client {
    Client::builder(base).timeout(TIMEOUT).reconnect(reconnect).connect().await.expect("connects")
}

#[tokio::test]
async fn a_stream_ended_again_and_again_without_news_waits_longer_then_gives_up() {
    let (base, subscriptions) = ending_agent(working, false).await;
    let first_wait = Duration::from_millis(20);
    let client = client(&base, Reconnect { attempts: 3, initial_backoff: first_wait }).await;
    let mut events =
        client.subscribe(SubscribeToTaskRequest { id: "task-1".into(), ..Default::default() }).await.unwrap();
    let mut seen = Vec::new();
    let reading = async {
        loop {
            match events.next().await {
                Some(Ok(event)) => seen.push(event),
                Some(Err(error)) => break error,
                None => panic!("the stream ended without saying why, after {seen:?}"),
            }
        }
    };
    let error = tokio::time::timeout(TIMEOUT, reading).await.expect("the stream gives up in time");
    assert!(matches!(&error, Error::StreamEnded { task_id, times: 3 } if task_id == "task-1"), "{error:?}");
    assert!(tokio::time::timeout(TIMEOUT, events.next()).await.unwrap().is_none(), "the stream ends after it");
    assert!(matches!(seen.as_slice(), [StreamResponse::Task(_)]), "the same task, passed on once: {seen:?}");

    let made = subscriptions.lock().unwrap().clone();
    assert_eq!(made.len(), 4, "the first subscription and three more");
    for (n, pair) in made.windows(2).enumerate() {
        let wait = pair[1].duration_since(pair[0]);
        assert!(wait >= first_wait * 2u32.pow(n as u32), "wait {n}: {wait:?}, after {made:?}");
    }
}

#[tokio::test]
async fn each_subscription_with_news_starts_the_count_again() {
    let (base, subscriptions) = ending_agent(growing, false).await;
    let client = client(&base, Reconnect { attempts: 2, initial_backoff: Duration::from_millis(10) }).await;
    let events = client.subscribe(SubscribeToTaskRequest { id: "task-1".into(), ..Default::default() }).await.unwrap();
    let events: Vec<_> = tokio::time::timeout(TIMEOUT, events.collect::<Vec<_>>()).await.expect("in time");
    let states: Vec<_> = events.iter().map(|event| event.as_ref().expect("no error").task_state()).collect();
    assert_eq!(states.len(), 6, "each snapshot, new each time: {events:?}");
    assert_eq!(states.last(), Some(&Some(TaskState::Completed)));
    assert_eq!(subscriptions.lock().unwrap().len(), 6);
}

/// Working, the same each time, until the seventh subscription, which finds it completed.
fn completed_at_seventh(n: usize) -> Value {
    let state = if n >= 6 { "TASK_STATE_COMPLETED" } else { "TASK_STATE_WORKING" };
    json!({"id": "task-1", "contextId": "context-1", "status": {"state": state}})
}

/// A connection that breaks is resumed for as long as each resumption works, news or not: only
/// an agent that ends the stream itself again and again is given up on.
#[tokio::test]
async fn a_broken_connection_resumed_each_time_is_followed_past_the_attempts() {
    let (base, subscriptions) = ending_agent(completed_at_seventh, true).await;
    let client = client(&base, Reconnect { attempts: 3, initial_backoff: Duration::from_millis(10) }).await;
    let events = client.subscribe(SubscribeToTaskRequest { id: "task-1".into(), ..Default::default() }).await.unwrap();
    let events: Vec<_> = tokio::time::timeout(TIMEOUT, events.collect::<Vec<_>>()).await.expect("in time");
    let last = events.last().expect("events").as_ref().expect("no error at the end");
    assert_eq!(last.task_state(), Some(TaskState::Completed), "{events:?}");
    assert_eq!(subscriptions.lock().unwrap().len(), 7);
}
