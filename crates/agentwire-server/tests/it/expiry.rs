//! Tasks that last too long end through the normal event path: one left waiting for input past
//! `expire_waiting` is canceled (its webhook told, its place among the tasks in progress freed),
//! and an execution past `max_execution` is canceled and its task failed.

use std::time::Duration;

use agentwire_server::agent::{AgentExecutor, EventStream, ExecutionContext};
use agentwire_server::{CardConfig, Limits, Metrics, PushSettings, RequestHandler, WebhookGuard};
use agentwire_test::{user_message, Gate, TestServer, TIMEOUT};
use axum::routing::post;
use serde_json::{json, Value};
use tokio::sync::mpsc;

/// Asks for input, and stops.
struct AsksForInput;

impl AgentExecutor for AsksForInput {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        ctx.run(|_, updater| async move { updater.input_required("which account?").await })
    }
}

/// Works and never stops by itself, whatever it is asked.
struct Endless(Gate);

impl AgentExecutor for Endless {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        let never = self.0.clone();
        ctx.run(|_, updater| async move {
            updater.working().await?;
            never.wait().await;
            Ok(())
        })
    }
}

/// Works until canceled, then stops without a word.
struct StopsWhenCanceled;

impl AgentExecutor for StopsWhenCanceled {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        ctx.run(|ctx, updater| async move {
            updater.working().await?;
            ctx.cancellation().cancelled().await;
            Ok(())
        })
    }
}

fn card() -> CardConfig {
    let mut config = CardConfig::default();
    config.card.capabilities.push_notifications = Some(true);
    config.card.capabilities.streaming = Some(true);
    config
}

/// A webhook on a loopback port that hands every delivery to the test.
async fn webhook() -> (String, mpsc::Receiver<Value>, tokio::task::JoinHandle<()>) {
    // Room for every delivery one task makes here.
    let (tx, rx) = mpsc::channel(64);
    let app = axum::Router::new().route(
        "/hook",
        post(move |body: axum::Json<Value>| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(body.0).await;
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, rx, task)
}

fn state_of(event: &Value) -> Option<&str> {
    event["statusUpdate"]["status"]["state"].as_str().or_else(|| event["task"]["status"]["state"].as_str())
}

#[tokio::test]
async fn a_task_left_waiting_is_canceled_its_webhook_told_and_its_place_freed() {
    let limits =
        Limits { expire_waiting: Some(Duration::from_millis(300)), max_unfinished_tasks: 1, ..Limits::default() };
    let push = PushSettings { guard: WebhookGuard { allow_private: true }, ..PushSettings::default() };
    let metrics = Metrics::new();
    let builder =
        RequestHandler::builder(AsksForInput).card(card()).limits(limits).push_settings(push).metrics(&metrics);
    let server = TestServer::start(builder).await;
    let (url, mut deliveries, _hook) = webhook().await;
    let send =
        json!({"message": user_message("m1", "pay"), "configuration": {"taskPushNotificationConfig": {"url": url}}});
    let waiting = server.rpc_ok("SendMessage", send).await;
    assert_eq!(waiting["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{waiting}");
    let task_id = waiting["task"]["id"].clone();
    // Its place among the principal's tasks in progress is taken.
    let refused = server.rpc("SendMessage", json!({"message": user_message("m2", "another")})).await;
    assert!(refused.get("error").is_some(), "a second task passed the limit of one: {refused}");

    let canceled = tokio::time::timeout(TIMEOUT, async {
        loop {
            let event = deliveries.recv().await.expect("the webhook is told");
            if state_of(&event) == Some("TASK_STATE_CANCELED") {
                return event;
            }
        }
    })
    .await
    .expect("the task left waiting was canceled");
    assert_eq!(canceled["statusUpdate"]["taskId"], task_id, "{canceled}");
    let said = canceled["statusUpdate"]["status"]["message"]["parts"][0]["text"].as_str().unwrap_or_default();
    assert!(said.contains("waited for input longer than 300 ms"), "{canceled}");
    let task = server.rpc_ok("GetTask", json!({"id": task_id})).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_CANCELED", "{task}");
    // The place is free again.
    let next = server.rpc_ok("SendMessage", json!({"message": user_message("m3", "again")})).await;
    assert_eq!(next["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{next}");
    assert!(metrics.encode().contains("agentwire_tasks_expired_total{reason=\"waiting\"} 1"), "{}", metrics.encode());
}

/// Opens a stream of a new task and reads it to its end; returns the last event.
async fn streamed_to_the_end(server: &TestServer) -> Value {
    let events = server.rpc_stream("SendStreamingMessage", json!({"message": user_message("m1", "work")})).await;
    events.last().map(|event| event["result"].clone()).expect("a stream with events")
}

#[tokio::test]
async fn an_execution_past_its_limit_that_ignores_cancellation_fails() {
    let limits = Limits {
        max_execution: Some(Duration::from_millis(300)),
        cancel_grace: Duration::from_millis(100),
        ..Limits::default()
    };
    let metrics = Metrics::new();
    let gate = Gate::default();
    let builder = RequestHandler::builder(Endless(gate.clone())).card(card()).limits(limits).metrics(&metrics);
    let server = TestServer::start(builder).await;
    let last = streamed_to_the_end(&server).await;
    assert_eq!(state_of(&last), Some("TASK_STATE_FAILED"), "{last}");
    let said = last["statusUpdate"]["status"]["message"]["parts"][0]["text"].as_str().unwrap_or_default();
    assert!(said.contains("ran longer than 300 ms"), "{last}");
    assert!(metrics.encode().contains("agentwire_tasks_expired_total{reason=\"execution\"} 1"), "{}", metrics.encode());
    gate.open();
}

#[tokio::test]
async fn an_execution_past_its_limit_is_told_to_stop_and_its_task_fails() {
    let limits = Limits { max_execution: Some(Duration::from_millis(200)), ..Limits::default() };
    let server = TestServer::start(RequestHandler::builder(StopsWhenCanceled).card(card()).limits(limits)).await;
    let last = streamed_to_the_end(&server).await;
    assert_eq!(state_of(&last), Some("TASK_STATE_FAILED"), "{last}");
}
