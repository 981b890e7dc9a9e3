//! Storage for agentwire.
//!
//! Two traits, each implemented by every backend:
//! - [`TaskStore`]: tasks and their event logs. Every change to a task is committed as the new
//!   task plus the events that produced it, under a sequence number, in one step, before anything
//!   is sent to subscribers. Commits are optimistic: they name the version they start from and fail
//!   with [`StoreError::Conflict`] if another writer got there first. The SQL backends keep the
//!   log alone, each message once: a read folds it ([`Task::fold`]), and a log whose events
//!   outgrow the task is compacted into one event holding the whole task.
//! - [`PushConfigStore`]: webhook configurations per task.
//!
//! A gateway also keeps its registry of agents in the store ([`registry::RegistryStore`],
//! [`Backend::registry`]).
//!
//! Every method takes a [`Scope`] (tenant and owning principal): a record is only ever visible in
//! the scope that created it.
//!
//! A server runs on a [`Backend`]: a store with the [`EventBus`] and [`CancelSignal`] that reach
//! every process serving it, made by the store itself.
//!
//! | backend | feature | use |
//! |---|---|---|
//! | [`MemoryStore`] | always | tests, single process, bounded by retention |
//! | `SqliteStore` | `sqlite` | one process, embedded, durable: the `agentwire` default |
//! | `PostgresStore` | `postgres` | several processes as one server, with a bus and cancel signal across them |
//!
//! ```
//! use std::sync::Arc;
//!
//! use agentwire_store::{MemoryStore, Scope, TaskStore};
//! use agentwire_types::{StreamResponse, Task, TaskState, TaskStatus};
//!
//! # tokio_test_block_on(async {
//! let store = MemoryStore::default();
//! let scope = Scope::new("", "alice");
//! let task = Task { id: "t1".into(), context_id: "c1".into(), status: TaskStatus::new(TaskState::Submitted), ..Task::default() };
//! let first_event = Arc::new(StreamResponse::Task(task.clone()));
//! let version = store.create(&scope, Arc::new(task), &[first_event], None).await.unwrap();
//! assert_eq!(version, 1);
//! assert!(store.get(&Scope::new("", "bob"), "t1").await.unwrap().is_none());
//! # });
//! # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
//! # }
//! ```

mod backend;
mod bus;
#[cfg(any(test, feature = "conformance"))]
pub mod conformance;
mod keys;
mod memory;
mod page;
#[cfg(feature = "postgres")]
mod postgres;
pub mod registry;
mod shared;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
#[cfg(feature = "sqlite")]
mod sqlite;

use std::sync::Arc;

use agentwire_types::{A2AError, StreamResponse, Task, TaskPushNotificationConfig, TaskState, Timestamp};
use async_trait::async_trait;

pub use backend::{readiness, Backend};
pub use bus::{
    CancelSignal, Commit, CommitFeed, EventBus, FeedNotice, LocalBus, LocalCancel, Notice, Subscription, TraceContext,
};
pub use keys::{KeyGuard, KeyedSend, Reservation, SendKey};
pub use memory::{MemoryStore, RetentionPolicy};
pub use page::PageToken;
#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
pub use shared::{SharedState, Spent};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;

/// The visibility boundary of a record: the tenant and the principal that owns it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Scope {
    /// The routing tenant ("" when none).
    pub tenant: String,
    /// The authenticated principal ("" for anonymous callers).
    pub owner: String,
}

impl Scope {
    /// A scope for `owner` within `tenant`.
    pub fn new(tenant: impl Into<String>, owner: impl Into<String>) -> Self {
        Self { tenant: tenant.into(), owner: owner.into() }
    }
}

/// A task and the sequence number of the last event applied to it.
///
/// Snapshots and events are shared (`Arc`) between the store, the readers streaming them and the
/// code that answers requests, so that a commit copies nothing the store already holds.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRecord {
    /// The task (full history and artifacts).
    pub task: Arc<Task>,
    /// The sequence number of its last event; also the optimistic-concurrency version.
    pub version: u64,
}

/// What one principal has in progress, across the tenants it named: its tasks not in a terminal
/// state, and the size of their logs as the store keeps them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Unfinished {
    /// The tasks.
    pub tasks: usize,
    /// The size of their logs: bytes of stored text in the SQL backends, the memory estimate of
    /// their events in the memory store.
    pub bytes: u64,
}

/// Which ended tasks [`TaskStore::purge`] removes: those that ended before `ended_before`, and,
/// oldest end first, those beyond the `keep_ended` that ended last or beyond the last ones whose
/// logs fit in `keep_ended_bytes` together. Tasks in progress are never removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Purge {
    /// Remove the tasks that ended before this time.
    pub ended_before: Option<Timestamp>,
    /// Keep at most this many ended tasks.
    pub keep_ended: Option<usize>,
    /// Keep at most this many bytes of ended tasks' logs, counted as in [`Unfinished::bytes`].
    pub keep_ended_bytes: Option<u64>,
    /// Remove about this many bytes of logs at most in one call (at least one task), oldest end
    /// first, so that a purge holds a store that has one writer (SQLite) only briefly: call again
    /// while it removes tasks. A store whose writes do not wait on each other may remove more.
    pub max_removed_bytes: Option<u64>,
}

/// An event from a task's log.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEvent {
    /// Its position in the task's log, starting at 1.
    pub seq: u64,
    /// The event.
    pub event: Arc<StreamResponse>,
}

/// Filters, cursor and view of a task listing.
#[derive(Debug, Clone, Default)]
pub struct TaskQuery {
    /// Only tasks of this context.
    pub context_id: Option<String>,
    /// Only tasks in this state.
    pub state: Option<TaskState>,
    /// Only tasks whose status timestamp is at or after this time.
    pub status_after: Option<Timestamp>,
    /// Page size (the caller validates the range).
    pub page_size: usize,
    /// Where the previous page ended.
    pub after: Option<PageToken>,
    /// How many of each task's most recent messages the page carries (all with `None`).
    pub history_length: Option<usize>,
    /// Whether the page carries the tasks' artifacts.
    pub include_artifacts: bool,
    /// The most memory the page's tasks may take, as [`MemorySize`](agentwire_types::MemorySize)
    /// estimates it: the page ends before the task that would pass it, but always holds one. A
    /// store reads no more tasks than the page holds, so a listing of large tasks stays small.
    pub max_bytes: Option<usize>,
}

/// One page of a task listing, newest status first.
#[derive(Debug, Clone, Default)]
pub struct TaskPage {
    /// The tasks, as the query's view of them ([`Task::view`]).
    pub tasks: Vec<Task>,
    /// Where the next page starts; `None` on the last page.
    pub next: Option<PageToken>,
    /// How many tasks match the filters in all.
    pub total: usize,
}

/// A stored webhook configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct PushConfigRecord {
    /// The configuration, with `task_id` and `id` set.
    pub config: TaskPushNotificationConfig,
    /// The protocol generation the config was created in; deliveries are written in it (v1.0: a
    /// `StreamResponse` per event; v0.3 and legacy: the whole task after each event).
    pub dialect: agentwire_types::Dialect,
    /// The sequence number of the last event the webhook was handed (delivered, or given up on
    /// after the last attempt): the events after it in the task's log are still due. This cursor
    /// beside the log is the push outbox, so an event's deliveries are as durable as the event.
    /// [`PushConfigStore::put_config`] stores it for a new config and keeps the stored one when
    /// it replaces a config.
    pub delivered_through: u64,
}

/// Storage failures.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The task changed since the version the commit started from.
    #[error("task {task_id} was changed concurrently (expected version {expected}, found {found})")]
    Conflict {
        /// The task.
        task_id: String,
        /// The version the writer started from.
        expected: u64,
        /// The version in the store.
        found: u64,
    },
    /// A task with this id already exists.
    #[error("task {0} already exists")]
    AlreadyExists(String),
    /// The task does not exist in this scope.
    #[error("task {0} not found")]
    NotFound(String),
    /// A limit was reached (e.g. push configs per task).
    #[error("limit reached: {0}")]
    Limit(String),
    /// The principal already has as many unfinished tasks as [`TaskStore::create`] was allowed;
    /// no task was created.
    #[error("the principal already has {limit} unfinished tasks")]
    TooManyUnfinished {
        /// The limit that was reached.
        limit: usize,
    },
    /// The backend failed.
    #[error("storage backend failed: {0}")]
    Backend(String),
    /// The change given to [`TaskStore::update`] refused to apply; the task is unchanged.
    #[error("{0}")]
    Refused(A2AError),
    /// The idempotency key given to [`TaskStore::create_keyed`] is held by an earlier send, which
    /// made the task named here; nothing was written.
    #[error("the idempotency key is held by the send that made task {}", .0.task_id)]
    KeyTaken(KeyedSend),
}

/// `Result` with [`StoreError`].
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// A change to a task: it edits the task and returns the events that announce the edit. When it
/// returns an error, or no events, it must leave the task as it found it: no events means nothing
/// to commit.
///
/// The events describe the edit: folding them into the task as it was ([`Task::fold`]) gives the
/// task as edited, except that the change may also trim the history or set the metadata (a store
/// that writes only the events then notices, and writes the whole task).
pub type Change<'a> = dyn FnMut(&mut Task) -> std::result::Result<Vec<StreamResponse>, A2AError> + Send + 'a;

/// What [`TaskStore::update`] committed.
#[derive(Debug, Clone)]
pub struct Updated {
    /// The task after the change.
    pub task: Arc<Task>,
    /// Its version: the sequence number of its last event.
    pub version: u64,
    /// The events appended, in order (empty if the change returned none).
    pub events: Vec<Arc<StreamResponse>>,
}

/// How often [`TaskStore::update`]'s default implementation retries after losing a race.
const MAX_UPDATE_ATTEMPTS: u32 = 16;

/// How long it waits after its first lost race; longer after each one.
const CONFLICT_PAUSE: std::time::Duration = std::time::Duration::from_millis(1);

/// The writes a store committed and the commits (transactions) they took, since it opened: their
/// ratio is the mean size of a group commit.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct WriteGroups {
    /// Commits made.
    pub groups: u64,
    /// Writes committed in them.
    pub writes: u64,
}

/// Tasks and their event logs.
///
/// Every backend keeps the log of a task from its last compaction for as long as it keeps the
/// task: each event under its sequence number, none left out, so that a reader can resume after
/// any event it saw since. A compaction replaces the log with one event holding the whole task,
/// numbered like the last event it replaces; a reader resuming from an earlier event gets that
/// task, then the events after it. The SQL backends compact a task's log when the events after
/// the last compaction outgrow it, so that a read folds a bounded log; the memory store keeps
/// every event.
#[async_trait]
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task with its first events; returns the new version (the number of events).
    /// An id taken in `scope` is [`StoreError::AlreadyExists`]; the same id in another scope is
    /// another task.
    ///
    /// With `max_unfinished`, an unfinished task (one not in a terminal state) is refused with
    /// [`StoreError::TooManyUnfinished`] while the scope's owner has that many unfinished tasks
    /// already, in any tenant (see [`unfinished`](Self::unfinished)). A backend shared by several
    /// processes may let creates that race for one owner pass the limit by at most their number.
    async fn create(
        &self,
        scope: &Scope,
        task: Arc<Task>,
        events: &[Arc<StreamResponse>],
        max_unfinished: Option<usize>,
    ) -> Result<u64>;

    /// [`create`](Self::create), recording `key` for the scope in the same write: a key the scope
    /// holds already (and that has not expired) writes nothing and is
    /// [`StoreError::KeyTaken`], naming the send that holds it. A key goes with its task when the
    /// task is removed, and when it expires. Every backend records it where its tasks are, so it
    /// holds across restarts and, on a shared backend, across processes.
    ///
    /// With `reserved`, the guard [`reserve_key`](Self::reserve_key) gave for the key, the store
    /// knows no other send holds it, and may write the key without looking again.
    async fn create_keyed(
        &self,
        scope: &Scope,
        task: Arc<Task>,
        events: &[Arc<StreamResponse>],
        max_unfinished: Option<usize>,
        key: &SendKey,
        reserved: Option<&KeyGuard>,
    ) -> Result<u64>;

    /// Whether a send may go ahead under `key` before its task is written: the key is reserved
    /// for it until the guard drops (another send asking for it meanwhile waits), or an earlier
    /// send holds it. A store several processes write cannot tell without a write, and answers
    /// [`Reservation::Unchecked`] (the default): the caller then writes its task first, with
    /// [`create_keyed`](Self::create_keyed), before it starts any work.
    async fn reserve_key(&self, scope: &Scope, key: &SendKey) -> Result<Reservation> {
        let _ = (scope, key);
        Ok(Reservation::Unchecked)
    }

    /// What `owner` has unfinished, in every tenant: the tasks stored and not in a terminal state
    /// (a task that waits for input counts; a deleted one does not), and the size of their logs.
    async fn unfinished(&self, owner: &str) -> Result<Unfinished>;

    /// Replaces the task and appends `events`, if the stored version is still `expected`.
    /// Returns the new version. `events` describe the change as for a [`Change`].
    async fn commit(
        &self,
        scope: &Scope,
        task: Arc<Task>,
        events: &[Arc<StreamResponse>],
        expected: u64,
    ) -> Result<u64>;

    /// The task and its version, if it exists in `scope`.
    async fn get(&self, scope: &Scope, task_id: &str) -> Result<Option<TaskRecord>>;

    /// Events with a sequence number greater than `after`, oldest first, at most `limit`. When
    /// the log was compacted after `after`, the first is the event holding the whole task.
    async fn events_after(&self, scope: &Scope, task_id: &str, after: u64, limit: usize) -> Result<Vec<StoredEvent>>;

    /// A page of the tasks in `scope` matching `query`, newest status first, each as the query's
    /// view of it, within the query's byte budget.
    async fn list(&self, scope: &Scope, query: &TaskQuery) -> Result<TaskPage>;

    /// Tasks of any scope that an execution was working on (SUBMITTED or WORKING), at most
    /// `limit`. When the processes that ran them are gone, nobody will finish them.
    async fn tasks_in_progress(&self, limit: usize) -> Result<Vec<(Scope, String)>>;

    /// Tasks of any scope in one of `states` whose status was last set before `before` (by its
    /// timestamp), the longest unchanged first, at most `limit`: what the expiry of tasks left
    /// waiting looks for.
    async fn tasks_unchanged_since(
        &self,
        states: &[TaskState],
        before: Timestamp,
        limit: usize,
    ) -> Result<Vec<(Scope, String)>>;

    /// Removes a task with its event log and push configs; `false` if there was none.
    async fn delete(&self, scope: &Scope, task_id: &str) -> Result<bool>;

    /// Removes the ended tasks `rules` select, with their logs and configs, and gives the space
    /// they took back. Returns how many were removed.
    async fn purge(&self, rules: &Purge) -> Result<u64>;

    /// Ends this process's use of the store, once nothing will read or write through it any more
    /// (a server calls it last in its shutdown): a backend with files or connections puts them in
    /// order. SQLite folds its write-ahead log into the database, so a clean stop leaves no `-wal`
    /// or `-shm` file beside it. Reads and writes after it fail. The default does nothing.
    async fn close(&self) -> Result<()> {
        Ok(())
    }

    /// Whether the store answers: a backend with a database asks it something trivial. A server
    /// reports itself ready to serve only while this succeeds. The default answers at once.
    async fn check(&self) -> Result<()> {
        Ok(())
    }

    /// How this store's writes were grouped into commits, for a backend that commits several
    /// writes together (SQLite's group commit); `None` for one that commits each on its own.
    fn write_groups(&self) -> Option<WriteGroups> {
        None
    }

    /// Reads the task, applies `change`, and commits the result with its events, atomically. A
    /// missing task is [`StoreError::NotFound`]; a change that refuses is [`StoreError::Refused`].
    ///
    /// The default is optimistic: [`get`](Self::get), change a copy, [`commit`](Self::commit),
    /// and again from the start if another writer won the race. A backend that can lock the task
    /// may change it in place instead.
    async fn update(&self, scope: &Scope, task_id: &str, change: &mut Change<'_>) -> Result<Updated> {
        optimistic_update(self, scope, task_id, change).await
    }
}

/// [`TaskStore::update`]'s default: read, change a copy, commit if nobody else did meanwhile.
pub async fn optimistic_update<S: TaskStore + ?Sized>(
    store: &S,
    scope: &Scope,
    task_id: &str,
    change: &mut Change<'_>,
) -> Result<Updated> {
    optimistic_update_from(store, scope, task_id, change, None).await
}

/// [`optimistic_update`], starting from `known` (what this process last wrote of the task, which
/// another process may have changed since) instead of reading the task first: a commit from the
/// right version is then one write.
pub(crate) async fn optimistic_update_from<S: TaskStore + ?Sized>(
    store: &S,
    scope: &Scope,
    task_id: &str,
    change: &mut Change<'_>,
    mut known: Option<TaskRecord>,
) -> Result<Updated> {
    for attempt in 1..=MAX_UPDATE_ATTEMPTS {
        let (record, read) = match known.take() {
            Some(record) => (record, false),
            None => (store.get(scope, task_id).await?.ok_or_else(|| StoreError::NotFound(task_id.to_owned()))?, true),
        };
        let mut task = Arc::unwrap_or_clone(record.task);
        let events = change(&mut task).map_err(StoreError::Refused)?;
        let task = Arc::new(task);
        if events.is_empty() {
            return Ok(Updated { task, version: record.version, events: Vec::new() });
        }
        let events: Vec<Arc<StreamResponse>> = events.into_iter().map(Arc::new).collect();
        match store.commit(scope, Arc::clone(&task), &events, record.version).await {
            Ok(version) => return Ok(Updated { task, version, events }),
            // Another process won; let it finish before reading again (at once when the version
            // that lost was not read but remembered).
            Err(StoreError::Conflict { .. }) if read => tokio::time::sleep(CONFLICT_PAUSE * attempt).await,
            Err(StoreError::Conflict { .. }) => {}
            Err(other) => return Err(other),
        }
    }
    Err(StoreError::Backend(format!("task {task_id} is changing too fast to update")))
}

/// Webhook configurations, per task.
#[async_trait]
pub trait PushConfigStore: Send + Sync + 'static {
    /// Inserts or replaces the config with the same task and id. The task must exist in `scope`
    /// ([`StoreError::NotFound`] otherwise); its configs are removed with it.
    async fn put_config(&self, scope: &Scope, record: &PushConfigRecord) -> Result<()>;

    /// One config.
    async fn get_config(&self, scope: &Scope, task_id: &str, config_id: &str) -> Result<Option<PushConfigRecord>>;

    /// All configs of a task, in creation order.
    async fn list_configs(&self, scope: &Scope, task_id: &str) -> Result<Vec<PushConfigRecord>>;

    /// The configs of several tasks at once, each with its task's scope, in creation order per
    /// task: what webhook delivery asks after each batch of commits. The default asks task by
    /// task; a backend with round trips to a server answers in one.
    async fn configs_of(&self, tasks: &[(Scope, String)]) -> Result<Vec<(Scope, PushConfigRecord)>> {
        let mut all = Vec::new();
        for (scope, task_id) in tasks {
            all.extend(self.list_configs(scope, task_id).await?.into_iter().map(|record| (scope.clone(), record)));
        }
        Ok(all)
    }

    /// Removes a config; `false` if there was none.
    async fn delete_config(&self, scope: &Scope, task_id: &str, config_id: &str) -> Result<bool>;

    /// Moves a config's [`delivered_through`](PushConfigRecord::delivered_through) to `seq`, never
    /// back. A config or task that is gone is no error: it may have been deleted meanwhile.
    async fn mark_delivered(&self, scope: &Scope, task_id: &str, config_id: &str, seq: u64) -> Result<()>;

    /// Tasks of any scope with a config whose deliveries are behind the task's log, at most
    /// `limit`: a process that stopped before it delivered them left them due.
    async fn undelivered(&self, limit: usize) -> Result<Vec<(Scope, String)>>;
}
