//! A parent task's delegated tasks, on two other agents (one called over v1.0, one over v0.3),
//! are canceled when the parent is; made as the parent's caller, they are the caller's.

use std::time::Duration;

use agentwire_client::{Client, Delegation, Version, DELEGATED_BY};
use agentwire_server::agent::{AgentExecutor, EventStream, ExecutionContext};
use agentwire_server::auth::StaticAuth;
use agentwire_server::{App, RequestHandler};
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

/// Hands its task to the downstream agent as its own caller (the parent's `Authorization`), then
/// works until canceled.
struct AsCaller {
    downstream: Client,
}

impl AgentExecutor for AsCaller {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        let downstream = self.downstream.clone();
        ctx.run(|ctx, updater| async move {
            updater.working().await?;
            let caller = ctx.request.metadata.get("authorization").cloned().ok_or("no caller's token")?;
            let delegation =
                Delegation::new(&ctx.task_id, &ctx.context_id, ctx.cancellation().clone()).as_caller(caller);
            let configuration = SendMessageConfiguration { return_immediately: true, ..Default::default() };
            let message = Message::user(format!("{}-down", ctx.message.message_id), "a part of the work");
            let request = SendMessageRequest { configuration: Some(configuration), ..SendMessageRequest::new(message) };
            delegation.send_message(&downstream, request).await.map_err(|e| e.to_string())?;
            ctx.cancellation().cancelled().await;
            updater.canceled().await
        })
    }
}

/// The tasks `token`'s principal holds at `server`, as JSON-RPC ListTasks sees them.
async fn tasks_of(server: &TestServer, token: &str) -> Vec<Value> {
    let bearer = format!("Bearer {token}");
    let listed = server.rpc_with_headers("ListTasks", json!({}), &[("authorization", &bearer)]).await;
    listed["result"]["tasks"].as_array().cloned().unwrap_or_else(|| panic!("{listed}"))
}

#[tokio::test]
async fn a_delegation_as_the_caller_makes_the_callers_tasks_downstream_and_cancels_them_as_the_caller() {
    let auth = || {
        let auth = StaticAuth::default().with_spec("bearer:alice=alice-token,bob=bob-token").unwrap();
        App::new().authenticator(auth)
    };
    let downstream = TestServer::start_app(RequestHandler::builder(Cooperative), auth()).await;
    let client = Client::builder(&downstream.base).connect().await.unwrap();
    let parent = TestServer::start_app(RequestHandler::builder(AsCaller { downstream: client }), auth()).await;
    let mut parents = Vec::new();
    for (token, id) in [("alice-token", "pa"), ("bob-token", "pb")] {
        let sent = json!({"message": user_message(id, "plan"), "configuration": {"returnImmediately": true}});
        let bearer = format!("Bearer {token}");
        let answer = parent.rpc_with_headers("SendMessage", sent, &[("authorization", &bearer)]).await;
        parents.push(answer["result"]["task"]["id"].clone());
    }
    let own = |token: &'static str| {
        let downstream = &downstream;
        async move {
            tokio::time::timeout(TIMEOUT, async {
                loop {
                    if let [task] = tasks_of(downstream, token).await.as_slice() {
                        return task.clone();
                    }
                    tokio::task::yield_now().await;
                }
            })
            .await
            .unwrap_or_else(|_| panic!("{token}'s delegated task never appeared as {token}'s"))
        }
    };
    let (alices, bobs) = (own("alice-token").await, own("bob-token").await);
    assert_ne!(alices["id"], bobs["id"]);

    // Alice cancels her parent task: her delegated task is canceled too, by a cancel made as her.
    let bearer = [("authorization", "Bearer alice-token")];
    let canceled = parent.rpc_with_headers("CancelTask", json!({"id": parents[0]}), &bearer).await;
    assert_eq!(canceled["result"]["status"]["state"], "TASK_STATE_CANCELED", "{canceled}");
    tokio::time::timeout(TIMEOUT, async {
        while tasks_of(&downstream, "alice-token").await[0]["status"]["state"] != "TASK_STATE_CANCELED" {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("alice's delegated task is canceled with her parent task");
    assert_eq!(tasks_of(&downstream, "bob-token").await[0]["status"]["state"], "TASK_STATE_WORKING");
}
