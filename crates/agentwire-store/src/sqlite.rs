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

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agentwire_types::{StreamResponse, Task};
use async_trait::async_trait;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Connection, Executor, QueryBuilder, Row, Sqlite, SqliteConnection, SqlitePool};
use tokio::sync::{mpsc, oneshot};

use crate::sql::{
    as_seq, as_sql, backend, decode_config, decode_event, encode, fold_logs, limit as sql_limit, now_millis,
    plan_commit, plan_create, queries, read_page, scoped, ConfigRow, Folded, LogRow, PageRow, RunningTasks, TaskRow,
    Turns,
};
use crate::{
    Change, Purge, PushConfigRecord, PushConfigStore, Result, Scope, StoreError, StoredEvent, TaskPage, TaskQuery,
    TaskRecord, TaskStore, Unfinished, Updated, WriteGroups,
};

/// The most writes one transaction commits.
const MAX_GROUP: usize = 256;

/// How many times, at most, the writer lets other tasks run before it takes the next group,
/// while that brings more writes.
const SIBLING_YIELDS: usize = 4;

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
    /// Open, and so locked, until the last clone is dropped.
    _lock: Arc<std::fs::File>,
}

type Map<K, V> = dashmap::DashMap<K, V, foldhash::fast::RandomState>;

/// What the store knows without reading the file, because it made every write.
#[derive(Default)]
struct Known {
    /// The tasks in SUBMITTED or WORKING state, as last committed.
    running: RunningTasks,
    /// The tasks that may have push configs; the others have none.
    with_configs: Map<(Scope, String), ()>,
    /// Each principal's unfinished tasks (not in a terminal state), which
    /// [`TaskStore::unfinished`] adds up: a send's admission asks it every time.
    unfinished: Map<String, OwnerTasks>,
    /// The ended tasks stored, with the size of their logs: a purge within the retention's bounds
    /// writes nothing, and one beyond them knows how much to remove.
    ended: std::sync::Mutex<Ended>,
    /// Pages of removed tasks wait to be given back to the file system, a slice at a time
    /// between groups ([`vacuum_slice`]).
    vacuum_due: std::sync::atomic::AtomicBool,
    /// The groups the writer committed, and the writes in them.
    groups: std::sync::atomic::AtomicU64,
    grouped_writes: std::sync::atomic::AtomicU64,
}

/// Ended tasks and the size of their logs.
#[derive(Debug, Default, Clone, Copy)]
struct Ended {
    tasks: u64,
    bytes: u64,
}

impl Ended {
    fn add(&mut self, bytes: u64) {
        self.tasks += 1;
        self.bytes += bytes;
    }
}

/// The ended tasks a group of writes removed: how many and their bytes, and the tasks a purge
/// removed, whose configs went with them.
#[derive(Default)]
struct Removed {
    ended: Ended,
    purged: Vec<(Scope, String)>,
}

/// One principal's unfinished tasks, by tenant and id, with the size of their logs.
#[derive(Default)]
struct OwnerTasks {
    logs: std::collections::HashMap<(String, String), u64, foldhash::fast::RandomState>,
    bytes: u64,
}

impl Known {
    fn forget(&self, scope: &Scope, task_id: &str) {
        self.running.forget(scope, task_id);
        self.with_configs.remove(&(scope.clone(), task_id.to_owned()));
        self.ended(scope, task_id);
    }

    /// Notes a task just written (`created`, or changed), whose log now takes `bytes`:
    /// unfinished, or `ended`.
    fn written(&self, scope: &Scope, task_id: &str, ended: bool, bytes: u64, created: bool) {
        if ended {
            let was_unfinished = self.ended(scope, task_id);
            if was_unfinished || created {
                self.ended_totals().add(bytes);
            }
            return;
        }
        let mut owner = self.unfinished.entry(scope.owner.clone()).or_default();
        let owner = &mut *owner;
        let key = (scope.tenant.clone(), task_id.to_owned());
        let before = owner.logs.insert(key, bytes).unwrap_or_default();
        owner.bytes = owner.bytes + bytes - before;
    }

    /// Notes a task ended or gone: it no longer counts as unfinished. Returns whether it did.
    fn ended(&self, scope: &Scope, task_id: &str) -> bool {
        let mut was_unfinished = false;
        self.unfinished.remove_if_mut(&scope.owner, |_, owner| {
            if let Some(bytes) = owner.logs.remove(&(scope.tenant.clone(), task_id.to_owned())) {
                owner.bytes -= bytes;
                was_unfinished = true;
            }
            owner.logs.is_empty()
        });
        was_unfinished
    }

    fn ended_totals(&self) -> std::sync::MutexGuard<'_, Ended> {
        // Held for a few additions; a panic while held leaves sums that are still sums.
        self.ended.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Notes ended tasks removed by a committed group.
    fn removed(&self, removed: Removed) {
        let mut ended = self.ended_totals();
        ended.tasks = ended.tasks.saturating_sub(removed.ended.tasks);
        ended.bytes = ended.bytes.saturating_sub(removed.ended.bytes);
        drop(ended);
        for key in removed.purged {
            self.with_configs.remove(&key);
        }
    }
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
        sqlx::migrate!("migrations/sqlite").run(&mut writer).await.map_err(|e| {
            StoreError::Backend(format!("could not bring the schema of {} up to date: {e}", path.display()))
        })?;
        let reads =
            SqlitePoolOptions::new().max_connections(4).connect_with(options.read_only(true)).await.map_err(backend)?;
        // Pages a purge freed before the last stop may still wait to be given back.
        let known = Arc::new(Known { vacuum_due: true.into(), ..Known::default() });
        load_config_owners(&reads, &known).await?;
        load_unfinished(&reads, &known).await?;
        load_ended(&reads, &known).await?;
        let (writes, jobs) = mpsc::channel(MAX_GROUP * 4);
        let (closer, closes) = mpsc::channel(1);
        tokio::spawn(write_loop(writer, jobs, closes, Arc::clone(&known)));
        Ok(Self { reads, writes, closer, turns: Arc::default(), known, path: Arc::new(path), _lock: lock })
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
        crate::Backend::local(self)
    }

    async fn write(&self, write: Write) -> Result<u64> {
        let (reply, answer) = oneshot::channel();
        let gone = || StoreError::Backend("the SQLite writer has stopped".into());
        self.writes.send(Job { write, reply }).await.map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }
}

impl SqliteStore {
    /// The task as its log folds, read from the file.
    async fn read_log(&self, scope: &Scope, task_id: &str) -> Result<Option<Folded>> {
        let rows: Vec<LogRow> =
            queries::log::<Sqlite>(scope, task_id).build_query_as().fetch_all(&self.reads).await.map_err(backend)?;
        Ok(fold_logs(&rows)?.pop())
    }
}

/// Notes which tasks have push configs.
async fn load_config_owners(reads: &SqlitePool, known: &Known) -> Result<()> {
    let rows =
        sqlx::query("SELECT DISTINCT t.tenant, t.owner, t.id FROM push_configs c JOIN tasks t ON t.key = c.task")
            .fetch_all(reads)
            .await
            .map_err(backend)?;
    known.with_configs.clear();
    for row in rows {
        let scope = Scope::new(row.get::<String, _>(0), row.get::<String, _>(1));
        known.with_configs.insert((scope, row.get(2)), ());
    }
    Ok(())
}

/// Notes how many tasks have ended, and the size of their logs.
async fn load_ended(reads: &SqlitePool, known: &Known) -> Result<()> {
    let (tasks, bytes): (i64, i64) =
        sqlx::query_as("SELECT COUNT(*), COALESCE(SUM(log_bytes), 0) FROM tasks WHERE ended_at IS NOT NULL")
            .fetch_one(reads)
            .await
            .map_err(backend)?;
    *known.ended_totals() = Ended { tasks: as_seq(tasks), bytes: as_seq(bytes) };
    Ok(())
}

/// Notes which tasks are unfinished.
async fn load_unfinished(reads: &SqlitePool, known: &Known) -> Result<()> {
    let rows: Vec<(String, String, String, i64)> =
        sqlx::query_as("SELECT tenant, owner, id, log_bytes FROM tasks WHERE ended_at IS NULL")
            .fetch_all(reads)
            .await
            .map_err(backend)?;
    for (tenant, owner, id, bytes) in rows {
        known.written(&Scope::new(tenant, owner), &id, false, as_seq(bytes), false);
    }
    Ok(())
}

/// Makes the file give the pages of removed tasks back to the file system
/// ([`vacuum_slice`]): a file made before it did is rebuilt once.
async fn reclaim_freed_pages(conn: &mut SqliteConnection, path: &Path) -> Result<()> {
    const INCREMENTAL: i64 = 2;
    let mode: i64 = sqlx::query_scalar("PRAGMA auto_vacuum").fetch_one(&mut *conn).await.map_err(backend)?;
    if mode != INCREMENTAL {
        // A new file has no tables yet, and the rebuild is then instant: only an existing one is
        // worth a word.
        let tables: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM sqlite_master").fetch_one(&mut *conn).await.map_err(backend)?;
        if tables > 0 {
            tracing::info!(path = %path.display(), "rebuilding the store's file once, so that it shrinks when tasks go");
        }
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL").await.map_err(backend)?;
        conn.execute("VACUUM").await.map_err(backend)?;
    }
    Ok(())
}

/// Free pages the file keeps for writes to come; beyond them, they are given back.
const KEPT_FREE_PAGES: i64 = 2048;

/// Most free pages given back at once (16 MiB of 4 KiB pages): a vacuum moves pages from the end
/// of the file into the holes, and holds the writer while it does, so it goes in slices between
/// the groups of writes.
const VACUUM_SLICE: i64 = 4096;

/// Gives up to [`VACUUM_SLICE`] of the file's free pages beyond [`KEPT_FREE_PAGES`] back to the
/// file system (the file shrinks by as much); whether any are left to give.
async fn vacuum_slice(conn: &mut SqliteConnection) -> Result<bool> {
    let free: i64 = sqlx::query_scalar("PRAGMA freelist_count").fetch_one(&mut *conn).await.map_err(backend)?;
    let excess = free - KEPT_FREE_PAGES / 2;
    if free <= KEPT_FREE_PAGES {
        return Ok(false);
    }
    let pragma = format!("PRAGMA incremental_vacuum({})", excess.min(VACUUM_SLICE));
    conn.execute(pragma.as_str()).await.map_err(backend)?;
    Ok(excess > VACUUM_SLICE)
}

/// Gives back the next slice of free pages when some are due; once they are all given back, the
/// log the moves filled is folded into the database, so that it too shrinks back (to
/// `journal_size_limit`) at its next reset.
async fn vacuum_if_due(conn: &mut SqliteConnection, known: &Known) {
    use std::sync::atomic::Ordering;
    if !known.vacuum_due.load(Ordering::Relaxed) {
        return;
    }
    match vacuum_slice(conn).await {
        Ok(true) => {}
        Ok(false) => {
            known.vacuum_due.store(false, Ordering::Relaxed);
            if let Err(error) = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").await {
                tracing::debug!(%error, "could not fold the write-ahead log after giving pages back");
            }
        }
        Err(error) => {
            known.vacuum_due.store(false, Ordering::Relaxed);
            tracing::warn!(%error, "could not give the pages of removed tasks back");
        }
    }
}

/// A change the writer makes. A create's `limit` is the most unfinished tasks its scope may have
/// for it to be created.
enum Write {
    Create { scope: Scope, task: Arc<Task>, row: TaskRow, limit: Option<usize> },
    Commit { scope: Scope, task: Arc<Task>, row: TaskRow, expected: u64 },
    Delete { scope: Scope, id: String },
    Purge(Purge),
    PutConfig { scope: Scope, record: PushConfigRecord, config: String },
    DeleteConfig { scope: Scope, task_id: String, config_id: String },
    MarkDelivered { scope: Scope, task_id: String, config_id: String, seq: u64 },
}

struct Job {
    write: Write,
    reply: oneshot::Sender<Result<u64>>,
}

/// Asked of [`write_loop`] by [`SqliteStore::close`]: told once the writer's connection is closed.
type CloseRequest = oneshot::Sender<()>;

/// Commits the waiting writes in groups until every store handle is gone or the store is closed;
/// the writes already waiting go first.
async fn write_loop(
    mut conn: SqliteConnection,
    mut jobs: mpsc::Receiver<Job>,
    mut closes: mpsc::Receiver<CloseRequest>,
    known: Arc<Known>,
) {
    let mut group = Vec::with_capacity(MAX_GROUP);
    let close = loop {
        let vacuum_due = known.vacuum_due.load(std::sync::atomic::Ordering::Relaxed);
        tokio::select! {
            biased;
            taken = jobs.recv_many(&mut group, MAX_GROUP) => if taken == 0 { break None },
            Some(close) = closes.recv() => break Some(close),
            // No write waits: the next slice of pages to give back goes now.
            () = std::future::ready(()), if vacuum_due => {
                vacuum_if_due(&mut conn, &known).await;
                continue;
            }
        }
        let (results, removed) = commit_group(&mut conn, &group, &known).await;
        known.removed(removed);
        known.groups.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        known.grouped_writes.fetch_add(group.len() as u64, std::sync::atomic::Ordering::Relaxed);
        for (job, result) in group.drain(..).zip(results) {
            if let Ok(outcome) = &result {
                note(&known, &job.write, *outcome);
            }
            // The caller may have gone; the write stands.
            let _ = job.reply.send(result);
        }
        vacuum_if_due(&mut conn, &known).await;
        // The writers just answered are about to send their next writes; letting them run first
        // puts those writes in the next group instead of the one after.
        for _ in 0..SIBLING_YIELDS {
            let waiting = jobs.len();
            tokio::task::yield_now().await;
            if jobs.len() == waiting {
                break;
            }
        }
    };
    // The log is folded into the database and emptied first: closing removes it only when no
    // reader is left open, and a reader sqlx was handing back as its pool closed can be.
    if let Err(error) = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").await {
        tracing::warn!(%error, "could not fold the write-ahead log into the database");
    }
    // Closed last, after the readers, the connection removes the log and its shared-memory file.
    let _ = conn.close().await;
    if let Some(close) = close {
        let _ = close.send(());
    }
}

/// Updates what the store knows after `write` committed with `outcome`.
fn note(known: &Known, write: &Write, outcome: u64) {
    match write {
        Write::Create { scope, task, row, .. } | Write::Commit { scope, task, row, .. } => {
            known.running.committed(scope, task, outcome, row.lag);
            let created = matches!(write, Write::Create { .. });
            known.written(scope, &task.id, row.ended, row.lag.bytes as u64, created);
        }
        Write::Delete { scope, id } => {
            known.forget(scope, id);
        }
        Write::PutConfig { scope, record, .. } => {
            known.with_configs.insert((scope.clone(), record.config.task_id.clone()), ());
        }
        Write::Purge(_) | Write::DeleteConfig { .. } | Write::MarkDelivered { .. } => {}
    }
}

/// Runs `group` in one transaction. A write refused by a check (a conflict, a missing task) has
/// changed nothing and the others go on; if the database itself fails, the whole group fails.
///
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

/// Each statement is a round trip to the connection's thread, which costs more than SQLite's own
/// work: a group of creates and commits of distinct tasks, the common case, is therefore sent as
/// one script of a few statements whatever its size. Other groups go write by write.
/// Returns each write's result, and the ended tasks the group removed.
async fn commit_group(conn: &mut SqliteConnection, group: &[Job], known: &Known) -> (Vec<Result<u64>>, Removed) {
    let failed = |error: &StoreError, n: usize| (0..n).map(|_| Err(StoreError::Backend(error.to_string()))).collect();
    let mut removed = Removed::default();
    let outcome = match Script::of(group) {
        Some(script) => script.run(conn, &mut removed).await,
        None => one_by_one(conn, group, known, &mut removed).await,
    };
    match outcome {
        Ok(results) => (results, removed),
        Err(error) => {
            let _ = conn.execute("ROLLBACK").await;
            (failed(&error, group.len()), Removed::default())
        }
    }
}

async fn one_by_one(
    conn: &mut SqliteConnection,
    group: &[Job],
    known: &Known,
    removed: &mut Removed,
) -> Result<Vec<Result<u64>>> {
    conn.execute("BEGIN IMMEDIATE").await.map_err(backend)?;
    let mut results = Vec::with_capacity(group.len());
    for job in group {
        match apply(conn, &job.write, known, removed).await {
            Err(StoreError::Backend(error)) => return Err(StoreError::Backend(error)),
            result => results.push(result),
        }
    }
    conn.execute("COMMIT").await.map_err(backend)?;
    Ok(results)
}

/// Most bound values one script carries, within SQLite's limit of 32,766.
const MAX_SCRIPT_VALUES: usize = 30_000;

/// A group of creates, commits and deletes of distinct tasks, written by one script: a
/// transaction with one insert for the new tasks, one update for the changed ones, one insert for
/// all their events and one delete.
struct Script<'a> {
    writes: Vec<Step<'a>>,
}

/// One write of a [`Script`].
enum Step<'a> {
    Put(Planned<'a>),
    Delete { scope: &'a Scope, id: &'a String },
}

impl<'a> Step<'a> {
    fn task(&self) -> (&'a Scope, &'a String) {
        match self {
            Self::Put(planned) => (planned.scope, &planned.task.id),
            Self::Delete { scope, id } => (scope, id),
        }
    }
}

/// A create or a commit in a [`Script`].
struct Planned<'a> {
    scope: &'a Scope,
    task: &'a Arc<Task>,
    row: &'a TaskRow,
    /// The version a commit starts from; `None` for a create.
    expected: Option<u64>,
    /// A create's limit of unfinished tasks for its owner.
    limit: Option<usize>,
}

impl Planned<'_> {
    fn from(&self) -> u64 {
        self.expected.unwrap_or_default()
    }

    /// The task's version once written.
    fn version(&self) -> u64 {
        self.from() + self.row.added
    }
}

impl<'a> Script<'a> {
    fn of(group: &'a [Job]) -> Option<Self> {
        let mut writes = Vec::with_capacity(group.len());
        let mut tasks = std::collections::HashSet::new();
        let mut values = 0;
        for job in group {
            let step = match &job.write {
                Write::Create { scope, task, row, limit } => {
                    Step::Put(Planned { scope, task, row, expected: None, limit: *limit })
                }
                Write::Commit { scope, task, row, expected } => {
                    Step::Put(Planned { scope, task, row, expected: Some(*expected), limit: None })
                }
                Write::Delete { scope, id } => Step::Delete { scope, id },
                _ => return None,
            };
            values += match &step {
                Step::Put(planned) => 18 + 6 * planned.row.bodies().len(),
                Step::Delete { .. } => 3,
            };
            if !tasks.insert(step.task()) || values > MAX_SCRIPT_VALUES {
                return None;
            }
            writes.push(step);
        }
        Some(Script { writes })
    }

    async fn run(self, conn: &mut SqliteConnection, removed: &mut Removed) -> Result<Vec<Result<u64>>> {
        let puts = || self.writes.iter().filter_map(|w| if let Step::Put(planned) = w { Some(planned) } else { None });
        let creates: Vec<&Planned<'_>> = puts().filter(|w| w.expected.is_none()).collect();
        let commits: Vec<&Planned<'_>> = puts().filter(|w| w.expected.is_some()).collect();
        let deletes: Vec<(&Scope, &String)> =
            self.writes.iter().filter(|w| matches!(w, Step::Delete { .. })).map(Step::task).collect();
        let mut sql = QueryBuilder::<Sqlite>::new("BEGIN IMMEDIATE; ");
        if !creates.is_empty() {
            // A limited create goes in while its owner's unfinished tasks, with the limited
            // creates before it in this group, are fewer than its limit: the count is taken
            // before the statement inserts anything.
            let mut earlier: std::collections::HashMap<&str, i64> = std::collections::HashMap::new();
            let before: Vec<i64> = creates
                .iter()
                .map(|w| match w.limit {
                    Some(_) => {
                        let n = earlier.entry(w.scope.owner.as_str()).or_default();
                        *n += 1;
                        *n - 1
                    }
                    None => 0,
                })
                .collect();
            sql.push(
                "INSERT INTO tasks
                     (tenant, owner, id, context_id, state, status_millis, version, ended_at, base, log_bytes, head)
                 SELECT column1, column2, column3, column4, column5, column6, column7, column8, column9, column10,
                     column11
                 FROM (",
            );
            sql.push_values(creates.iter().zip(&before), |mut values, (w, before)| {
                values.push_bind(&w.scope.tenant).push_bind(&w.scope.owner).push_bind(&w.task.id);
                values.push_bind(&w.row.context_id).push_bind(w.row.state).push_bind(w.row.status_millis);
                values.push_bind(as_sql(w.version())).push_bind(w.row.ended.then(now_millis));
                values.push_bind(as_sql(w.row.first_seq(0))).push_bind(w.row.bytes()).push_bind(&w.row.head);
                values.push_bind(w.limit.map(sql_limit)).push_bind(*before);
            });
            sql.push(
                ") AS v WHERE v.column12 IS NULL OR v.column13 + (SELECT COUNT(*) FROM tasks t
                     WHERE t.owner = v.column2 AND t.ended_at IS NULL) < v.column12
                 ON CONFLICT DO NOTHING RETURNING key, tenant, owner, id; ",
            );
        }
        if !commits.is_empty() {
            sql.push(
                "WITH v (tenant, owner, id, expected, added, context_id, state, status_millis, ended, base, bytes, head) AS (",
            );
            sql.push_values(&commits, |mut values, w| {
                values.push_bind(&w.scope.tenant).push_bind(&w.scope.owner).push_bind(&w.task.id);
                values.push_bind(as_sql(w.from())).push_bind(as_sql(w.row.added));
                values.push_bind(&w.row.context_id).push_bind(w.row.state).push_bind(w.row.status_millis);
                values.push_bind(w.row.ended).push_bind(w.row.compacts().then(|| as_sql(w.version())));
                values.push_bind(w.row.bytes()).push_bind(&w.row.head);
            });
            sql.push(
                ") UPDATE tasks SET context_id = v.context_id, state = v.state, status_millis = v.status_millis,
                     version = tasks.version + v.added, base = COALESCE(v.base, tasks.base),
                     head = COALESCE(v.head, tasks.head),
                     log_bytes = CASE WHEN v.base IS NULL THEN tasks.log_bytes + v.bytes ELSE v.bytes END,
                     ended_at = CASE WHEN v.ended THEN COALESCE(tasks.ended_at, ",
            );
            sql.push_bind(now_millis()).push(
                ") END FROM v WHERE tasks.tenant = v.tenant AND tasks.owner = v.owner AND tasks.id = v.id
                 AND tasks.version = v.expected RETURNING key, tenant, owner, id; ",
            );
        }
        // The events of every write, joined to their task. A refused write's events are left
        // out: its task is at another version, or its numbers are taken, or were compacted away.
        let events: Vec<(&Planned<'_>, i64, &String)> = puts()
            .flat_map(|w| {
                let first = as_sql(w.row.first_seq(w.from()));
                w.row.bodies().iter().zip(first..).map(move |(body, seq)| (w, seq, body))
            })
            .collect();
        if !events.is_empty() {
            sql.push("INSERT OR IGNORE INTO events (task, seq, body) SELECT t.key, v.column4, v.column5 FROM (");
            sql.push_values(&events, |mut values, (w, seq, body)| {
                values.push_bind(&w.scope.tenant).push_bind(&w.scope.owner).push_bind(&w.task.id);
                values.push_bind(*seq).push_bind(*body).push_bind(as_sql(w.version()));
            });
            sql.push(
                ") AS v JOIN tasks t ON t.tenant = v.column1 AND t.owner = v.column2 AND t.id = v.column3
                 WHERE t.version = v.column6 AND v.column4 >= t.base; ",
            );
        }
        let compacted: Vec<&Planned<'_>> = commits.iter().copied().filter(|w| w.row.compacts()).collect();
        if !compacted.is_empty() {
            // The events a compaction replaced: those before the task's new base.
            sql.push("DELETE FROM events WHERE task IN (SELECT key FROM tasks WHERE (tenant, owner, id) IN (VALUES ");
            let mut separated = sql.separated(", ");
            for w in &compacted {
                separated.push("(").push_bind_unseparated(&w.scope.tenant).push_unseparated(", ");
                separated.push_bind_unseparated(&w.scope.owner).push_unseparated(", ");
                separated.push_bind_unseparated(&w.task.id).push_unseparated(")");
            }
            sql.push(")) AND seq < (SELECT base FROM tasks WHERE key = events.task); ");
        }
        if !deletes.is_empty() {
            // Their events, configs and executions go with them (ON DELETE CASCADE).
            sql.push("DELETE FROM tasks WHERE (tenant, owner, id) IN (VALUES ");
            let mut separated = sql.separated(", ");
            for (scope, id) in &deletes {
                separated.push("(").push_bind_unseparated(&scope.tenant).push_unseparated(", ");
                separated.push_bind_unseparated(&scope.owner).push_unseparated(", ");
                separated.push_bind_unseparated(*id).push_unseparated(")");
            }
            sql.push(") RETURNING key, tenant, owner, id, ended_at, log_bytes; ");
        }
        sql.push("COMMIT;");
        let written = sql.build().fetch_all(&mut *conn).await.map_err(backend)?;
        for deleted in written.iter().filter(|row| row.len() == 6) {
            if deleted.get::<Option<i64>, _>(4).is_some() {
                removed.ended.add(as_seq(deleted.get(5)));
            }
        }
        let written: std::collections::HashSet<(String, String, String)> =
            written.iter().map(|row| (row.get(1), row.get(2), row.get(3))).collect();
        let mut results = Vec::with_capacity(self.writes.len());
        for w in &self.writes {
            let (scope, id) = w.task();
            let done = written.contains(&(scope.tenant.clone(), scope.owner.clone(), id.clone()));
            results.push(match (w, done) {
                (Step::Delete { .. }, done) => Ok(u64::from(done)),
                (Step::Put(w), true) => Ok(w.version()),
                (Step::Put(Planned { expected: None, limit, .. }), false) => {
                    Err(create_refusal(conn, scope, id, *limit).await?)
                }
                (Step::Put(Planned { expected: Some(expected), .. }), false) => {
                    Err(refusal(conn, scope, id, *expected).await?)
                }
            });
        }
        Ok(results)
    }
}

/// Why a create wrote nothing: the id is taken in the scope, or the scope had no room under
/// `limit`.
async fn create_refusal(
    conn: &mut SqliteConnection,
    scope: &Scope,
    task_id: &str,
    limit: Option<usize>,
) -> Result<StoreError> {
    let taken: bool =
        queries::exists::<Sqlite>(scope, task_id).build_query_scalar().fetch_one(&mut *conn).await.map_err(backend)?;
    Ok(match limit {
        Some(limit) if !taken => StoreError::TooManyUnfinished { limit },
        _ => StoreError::AlreadyExists(task_id.to_owned()),
    })
}

/// Why a commit wrote nothing: the task changed since `expected`, or is not there.
async fn refusal(conn: &mut SqliteConnection, scope: &Scope, task_id: &str, expected: u64) -> Result<StoreError> {
    let found: Option<i64> = sqlx::query_scalar("SELECT version FROM tasks WHERE tenant = ? AND owner = ? AND id = ?")
        .bind(&scope.tenant)
        .bind(&scope.owner)
        .bind(task_id)
        .fetch_optional(&mut *conn)
        .await
        .map_err(backend)?;
    Ok(match found {
        Some(found) => StoreError::Conflict { task_id: task_id.to_owned(), expected, found: as_seq(found) },
        None => StoreError::NotFound(task_id.to_owned()),
    })
}

async fn apply(conn: &mut SqliteConnection, write: &Write, known: &Known, removed: &mut Removed) -> Result<u64> {
    match write {
        Write::Create { scope, task, row, limit } => {
            let id = &task.id;
            let mut sql = QueryBuilder::<Sqlite>::new(
                "INSERT INTO tasks
                     (tenant, owner, id, context_id, state, status_millis, version, ended_at, base, log_bytes, head)
                 SELECT ",
            );
            let mut values = sql.separated(", ");
            values.push_bind(&scope.tenant).push_bind(&scope.owner).push_bind(id).push_bind(&row.context_id);
            values.push_bind(row.state).push_bind(row.status_millis).push_bind(as_sql(row.added));
            values.push_bind(row.ended.then(now_millis)).push_bind(as_sql(row.first_seq(0))).push_bind(row.bytes());
            values.push_bind(&row.head);
            queries::push_room_under(&mut sql, scope, *limit);
            sql.push(" ON CONFLICT DO NOTHING RETURNING key");
            let key: Option<i64> = sql.build_query_scalar().fetch_optional(&mut *conn).await.map_err(backend)?;
            let Some(key) = key else { return Err(create_refusal(conn, scope, id, *limit).await?) };
            append(conn, key, row.first_seq(0), row.bodies()).await?;
            Ok(row.added)
        }
        Write::Commit { scope, task, row, expected } => {
            let id = &task.id;
            let version = expected + row.added;
            let updated: Option<i64> = sqlx::query_scalar(
                "UPDATE tasks SET context_id = ?1, state = ?2, status_millis = ?3, version = version + ?4,
                     ended_at = CASE WHEN ?5 THEN COALESCE(ended_at, ?6) END, base = COALESCE(?7, base),
                     log_bytes = CASE WHEN ?7 IS NULL THEN log_bytes + ?8 ELSE ?8 END, head = COALESCE(?13, head)
                 WHERE tenant = ?9 AND owner = ?10 AND id = ?11 AND version = ?12 RETURNING key",
            )
            .bind(&row.context_id)
            .bind(row.state)
            .bind(row.status_millis)
            .bind(as_sql(row.added))
            .bind(row.ended)
            .bind(now_millis())
            .bind(row.compacts().then(|| as_sql(version)))
            .bind(row.bytes())
            .bind(&scope.tenant)
            .bind(&scope.owner)
            .bind(id)
            .bind(as_sql(*expected))
            .bind(&row.head)
            .fetch_optional(&mut *conn)
            .await
            .map_err(backend)?;
            let Some(key) = updated else { return Err(refusal(conn, scope, id, *expected).await?) };
            append(conn, key, row.first_seq(*expected), row.bodies()).await?;
            if row.compacts() {
                sqlx::query("DELETE FROM events WHERE task = ? AND seq < ?")
                    .bind(key)
                    .bind(as_sql(version))
                    .execute(&mut *conn)
                    .await
                    .map_err(backend)?;
            }
            Ok(version)
        }
        Write::Delete { scope, id } => {
            let deleted: Option<(Option<i64>, i64)> = sqlx::query_as(
                "DELETE FROM tasks WHERE tenant = ? AND owner = ? AND id = ? RETURNING ended_at, log_bytes",
            )
            .bind(&scope.tenant)
            .bind(&scope.owner)
            .bind(id)
            .fetch_optional(&mut *conn)
            .await
            .map_err(backend)?;
            if let Some((Some(_), bytes)) = deleted {
                removed.ended.add(as_seq(bytes));
            }
            Ok(u64::from(deleted.is_some()))
        }
        Write::Purge(rules) => {
            let ended = *known.ended_totals();
            purge(conn, rules, ended, removed, known).await
        }
        Write::PutConfig { scope, record, config } => {
            let task_id = &record.config.task_id;
            let done = sqlx::query(
                "INSERT INTO push_configs (task, id, position, dialect, config, delivered_through)
                 SELECT key, ?, (SELECT COALESCE(MAX(position), 0) + 1 FROM push_configs WHERE task = tasks.key), ?, ?, ?
                 FROM tasks WHERE tenant = ? AND owner = ? AND id = ?
                 ON CONFLICT (task, id) DO UPDATE SET dialect = excluded.dialect, config = excluded.config",
            )
            .bind(&record.config.id)
            .bind(record.dialect.name())
            .bind(config)
            .bind(as_sql(record.delivered_through))
            .bind(&scope.tenant)
            .bind(&scope.owner)
            .bind(task_id)
            .execute(&mut *conn)
            .await
            .map_err(backend)?;
            if done.rows_affected() == 0 {
                return Err(StoreError::NotFound(task_id.clone()));
            }
            Ok(1)
        }
        Write::MarkDelivered { scope, task_id, config_id, seq } => {
            let done = queries::mark_delivered::<Sqlite>(scope, task_id, config_id, as_sql(*seq))
                .build()
                .execute(&mut *conn)
                .await
                .map_err(backend)?;
            Ok(done.rows_affected())
        }
        Write::DeleteConfig { scope, task_id, config_id } => {
            let done = queries::delete_config::<Sqlite>(scope, task_id, config_id)
                .build()
                .execute(&mut *conn)
                .await
                .map_err(backend)?;
            Ok(done.rows_affected())
        }
    }
}

/// Removes the ended tasks `rules` select, given the `ended` tasks the store holds (less those
/// the group `removed` already), oldest end first: those past their time, then as many as take
/// the rest within the bounds, up to `max_removed_bytes` of logs. Reads no more of the index than
/// it removes. The pages they took are given back later, in slices ([`vacuum_slice`]).
async fn purge(
    conn: &mut SqliteConnection,
    rules: &Purge,
    ended: Ended,
    removed: &mut Removed,
    known: &Known,
) -> Result<u64> {
    use futures_util::TryStreamExt;
    let before = removed.ended;
    let (tasks, bytes) =
        (ended.tasks.saturating_sub(removed.ended.tasks), ended.bytes.saturating_sub(removed.ended.bytes));
    let mut excess_tasks = rules.keep_ended.map_or(0, |keep| tasks.saturating_sub(keep as u64));
    let mut excess_bytes = rules.keep_ended_bytes.map_or(0, |keep| bytes.saturating_sub(keep));
    let expired = |ended_at: i64| rules.ended_before.is_some_and(|before| ended_at < before.as_millis());
    let mut budget = rules.max_removed_bytes.unwrap_or(u64::MAX);
    let mut oldest = Vec::new();
    {
        let mut rows = sqlx::query_as::<_, (i64, i64, i64)>(
            "SELECT key, ended_at, log_bytes FROM tasks WHERE ended_at IS NOT NULL ORDER BY ended_at, key",
        )
        .fetch(&mut *conn);
        while budget > 0 && oldest.len() < MAX_SCRIPT_VALUES {
            let Some((key, ended_at, bytes)) = rows.try_next().await.map_err(backend)? else { break };
            if !expired(ended_at) && excess_tasks == 0 && excess_bytes == 0 {
                break;
            }
            let bytes = as_seq(bytes);
            excess_tasks = excess_tasks.saturating_sub(1);
            excess_bytes = excess_bytes.saturating_sub(bytes);
            budget = budget.saturating_sub(bytes.max(1));
            oldest.push(key);
            removed.ended.add(bytes);
        }
    }
    if !oldest.is_empty() {
        // Their logs and configs go with them (ON DELETE CASCADE).
        let mut delete = QueryBuilder::<Sqlite>::new("DELETE FROM tasks WHERE key IN (");
        let mut list = delete.separated(", ");
        oldest.iter().for_each(|key| _ = list.push_bind(*key));
        delete.push(") RETURNING tenant, owner, id");
        let gone: Vec<(String, String, String)> =
            delete.build_query_as().fetch_all(&mut *conn).await.map_err(backend)?;
        let forgotten = gone.into_iter().map(|(tenant, owner, id)| (Scope::new(tenant, owner), id));
        removed.purged.extend(forgotten.filter(|key| known.with_configs.contains_key(key)));
        known.vacuum_due.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    Ok(removed.ended.tasks - before.tasks)
}

/// Writes `events` to a task's log, the first numbered `first`.
async fn append(conn: &mut SqliteConnection, task: i64, first: u64, events: &[String]) -> Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    let mut insert = QueryBuilder::<Sqlite>::new("INSERT INTO events (task, seq, body) ");
    insert.push_values(events.iter().zip(as_sql(first)..), |mut row, (body, seq)| {
        row.push_bind(task).push_bind(seq).push_bind(body);
    });
    insert.build().execute(&mut *conn).await.map_err(backend)?;
    Ok(())
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
        self.write(Write::Create { scope: scope.clone(), task, row, limit }).await
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
        let rows: Vec<(i64, String)> = queries::events::<Sqlite>(scope, task_id, as_sql(after), sql_limit(limit))
            .build_query_as()
            .fetch_all(&self.reads)
            .await
            .map_err(backend)?;
        rows.iter().map(|(seq, body)| decode_event(*seq, body)).collect()
    }

    async fn list(&self, scope: &Scope, query: &TaskQuery) -> Result<TaskPage> {
        let total: i64 = queries::count::<Sqlite>(scope, query)
            .build_query_scalar()
            .fetch_one(&self.reads)
            .await
            .map_err(backend)?;
        let rows: Vec<PageRow> =
            queries::page::<Sqlite>(scope, query).build_query_as().fetch_all(&self.reads).await.map_err(backend)?;
        read_page(&rows, total, query, |keys| async move {
            queries::logs_of::<Sqlite>(keys).build_query_as().fetch_all(&self.reads).await.map_err(backend)
        })
        .await
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
        let rows: Vec<(String, String, String)> = queries::in_progress::<Sqlite>(sql_limit(limit))
            .build_query_as()
            .fetch_all(&self.reads)
            .await
            .map_err(backend)?;
        Ok(rows.into_iter().map(scoped).collect())
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
        let row: Option<ConfigRow> = queries::configs::<Sqlite>(scope, task_id, Some(config_id))
            .build_query_as()
            .fetch_optional(&self.reads)
            .await
            .map_err(backend)?;
        row.as_ref().map(decode_config).transpose()
    }

    async fn list_configs(&self, scope: &Scope, task_id: &str) -> Result<Vec<PushConfigRecord>> {
        if !self.known.with_configs.contains_key(&(scope.clone(), task_id.to_owned())) {
            return Ok(Vec::new());
        }
        let rows: Vec<ConfigRow> = queries::configs::<Sqlite>(scope, task_id, None)
            .build_query_as()
            .fetch_all(&self.reads)
            .await
            .map_err(backend)?;
        rows.iter().map(decode_config).collect()
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
        let rows: Vec<(String, String, String)> = queries::undelivered::<Sqlite>(sql_limit(limit))
            .build_query_as()
            .fetch_all(&self.reads)
            .await
            .map_err(backend)?;
        Ok(rows.into_iter().map(scoped).collect())
    }
}

#[cfg(test)]
mod tests {
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
}
