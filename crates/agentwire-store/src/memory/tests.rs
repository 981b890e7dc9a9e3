use agentwire_types::{TaskState, TaskStatus, Timestamp};

use super::*;
use crate::conformance;

#[tokio::test]
async fn the_memory_store_passes_the_conformance_suite() {
    conformance::run(|| async { MemoryStore::default() }).await;
    conformance::registry(&crate::registry::MemoryRegistry::default()).await;
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

/// A keyed create whose task's retention removes an older keyed task: the key of the task
/// removed goes with it, and the create does not wait on itself for the keys' lock (each create
/// runs on a thread of its own, so that one that did would fail the test rather than hang it).
#[tokio::test]
async fn a_keyed_create_that_evicts_a_keyed_task_frees_its_key() {
    let store = MemoryStore::with_retention(RetentionPolicy { max_terminal_tasks: Some(1), max_terminal_bytes: None });
    let scope = Scope::default();
    let key =
        |name: &str| SendKey { key: name.into(), request: "digest".into(), ttl: std::time::Duration::from_secs(60) };
    for (i, name) in ["first", "second"].into_iter().enumerate() {
        let (store, scope, key) = (store.clone(), scope.clone(), key(name));
        let (done, created) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let t = task(name, "c", i as i64, TaskState::Completed);
            let events = snapshot(&t);
            let create = store.create_keyed(&scope, Arc::new(t.clone()), &events, None, &key, None);
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let _ = done.send(runtime.block_on(create));
        });
        created.recv_timeout(std::time::Duration::from_secs(5)).expect("no deadlock").unwrap();
    }
    assert!(store.get(&scope, "first").await.unwrap().is_none(), "retention removed the first task");
    assert!(matches!(store.reserve_key(&scope, &key("first")).await.unwrap(), Reservation::Reserved(_)));
    assert!(matches!(store.reserve_key(&scope, &key("second")).await.unwrap(), Reservation::Held(_)));
    store.purge(&Purge::default()).await.unwrap();
    assert_eq!(store.inner.keys.lock().unwrap().len(), 1, "only the stored task's key is kept");
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
