//! A send whose connection is cut after it reached the agent is sent again under the same
//! idempotency key, and ends with exactly one task, on every binding.

use std::time::Duration;

use crate::common::message;
use agentwire_client::{Binding, Client, Version};
use agentwire_server::{router_with, serve, HttpOptions, RequestHandler, ServeOptions};
use agentwire_test::{Counted, CuttingProxy, TIMEOUT};
use agentwire_types::{SendMessageRequest, SendMessageResponse, TaskState};
use serde_json::Value;
use tokio::net::TcpListener;

/// The agent served behind a proxy that can cut connections: the proxy, the base clients use
/// (through the proxy), and the server's own base (around it).
async fn behind_a_proxy(agent: Counted) -> (CuttingProxy, String, String) {
    let front = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let back = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", front.local_addr().unwrap());
    let direct = format!("http://{}", back.local_addr().unwrap());
    let proxy = CuttingProxy::start(front, back.local_addr().unwrap());
    let handler = RequestHandler::builder(agent).card_url(&base).build();
    let options = ServeOptions { drain: Duration::ZERO, ..ServeOptions::default() };
    tokio::spawn(serve(back, router_with(handler, HttpOptions::default()), std::future::pending(), options));
    (proxy, base, direct)
}

/// The ids of the tasks stored, asked of the server directly.
async fn stored_tasks(direct: &str) -> Vec<String> {
    let listed: Value = reqwest::Client::new()
        .get(format!("{direct}/tasks"))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let tasks = listed["tasks"].as_array().cloned().unwrap_or_default();
    tasks.iter().filter_map(|task| task["id"].as_str().map(str::to_owned)).collect()
}

#[tokio::test]
async fn a_send_cut_after_it_arrived_is_sent_again_and_makes_one_task() {
    for (binding, version) in [
        (Binding::JsonRpc, Version::V1),
        (Binding::HttpJson, Version::V1),
        (Binding::Grpc, Version::V1),
        (Binding::JsonRpc, Version::V03),
    ] {
        let agent = Counted::default();
        let (proxy, base, direct) = behind_a_proxy(agent.clone()).await;
        let builder = Client::builder(&base).only(binding).only_version(version).timeout(TIMEOUT);
        let client = builder.connect().await.expect("connects");
        let sending =
            tokio::spawn(async move { client.send_message(SendMessageRequest::new(message("pay 10"))).await });
        // The blocking send waits for the task; once it is stored, its connection is cut.
        let stored = tokio::time::timeout(TIMEOUT, async {
            loop {
                let tasks = stored_tasks(&direct).await;
                if !tasks.is_empty() {
                    return tasks;
                }
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the send reaches the agent");
        proxy.cut();
        let answer = tokio::time::timeout(TIMEOUT, sending).await.expect("the retry is answered").unwrap();
        let Ok(SendMessageResponse::Task(task)) = answer else { panic!("{binding:?} {version:?}: {answer:?}") };
        assert_eq!(task.id, stored[0], "{binding:?} {version:?}: the retry is answered with the first task");
        assert_eq!(task.status.state, TaskState::Working, "{binding:?} {version:?}");
        assert_eq!(stored_tasks(&direct).await, stored, "{binding:?} {version:?}: one task");
        assert_eq!(agent.executions(), 1, "{binding:?} {version:?}: one execution");
        agent.gate.open();
    }
}
