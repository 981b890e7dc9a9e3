use agentwire_types::{TaskState, TaskStatus, Timestamp};

use super::*;
use crate::conformance;

#[tokio::test]
async fn the_memory_store_passes_the_conformance_suite() {
    conformance::run(|| async { MemoryStore::default() }).await;
}

fn task(id: &str, ctx: &str, millis: i64, state: TaskState) -> Task {
    let status = TaskStatus { state, message: None, timestamp: Timestamp::from_millis(millis) };
    Task { id: id.into(), context_id: ctx.into(), status, ..Task::default() }
}

fn snapshot(t: &Task) -> [Arc<StreamResponse>; 1] {
    [Arc::new(StreamResponse::Task(t.clone()))]
}

#[tokio::test]
async fn retention_evicts_oldest_ended_tasks_beyond_the_count() {
    let store = MemoryStore::with_retention(RetentionPolicy { max_terminal_tasks: Some(2), max_terminal_bytes: None });
    let scope = Scope::default();
    let running = task("running", "c", 0, TaskState::Working);
    store.create(&scope, Arc::new(running.clone()), &snapshot(&running), None).await.unwrap();
    for i in 0..4 {
        let t = task(&format!("done{i}"), "c", i, TaskState::Completed);
        store.create(&scope, Arc::new(t.clone()), &snapshot(&t), None).await.unwrap();
    }
    assert!(store.get(&scope, "running").await.unwrap().is_some());
    assert!(store.get(&scope, "done0").await.unwrap().is_none());
    assert!(store.get(&scope, "done3").await.unwrap().is_some());
}

/// A task that ended holding `bytes` of text.
fn ended_with_text(id: &str, bytes: usize) -> Task {
    let mut t = task(id, "c", 1, TaskState::Completed);
    t.history.push(agentwire_types::Message::user("m", "x".repeat(bytes)));
    t
}

#[tokio::test]
async fn retention_evicts_oldest_ended_tasks_beyond_the_byte_budget() {
    const MIB: usize = 1024 * 1024;
    let store =
        MemoryStore::with_retention(RetentionPolicy { max_terminal_tasks: None, max_terminal_bytes: Some(5 * MIB) });
    let scope = Scope::default();
    let running = task("running", "c", 0, TaskState::Working);
    store.create(&scope, Arc::new(running.clone()), &snapshot(&running), None).await.unwrap();
    // Each task holds its text twice: in its history and in its first event.
    for i in 0..6 {
        let t = ended_with_text(&format!("big{i}"), MIB);
        store.create(&scope, Arc::new(t.clone()), &snapshot(&t), None).await.unwrap();
    }
    let mut kept = Vec::new();
    for i in 0..6 {
        kept.push(store.get(&scope, &format!("big{i}")).await.unwrap().is_some());
    }
    assert_eq!(kept, [false, false, false, false, true, true]);
    assert!(store.get(&scope, "running").await.unwrap().is_some(), "running tasks are never evicted");
    // A deleted task gives its memory back.
    assert!(store.delete(&scope, "big4").await.unwrap());
    let t = ended_with_text("big6", MIB);
    store.create(&scope, Arc::new(t.clone()), &snapshot(&t), None).await.unwrap();
    assert!(store.get(&scope, "big5").await.unwrap().is_some());
}
