//! What a blocking SendMessage returns when the agent stops early, pauses, waits, panics, or never
//! answers.

use std::sync::Arc;
use std::time::Duration;

use agentwire_server::agent::{AgentExecutor, EventStream, ExecutionContext};
use agentwire_server::RequestHandler;
use agentwire_test::{user_message, Gate, TestServer};
use serde_json::json;
use tokio::task::JoinHandle;

/// Works, then stops without ending the task.
struct StopsWhileWorking;

impl AgentExecutor for StopsWhileWorking {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        ctx.run(|_, updater| async move { updater.working().await })
    }
}

/// Produces nothing at all.
struct Silent;

impl AgentExecutor for Silent {
    fn execute(&self, _ctx: ExecutionContext) -> EventStream {
        Box::pin(futures_util::stream::empty())
    }
}

/// Asks for input on the first turn and completes on the second.
struct AsksOnce;

impl AgentExecutor for AsksOnce {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        ctx.run(|ctx, updater| async move {
            if ctx.task.is_none() {
                updater.input_required("which one?").await
            } else {
                updater.complete_with(format!("you chose {}", ctx.message.text())).await
            }
        })
    }
}

/// Asks for input and, without waiting for it, completes: both events are queued at once.
struct AsksAndCompletes;

impl AgentExecutor for AsksAndCompletes {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        ctx.run(|_, updater| async move {
            updater.input_required("which one?").await?;
            updater.complete_with("never mind").await
        })
    }
}

/// Panics in its first step when asked to; otherwise works and stops.
struct Panics;

impl AgentExecutor for Panics {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        ctx.run(|ctx, updater| async move {
            if ctx.message.text() == "panic" {
                panic!("the test agent panics on purpose");
            }
            updater.working().await
        })
    }
}

/// Works, says so, waits until the test lets it go on, then completes.
#[derive(Default)]
struct Waits {
    working: Gate,
    go_on: Gate,
}

impl AgentExecutor for Waits {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        let (working, go_on) = (self.working.clone(), self.go_on.clone());
        ctx.run(move |_, updater| async move {
            updater.working().await?;
            working.open();
            go_on.wait().await;
            updater.complete_with("done").await
        })
    }
}

async fn send(server: &TestServer, params: serde_json::Value) -> serde_json::Value {
    tokio::time::timeout(Duration::from_secs(10), server.rpc("SendMessage", params)).await.expect("SendMessage hung")
}

#[tokio::test]
async fn an_agent_that_stops_early_returns_the_task_as_it_is() {
    let server = TestServer::start(RequestHandler::builder(StopsWhileWorking)).await;
    let reply = send(&server, json!({"message": user_message("m1", "hi")})).await;
    assert_eq!(reply["result"]["task"]["status"]["state"], "TASK_STATE_WORKING", "{reply}");
}

#[tokio::test]
async fn an_agent_that_says_nothing_is_an_invalid_agent_response() {
    let server = TestServer::start(RequestHandler::builder(Silent)).await;
    let reply = send(&server, json!({"message": user_message("m1", "hi")})).await;
    assert_eq!(reply["error"]["code"], -32006, "{reply}");
}

#[tokio::test]
async fn each_turn_returns_when_the_task_settles() {
    let server = TestServer::start(RequestHandler::builder(AsksOnce)).await;
    let first = send(&server, json!({"message": user_message("m1", "hi")})).await;
    let task = &first["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{first}");
    let mut answer = user_message("m2", "blue");
    answer["taskId"] = task["id"].clone();
    let params = json!({"message": answer, "configuration": {"historyLength": 1}});
    let second = send(&server, params).await;
    let task = &second["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{second}");
    assert_eq!(task["status"]["message"]["parts"][0]["text"], "you chose blue");
    // Four messages so far (hi, the question, blue, the reply); historyLength 1 keeps the reply.
    assert_eq!(task["history"].as_array().map(Vec::len), Some(1), "{second}");
}

#[tokio::test]
async fn an_agent_that_panics_is_an_error_and_the_connection_serves_on() {
    let server = TestServer::start(RequestHandler::builder(Panics)).await;
    let reply = send(&server, json!({"message": user_message("m1", "panic")})).await;
    assert_eq!(reply["error"]["code"], -32006, "{reply}");
    // The same client (one kept-alive connection) is answered again.
    let reply = send(&server, json!({"message": user_message("m2", "calm")})).await;
    assert_eq!(reply["result"]["task"]["status"]["state"], "TASK_STATE_WORKING", "{reply}");
}

/// Starts a SendMessage to [`Waits`], and returns once the agent works: the server, the request
/// in flight, and the gate that lets the agent go on.
async fn send_to_an_agent_that_waits() -> (Arc<TestServer>, JoinHandle<serde_json::Value>, Gate) {
    let agent = Waits::default();
    let (working, go_on) = (agent.working.clone(), agent.go_on.clone());
    let server = Arc::new(TestServer::start(RequestHandler::builder(agent)).await);
    let request = tokio::spawn({
        let server = Arc::clone(&server);
        async move { send(&server, json!({"message": user_message("m1", "hi")})).await }
    });
    working.wait().await;
    (server, request, go_on)
}

#[tokio::test]
async fn a_blocking_send_waits_for_an_agent_that_waits() {
    let (_server, request, go_on) = send_to_an_agent_that_waits().await;
    assert!(!request.is_finished(), "answered while the task was WORKING");
    go_on.open();
    let reply = request.await.unwrap();
    assert_eq!(reply["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{reply}");
}

#[tokio::test]
async fn an_execution_outlives_the_request_that_started_it() {
    let (server, request, go_on) = send_to_an_agent_that_waits().await;
    request.abort();
    assert!(request.await.unwrap_err().is_cancelled(), "the client gave up waiting");
    let tasks = server.rpc_ok("ListTasks", json!({})).await;
    let task_id = tasks["tasks"][0]["id"].clone();
    let mut stream = server.open_rpc_stream("SubscribeToTask", json!({"id": task_id})).await;
    let snapshot = stream.next_event().await.expect("the task");
    assert_eq!(snapshot.data["result"]["task"]["status"]["state"], "TASK_STATE_WORKING");
    go_on.open();
    let mut last = snapshot.data;
    while let Some(event) = stream.next_event().await {
        last = event.data;
    }
    assert_eq!(last["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED", "{last}");
}

#[tokio::test]
async fn the_caller_gets_the_state_that_settled_the_task_though_more_events_were_queued() {
    let server = TestServer::start(RequestHandler::builder(AsksAndCompletes)).await;
    let reply = send(&server, json!({"message": user_message("m1", "hi")})).await;
    let task = &reply["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{reply}");
    let later = server.rpc_ok("GetTask", json!({"id": task["id"]})).await;
    assert_eq!(later["status"]["state"], "TASK_STATE_COMPLETED", "{later}");
}

#[tokio::test]
async fn return_immediately_gets_the_task_as_created_from_an_agent_that_finishes_at_once() {
    let server = TestServer::start(RequestHandler::builder(agentwire_server::agent::EchoAgent)).await;
    let params = json!({"message": user_message("m1", "hi"), "configuration": {"returnImmediately": true}});
    let reply = send(&server, params).await;
    let task = &reply["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_SUBMITTED", "{reply}");
    // Followed until it ends: a subscription streams it while it runs, and answers an error
    // (UnsupportedOperation) once it has ended.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task["id"]}});
    let url = format!("{}/", server.base);
    let response = server.http.post(url).header("A2A-Version", "1.0").json(&body).send().await.unwrap();
    if response.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream") {
        let mut stream = agentwire_test::SseReader::new(response);
        while stream.next_event().await.is_some() {}
    } else {
        let ended: serde_json::Value = response.json().await.unwrap();
        assert_eq!(ended["error"]["code"], -32004, "{ended}");
    }
    let later = server.rpc_ok("GetTask", json!({"id": task["id"]})).await;
    assert_eq!(later["status"]["state"], "TASK_STATE_COMPLETED", "{later}");
    assert_eq!(later["artifacts"][0]["parts"][0]["text"], "hi", "{later}");
}

/// Works, then panics once the test has seen it working.
#[derive(Default)]
struct PanicsWhileWorking(Gate);

impl AgentExecutor for PanicsWhileWorking {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        let seen = self.0.clone();
        ctx.run(|_, updater| async move {
            updater.working().await?;
            seen.wait().await;
            panic!("the test agent panics on purpose");
        })
    }
}

#[tokio::test]
async fn an_agent_that_panics_mid_task_fails_its_task_and_ends_its_streams() {
    let agent = PanicsWhileWorking::default();
    let seen = agent.0.clone();
    let server = TestServer::start(RequestHandler::builder(agent)).await;
    let mut stream = server.open_rpc_stream("SendStreamingMessage", json!({"message": user_message("m1", "hi")})).await;
    let task_id = stream.next_event().await.expect("the task").data["result"]["task"]["id"].clone();
    let mut states = Vec::new();
    while let Some(event) = stream.next_event().await {
        let state = event.data["result"]["statusUpdate"]["status"]["state"].as_str().unwrap_or("").to_owned();
        if state == "TASK_STATE_WORKING" {
            seen.open();
        }
        states.push(state);
    }
    assert_eq!(states, ["TASK_STATE_WORKING", "TASK_STATE_FAILED"], "the stream ends after FAILED");
    let task = server.rpc_ok("GetTask", json!({"id": task_id})).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_FAILED");
    assert!(task["status"]["message"]["parts"][0]["text"].as_str().is_some_and(|t| !t.is_empty()), "{task}");
    let cancel = tokio::time::timeout(Duration::from_secs(1), server.rpc("CancelTask", json!({"id": task_id})));
    assert_eq!(cancel.await.expect("answered at once")["error"]["code"], -32002, "a failed task is not cancelable");
}
