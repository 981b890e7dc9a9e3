//! How many store writes an execution costs: the events an agent has queued are committed
//! together, and a new task is created with the first of them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use agentwire_server::agent::{AgentExecutor, EchoAgent, EventStream, ExecutionContext};
use agentwire_server::RequestHandler;
use agentwire_store::{
    Change, MemoryStore, Result, Scope, StoredEvent, TaskPage, TaskQuery, TaskRecord, TaskStore, Updated,
};
use agentwire_test::{user_message, TestServer};
use agentwire_types::{StreamResponse, Task};
use async_trait::async_trait;
use serde_json::json;

/// The memory store, counting the writes it is asked for.
#[derive(Clone, Default)]
struct Counting {
    inner: MemoryStore,
    writes: Arc<AtomicUsize>,
}

impl Counting {
    fn writes(&self) -> usize {
        self.writes.load(Ordering::SeqCst)
    }

    fn count(&self) {
        self.writes.fetch_add(1, Ordering::SeqCst);
    }
}

#[async_trait]
impl TaskStore for Counting {
    async fn create(&self, scope: &Scope, task: Arc<Task>, events: &[Arc<StreamResponse>]) -> Result<u64> {
        self.count();
        self.inner.create(scope, task, events).await
    }

    async fn commit(
        &self,
        scope: &Scope,
        task: Arc<Task>,
        events: &[Arc<StreamResponse>],
        expected: u64,
    ) -> Result<u64> {
        self.count();
        self.inner.commit(scope, task, events, expected).await
    }

    async fn update(&self, scope: &Scope, task_id: &str, change: &mut Change<'_>) -> Result<Updated> {
        self.count();
        self.inner.update(scope, task_id, change).await
    }

    async fn get(&self, scope: &Scope, task_id: &str) -> Result<Option<TaskRecord>> {
        self.inner.get(scope, task_id).await
    }

    async fn events_after(&self, scope: &Scope, task_id: &str, after: u64, limit: usize) -> Result<Vec<StoredEvent>> {
        self.inner.events_after(scope, task_id, after, limit).await
    }

    async fn list(&self, scope: &Scope, query: &TaskQuery) -> Result<TaskPage> {
        self.inner.list(scope, query).await
    }

    fn update_excludes_reads(&self) -> bool {
        self.inner.update_excludes_reads()
    }
}

/// Works and adds an artifact, waits, then adds another and completes.
struct TwoBursts;

impl AgentExecutor for TwoBursts {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        ctx.run(|_, updater| async move {
            updater.working().await?;
            updater.add_text_artifact("first", "one").await?;
            tokio::time::sleep(Duration::from_millis(20)).await;
            updater.add_text_artifact("second", "two").await?;
            updater.complete().await
        })
    }
}

#[tokio::test]
async fn an_agent_that_finishes_at_once_costs_one_write() {
    let store = Counting::default();
    let server = TestServer::start(RequestHandler::builder(EchoAgent).task_store(store.clone())).await;
    let task = server.rpc_ok("SendMessage", json!({"message": user_message("m1", "hello")})).await["task"].clone();
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], "hello", "{task}");
    assert_eq!(store.writes(), 1, "the task should be created complete, in one write");
}

#[tokio::test]
async fn each_burst_of_events_is_one_write() {
    let store = Counting::default();
    let server = TestServer::start(RequestHandler::builder(TwoBursts).task_store(store.clone())).await;
    let task = server.rpc_ok("SendMessage", json!({"message": user_message("m1", "hello")})).await["task"].clone();
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    assert_eq!(task["artifacts"].as_array().map(Vec::len), Some(2), "{task}");
    assert_eq!(store.writes(), 2, "one write creates the task working with its first artifact, one completes it");
}

#[tokio::test]
async fn a_stream_sees_every_event_of_a_burst_in_order() {
    let store = Counting::default();
    let server = TestServer::start(RequestHandler::builder(EchoAgent).task_store(store.clone())).await;
    let events = server.rpc_stream("SendStreamingMessage", json!({"message": user_message("m1", "hello")})).await;
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| {
            let result = e["result"].as_object().expect("a result");
            result.keys().next().map(String::as_str).unwrap_or_default()
        })
        .collect();
    assert_eq!(kinds, ["task", "artifactUpdate", "statusUpdate"], "{events:?}");
    assert_eq!(events[2]["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(store.writes(), 1);
}
