use agentwire_types::{TaskState, TaskStatus, Timestamp};

use super::*;

fn task(id: &str, ctx: &str, millis: i64, state: TaskState) -> Task {
    let status = TaskStatus { state, message: None, timestamp: Timestamp::from_millis(millis) };
    Task { id: id.into(), context_id: ctx.into(), status, ..Task::default() }
}

fn snapshot(t: &Task) -> [Arc<StreamResponse>; 1] {
    [Arc::new(StreamResponse::Task(t.clone()))]
}

#[tokio::test]
async fn commit_rejects_stale_versions() {
    let store = MemoryStore::default();
    let scope = Scope::new("", "a");
    let t = task("t", "c", 1, TaskState::Submitted);
    let v1 = store.create(&scope, Arc::new(t.clone()), &snapshot(&t)).await.unwrap();
    let v2 = store.commit(&scope, Arc::new(t.clone()), &snapshot(&t), v1).await.unwrap();
    assert_eq!(v2, 2);
    let stale = store.commit(&scope, Arc::new(t.clone()), &snapshot(&t), v1).await;
    assert!(matches!(stale, Err(StoreError::Conflict { found: 2, .. })));
    let events = store.events_after(&scope, "t", 1, 10).await.unwrap();
    assert_eq!(events.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![2]);
}

#[tokio::test]
async fn list_pages_newest_first_within_scope() {
    let store = MemoryStore::default();
    let alice = Scope::new("", "alice");
    for i in 0..5 {
        let t = task(&format!("t{i}"), if i % 2 == 0 { "even" } else { "odd" }, 1000 + i, TaskState::Working);
        store.create(&alice, Arc::new(t.clone()), &snapshot(&t)).await.unwrap();
    }
    let hidden = task("bob-task", "even", 5000, TaskState::Working);
    store.create(&Scope::new("", "bob"), Arc::new(hidden.clone()), &snapshot(&hidden)).await.unwrap();

    let mut query = TaskQuery { page_size: 2, ..TaskQuery::default() };
    let mut seen = Vec::new();
    loop {
        let page = store.list(&alice, &query).await.unwrap();
        assert_eq!(page.total, 5);
        seen.extend(page.tasks.iter().map(|t| t.id.clone()));
        match page.next {
            Some(next) => query.after = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, ["t4", "t3", "t2", "t1", "t0"]);

    let even = TaskQuery { page_size: 10, context_id: Some("even".into()), ..TaskQuery::default() };
    assert_eq!(store.list(&alice, &even).await.unwrap().total, 3);
}

#[tokio::test]
async fn retention_evicts_oldest_ended_tasks_only() {
    let store = MemoryStore::with_retention(RetentionPolicy { max_terminal_tasks: Some(2), max_terminal_bytes: None });
    let scope = Scope::default();
    let running = task("running", "c", 0, TaskState::Working);
    store.create(&scope, Arc::new(running.clone()), &snapshot(&running)).await.unwrap();
    for i in 0..4 {
        let t = task(&format!("done{i}"), "c", i, TaskState::Completed);
        store.create(&scope, Arc::new(t.clone()), &snapshot(&t)).await.unwrap();
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
    store.create(&scope, Arc::new(running.clone()), &snapshot(&running)).await.unwrap();
    // Each task holds its text twice: in its history and in its first event.
    for i in 0..6 {
        let t = ended_with_text(&format!("big{i}"), MIB);
        store.create(&scope, Arc::new(t.clone()), &snapshot(&t)).await.unwrap();
    }
    let kept: Vec<bool> = which_are_kept(&store, &scope, 6).await;
    assert_eq!(kept, [false, false, false, false, true, true]);
    assert!(store.get(&scope, "running").await.unwrap().is_some(), "running tasks are never evicted");

    // A log freed early leaves room for more.
    for i in 6..9 {
        let t = ended_with_text(&format!("big{i}"), MIB);
        store.create(&scope, Arc::new(t.clone()), &snapshot(&t)).await.unwrap();
        store.ended_unobserved(&t.id);
    }
    let kept = which_are_kept(&store, &scope, 9).await;
    assert_eq!(kept, [false, false, false, false, false, false, true, true, true]);
}

async fn which_are_kept(store: &MemoryStore, scope: &Scope, n: usize) -> Vec<bool> {
    let mut kept = Vec::new();
    for i in 0..n {
        kept.push(store.get(scope, &format!("big{i}")).await.unwrap().is_some());
    }
    kept
}

#[tokio::test]
async fn update_applies_in_place_and_refusals_change_nothing() {
    let store = MemoryStore::default();
    let scope = Scope::new("", "a");
    let t = task("t", "c", 1, TaskState::Submitted);
    store.create(&scope, Arc::new(t.clone()), &snapshot(&t)).await.unwrap();

    let mut to_working = |task: &mut Task| {
        task.status.state = TaskState::Working;
        Ok(vec![StreamResponse::Task(task.clone())])
    };
    let updated = store.update(&scope, "t", &mut to_working).await.unwrap();
    assert_eq!((updated.version, updated.events.len()), (2, 1));
    assert_eq!(updated.task.status.state, TaskState::Working);

    let mut refuse = |_: &mut Task| Err(agentwire_types::A2AError::unsupported_operation("no"));
    assert!(matches!(store.update(&scope, "t", &mut refuse).await, Err(StoreError::Refused(_))));
    let record = store.get(&scope, "t").await.unwrap().unwrap();
    assert_eq!((record.version, record.task.status.state), (2, TaskState::Working));

    let other = Scope::new("", "b");
    assert!(matches!(store.update(&other, "t", &mut to_working).await, Err(StoreError::NotFound(_))));
    assert!(matches!(store.update(&scope, "nope", &mut to_working).await, Err(StoreError::NotFound(_))));
}

#[tokio::test]
async fn an_ended_unobserved_task_keeps_its_version_but_not_its_log() {
    let store = MemoryStore::default();
    let scope = Scope::new("", "a");
    let running = task("running", "c", 1, TaskState::Working);
    let done = task("done", "c", 1, TaskState::Completed);
    for t in [&running, &done] {
        store.create(&scope, Arc::new(t.clone()), &snapshot(t)).await.unwrap();
        store.ended_unobserved(&t.id);
    }
    assert_eq!(store.events_after(&scope, "running", 0, 10).await.unwrap().len(), 1, "a running task keeps its log");
    assert!(store.events_after(&scope, "done", 0, 10).await.unwrap().is_empty());
    let record = store.get(&scope, "done").await.unwrap().unwrap();
    assert_eq!((record.version, record.task.status.state), (1, TaskState::Completed));
}

#[tokio::test]
async fn an_update_without_events_is_committed_at_the_same_version() {
    // What `update_excludes_reads` promises: the server may leave out events nobody can read, and
    // the edit must still be stored (and count toward retention once it ends the task).
    let store = MemoryStore::with_retention(RetentionPolicy { max_terminal_tasks: Some(1), max_terminal_bytes: None });
    assert!(store.update_excludes_reads());
    let scope = Scope::new("", "a");
    for id in ["first", "second"] {
        let t = task(id, "c", 1, TaskState::Working);
        store.create(&scope, Arc::new(t.clone()), &snapshot(&t)).await.unwrap();
        let mut complete = |t: &mut Task| {
            t.status.state = TaskState::Completed;
            Ok(Vec::new())
        };
        let updated = store.update(&scope, id, &mut complete).await.unwrap();
        assert_eq!((updated.version, updated.events.len()), (1, 0));
        let stored = store.get(&scope, id).await.unwrap().unwrap();
        assert_eq!((stored.version, stored.task.status.state), (1, TaskState::Completed));
    }
    assert!(store.get(&scope, "first").await.unwrap().is_none(), "the first ended task was evicted");
}

#[tokio::test]
async fn create_refuses_an_existing_id_and_keeps_the_first_task() {
    let store = MemoryStore::default();
    let scope = Scope::new("", "a");
    let first = task("t", "first", 1, TaskState::Working);
    store.create(&scope, Arc::new(first.clone()), &snapshot(&first)).await.unwrap();
    let second = task("t", "second", 2, TaskState::Submitted);
    let refused = store.create(&scope, Arc::new(second.clone()), &[]).await;
    assert!(matches!(refused, Err(StoreError::AlreadyExists(ref id)) if id == "t"), "{refused:?}");
    let kept = store.get(&scope, "t").await.unwrap().unwrap();
    assert_eq!((kept.task.context_id.as_str(), kept.version), ("first", 1));
}
