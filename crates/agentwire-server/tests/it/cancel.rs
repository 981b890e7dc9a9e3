//! CancelTask: a cooperative agent ends its own task; one that ignores cancellation has it
//! canceled for it once the grace period is over.

use std::time::Duration;

use tokio::time::Instant;

use agentwire_server::agent::{AgentExecutor, EventStream, ExecutionContext};
use agentwire_server::{Limits, RequestHandler};
use agentwire_test::{user_message, Cooperative, Gate, TestServer};
use serde_json::json;

/// Works until the test lets it go, whatever a client asks.
struct Stubborn(Gate);

impl AgentExecutor for Stubborn {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        let released = self.0.clone();
        ctx.run(|_, updater| async move {
            updater.working().await?;
            released.wait().await;
            Ok(())
        })
    }
}

async fn running_task(server: &TestServer) -> serde_json::Value {
    let params = json!({"message": user_message("m1", "work"), "configuration": {"returnImmediately": true}});
    let task = server.rpc_ok("SendMessage", params).await["task"].clone();
    // Subscribed until it works, so the cancel meets a running execution.
    let mut stream = server.open_rpc_stream("SubscribeToTask", json!({"id": task["id"]})).await;
    while let Some(event) = stream.next_event().await {
        let state = &event.data["result"];
        let working = |s: &serde_json::Value| s == "TASK_STATE_WORKING";
        if working(&state["task"]["status"]["state"]) || working(&state["statusUpdate"]["status"]["state"]) {
            break;
        }
    }
    task
}

#[tokio::test]
async fn an_agent_that_ignores_cancellation_is_canceled_after_the_grace_period() {
    let gate = Gate::default();
    let limits = Limits { cancel_grace: Duration::from_millis(200), ..Limits::default() };
    let server = TestServer::start(RequestHandler::builder(Stubborn(gate.clone())).limits(limits)).await;
    let task = running_task(&server).await;
    let started = Instant::now();
    let canceled = server.rpc_ok("CancelTask", json!({"id": task["id"]})).await;
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED", "{canceled}");
    assert!(started.elapsed() >= Duration::from_millis(200), "canceled before the grace period ended");
    let later = server.rpc_ok("GetTask", json!({"id": task["id"]})).await;
    assert_eq!(later["status"]["state"], "TASK_STATE_CANCELED");
    gate.open();
}

#[tokio::test]
async fn a_cooperative_agent_ends_its_task_itself() {
    let limits = Limits { cancel_grace: Duration::from_secs(30), ..Limits::default() };
    let server = TestServer::start(RequestHandler::builder(Cooperative).limits(limits)).await;
    let task = running_task(&server).await;
    let started = Instant::now();
    let canceled = server.rpc_ok("CancelTask", json!({"id": task["id"]})).await;
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED", "{canceled}");
    assert!(started.elapsed() < Duration::from_secs(10), "waited for the grace period: {:?}", started.elapsed());
}
