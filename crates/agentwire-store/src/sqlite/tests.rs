use super::*;
use crate::conformance;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sqlite_store_passes_the_conformance_suite() {
    let dir = std::env::temp_dir().join(format!("agentwire-sqlite-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let counter = std::sync::atomic::AtomicUsize::new(0);
    conformance::run(|| {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = dir.join(format!("conformance-{n}.db"));
        async move { SqliteStore::open(path).await.unwrap() }
    })
    .await;
    let store = SqliteStore::open(dir.join("registry.db")).await.unwrap();
    conformance::registry(&**store.backend().registry()).await;
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A file made by a version before the count of unfinished tasks opens, is brought up to
/// date, and counts the tasks it already held.
#[tokio::test]
async fn a_file_from_before_the_unfinished_count_opens_and_counts() {
    let dir = std::env::temp_dir().join(format!("agentwire-sqlite-old-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("migrations")).unwrap();
    let first = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/sqlite/0001_tasks.sql");
    std::fs::copy(first, dir.join("migrations/0001_tasks.sql")).unwrap();
    let path = dir.join("old.db");
    let options = SqliteConnectOptions::new().filename(&path).create_if_missing(true);
    let mut old = SqliteConnection::connect_with(&options).await.unwrap();
    sqlx::migrate::Migrator::new(dir.join("migrations")).await.unwrap().run(&mut old).await.unwrap();
    for (id, state, ended_at) in [("working", 3, None), ("waiting", 6, None), ("done", 4, Some(1_i64))] {
        sqlx::query(
            "INSERT INTO tasks (tenant, owner, id, context_id, state, status_millis, version, ended_at, snapshot)
             VALUES ('', 'a', ?, 'c', ?, 0, 1, ?, '{}')",
        )
        .bind(id)
        .bind(state)
        .bind(ended_at)
        .execute(&mut old)
        .await
        .unwrap();
    }
    old.close().await.unwrap();

    let store = SqliteStore::open(&path).await.unwrap();
    let scope = Scope::new("", "a");
    assert_eq!(store.unfinished("a").await.unwrap().tasks, 2);
    let task = conformance::task("new", "c", 1, agentwire_types::TaskState::Submitted);
    let first = Arc::new(StreamResponse::Task(task.clone()));
    let refused = store.create(&scope, Arc::new(task), &[first], Some(2)).await;
    assert!(matches!(refused, Err(StoreError::TooManyUnfinished { limit: 2 })), "{refused:?}");
    drop(store);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A running task whose last commits stored only their events reads back, after the file is
/// opened again, as it was written: the events are folded into the log's base.
#[tokio::test]
async fn a_task_written_as_events_reads_back_after_a_restart() {
    let path = std::env::temp_dir().join(format!("agentwire-sqlite-fold-{}.db", std::process::id()));
    let scope = Scope::new("", "a");
    let store = SqliteStore::open(&path).await.unwrap();
    let task = conformance::task("t", "c", 1, agentwire_types::TaskState::Working);
    store.create(&scope, Arc::new(task.clone()), &[Arc::new(StreamResponse::Task(task))], None).await.unwrap();
    let mut written = None;
    for n in 0..10 {
        let mut chunk = |task: &mut Task| {
            let part = agentwire_types::Part::text(format!("chunk {n}"));
            let artifact = agentwire_types::Artifact::new("a", "answer", vec![part]);
            let event = StreamResponse::ArtifactUpdate(agentwire_types::TaskArtifactUpdateEvent {
                artifact,
                append: n > 0,
                ..Default::default()
            });
            task.fold(&event);
            Ok(vec![event])
        };
        written = Some(store.update(&scope, "t", &mut chunk).await.unwrap());
    }
    drop(store);
    let written = written.unwrap();
    let store = SqliteStore::open(&path).await.unwrap();
    let read = store.get(&scope, "t").await.unwrap().unwrap();
    assert_eq!((read.task, read.version), (written.task, 11));
    assert_eq!(read.version, written.version);
    drop(store);
    for suffix in ["", "-wal", "-shm", "-lock"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

/// While a store has a file open, a second one is refused with a message that says what to
/// do; once the first is dropped, the file opens again.
#[tokio::test]
async fn a_file_is_opened_by_one_store_at_a_time() {
    let path = std::env::temp_dir().join(format!("agentwire-sqlite-lock-{}.db", std::process::id()));
    let first = SqliteStore::open(&path).await.unwrap();
    let refused = SqliteStore::open(&path).await.map(drop);
    let Err(StoreError::Backend(message)) = refused else { panic!("{refused:?}") };
    assert!(message.contains("in use by another agentwire process"), "{message}");
    assert!(message.contains("stop that process first"), "{message}");
    drop(first);
    let again = SqliteStore::open(&path).await.unwrap();
    drop(again);
    for suffix in ["", "-wal", "-shm", "-lock"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

/// The store counts its ended tasks to purge without reading them all: the count holds across
/// a restart and a delete, so a purge removes exactly what passes the bounds.
#[tokio::test]
async fn a_purge_counts_ended_tasks_across_restarts_and_deletes() {
    let path = std::env::temp_dir().join(format!("agentwire-sqlite-purge-{}.db", std::process::id()));
    let scope = Scope::new("", "a");
    let store = SqliteStore::open(&path).await.unwrap();
    for i in 0..6 {
        let task = conformance::task(&format!("t{i}"), "c", i, agentwire_types::TaskState::Completed);
        let first = Arc::new(StreamResponse::Task(task.clone()));
        store.create(&scope, Arc::new(task), &[first], None).await.unwrap();
    }
    drop(store);
    let store = SqliteStore::open(&path).await.unwrap();
    assert!(store.delete(&scope, "t5").await.unwrap());
    let keep_three = Purge { keep_ended: Some(3), ..Purge::default() };
    assert_eq!(store.purge(&keep_three).await.unwrap(), 2, "five ended tasks, three kept");
    assert_eq!(store.purge(&keep_three).await.unwrap(), 0);
    let kept: Vec<bool> = futures_util::future::join_all((0..5).map(|i| {
        let (store, scope) = (store.clone(), scope.clone());
        async move { store.get(&scope, &format!("t{i}")).await.unwrap().is_some() }
    }))
    .await;
    assert_eq!(kept, [false, false, true, true, true]);
    drop(store);
    for suffix in ["", "-wal", "-shm", "-lock"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

/// Creates committed together by the one writer still count each other: the limit is exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_in_one_group_respect_the_limit_exactly() {
    let path = std::env::temp_dir().join(format!("agentwire-sqlite-limit-{}.db", std::process::id()));
    let store = SqliteStore::open(&path).await.unwrap();
    let scope = Scope::new("", "a");
    let creates = (0..32).map(|i| {
        let (store, scope) = (store.clone(), scope.clone());
        tokio::spawn(async move {
            let task = conformance::task(&format!("t{i}"), "c", 1, agentwire_types::TaskState::Submitted);
            let first = Arc::new(StreamResponse::Task(task.clone()));
            store.create(&scope, Arc::new(task), &[first], Some(5)).await
        })
    });
    let mut made = 0;
    for create in creates.collect::<Vec<_>>() {
        match create.await.unwrap() {
            Ok(_) => made += 1,
            Err(StoreError::TooManyUnfinished { limit: 5 }) => {}
            Err(other) => panic!("{other:?}"),
        }
    }
    assert_eq!(made, 5);
    assert_eq!(store.unfinished("a").await.unwrap().tasks, 5);
    drop(store);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}
