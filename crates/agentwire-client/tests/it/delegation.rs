//! A parent task's delegated tasks, on two other agents (one called over v1.0, one over v0.3),
//! are canceled when the parent is.

use std::time::Duration;

use agentwire_client::{Client, Delegation, Version, DELEGATED_BY};
use agentwire_server::agent::{AgentExecutor, EventStream, ExecutionContext};
use agentwire_server::RequestHandler;
use agentwire_test::{user_message, Cooperative, TestServer, TIMEOUT};
use agentwire_types::{Message, SendMessageConfiguration, SendMessageRequest};
use serde_json::{json, Value};

/// Hands a part of its task to each downstream agent, then works until canceled.
struct Parent {
    downstream: Vec<Client>,
}

impl AgentExecutor for Parent {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        let downstream = self.downstream.clone();
        ctx.run(|ctx, updater| async move {
            updater.working().await?;
            let delegation = Delegation::new(&ctx.task_id, &ctx.context_id, ctx.cancellation().clone());
            for (i, client) in downstream.iter().enumerate() {
                let configuration = SendMessageConfiguration { return_immediately: true, ..Default::default() };
                let message = Message::user(format!("{}-{i}", ctx.message.message_id), "a part of the work");
                let request =
                    SendMessageRequest { configuration: Some(configuration), ..SendMessageRequest::new(message) };
                delegation.send_message(client, request).await.map_err(|e| e.to_string())?;
            }
            ctx.cancellation().cancelled().await;
            updater.canceled().await
        })
    }
}

/// The one task an agent holds, once it has one.
async fn only_task(server: &TestServer) -> Value {
    tokio::time::timeout(TIMEOUT, async {
        loop {
            let (_, listed) = server.rest(reqwest::Method::GET, "/tasks?historyLength=1", None).await;
            if let Some(task) = listed["tasks"].as_array().and_then(|tasks| tasks.first()) {
                return task.clone();
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the agent was sent a task")
}

async fn state_becomes(server: &TestServer, task_id: &Value, state: &str) {
    let reached = tokio::time::timeout(TIMEOUT, async {
        loop {
            let (_, task) =
                server.rest(reqwest::Method::GET, &format!("/tasks/{}", task_id.as_str().unwrap()), None).await;
            if task["status"]["state"] == state {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    reached.await.unwrap_or_else(|_| panic!("task {task_id} did not become {state}"));
}

#[tokio::test]
async fn canceling_a_parent_cancels_its_delegated_tasks_on_other_agents() {
    let (v1_agent, v03_agent) = tokio::join!(
        TestServer::start(RequestHandler::builder(Cooperative)),
        TestServer::start(RequestHandler::builder(Cooperative))
    );
    let v1 = Client::builder(&v1_agent.base).only_version(Version::V1).connect().await.unwrap();
    let v03 = Client::builder(&v03_agent.base).only_version(Version::V03).connect().await.unwrap();
    let parent = TestServer::start(RequestHandler::builder(Parent { downstream: vec![v1, v03] })).await;
    let sent = json!({"message": user_message("p1", "plan"), "configuration": {"returnImmediately": true}});
    let parent_task = parent.rpc_ok("SendMessage", sent).await;
    let (downstream_v1, downstream_v03) = tokio::join!(only_task(&v1_agent), only_task(&v03_agent));
    for downstream in [&downstream_v1, &downstream_v03] {
        assert_eq!(downstream["status"]["state"], "TASK_STATE_WORKING", "{downstream}");
        let named = &downstream["history"][0]["metadata"][DELEGATED_BY]["taskId"];
        assert_eq!(named, &parent_task["task"]["id"], "the downstream message names its parent: {downstream}");
    }

    let canceled = parent.rpc_ok("CancelTask", json!({"id": parent_task["task"]["id"]})).await;
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED", "{canceled}");
    state_becomes(&v1_agent, &downstream_v1["id"], "TASK_STATE_CANCELED").await;
    state_becomes(&v03_agent, &downstream_v03["id"], "TASK_STATE_CANCELED").await;
}
