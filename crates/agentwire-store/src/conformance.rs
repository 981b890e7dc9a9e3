//! The behaviour every backend owes: one suite, run against each of them.
//!
//! A backend outside this crate runs it too, from a test with the `conformance` feature on:
//!
//! ```no_run
//! # async fn run() {
//! use agentwire_store::{conformance, MemoryStore};
//!
//! conformance::run(|| async { MemoryStore::default() }).await;
//! # }
//! ```

use std::future::Future;
use std::sync::Arc;

use agentwire_types::{
    A2AError, Artifact, Dialect, Message, Part, StreamResponse, Task, TaskArtifactUpdateEvent,
    TaskPushNotificationConfig, TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp,
};

use crate::{KeyedSend, Purge, PushConfigRecord, PushConfigStore, Scope, SendKey, StoreError, TaskQuery, TaskStore};

/// Runs every case, each on a fresh store from `make`; panics on the first failure.
pub async fn run<S, F, Fut>(make: F)
where
    S: TaskStore + PushConfigStore + Clone,
    F: Fn() -> Fut,
    Fut: Future<Output = S>,
{
    tasks_live_in_their_scope(&make().await).await;
    create_refuses_an_id_taken_in_the_scope(&make().await).await;
    commits_are_optimistic(&make().await).await;
    updates_apply_or_change_nothing(&make().await).await;
    concurrent_updates_lose_nothing(&make().await).await;
    many_tasks_written_at_once_stay_apart(&make().await).await;
    events_come_in_order(&make().await).await;
    listings_page_newest_first(&make().await).await;
    push_configs_belong_to_their_task(&make().await).await;
    push_cursors_follow_the_log(&make().await).await;
    delete_removes_everything_of_a_task(&make().await).await;
    purge_removes_only_ended_tasks(&make().await).await;
    tasks_in_progress_are_found_in_every_scope(&make().await).await;
    unfinished_tasks_are_limited_per_principal(&make().await).await;
    concurrent_creates_keep_the_unfinished_count(&make().await).await;
    reads_give_the_task_as_written(&make().await).await;
    a_resumed_reader_folds_the_task_as_written(&make().await).await;
    listings_carry_the_view_asked_within_their_budget(&make().await).await;
    purge_keeps_the_last_ended_tasks_that_fit(&make().await).await;
    idempotency_keys_name_one_task_per_scope(&make().await).await;
    concurrent_keyed_creates_make_one_task(make().await).await;
    tasks_left_unchanged_are_found_oldest_first(&make().await).await;
    reserved_keys_are_recorded_with_their_task(&make().await).await;
}

/// A task in `state` whose status changed at `millis`.
pub fn task(id: &str, context_id: &str, millis: i64, state: TaskState) -> Task {
    let status = TaskStatus { state, message: None, timestamp: Timestamp::from_millis(millis) };
    Task { id: id.into(), context_id: context_id.into(), status, ..Task::default() }
}

fn announce(task: &Task) -> Vec<Arc<StreamResponse>> {
    vec![Arc::new(StreamResponse::Task(task.clone()))]
}

async fn create<S: TaskStore>(store: &S, scope: &Scope, task: &Task) -> u64 {
    store.create(scope, Arc::new(task.clone()), &announce(task), None).await.expect("create")
}

/// Moves a task to `state`, announcing it with one event.
async fn set_state<S: TaskStore>(store: &S, scope: &Scope, id: &str, state: TaskState) -> u64 {
    let mut change = |task: &mut Task| {
        let status = TaskStatus::new(state);
        let event = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: task.id.clone(),
            status,
            ..Default::default()
        });
        task.fold(&event);
        Ok(vec![event])
    };
    store.update(scope, id, &mut change).await.expect("update").version
}

async fn tasks_live_in_their_scope<S: TaskStore>(store: &S) {
    let (alice, bob) = (Scope::new("t1", "alice"), Scope::new("t1", "bob"));
    let mut original = task("same-id", "c", 1_000, TaskState::Working);
    original.history.push(Message::user("m1", "hello"));
    assert_eq!(create(store, &alice, &original).await, 1);
    let stored = store.get(&alice, "same-id").await.unwrap().expect("the owner sees its task");
    assert_eq!(*stored.task, original);
    assert_eq!(stored.version, 1);
    assert!(store.get(&bob, "same-id").await.unwrap().is_none(), "another owner sees nothing");
    assert!(store.get(&Scope::new("t2", "alice"), "same-id").await.unwrap().is_none(), "another tenant neither");
    // The same id in another scope is another task, and reveals nothing of the first.
    let other = task("same-id", "c2", 2_000, TaskState::Submitted);
    create(store, &bob, &other).await;
    assert_eq!(store.get(&alice, "same-id").await.unwrap().unwrap().task.context_id, "c");
    assert_eq!(store.get(&bob, "same-id").await.unwrap().unwrap().task.context_id, "c2");
    assert!(store.events_after(&bob, "nothing-here", 0, 10).await.unwrap().is_empty());
    let stranger = store.commit(&Scope::new("t1", "eve"), Arc::new(original.clone()), &announce(&original), 1).await;
    assert!(matches!(stranger, Err(StoreError::NotFound(_))), "{stranger:?}");
}

async fn create_refuses_an_id_taken_in_the_scope<S: TaskStore>(store: &S) {
    let scope = Scope::new("", "a");
    let first = task("t", "first", 1, TaskState::Submitted);
    create(store, &scope, &first).await;
    let second = task("t", "second", 2, TaskState::Submitted);
    let again = store.create(&scope, Arc::new(second.clone()), &announce(&second), None).await;
    assert!(matches!(again, Err(StoreError::AlreadyExists(_))), "{again:?}");
    assert_eq!(store.get(&scope, "t").await.unwrap().unwrap().task.context_id, "first");
}

async fn commits_are_optimistic<S: TaskStore>(store: &S) {
    let scope = Scope::new("", "a");
    let t = task("t", "c", 1, TaskState::Submitted);
    let v1 = create(store, &scope, &t).await;
    let working = task("t", "c", 2, TaskState::Working);
    let v2 = store.commit(&scope, Arc::new(working.clone()), &announce(&working), v1).await.unwrap();
    assert_eq!(v2, 2);
    let stale = store.commit(&scope, Arc::new(t.clone()), &announce(&t), v1).await;
    assert!(matches!(stale, Err(StoreError::Conflict { expected: 1, found: 2, .. })), "{stale:?}");
    let record = store.get(&scope, "t").await.unwrap().unwrap();
    assert_eq!((record.task.status.state, record.version), (TaskState::Working, 2));
    let missing = store.commit(&scope, Arc::new(task("nope", "c", 1, TaskState::Working)), &[], 0).await;
    assert!(matches!(missing, Err(StoreError::NotFound(_))), "{missing:?}");
}

async fn updates_apply_or_change_nothing<S: TaskStore>(store: &S) {
    let scope = Scope::new("", "a");
    create(store, &scope, &task("t", "c", 1, TaskState::Submitted)).await;
    assert_eq!(set_state(store, &scope, "t", TaskState::Working).await, 2);
    let mut refuse = |_: &mut Task| -> Result<Vec<StreamResponse>, A2AError> { Err(A2AError::invalid_params("no")) };
    let refused = store.update(&scope, "t", &mut refuse).await;
    assert!(matches!(refused, Err(StoreError::Refused(_))), "{refused:?}");
    let mut nothing = |_: &mut Task| Ok(Vec::new());
    let unchanged = store.update(&scope, "t", &mut nothing).await.unwrap();
    assert_eq!((unchanged.version, unchanged.events.len()), (2, 0));
    let record = store.get(&scope, "t").await.unwrap().unwrap();
    assert_eq!((record.task.status.state, record.version), (TaskState::Working, 2));
    let missing = store.update(&scope, "nope", &mut nothing).await;
    assert!(matches!(missing, Err(StoreError::NotFound(_))), "{missing:?}");
}

async fn concurrent_updates_lose_nothing<S: TaskStore + Clone>(store: &S) {
    const WRITERS: usize = 8;
    const EACH: usize = 10;
    let scope = Scope::new("", "a");
    create(store, &scope, &task("t", "c", 1, TaskState::Working)).await;
    let writers = (0..WRITERS).map(|writer| {
        let (store, scope) = (store.clone(), scope.clone());
        async move {
            for n in 0..EACH {
                let mut change = |task: &mut Task| {
                    task.history.push(Message::agent(format!("{writer}-{n}"), "x"));
                    Ok(vec![StreamResponse::Message(Message::agent(format!("{writer}-{n}"), "x"))])
                };
                store.update(&scope, "t", &mut change).await.expect("update");
            }
        }
    });
    futures_join_all(writers).await;
    let record = store.get(&scope, "t").await.unwrap().unwrap();
    assert_eq!(record.task.history.len(), WRITERS * EACH, "every change is in the snapshot");
    assert_eq!(record.version, 1 + (WRITERS * EACH) as u64);
    let events = store.events_after(&scope, "t", 1, 1_000).await.unwrap();
    let logged: Vec<String> = events
        .iter()
        .map(|e| match &*e.event {
            StreamResponse::Message(m) => m.message_id.clone(),
            other => panic!("unexpected event {other:?}"),
        })
        .collect();
    let in_history: Vec<String> = record.task.history.iter().map(|m| m.message_id.clone()).collect();
    assert_eq!(logged, in_history, "the log holds the changes in the order the snapshot took them");
}

async fn many_tasks_written_at_once_stay_apart<S: TaskStore + Clone>(store: &S) {
    const TASKS: usize = 40;
    let scope = Scope::new("", "a");
    let writers = (0..TASKS).map(|i| {
        let (store, scope) = (store.clone(), scope.clone());
        async move {
            let id = format!("t{i}");
            create(&store, &scope, &task(&id, "c", 1, TaskState::Submitted)).await;
            set_state(&store, &scope, &id, TaskState::Working).await;
            let stale = store.commit(&scope, Arc::new(task(&id, "c", 1, TaskState::Failed)), &[], 1).await;
            assert!(matches!(stale, Err(StoreError::Conflict { found: 2, .. })), "{stale:?}");
            // Two creates of one id at once: exactly one wins.
            let twin = task(&format!("twin{}", i / 2), "c", 1, TaskState::Submitted);
            let made = store.create(&scope, Arc::new(twin.clone()), &announce(&twin), None).await;
            assert!(matches!(made, Ok(1) | Err(StoreError::AlreadyExists(_))), "{made:?}");
            set_state(&store, &scope, &id, TaskState::Completed).await;
        }
    });
    futures_join_all(writers).await;
    for i in 0..TASKS {
        let record = store.get(&scope, &format!("t{i}")).await.unwrap().unwrap();
        assert_eq!((record.task.status.state, record.version), (TaskState::Completed, 3));
        let log = store.events_after(&scope, &format!("t{i}"), 0, 10).await.unwrap();
        let states: Vec<TaskState> = log.iter().filter_map(|e| e.event.task_state()).collect();
        assert_eq!(states, [TaskState::Submitted, TaskState::Working, TaskState::Completed]);
    }
    let twins = TaskQuery { page_size: 100, context_id: Some("c".into()), ..TaskQuery::default() };
    assert_eq!(store.list(&scope, &twins).await.unwrap().total, TASKS + TASKS / 2);
}

/// Runs the futures concurrently on the current task.
async fn futures_join_all<F: Future<Output = ()>>(futures: impl IntoIterator<Item = F>) {
    let mut pending: Vec<std::pin::Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    std::future::poll_fn(|cx| {
        pending.retain_mut(|f| f.as_mut().poll(cx).is_pending());
        if pending.is_empty() {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
}

async fn events_come_in_order<S: TaskStore>(store: &S) {
    let scope = Scope::new("", "a");
    create(store, &scope, &task("t", "c", 1, TaskState::Submitted)).await;
    let states = [TaskState::Working, TaskState::InputRequired, TaskState::Working, TaskState::Completed];
    for state in states {
        set_state(store, &scope, "t", state).await;
    }
    let all = store.events_after(&scope, "t", 0, 100).await.unwrap();
    assert_eq!(all.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
    let seen: Vec<TaskState> = all.iter().filter_map(|e| e.event.task_state()).collect();
    assert_eq!(seen[1..], states);
    let middle = store.events_after(&scope, "t", 2, 2).await.unwrap();
    assert_eq!(middle.iter().map(|e| e.seq).collect::<Vec<_>>(), [3, 4]);
    assert!(store.events_after(&scope, "t", 5, 10).await.unwrap().is_empty());
    assert!(store.events_after(&Scope::new("", "b"), "t", 0, 10).await.unwrap().is_empty());
}

async fn listings_page_newest_first<S: TaskStore>(store: &S) {
    let alice = Scope::new("", "alice");
    for i in 0..5 {
        let state = if i == 4 { TaskState::Completed } else { TaskState::Working };
        create(store, &alice, &task(&format!("t{i}"), if i % 2 == 0 { "even" } else { "odd" }, 1_000 + i, state)).await;
    }
    // Two tasks changed in the same millisecond are ordered by id.
    create(store, &alice, &task("tie-a", "tie", 500, TaskState::Working)).await;
    create(store, &alice, &task("tie-b", "tie", 500, TaskState::Working)).await;
    create(store, &Scope::new("", "bob"), &task("bob-task", "even", 5_000, TaskState::Working)).await;

    let mut query = TaskQuery { page_size: 2, ..TaskQuery::default() };
    let mut seen = Vec::new();
    loop {
        let page = store.list(&alice, &query).await.unwrap();
        assert_eq!(page.total, 7);
        assert!(page.tasks.len() <= 2);
        seen.extend(page.tasks.iter().map(|t| t.id.clone()));
        match page.next {
            Some(next) => query.after = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, ["t4", "t3", "t2", "t1", "t0", "tie-b", "tie-a"]);

    let even = TaskQuery { page_size: 10, context_id: Some("even".into()), ..TaskQuery::default() };
    assert_eq!(store.list(&alice, &even).await.unwrap().total, 3);
    let done = TaskQuery { page_size: 10, state: Some(TaskState::Completed), ..TaskQuery::default() };
    let page = store.list(&alice, &done).await.unwrap();
    assert_eq!(page.tasks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["t4"]);
    let recent = TaskQuery { page_size: 10, status_after: Timestamp::from_millis(1_003), ..TaskQuery::default() };
    assert_eq!(store.list(&alice, &recent).await.unwrap().total, 2);
    let nobody = store.list(&Scope::new("", "carol"), &TaskQuery { page_size: 10, ..TaskQuery::default() }).await;
    assert_eq!(nobody.unwrap().total, 0);
}

fn config(task_id: &str, id: &str, url: &str) -> PushConfigRecord {
    let config = TaskPushNotificationConfig {
        task_id: task_id.into(),
        id: id.into(),
        url: url.into(),
        token: "secret".into(),
        ..TaskPushNotificationConfig::default()
    };
    PushConfigRecord { config, dialect: Dialect::V1, delivered_through: 0 }
}

async fn push_configs_belong_to_their_task<S: TaskStore + PushConfigStore>(store: &S) {
    let (scope, other) = (Scope::new("", "a"), Scope::new("", "b"));
    let orphan = store.put_config(&scope, &config("missing", "c1", "https://example.com/1")).await;
    assert!(matches!(orphan, Err(StoreError::NotFound(_))), "{orphan:?}");
    create(store, &scope, &task("t", "c", 1, TaskState::Working)).await;
    for (id, url) in [("c2", "https://example.com/2"), ("c1", "https://example.com/1")] {
        store.put_config(&scope, &config("t", id, url)).await.unwrap();
    }
    let mut v03 = config("t", "c2", "https://example.com/2b");
    v03.dialect = Dialect::V03;
    store.put_config(&scope, &v03).await.unwrap();
    let listed = store.list_configs(&scope, "t").await.unwrap();
    assert_eq!(listed.iter().map(|r| r.config.id.as_str()).collect::<Vec<_>>(), ["c2", "c1"], "creation order");
    assert_eq!(listed[0], v03, "a put with the same id replaces");
    assert_eq!(store.get_config(&scope, "t", "c1").await.unwrap(), Some(config("t", "c1", "https://example.com/1")));
    assert!(store.get_config(&other, "t", "c1").await.unwrap().is_none());
    assert!(store.list_configs(&other, "t").await.unwrap().is_empty());
    assert!(!store.delete_config(&other, "t", "c1").await.unwrap());
    assert!(store.delete_config(&scope, "t", "c1").await.unwrap());
    assert!(!store.delete_config(&scope, "t", "c1").await.unwrap());
    assert_eq!(store.list_configs(&scope, "t").await.unwrap().len(), 1);
}

async fn push_cursors_follow_the_log<S: TaskStore + PushConfigStore>(store: &S) {
    let (scope, other) = (Scope::new("", "a"), Scope::new("", "b"));
    let cursor = |id: &'static str| {
        let scope = scope.clone();
        async move { store.get_config(&scope, "t", id).await.unwrap().unwrap().delivered_through }
    };
    create(store, &scope, &task("t", "c", 1, TaskState::Working)).await;
    create(store, &other, &task("t", "c", 1, TaskState::Working)).await;
    store.put_config(&scope, &config("t", "behind", "https://example.com/1")).await.unwrap();
    let caught_up = PushConfigRecord { delivered_through: 1, ..config("t", "caught-up", "https://example.com/2") };
    store.put_config(&scope, &caught_up).await.unwrap();
    store
        .put_config(&other, &PushConfigRecord { delivered_through: 1, ..config("t", "behind", "https://x.org") })
        .await
        .unwrap();
    assert_eq!((cursor("behind").await, cursor("caught-up").await), (0, 1), "a new config keeps its cursor");
    let asked = [(scope.clone(), "t".to_owned()), (other.clone(), "t".to_owned()), (scope.clone(), "none".to_owned())];
    let found = store.configs_of(&asked).await.unwrap();
    let of = |wanted: &Scope| -> Vec<(String, u64)> {
        let mine = found.iter().filter(|(s, _)| s == wanted);
        mine.map(|(_, r)| (r.config.id.clone(), r.delivered_through)).collect()
    };
    assert_eq!(of(&scope), [("behind".to_owned(), 0), ("caught-up".to_owned(), 1)], "each task's, in creation order");
    assert_eq!(of(&other), [("behind".to_owned(), 1)]);
    assert_eq!(store.undelivered(10).await.unwrap(), [(scope.clone(), "t".to_owned())]);

    store.mark_delivered(&scope, "t", "behind", 1).await.unwrap();
    assert!(store.undelivered(10).await.unwrap().is_empty());
    assert_eq!(set_state(store, &scope, "t", TaskState::Completed).await, 2);
    assert_eq!(store.undelivered(10).await.unwrap(), [(scope.clone(), "t".to_owned())], "a new event is due");
    for id in ["behind", "caught-up"] {
        store.mark_delivered(&scope, "t", id, 2).await.unwrap();
    }
    store.mark_delivered(&scope, "t", "behind", 1).await.unwrap();
    assert_eq!(cursor("behind").await, 2, "a cursor never moves back");
    store.put_config(&scope, &config("t", "behind", "https://example.com/1b")).await.unwrap();
    assert_eq!(cursor("behind").await, 2, "replacing a config keeps its cursor");
    assert!(store.undelivered(10).await.unwrap().is_empty());
    assert_eq!(store.get_config(&other, "t", "behind").await.unwrap().unwrap().delivered_through, 1, "scopes apart");
    store.mark_delivered(&scope, "t", "missing", 5).await.unwrap();
    store.mark_delivered(&scope, "missing", "behind", 5).await.unwrap();
}

async fn delete_removes_everything_of_a_task<S: TaskStore + PushConfigStore>(store: &S) {
    let scope = Scope::new("", "a");
    create(store, &scope, &task("t", "c", 1, TaskState::Working)).await;
    store.put_config(&scope, &config("t", "c1", "https://example.com/1")).await.unwrap();
    assert!(!store.delete(&Scope::new("", "b"), "t").await.unwrap());
    assert!(store.delete(&scope, "t").await.unwrap());
    assert!(store.get(&scope, "t").await.unwrap().is_none());
    assert!(store.events_after(&scope, "t", 0, 10).await.unwrap().is_empty());
    assert!(store.list_configs(&scope, "t").await.unwrap().is_empty());
    assert!(!store.delete(&scope, "t").await.unwrap());
    // The id is free again, and the new task starts a new log.
    assert_eq!(create(store, &scope, &task("t", "c", 1, TaskState::Working)).await, 1);
    assert!(store.list_configs(&scope, "t").await.unwrap().is_empty());
}

async fn purge_removes_only_ended_tasks<S: TaskStore + PushConfigStore>(store: &S) {
    let scope = Scope::new("", "a");
    create(store, &scope, &task("running", "c", 0, TaskState::Working)).await;
    for i in 0..4 {
        create(store, &scope, &task(&format!("done{i}"), "c", i, TaskState::Submitted)).await;
        store.put_config(&scope, &config(&format!("done{i}"), "c1", "https://example.com/1")).await.unwrap();
        set_state(store, &scope, &format!("done{i}"), TaskState::Completed).await;
    }
    let an_hour_ago = Timestamp::from_millis(Timestamp::now().as_millis() - 3_600_000);
    let purge = |ended_before, keep_ended| Purge { ended_before, keep_ended, ..Purge::default() };
    assert_eq!(store.purge(&purge(an_hour_ago, None)).await.unwrap(), 0, "nothing ended that long ago");
    assert_eq!(store.purge(&purge(None, Some(2))).await.unwrap(), 2, "the two that ended first go");
    let kept = |id: &'static str| {
        let scope = scope.clone();
        async move { store.get(&scope, id).await.unwrap().is_some() }
    };
    assert_eq!(
        [kept("done0").await, kept("done1").await, kept("done2").await, kept("done3").await],
        [false, false, true, true]
    );
    assert!(store.events_after(&scope, "done0", 0, 10).await.unwrap().is_empty());
    assert!(store.list_configs(&scope, "done0").await.unwrap().is_empty());
    let in_a_minute = Timestamp::from_millis(Timestamp::now().as_millis() + 60_000);
    assert_eq!(store.purge(&purge(in_a_minute, None)).await.unwrap(), 2);
    assert!(kept("running").await, "a task in progress is never purged");
    assert_eq!(store.list(&scope, &TaskQuery { page_size: 10, ..TaskQuery::default() }).await.unwrap().total, 1);
}

async fn tasks_in_progress_are_found_in_every_scope<S: TaskStore>(store: &S) {
    let states = [TaskState::Submitted, TaskState::Working, TaskState::InputRequired, TaskState::Completed];
    for (i, state) in states.into_iter().enumerate() {
        create(store, &Scope::new("", format!("owner{i}")), &task(&format!("t{i}"), "c", 1, state)).await;
    }
    let mut found = store.tasks_in_progress(10).await.unwrap();
    found.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(found, [(Scope::new("", "owner0"), "t0".to_owned()), (Scope::new("", "owner1"), "t1".to_owned())]);
    assert_eq!(store.tasks_in_progress(1).await.unwrap().len(), 1);
}

/// Creates `task` in `scope` if the scope has fewer than `limit` unfinished tasks.
async fn limited<S: TaskStore>(store: &S, limit: usize, scope: &Scope, task: Task) -> crate::Result<u64> {
    let events = announce(&task);
    store.create(scope, Arc::new(task), &events, Some(limit)).await
}

async fn unfinished_tasks_are_limited_per_principal<S: TaskStore>(store: &S) {
    let (alice, bob) = (Scope::new("", "alice"), Scope::new("", "bob"));
    let tasks_of = |owner: &'static str| async move { store.unfinished(owner).await.unwrap().tasks };
    limited(store, 3, &alice, task("submitted", "c", 1, TaskState::Submitted)).await.unwrap();
    limited(store, 3, &alice, task("working", "c", 1, TaskState::Working)).await.unwrap();
    limited(store, 3, &Scope::new("elsewhere", "alice"), task("waiting", "c", 1, TaskState::InputRequired))
        .await
        .unwrap();
    assert_eq!(tasks_of("alice").await, 3, "a task waiting for input is unfinished, in any tenant");
    let refused = limited(store, 3, &alice, task("fourth", "c", 1, TaskState::Submitted)).await;
    assert!(matches!(refused, Err(StoreError::TooManyUnfinished { limit: 3 })), "{refused:?}");
    assert!(store.get(&alice, "fourth").await.unwrap().is_none(), "a refused task is not stored");
    let another = Scope::new("another", "alice");
    let elsewhere = limited(store, 3, &another, task("fourth", "c", 1, TaskState::Submitted)).await;
    assert!(matches!(elsewhere, Err(StoreError::TooManyUnfinished { limit: 3 })), "another tenant is no way out");
    let taken = limited(store, 3, &alice, task("working", "c", 1, TaskState::Submitted)).await;
    assert!(matches!(taken, Err(StoreError::AlreadyExists(_)) | Err(StoreError::TooManyUnfinished { .. })));
    limited(store, 3, &alice, task("ended", "c", 1, TaskState::Completed))
        .await
        .expect("an ended task is no more work");
    limited(store, 3, &bob, task("bobs", "c", 1, TaskState::Submitted))
        .await
        .expect("other principals have their own count");
    assert_eq!(tasks_of("bob").await, 1);

    // A task that ends, or is deleted, makes room.
    let bytes = store.unfinished("alice").await.unwrap().bytes;
    assert!(bytes > 0, "unfinished tasks take room");
    set_state(store, &alice, "working", TaskState::Completed).await;
    assert_eq!(tasks_of("alice").await, 2);
    assert!(store.unfinished("alice").await.unwrap().bytes < bytes, "an ended task's log no longer counts");
    limited(store, 3, &alice, task("fourth", "c", 1, TaskState::Submitted)).await.expect("room after an end");
    assert!(store.delete(&alice, "submitted").await.unwrap());
    assert_eq!(tasks_of("alice").await, 2, "a deleted task no longer counts");
    limited(store, 3, &alice, task("fifth", "c", 1, TaskState::Submitted)).await.expect("room after a delete");
    let again = limited(store, 3, &alice, task("sixth", "c", 1, TaskState::Submitted)).await;
    assert!(matches!(again, Err(StoreError::TooManyUnfinished { .. })), "{again:?}");
    // Without a limit, a create is never refused for the count.
    create(store, &alice, &task("sixth", "c", 1, TaskState::Submitted)).await;
    assert_eq!(tasks_of("alice").await, 4);
    assert_eq!(store.unfinished("carol").await.unwrap(), crate::Unfinished::default());
    // The log of a task in progress grows with its events.
    let before = store.unfinished("bob").await.unwrap().bytes;
    let mut say = |task: &mut Task| {
        let event = StreamResponse::Message(Message::agent("m", "x".repeat(10_000)));
        task.fold(&event);
        Ok(vec![event])
    };
    store.update(&bob, "bobs", &mut say).await.unwrap();
    assert!(store.unfinished("bob").await.unwrap().bytes >= before + 10_000);
}

async fn concurrent_creates_keep_the_unfinished_count<S: TaskStore + Clone>(store: &S) {
    const TASKS: usize = 24;
    let scope = Scope::new("", "a");
    let creates = (0..TASKS).map(|i| {
        let (store, scope) = (store.clone(), scope.clone());
        async move {
            let id = format!("t{i}");
            create(&store, &scope, &task(&id, "c", 1, TaskState::Submitted)).await;
            if i % 2 == 0 {
                set_state(&store, &scope, &id, TaskState::Completed).await;
            } else if i % 3 == 0 {
                assert!(store.delete(&scope, &id).await.unwrap());
            }
        }
    });
    futures_join_all(creates).await;
    let unfinished = (0..TASKS).filter(|i| i % 2 == 1 && i % 3 != 0).count();
    assert_eq!(store.unfinished("a").await.unwrap().tasks, unfinished);

    // Limited creates at once in a fresh scope: the limit is never refused short of.
    let crowd = Scope::new("", "crowd");
    let made = std::sync::atomic::AtomicUsize::new(0);
    let creates = (0..TASKS).map(|i| {
        let (store, scope, made) = (store.clone(), crowd.clone(), &made);
        async move {
            match limited(&store, 4, &scope, task(&format!("t{i}"), "c", 1, TaskState::Submitted)).await {
                Ok(_) => _ = made.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                Err(StoreError::TooManyUnfinished { limit: 4 }) => {}
                Err(other) => panic!("{other:?}"),
            }
        }
    });
    futures_join_all(creates).await;
    let made = made.into_inner();
    assert!(made >= 4, "only {made} of 4 created");
    assert_eq!(store.unfinished("crowd").await.unwrap().tasks, made);
}

/// The `n`th event of a streaming agent: mostly chunks of two artifacts, with now and then a
/// status, a status with a message, an agent message or a replaced artifact.
fn streamed(n: usize) -> StreamResponse {
    let status = |message: Option<Message>| {
        let mut status = TaskStatus::new(TaskState::Working);
        status.message = message.map(Box::new);
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent { task_id: "t".into(), status, ..Default::default() })
    };
    match n % 12 {
        0 => status(None),
        5 => status(Some(Message::agent(format!("s{n}"), "thinking"))),
        9 => StreamResponse::Message(Message::agent(format!("m{n}"), "an aside")),
        chunk => {
            let artifact = Artifact::new(format!("a{}", chunk % 2), "answer", vec![Part::text(format!("chunk {n} "))]);
            let append = n % 40 != 7;
            StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id: "t".into(),
                artifact,
                append,
                ..Default::default()
            })
        }
    }
}

/// A task read back, by `get` and in a listing, is the task as the last commit wrote it, at every
/// step of a long stream of events committed one or several at a time (a backend may store only
/// the events and fold them on read), after a change that trims the history and edits the
/// metadata beyond what its events say, once the task settles, and once it ends.
async fn reads_give_the_task_as_written<S: TaskStore>(store: &S) {
    let scope = Scope::new("", "a");
    let listed =
        TaskQuery { page_size: 10, context_id: Some("folded".into()), include_artifacts: true, ..TaskQuery::default() };
    let check = |written: Arc<Task>, version: u64| {
        let (scope, listed) = (scope.clone(), listed.clone());
        async move {
            let read = store.get(&scope, "t").await.unwrap().expect("the task is there");
            assert_eq!((&*read.task, read.version), (&*written, version), "get at version {version}");
            let page = store.list(&scope, &listed).await.unwrap();
            assert_eq!(page.tasks.len(), 1);
            assert_eq!(page.tasks[0], *written, "the listing at version {version}");
            let bare = TaskQuery { history_length: Some(0), include_artifacts: false, ..listed };
            let page = store.list(&scope, &bare).await.unwrap();
            assert_eq!(page.tasks, [written.view(Some(0), false)], "the bare listing at version {version}");
        }
    };
    let mut first = task("t", "folded", 1, TaskState::Submitted);
    first.history.push(Message::user("m0", "write me a story"));
    create(store, &scope, &first).await;
    let mut n = 0;
    for step in 0..60 {
        // One event at a time, and now and then several in one commit.
        let count = if step % 7 == 3 { 5 } else { 1 };
        let mut change = |task: &mut Task| {
            let events: Vec<StreamResponse> = (n..n + count).map(streamed).collect();
            events.iter().for_each(|event| task.fold(event));
            Ok(events)
        };
        let updated = store.update(&scope, "t", &mut change).await.expect("update");
        n += count;
        check(updated.task, updated.version).await;
    }
    let mut trim = |task: &mut Task| {
        let event = streamed(9);
        task.fold(&event);
        task.history.drain(1..4);
        task.metadata = Some(serde_json::Map::from_iter([("trimmed".to_owned(), serde_json::Value::Bool(true))]));
        Ok(vec![event])
    };
    let trimmed = store.update(&scope, "t", &mut trim).await.expect("update");
    check(trimmed.task, trimmed.version).await;
    let mut chunk = |task: &mut Task| {
        let event = streamed(1);
        task.fold(&event);
        Ok(vec![event])
    };
    for _ in 0..3 {
        let updated = store.update(&scope, "t", &mut chunk).await.expect("update");
        check(updated.task, updated.version).await;
    }
    let mut settle = |task: &mut Task| {
        let status = TaskStatus::new(TaskState::InputRequired).with_message(Message::agent("q", "which ending?"));
        let event =
            StreamResponse::StatusUpdate(TaskStatusUpdateEvent { task_id: "t".into(), status, ..Default::default() });
        task.fold(&event);
        Ok(vec![event])
    };
    let settled = store.update(&scope, "t", &mut settle).await.expect("update");
    check(settled.task, settled.version).await;
}

/// A reader that saw a task up to any of its events and resumes after it (a stream cut and
/// resumed with Last-Event-ID, a webhook catching up) gets what turns the task it has into the
/// task as written: the events after the one it saw, or, where a backend compacted them away, the
/// whole task as compacted first. Checked after every event of a long stream of small and large
/// events, and once the task ends.
async fn a_resumed_reader_folds_the_task_as_written<S: TaskStore>(store: &S) {
    let scope = Scope::new("", "a");
    let mut first = task("t", "c", 1, TaskState::Submitted);
    first.history.push(Message::user("m0", "hello"));
    create(store, &scope, &first).await;
    let mut seen = vec![Task::default(), first];
    for n in 0..320 {
        let mut change = |task: &mut Task| {
            let mut event = streamed(n);
            if n % 50 == 17 {
                // Now and then a large event, which outgrows what came before.
                event = StreamResponse::Message(Message::agent(format!("big{n}"), "w".repeat(40_000)));
            }
            if n == 319 {
                let status = TaskStatus::new(TaskState::Completed);
                event = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                    task_id: "t".into(),
                    status,
                    ..Default::default()
                });
            }
            task.fold(&event);
            Ok(vec![event])
        };
        let updated = store.update(&scope, "t", &mut change).await.unwrap();
        assert_eq!(updated.version as usize, seen.len());
        seen.push((*updated.task).clone());
    }
    let written = seen.last().unwrap().clone();
    for after in (0..seen.len()).step_by(7).chain([seen.len() - 2, seen.len() - 1]) {
        let mut task = seen[after].clone();
        let mut last = after as u64;
        loop {
            let batch = store.events_after(&scope, "t", last, 64).await.unwrap();
            let Some(end) = batch.last() else { break };
            last = end.seq;
            batch.iter().for_each(|e| task.fold(&e.event));
        }
        assert_eq!(last as usize, seen.len() - 1, "resumed after {after}");
        assert_eq!(task, written, "resumed after {after}");
    }
}

/// A listing carries each task as asked (its last messages, its artifacts or not), and ends
/// before the task that would take it past its byte budget, with a token for the rest; a task
/// larger than the budget alone still makes a page.
async fn listings_carry_the_view_asked_within_their_budget<S: TaskStore>(store: &S) {
    use agentwire_types::MemorySize;

    let scope = Scope::new("", "a");
    for i in 0..6 {
        let mut t = task(&format!("t{i}"), "c", 1_000 - i, TaskState::Completed);
        t.history = (0..3).map(|m| Message::user(format!("m{m}"), "x".repeat(10_000))).collect();
        t.artifacts.push(Artifact::new("a", "answer", vec![Part::text("y".repeat(10_000))]));
        create(store, &scope, &t).await;
    }
    let view = TaskQuery { page_size: 10, history_length: Some(1), ..TaskQuery::default() };
    let page = store.list(&scope, &view).await.unwrap();
    assert_eq!(page.tasks.len(), 6);
    assert!(page
        .tasks
        .iter()
        .all(|t| t.history.len() == 1 && t.history[0].message_id == "m2" && t.artifacts.is_empty()));
    let one = page.tasks[0].memory_size();
    let mut query = TaskQuery { page_size: 10, max_bytes: Some(one * 2 + one / 2), ..view.clone() };
    let mut seen = Vec::new();
    loop {
        let page = store.list(&scope, &query).await.unwrap();
        assert!(page.tasks.len() <= 2, "{} tasks past the budget", page.tasks.len());
        seen.extend(page.tasks.iter().map(|t| t.id.clone()));
        match page.next {
            Some(next) => query.after = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, ["t0", "t1", "t2", "t3", "t4", "t5"]);
    let whole = TaskQuery { page_size: 10, include_artifacts: true, max_bytes: Some(10), ..TaskQuery::default() };
    let page = store.list(&scope, &whole).await.unwrap();
    assert_eq!(page.tasks.len(), 1, "one task even past the budget");
    assert_eq!((page.tasks[0].history.len(), page.tasks[0].artifacts.len()), (3, 1));
    assert!(page.next.is_some());
}

/// A purge by bytes keeps the ended tasks that ended last while their logs fit together.
async fn purge_keeps_the_last_ended_tasks_that_fit<S: TaskStore>(store: &S) {
    let scope = Scope::new("", "a");
    create(store, &scope, &task("running", "c", 0, TaskState::Working)).await;
    for i in 0..5 {
        let mut t = task(&format!("done{i}"), "c", i, TaskState::Working);
        t.history.push(Message::user("m", "x".repeat(100_000)));
        create(store, &scope, &t).await;
        set_state(store, &scope, &format!("done{i}"), TaskState::Completed).await;
    }
    // A store counts 100 kB or more for each: at most two fit in 250 kB.
    let rules = Purge { keep_ended_bytes: Some(250_000), ..Purge::default() };
    let removed = store.purge(&rules).await.unwrap();
    assert!((3..5).contains(&removed), "{removed} removed");
    let mut kept = Vec::new();
    for i in 0..5 {
        kept.push(store.get(&scope, &format!("done{i}")).await.unwrap().is_some());
    }
    let first_kept = removed as usize;
    assert_eq!(kept, (0..5).map(|i| i >= first_kept).collect::<Vec<_>>(), "the last to end are kept");
    assert!(store.get(&scope, "running").await.unwrap().is_some());
    assert_eq!(store.purge(&rules).await.unwrap(), 0);
}

fn send_key(key: &str, request: &str, ttl_ms: u64) -> SendKey {
    SendKey { key: key.into(), request: request.into(), ttl: std::time::Duration::from_millis(ttl_ms) }
}

async fn keyed<S: TaskStore>(store: &S, scope: &Scope, id: &str, key: &SendKey) -> crate::Result<u64> {
    let task = task(id, "c", 1, TaskState::Submitted);
    let events = announce(&task);
    store.create_keyed(scope, Arc::new(task), &events, Some(100), key, None).await
}

async fn idempotency_keys_name_one_task_per_scope<S: TaskStore>(store: &S) {
    let (alice, bob) = (Scope::new("t", "alice"), Scope::new("t", "bob"));
    let day = 86_400_000;
    assert_eq!(keyed(store, &alice, "first", &send_key("k", "digest-1", day)).await.unwrap(), 1);
    let repeat = keyed(store, &alice, "second", &send_key("k", "digest-2", day)).await;
    let held = KeyedSend { request: "digest-1".into(), task_id: "first".into() };
    assert!(matches!(&repeat, Err(StoreError::KeyTaken(send)) if *send == held), "{repeat:?}");
    assert!(store.get(&alice, "second").await.unwrap().is_none(), "a refused keyed create writes no task");
    assert_eq!(store.unfinished("alice").await.unwrap().tasks, 1, "nor counts one");
    // The same key is another principal's, or another tenant's, own.
    keyed(store, &bob, "first", &send_key("k", "digest-1", day)).await.unwrap();
    keyed(store, &Scope::new("u", "alice"), "first", &send_key("k", "digest-1", day)).await.unwrap();
    // A key goes with its task.
    assert!(store.delete(&alice, "first").await.unwrap());
    keyed(store, &alice, "third", &send_key("k", "digest-3", day)).await.unwrap();
    // An expired key names another send.
    keyed(store, &alice, "fourth", &send_key("short", "digest-4", 0)).await.unwrap();
    keyed(store, &alice, "fifth", &send_key("short", "digest-5", day)).await.unwrap();
    let again = keyed(store, &alice, "sixth", &send_key("short", "digest-6", day)).await;
    assert!(matches!(&again, Err(StoreError::KeyTaken(send)) if send.task_id == "fifth"), "{again:?}");
    // A create refused for its id leaves the key free.
    let taken_id = keyed(store, &alice, "fifth", &send_key("other", "digest-7", day)).await;
    assert!(matches!(taken_id, Err(StoreError::AlreadyExists(_))), "{taken_id:?}");
    keyed(store, &alice, "seventh", &send_key("other", "digest-7", day)).await.unwrap();
}

async fn concurrent_keyed_creates_make_one_task<S: TaskStore + Clone>(store: S) {
    let scope = Scope::new("", "alice");
    let racers: Vec<_> = (0..8)
        .map(|i| {
            let (store, scope) = (store.clone(), scope.clone());
            tokio::spawn(async move { keyed(&store, &scope, &format!("t{i}"), &send_key("k", "same", 60_000)).await })
        })
        .collect();
    let mut results = Vec::new();
    for racer in racers {
        results.push(racer.await.expect("a keyed create panicked"));
    }
    let created = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(created, 1, "{results:?}");
    let winner = results.iter().position(Result::is_ok).unwrap();
    for result in &results {
        if let Err(error) = result {
            assert!(matches!(error, StoreError::KeyTaken(send) if send.task_id == format!("t{winner}")), "{error:?}");
        }
    }
    assert_eq!(store.unfinished("alice").await.unwrap().tasks, 1);
}

async fn tasks_left_unchanged_are_found_oldest_first<S: TaskStore>(store: &S) {
    let waiting = [TaskState::InputRequired, TaskState::AuthRequired];
    let cases = [
        ("old-input", 1_000, TaskState::InputRequired),
        ("older-auth", 500, TaskState::AuthRequired),
        ("recent-input", 9_000, TaskState::InputRequired),
        ("old-working", 100, TaskState::Working),
        ("old-done", 100, TaskState::Completed),
    ];
    for (i, (id, millis, state)) in cases.into_iter().enumerate() {
        create(store, &Scope::new("", format!("owner{i}")), &task(id, "c", millis, state)).await;
    }
    let ids = |found: Vec<(Scope, String)>| found.into_iter().map(|(_, id)| id).collect::<Vec<_>>();
    let before = Timestamp::from_millis(5_000).unwrap();
    assert_eq!(ids(store.tasks_unchanged_since(&waiting, before, 10).await.unwrap()), ["older-auth", "old-input"]);
    assert_eq!(ids(store.tasks_unchanged_since(&waiting, before, 1).await.unwrap()), ["older-auth"]);
    let running = [TaskState::Working];
    assert_eq!(ids(store.tasks_unchanged_since(&running, before, 10).await.unwrap()), ["old-working"]);
}

async fn reserved_keys_are_recorded_with_their_task<S: TaskStore>(store: &S) {
    let scope = Scope::new("t", "alice");
    let key = send_key("reserved", "digest-1", 86_400_000);
    let guard = match store.reserve_key(&scope, &key).await.unwrap() {
        crate::Reservation::Reserved(guard) => guard,
        // A store several processes share checks keys when it writes.
        crate::Reservation::Unchecked => return,
        crate::Reservation::Held(held) => panic!("a fresh key is held: {held:?}"),
    };
    let task = task("made", "c", 1, TaskState::Submitted);
    let events = announce(&task);
    store.create_keyed(&scope, Arc::new(task), &events, Some(100), &key, Some(&guard)).await.unwrap();
    drop(guard);
    let held = KeyedSend { request: "digest-1".into(), task_id: "made".into() };
    match store.reserve_key(&scope, &key).await.unwrap() {
        crate::Reservation::Held(found) => assert_eq!(found, held),
        other => panic!("the key written with its task is not held: {other:?}"),
    }
    let again = keyed(store, &scope, "other", &key).await;
    assert!(matches!(&again, Err(StoreError::KeyTaken(send)) if *send == held), "{again:?}");
    // A reservation dropped without a task frees the key.
    let unused = send_key("unused", "digest-2", 86_400_000);
    drop(store.reserve_key(&scope, &unused).await.unwrap());
    assert!(matches!(store.reserve_key(&scope, &unused).await.unwrap(), crate::Reservation::Reserved(_)));
}

/// Runs every case of the registry on `registry`, which starts empty; panics on the first
/// failure.
pub async fn registry(registry: &dyn crate::registry::RegistryStore) {
    registrations_are_kept_and_counted(registry).await;
    searches_find_cards_by_words_and_facets(registry).await;
}

/// A card for the registry cases: `name`, described, with one skill.
fn registry_card(name: &str, description: &str, skill: (&str, &str, &[&str])) -> agentwire_types::AgentCard {
    let (id, skill_name, tags) = skill;
    let skill = agentwire_types::AgentSkill {
        id: id.into(),
        name: skill_name.into(),
        description: format!("{skill_name}, well done"),
        tags: tags.iter().map(|tag| (*tag).to_owned()).collect(),
        examples: vec![format!("please {id}")],
        input_modes: vec!["application/pdf".into()],
        ..Default::default()
    };
    let interface = agentwire_types::AgentInterface {
        url: "http://agent".into(),
        protocol_binding: "JSONRPC".into(),
        protocol_version: "1.0".into(),
        ..Default::default()
    };
    agentwire_types::AgentCard {
        name: name.into(),
        description: description.into(),
        skills: vec![skill],
        default_input_modes: vec!["text/plain".into()],
        default_output_modes: vec!["text/plain".into()],
        supported_interfaces: vec![interface],
        ..Default::default()
    }
}

/// A registration is read back as written, replaced by the next of its name (keeping its card
/// while the URL is the same), and removed; each of these moves the revision on, a check that
/// changes nothing else does not.
async fn registrations_are_kept_and_counted(registry: &dyn crate::registry::RegistryStore) {
    use crate::registry::{CardState, Registration, Visibility};
    let start = registry.revision().await.unwrap();
    let mut fx = Registration::new("fx", "http://127.0.0.1:9001", "admin");
    fx.credential = Some("token".into());
    fx.visibility = Visibility { principals: vec!["alice".into()], scopes: vec!["ops".into()], ..Default::default() };
    registry.register(&fx).await.unwrap();
    let agents = registry.agents().await.unwrap();
    assert_eq!(agents.len(), 1);
    assert_eq!(agents[0].registration, fx);
    assert!(!agents[0].state.healthy && agents[0].state.card.is_none());
    let after_register = registry.revision().await.unwrap();
    assert!(after_register > start);

    let card = registry_card("FX", "Exchange rates", ("convert", "Currency conversion", &["finance"]));
    registry.record("fx", &CardState::answered(card.clone())).await.unwrap();
    let after_record = registry.revision().await.unwrap();
    assert!(after_record > after_register);
    let checked = Timestamp::now();
    registry.touch("fx", &checked, true).await.unwrap();
    assert_eq!(registry.revision().await.unwrap(), after_record, "a check that changes nothing keeps the revision");
    let state = registry.agents().await.unwrap().remove(0).state;
    assert_eq!(state.card.as_deref(), Some(&card));
    assert_eq!(state.answered_at, Some(checked));

    // Registered again at the same URL: the card stays; at another, it is forgotten.
    fx.visibility = Visibility::default();
    (fx.credential, fx.caller_auth) = (None, Some(crate::registry::CallerAuthMode::Exchange));
    registry.register(&fx).await.unwrap();
    let agent = registry.agents().await.unwrap().remove(0);
    assert!(agent.registration.visibility.is_public() && agent.state.card.is_some());
    assert_eq!(agent.registration, fx, "a registration called as its callers is read back as written");
    fx.card_url = "http://127.0.0.1:9002".into();
    registry.register(&fx).await.unwrap();
    assert!(registry.agents().await.unwrap()[0].state.card.is_none());
    assert!(registry.search(&crate::registry::AgentQuery::text("exchange")).await.unwrap().names.is_empty());

    let before_remove = registry.revision().await.unwrap();
    assert!(registry.unregister("fx").await.unwrap());
    assert!(!registry.unregister("fx").await.unwrap());
    assert!(registry.agents().await.unwrap().is_empty());
    assert!(registry.revision().await.unwrap() > before_remove);
    registry.record("fx", &CardState::default()).await.unwrap();
    assert!(registry.agents().await.unwrap().is_empty(), "a record of an agent not registered writes nothing");
}

/// Free text finds an agent by any word of its card's name, description and skills (or a word's
/// start), the name weighing most; each facet narrows; a card recorded anew is found by what it
/// says now.
async fn searches_find_cards_by_words_and_facets(registry: &dyn crate::registry::RegistryStore) {
    use crate::registry::{AgentQuery, CardState, Facet, Registration, SignatureState};
    let cards = [
        ("fx", registry_card("Currency desk", "Exchange rates", ("convert", "Conversion", &["finance"]))),
        ("weather", registry_card("Weather", "Forecasts for any city", ("forecast", "Forecast", &["weather"]))),
        ("ledger", registry_card("Ledger", "Bookkeeping", ("post", "Post entries in currency", &["finance"]))),
    ];
    for (name, card) in &cards {
        registry.register(&Registration::new(name, &format!("http://{name}"), "admin")).await.unwrap();
        let mut state = CardState::answered(card.clone());
        if *name == "weather" {
            state.signature = SignatureState::Verified;
        }
        registry.record(name, &state).await.unwrap();
    }
    let search = |query: AgentQuery| async move { registry.search(&query).await.unwrap().names };
    assert_eq!(search(AgentQuery::default()).await, ["fx", "ledger", "weather"], "every agent, by name");
    assert_eq!(search(AgentQuery::text("currency")).await, ["fx", "ledger"], "the name weighs most");
    assert_eq!(search(AgentQuery::text("forecasting city")).await, ["weather"]);
    assert_eq!(search(AgentQuery::text("Exchange")).await, ["fx"], "case does not matter");
    assert_eq!(search(AgentQuery::text("book")).await, ["ledger"], "a word's start");
    assert_eq!(search(AgentQuery::text("please post")).await.first().map(String::as_str), Some("ledger"));
    assert!(search(AgentQuery::text("\"* OR NEAR(")).await.len() <= 3, "query syntax is only words");
    assert!(search(AgentQuery::text("zebra")).await.is_empty());

    let only = |facet, value: &str| AgentQuery::default().filter(facet, value);
    assert_eq!(search(only(Facet::Tag, "FINANCE")).await, ["fx", "ledger"]);
    assert_eq!(search(only(Facet::Skill, "forecast")).await, ["weather"]);
    assert_eq!(search(only(Facet::InputMode, "application/pdf")).await.len(), 3);
    assert_eq!(search(only(Facet::OutputMode, "text/plain")).await.len(), 3);
    assert_eq!(search(only(Facet::Binding, "jsonrpc")).await.len(), 3);
    assert!(search(only(Facet::Binding, "GRPC")).await.is_empty());
    assert_eq!(search(only(Facet::Version, "1.0")).await.len(), 3);
    assert_eq!(search(only(Facet::Signed, "true")).await, ["weather"]);
    assert_eq!(search(only(Facet::Healthy, "true")).await.len(), 3);
    let both = AgentQuery::text("currency").filter(Facet::Tag, "finance").filter(Facet::Skill, "post");
    assert_eq!(search(both).await, ["ledger"]);

    // Pages, with the count of every match; agents left out are neither found nor counted.
    let page = registry.search(&AgentQuery::default().page(1, 1)).await.unwrap();
    assert_eq!((page.names.as_slice(), page.total), (&["ledger".to_owned()][..], 3));
    let page = registry.search(&AgentQuery::text("currency").page(0, 1)).await.unwrap();
    assert_eq!((page.names.as_slice(), page.total), (&["fx".to_owned()][..], 2));
    let past = registry.search(&AgentQuery::text("currency").page(5, 1)).await.unwrap();
    assert_eq!((past.names.len(), past.total), (0, 2));
    let mut hidden = AgentQuery::text("currency").filter(Facet::Tag, "finance").page(0, 10);
    hidden.excluded = vec!["fx".into()];
    let page = registry.search(&hidden).await.unwrap();
    assert_eq!((page.names.as_slice(), page.total), (&["ledger".to_owned()][..], 1));
    hidden.limit = Some(1);
    assert_eq!(registry.search(&hidden).await.unwrap().total, 1);
    let none_left =
        AgentQuery { excluded: vec!["fx".into(), "ledger".into(), "weather".into()], ..AgentQuery::default() };
    assert_eq!(registry.search(&none_left).await.unwrap(), crate::registry::Found::default());

    // Down: still found by its last card, and by its health.
    let mut down = registry.agents().await.unwrap().into_iter().find(|a| a.registration.name == "fx").unwrap().state;
    (down.healthy, down.failures, down.error) = (false, 3, Some("connection refused".into()));
    registry.record("fx", &down).await.unwrap();
    assert_eq!(search(only(Facet::Healthy, "false")).await, ["fx"]);
    assert_eq!(search(AgentQuery::text("exchange")).await, ["fx"]);

    // A card that changes is found by what it says now, and no longer by what it said.
    let changed = registry_card("Weather", "Forecasts", ("tides", "Tide tables", &["sea"]));
    registry.record("weather", &CardState::answered(changed)).await.unwrap();
    assert_eq!(search(AgentQuery::text("tide")).await, ["weather"]);
    assert!(search(only(Facet::Skill, "forecast")).await.is_empty());
    assert!(search(AgentQuery::text("city")).await.is_empty());
    for (name, _) in &cards {
        registry.unregister(name).await.unwrap();
    }
    assert!(search(AgentQuery::text("tide")).await.is_empty());
}
