//! The embedded backend: one SQLite file, durable at every answered write.
//!
//! Reads go through a pool of read-only connections, which WAL mode lets run beside the writer.
//! Writes go through one connection owned by a writer task: the writes that arrive while it
//! commits are committed together, in one transaction and one `fsync` (group commit), and each
//! caller is answered only after the transaction holding its write is on disk.
//!
//! A file is served by one process at a time: the store holds an exclusive lock on `PATH-lock`
//! while it is open, and a second process refuses to open the file. Since every write then passes
//! through this store, it keeps what it wrote that is read most: the tasks executions are working
//! on, which tasks have push configs at all, each principal's unfinished tasks and the ended
//! ones, with the sizes of their logs.

mod apply;
mod known;
mod registry;
mod script;
#[cfg(test)]
mod tests;
mod write;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agentwire_types::{StreamResponse, Task, TaskState, Timestamp};
use async_trait::async_trait;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Connection, Executor, Sqlite, SqliteConnection, SqlitePool};
use tokio::sync::{mpsc, oneshot};

use crate::sql::{
    as_sql, backend, decode_config, decode_event, encode, fold_logs, limit as sql_limit, plan_commit, plan_create,
    queries, scoped, ConfigRow, Folded, LogRow, PageRow, Turns,
};
use crate::{
    Change, KeyGuard, KeyedSend, Purge, PushConfigRecord, PushConfigStore, Reservation, Result, Scope, SendKey,
    StoreError, StoredEvent, TaskPage, TaskQuery, TaskRecord, TaskStore, Unfinished, Updated, WriteGroups,
};

use known::{load_config_owners, load_ended, load_keys, load_unfinished, Known};
use write::{Job, KeyWrite, Write};
use writer::{reclaim_freed_pages, write_loop, CloseRequest, MAX_GROUP};

crate::sql::sql_reads!(SqliteStore, Sqlite, reads);

/// Stores tasks, event logs and push configs in a SQLite file.
///
/// ```no_run
/// use agentwire_store::SqliteStore;
///
/// # async fn open() -> agentwire_store::Result<()> {
/// let store = SqliteStore::open("agentwire.db").await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct SqliteStore {
    reads: SqlitePool,
    writes: mpsc::Sender<Job>,
    closer: mpsc::Sender<CloseRequest>,
    turns: Arc<Turns>,
    known: Arc<Known>,
    path: Arc<PathBuf>,
    registry: registry::SqliteRegistry,
    /// Open, and so locked, until the last clone is dropped.
    _lock: Arc<std::fs::File>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").field("path", &self.path).finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens the database at `path`, creating it if needed, and brings its schema up to date.
    /// Must be called within a Tokio runtime: the writer task starts here. Fails if another
    /// store, in this process or another, has the file open.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_owned();
        let lock = Arc::new(lock_exclusively(&path)?);
        let options = SqliteConnectOptions::new()
            .filename(&path)
            .journal_mode(SqliteJournalMode::Wal)
            // Every commit reaches the disk before its writers are answered.
            .synchronous(SqliteSynchronous::Full)
            // Checkpoint every ~40 MB of log rather than every ~4 MB: the pages every group
            // rewrites (the newest rows and their index pages) are copied to the database once per
            // checkpoint, and a checkpoint stalls the group that triggers it.
            .pragma("wal_autocheckpoint", "10000")
            // A log that grew past this with large writes is cut back to it after a checkpoint.
            .pragma("journal_size_limit", "67108864")
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(30));
        let mut writer =
            SqliteConnection::connect_with(&options.clone().create_if_missing(true)).await.map_err(backend)?;
        reclaim_freed_pages(&mut writer, &path).await?;
        // The writer's scratch tables (a purge's list of keys) stay in memory: in a file, each
        // purge made, wrote and removed one. Set after the rebuild above, whose copy of the whole
        // file would otherwise be held in memory too; the readers, whose sorts may be large, keep
        // theirs in files.
        writer.execute("PRAGMA temp_store = memory").await.map_err(backend)?;
        sqlx::migrate!("migrations/sqlite").run(&mut writer).await.map_err(|e| {
            StoreError::Backend(format!("could not bring the schema of {} up to date: {e}", path.display()))
        })?;
        // The registry's rare writes have a connection of their own, opened when first needed.
        let registry_writes = SqlitePoolOptions::new().max_connections(1).connect_lazy_with(options.clone());
        let reads =
            SqlitePoolOptions::new().max_connections(4).connect_with(options.read_only(true)).await.map_err(backend)?;
        let registry = registry::SqliteRegistry { reads: reads.clone(), writes: registry_writes };
        // Pages a purge freed before the last stop may still wait to be given back.
        let known = Arc::new(Known { vacuum_due: true.into(), ..Known::default() });
        load_config_owners(&reads, &known).await?;
        load_unfinished(&reads, &known).await?;
        load_keys(&reads, &known).await?;
        load_ended(&reads, &known).await?;
        let (writes, jobs) = mpsc::channel(MAX_GROUP * 4);
        let (closer, closes) = mpsc::channel(1);
        tokio::spawn(write_loop(writer, jobs, closes, Arc::clone(&known)));
        Ok(Self { reads, writes, closer, turns: Arc::default(), known, path: Arc::new(path), registry, _lock: lock })
    }

    /// Opens `sqlite:PATH` (or `sqlite://PATH`).
    pub async fn open_url(url: &str) -> Result<Self> {
        let path = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")).unwrap_or(url);
        Self::open(path).await
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The store, with the bus and cancel signal of this process (a file is served by one process
    /// at a time), for a server.
    pub fn backend(self) -> crate::Backend {
        let registry = self.registry.clone();
        crate::Backend::local(self).with_registry(registry)
    }

    async fn write(&self, write: Write) -> Result<u64> {
        let (reply, answer) = oneshot::channel();
        let gone = || StoreError::Backend("the SQLite writer has stopped".into());
        self.writes.send(Job { write, reply }).await.map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }
}

/// Opens and locks `PATH-lock` beside the database, or says which file another process holds.
/// An advisory lock (`flock`), which the kernel releases when the process ends, however it ends.
fn lock_exclusively(path: &Path) -> Result<std::fs::File> {
    let lock_path = PathBuf::from(format!("{}-lock", path.display()));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| StoreError::Backend(format!("cannot open {}: {e}", lock_path.display())))?;
    #[cfg(unix)]
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {}
        Err(rustix::io::Errno::WOULDBLOCK) => {
            return Err(StoreError::Backend(format!(
                "{} is in use by another agentwire process (it holds {}); stop that process first, \
                 or serve another file",
                path.display(),
                lock_path.display()
            )))
        }
        Err(e) => return Err(StoreError::Backend(format!("cannot lock {}: {e}", lock_path.display()))),
    }
    Ok(file)
}

#[async_trait]
impl TaskStore for SqliteStore {
    async fn create(
        &self,
        scope: &Scope,
        task: Arc<Task>,
        events: &[Arc<StreamResponse>],
        max_unfinished: Option<usize>,
    ) -> Result<u64> {
        let row = plan_create(&task, events)?;
        let limit = max_unfinished.filter(|_| !row.ended);
        self.write(Write::Create { scope: scope.clone(), task, row, limit, key: None }).await
    }

    async fn create_keyed(
        &self,
        scope: &Scope,
        task: Arc<Task>,
        events: &[Arc<StreamResponse>],
        max_unfinished: Option<usize>,
        key: &SendKey,
        reserved: Option<&KeyGuard>,
    ) -> Result<u64> {
        let row = plan_create(&task, events)?;
        let limit = max_unfinished.filter(|_| !row.ended);
        let key = KeyWrite { key: key.clone(), reserved: reserved.is_some() };
        self.write(Write::Create { scope: scope.clone(), task, row, limit, key: Some(key) }).await
    }

    /// Reserved in this process, which alone writes the file; then looked for among the keys
    /// recorded, unless memory tells it was never recorded (the common case: a fresh key).
    async fn reserve_key(&self, scope: &Scope, key: &SendKey) -> Result<Reservation> {
        let guard = self.known.pending_keys.reserve(scope, &key.key).await;
        if !self.known.recorded_keys.may_hold(scope, &key.key) {
            return Ok(Reservation::Reserved(guard));
        }
        let held: Option<(String, String)> = queries::keyed_send::<Sqlite>(scope, &key.key, true)
            .build_query_as()
            .fetch_optional(&self.reads)
            .await
            .map_err(backend)?;
        Ok(match held {
            Some((request, task_id)) => Reservation::Held(KeyedSend { request, task_id }),
            None => Reservation::Reserved(guard),
        })
    }

    async fn commit(
        &self,
        scope: &Scope,
        task: Arc<Task>,
        events: &[Arc<StreamResponse>],
        expected: u64,
    ) -> Result<u64> {
        let before = self.known.running.at(scope, &task.id, expected);
        let row = plan_commit(before.as_ref(), &task, events)?;
        self.write(Write::Commit { scope: scope.clone(), task, row, expected }).await
    }

    async fn get(&self, scope: &Scope, task_id: &str) -> Result<Option<TaskRecord>> {
        if let Some(record) = self.known.running.record(scope, task_id) {
            return Ok(Some(record));
        }
        Ok(self.read_log(scope, task_id).await?.map(|folded| folded.record))
    }

    async fn events_after(&self, scope: &Scope, task_id: &str, after: u64, limit: usize) -> Result<Vec<StoredEvent>> {
        self.read_events(scope, task_id, after, limit).await
    }

    async fn list(&self, scope: &Scope, query: &TaskQuery) -> Result<TaskPage> {
        self.read_page(scope, query).await
    }

    /// Counted without reading the file, which only this store writes.
    async fn unfinished(&self, owner: &str) -> Result<Unfinished> {
        Ok(self
            .known
            .unfinished
            .get(owner)
            .map_or_else(Unfinished::default, |tasks| Unfinished { tasks: tasks.logs.len(), bytes: tasks.bytes }))
    }

    async fn tasks_in_progress(&self, limit: usize) -> Result<Vec<(Scope, String)>> {
        self.read_in_progress(limit).await
    }

    async fn tasks_unchanged_since(
        &self,
        states: &[TaskState],
        before: Timestamp,
        limit: usize,
    ) -> Result<Vec<(Scope, String)>> {
        self.read_unchanged_since(states, before, limit).await
    }

    /// A read on the pool and the writer still running.
    async fn check(&self) -> Result<()> {
        if self.writes.is_closed() {
            return Err(StoreError::Backend("the SQLite writer has stopped".into()));
        }
        sqlx::query("SELECT 1").execute(&self.reads).await.map_err(backend)?;
        Ok(())
    }

    fn write_groups(&self) -> Option<WriteGroups> {
        use std::sync::atomic::Ordering::Relaxed;
        Some(WriteGroups { groups: self.known.groups.load(Relaxed), writes: self.known.grouped_writes.load(Relaxed) })
    }

    /// Closes the readers, then the writer once the writes already sent are committed: the
    /// connection closed last folds the write-ahead log into the database and removes it.
    async fn close(&self) -> Result<()> {
        self.reads.close().await;
        self.registry.writes.close().await;
        let (close, closed) = oneshot::channel();
        if self.closer.send(close).await.is_ok() {
            // An error means the writer had stopped already.
            let _ = closed.await;
        }
        Ok(())
    }

    async fn update(&self, scope: &Scope, task_id: &str, change: &mut Change<'_>) -> Result<Updated> {
        let read = || self.read_log(scope, task_id);
        crate::sql::update(self, &self.known.running, &self.turns, scope, task_id, change, read).await
    }

    async fn delete(&self, scope: &Scope, task_id: &str) -> Result<bool> {
        Ok(self.write(Write::Delete { scope: scope.clone(), id: task_id.to_owned() }).await? > 0)
    }

    /// Removes the tasks; the pages they took go back to the file system afterwards, a slice at a
    /// time between writes, beyond a few kept for the writes to come. Within the bounds, and with
    /// no time to keep them for, it writes nothing.
    async fn purge(&self, rules: &Purge) -> Result<u64> {
        let ended = *self.known.ended_totals();
        let over = rules.keep_ended.is_some_and(|keep| ended.tasks > keep as u64)
            || rules.keep_ended_bytes.is_some_and(|keep| ended.bytes > keep);
        if rules.ended_before.is_none() && !over {
            return Ok(0);
        }
        // Only ended tasks go, which `running` never holds; the writer forgets the configs that
        // went with them once the purge is committed.
        self.write(Write::Purge(*rules)).await
    }
}

#[async_trait]
impl PushConfigStore for SqliteStore {
    async fn put_config(&self, scope: &Scope, record: &PushConfigRecord) -> Result<()> {
        let write = Write::PutConfig { scope: scope.clone(), record: record.clone(), config: encode(&record.config)? };
        self.write(write).await.map(drop)
    }

    async fn get_config(&self, scope: &Scope, task_id: &str, config_id: &str) -> Result<Option<PushConfigRecord>> {
        Ok(self.read_configs(scope, task_id, Some(config_id)).await?.pop())
    }

    async fn list_configs(&self, scope: &Scope, task_id: &str) -> Result<Vec<PushConfigRecord>> {
        if !self.known.with_configs.contains_key(&(scope.clone(), task_id.to_owned())) {
            return Ok(Vec::new());
        }
        self.read_configs(scope, task_id, None).await
    }

    async fn delete_config(&self, scope: &Scope, task_id: &str, config_id: &str) -> Result<bool> {
        let write =
            Write::DeleteConfig { scope: scope.clone(), task_id: task_id.to_owned(), config_id: config_id.to_owned() };
        Ok(self.write(write).await? > 0)
    }

    async fn mark_delivered(&self, scope: &Scope, task_id: &str, config_id: &str, seq: u64) -> Result<()> {
        let (task_id, config_id) = (task_id.to_owned(), config_id.to_owned());
        self.write(Write::MarkDelivered { scope: scope.clone(), task_id, config_id, seq }).await.map(drop)
    }

    async fn undelivered(&self, limit: usize) -> Result<Vec<(Scope, String)>> {
        self.read_undelivered(limit).await
    }
}
