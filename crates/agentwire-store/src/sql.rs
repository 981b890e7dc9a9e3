//! What the SQL backends share: how a task, an event and a push config become columns, and back.
//! Snapshots, events and configs are stored as their ProtoJSON text, the form every binding
//! already reads and writes; the columns beside them exist only to find and order rows.

use std::future::Future;
use std::sync::Arc;

use agentwire_types::{Dialect, StreamResponse, Task, TaskPushNotificationConfig, Timestamp};

use crate::page::status_millis;
use crate::{PushConfigRecord, Scope, StoreError, StoredEvent, TaskRecord};

/// A task's columns.
pub(crate) struct TaskRow {
    pub(crate) context_id: String,
    /// The state's number in `lf.a2a.v1.TaskState`.
    pub(crate) state: i32,
    pub(crate) status_millis: i64,
    /// Whether it is in a terminal state.
    pub(crate) ended: bool,
    /// The whole task, when this write stores it; `None` leaves the stored snapshot as it is, and
    /// the events of the write are folded in when the task is read.
    pub(crate) snapshot: Option<String>,
    /// What the stored snapshot lacks after this write.
    pub(crate) behind: Lag,
}

impl TaskRow {
    /// The columns of `task` with its snapshot.
    pub(crate) fn of(task: &Task) -> Result<Self, StoreError> {
        Self::after(task, None)
    }

    /// The columns of `task` committed with `events`, given what this process last wrote of it:
    /// the snapshot is left behind the log when reads can fold the events into the stored one
    /// (see [`behind_after`]).
    pub(crate) fn after(task: &Task, behind: Option<Lag>) -> Result<Self, StoreError> {
        let (snapshot, behind) = match behind {
            Some(behind) => (None, behind),
            None => {
                let snapshot = encode(task)?;
                let behind = Lag { events: 0, bytes: 0, snapshot_bytes: snapshot.len() };
                (Some(snapshot), behind)
            }
        };
        Ok(Self {
            context_id: task.context_id.clone(),
            state: task.status.state.number(),
            status_millis: status_millis(task),
            ended: task.status.state.is_terminal(),
            snapshot,
            behind,
        })
    }
}

/// A task's snapshot is written at least every this many events: a read folds at most this many
/// events into the snapshot it reads.
pub(crate) const MAX_BEHIND: u64 = 256;

/// How far a task's stored snapshot is behind its log.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Lag {
    /// The events it lacks.
    pub(crate) events: u64,
    /// Their size as stored.
    pub(crate) bytes: usize,
    /// The size of the snapshot.
    pub(crate) snapshot_bytes: usize,
}

/// What a commit needs to know of the task it starts from to tell whether its events describe
/// it: the parts of the task that a change may edit beyond its events, and what the stored
/// snapshot lacks.
#[derive(Debug, Clone)]
pub(crate) struct Before {
    context_id: String,
    history: usize,
    artifact_ids: Vec<String>,
    status: agentwire_types::TaskStatus,
    metadata: Option<serde_json::Map<String, serde_json::Value>>,
    behind: Lag,
}

impl Before {
    fn of(task: &Task, behind: Lag) -> Self {
        Self {
            context_id: task.context_id.clone(),
            history: task.history.len(),
            artifact_ids: task.artifacts.iter().map(|a| a.artifact_id.clone()).collect(),
            status: task.status.clone(),
            metadata: task.metadata.clone(),
            behind,
        }
    }
}

/// What this process last committed of a task.
struct Written {
    /// The task, unless an update has borrowed it ([`RunningTasks::lend`]).
    task: Option<Arc<Task>>,
    version: u64,
    before: Before,
}

/// The tasks a process last committed while they were running (SUBMITTED or WORKING), as it
/// committed them.
#[derive(Default)]
pub(crate) struct RunningTasks(dashmap::DashMap<(Scope, String), Written, foldhash::fast::RandomState>);

impl RunningTasks {
    /// Records a commit of `task` at `version`, whose stored snapshot lacks `behind`.
    pub(crate) fn committed(&self, scope: &Scope, task: &Arc<Task>, version: u64, behind: Lag) {
        let key = (scope.clone(), task.id.clone());
        if task.status.state.is_running() {
            let before = Before::of(task, behind);
            self.0.insert(key, Written { task: Some(Arc::clone(task)), version, before });
        } else {
            self.0.remove(&key);
        }
    }

    /// The task as last committed here, if it is running and no update has it. The SQLite store,
    /// which makes every write to its file, answers reads from it.
    #[cfg(feature = "sqlite")]
    pub(crate) fn record(&self, scope: &Scope, task_id: &str) -> Option<TaskRecord> {
        let written = self.0.get(&(scope.clone(), task_id.to_owned()))?;
        Some(TaskRecord { task: Arc::clone(written.task.as_ref()?), version: written.version })
    }

    /// Hands the task as last committed here to an update, which is then its only holder and
    /// changes it without copying it; reads meanwhile read the stored task. The update's commit
    /// records the changed task.
    pub(crate) fn lend(&self, scope: &Scope, task_id: &str) -> Option<TaskRecord> {
        let mut written = self.0.get_mut(&(scope.clone(), task_id.to_owned()))?;
        Some(TaskRecord { task: written.task.take()?, version: written.version })
    }

    /// What a commit from version `expected` starts from, if this process wrote that version.
    pub(crate) fn at(&self, scope: &Scope, task_id: &str, expected: u64) -> Option<Before> {
        let written = self.0.get(&(scope.clone(), task_id.to_owned()))?;
        (written.version == expected).then(|| written.before.clone())
    }

    pub(crate) fn forget(&self, scope: &Scope, task_id: &str) {
        self.0.remove(&(scope.clone(), task_id.to_owned()));
    }
}

/// What the stored snapshot will lack once `events` (stored as `bodies`) are committed, turning
/// the task this process last wrote (`before`, if it wrote the version the commit starts from)
/// into `after`; `None` when the commit must write the snapshot. It must when this process does
/// not know the stored snapshot; when the task settles (it ended or waits for the client, and is
/// read rather than written from now on); once the events it lacks are as large as the snapshot
/// itself, or [`MAX_BEHIND`] of them; and when folding the events into `before` would not give
/// `after`: a change that trims the history, or edits the task beyond what its events announce.
///
/// So a read folds no more bytes of events than the snapshot it reads holds, and the snapshots
/// a task's commits write add up to a few times the size of its events, whatever their number:
/// each one written is larger than the last by the events since.
pub(crate) fn behind_after(
    before: Option<&Before>,
    after: &Task,
    events: &[Arc<StreamResponse>],
    bodies: &[String],
) -> Option<Lag> {
    let before = before?;
    let mut behind = before.behind;
    behind.events += events.len() as u64;
    behind.bytes += bodies.iter().map(String::len).sum::<usize>();
    let settles = !after.status.state.is_running();
    if settles || behind.bytes >= behind.snapshot_bytes || behind.events >= MAX_BEHIND {
        return None;
    }
    let history = Task::history_added_by(events.iter().map(|e| &**e))?;
    let mut new_artifacts: Vec<&str> = Vec::new();
    let mut status = &before.status;
    for event in events {
        match &**event {
            StreamResponse::ArtifactUpdate(update) => {
                let id = update.artifact.artifact_id.as_str();
                if !before.artifact_ids.iter().any(|known| known == id) && !new_artifacts.contains(&id) {
                    new_artifacts.push(id);
                }
            }
            StreamResponse::StatusUpdate(update) => status = &update.status,
            StreamResponse::Message(_) | StreamResponse::Task(_) => {}
        }
    }
    let folds = after.context_id == before.context_id
        && after.history.len() == before.history + history
        && after.artifacts.len() == before.artifact_ids.len() + new_artifacts.len()
        && after.status == *status
        && after.metadata == before.metadata;
    folds.then_some(behind)
}

/// A task row as a read selects it ([`queries::snapshot`], [`queries::page`]): its key, its
/// stored snapshot, its version and how many of its last events the snapshot lacks.
pub(crate) type SnapshotRow = (i64, String, i64, i64);

/// An event as [`queries::unfolded`] selects it: the task's key, the sequence number, the body.
pub(crate) type EventRow = (i64, i64, String);

/// The tasks of `rows`, each its snapshot with `events` (the events the snapshots lack, by
/// [`queries::unfolded`]) folded in. A task whose events are gone was deleted since its row was
/// read, and is left out.
pub(crate) fn fold_rows(rows: &[SnapshotRow], events: &[EventRow]) -> Result<Vec<TaskRecord>, StoreError> {
    let mut records = Vec::with_capacity(rows.len());
    for (key, snapshot, version, behind) in rows {
        let mut task: Task = decode(snapshot)?;
        let lacking = events.iter().filter(|(task, ..)| task == key);
        let mut folded = 0;
        for (_, _, body) in lacking {
            task.fold(&decode(body)?);
            folded += 1;
        }
        if folded == *behind {
            records.push(TaskRecord { task: Arc::new(task), version: as_seq(*version) });
        }
    }
    Ok(records)
}

/// The time that marks when a task ended, in ms since the epoch.
pub(crate) fn now_millis() -> i64 {
    Timestamp::now().as_millis()
}

pub(crate) fn encode<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Backend(format!("could not encode a record: {e}")))
}

fn decode<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Backend(format!("a stored record does not parse: {e}")))
}

pub(crate) fn encode_events(events: &[Arc<StreamResponse>]) -> Result<Vec<String>, StoreError> {
    events.iter().map(|e| encode(&**e)).collect()
}

pub(crate) fn decode_event(seq: i64, body: &str) -> Result<StoredEvent, StoreError> {
    Ok(StoredEvent { seq: as_seq(seq), event: Arc::new(decode(body)?) })
}

/// A push config's columns, as [`queries::configs`] selects them.
pub(crate) type ConfigRow = (String, String, i64);

pub(crate) fn decode_config((dialect, config, delivered_through): &ConfigRow) -> Result<PushConfigRecord, StoreError> {
    let config: TaskPushNotificationConfig = decode(config)?;
    let dialect = match dialect.as_str() {
        "v03" => Dialect::V03,
        "legacy" => Dialect::Legacy,
        _ => Dialect::V1,
    };
    Ok(PushConfigRecord { config, dialect, delivered_through: as_seq(*delivered_through) })
}

pub(crate) fn dialect_name(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::V1 => "v1",
        Dialect::V03 => "v03",
        Dialect::Legacy => "legacy",
    }
}

/// SQL integers are signed; sequence numbers never come near the limit.
pub(crate) fn as_seq(value: i64) -> u64 {
    u64::try_from(value).unwrap_or_default()
}

pub(crate) fn as_sql(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

pub(crate) fn backend(error: sqlx::Error) -> StoreError {
    StoreError::Backend(error.to_string())
}

/// Lets the updates of one task in this process take turns: an optimistic update that waits for
/// its turn does not lose the race to its neighbours over and over. Updates from other processes
/// still race, and the loser retries.
#[derive(Default)]
pub(crate) struct Turns {
    waiting: dashmap::DashMap<(Scope, String), Arc<tokio::sync::Mutex<()>>, foldhash::fast::RandomState>,
}

impl Turns {
    /// Runs `update` when no other update of the task in this process runs.
    pub(crate) async fn take<T>(&self, scope: &Scope, task_id: &str, update: impl Future<Output = T>) -> T {
        let key = (scope.clone(), task_id.to_owned());
        let lock = Arc::clone(self.waiting.entry(key.clone()).or_default().value());
        let result = {
            let _turn = lock.lock().await;
            update.await
        };
        drop(lock);
        // The last one out removes the lock; a newcomer in between keeps it.
        self.waiting.remove_if(&key, |_, lock| Arc::strong_count(lock) == 1);
        result
    }
}

/// The statements the SQL backends share, built with each backend's placeholders.
pub(crate) mod queries {
    use sqlx::{Database, Encode, QueryBuilder, Type};

    use crate::{Scope, TaskQuery};

    /// Selects the row key of a task, as a subquery.
    fn task_key<'q, DB>(sql: &mut QueryBuilder<'q, DB>, scope: &'q Scope, task_id: &'q str)
    where
        DB: Database,
        String: Encode<'q, DB> + Type<DB>,
        &'q str: Encode<'q, DB> + Type<DB>,
    {
        sql.push("(SELECT key FROM tasks WHERE tenant = ").push_bind(&scope.tenant);
        sql.push(" AND owner = ").push_bind(&scope.owner).push(" AND id = ").push_bind(task_id).push(")");
    }

    /// The tasks of `scope` that `query` selects, after its cursor: `select` names the columns.
    fn tasks<'q, DB>(select: &str, scope: &'q Scope, query: &'q TaskQuery, from_cursor: bool) -> QueryBuilder<'q, DB>
    where
        DB: Database,
        String: Encode<'q, DB> + Type<DB>,
        i64: Encode<'q, DB> + Type<DB>,
        i32: Encode<'q, DB> + Type<DB>,
    {
        let mut sql = QueryBuilder::new(format!("SELECT {select} FROM tasks WHERE tenant = "));
        sql.push_bind(&scope.tenant).push(" AND owner = ").push_bind(&scope.owner);
        if let Some(context_id) = &query.context_id {
            sql.push(" AND context_id = ").push_bind(context_id);
        }
        if let Some(state) = query.state {
            sql.push(" AND state = ").push_bind(state.number());
        }
        if let Some(after) = query.status_after {
            sql.push(" AND status_millis >= ").push_bind(after.as_millis());
        }
        if let Some(after) = query.after.as_ref().filter(|_| from_cursor) {
            sql.push(" AND (status_millis, id) < (").push_bind(after.status_millis);
            sql.push(", ").push_bind(&after.task_id).push(")");
        }
        sql
    }

    /// How many tasks a listing selects in all.
    pub(crate) fn count<'q, DB>(scope: &'q Scope, query: &'q TaskQuery) -> QueryBuilder<'q, DB>
    where
        DB: Database,
        String: Encode<'q, DB> + Type<DB>,
        i64: Encode<'q, DB> + Type<DB>,
        i32: Encode<'q, DB> + Type<DB>,
    {
        tasks("COUNT(*)", scope, query, false)
    }

    /// The [`SnapshotRow`](super::SnapshotRow)s of a listing's page, and one more if there is a
    /// next page.
    pub(crate) fn page<'q, DB>(scope: &'q Scope, query: &'q TaskQuery) -> QueryBuilder<'q, DB>
    where
        DB: Database,
        String: Encode<'q, DB> + Type<DB>,
        i64: Encode<'q, DB> + Type<DB>,
        i32: Encode<'q, DB> + Type<DB>,
    {
        let mut sql = tasks(SNAPSHOT_COLUMNS, scope, query, true);
        let limit = i64::try_from(query.page_size.saturating_add(1)).unwrap_or(i64::MAX);
        sql.push(" ORDER BY status_millis DESC, id DESC LIMIT ").push_bind(limit);
        sql
    }

    /// The columns of a [`SnapshotRow`](super::SnapshotRow).
    const SNAPSHOT_COLUMNS: &str = "key, snapshot, version, snapshot_behind";

    /// The [`SnapshotRow`](super::SnapshotRow) of a task.
    pub(crate) fn snapshot<'q, DB>(scope: &'q Scope, task_id: &'q str) -> QueryBuilder<'q, DB>
    where
        DB: Database,
        String: Encode<'q, DB> + Type<DB>,
        &'q str: Encode<'q, DB> + Type<DB>,
    {
        let mut sql = QueryBuilder::new(format!("SELECT {SNAPSHOT_COLUMNS} FROM tasks WHERE tenant = "));
        sql.push_bind(&scope.tenant).push(" AND owner = ").push_bind(&scope.owner);
        sql.push(" AND id = ").push_bind(task_id);
        sql
    }

    /// The [`EventRow`](super::EventRow)s the snapshots of `rows` lack, in order; `None` if they
    /// lack none.
    pub(crate) fn unfolded<'q, DB>(rows: &[super::SnapshotRow]) -> Option<QueryBuilder<'q, DB>>
    where
        DB: Database,
        i64: Encode<'q, DB> + Type<DB>,
    {
        let mut behind = rows.iter().filter(|(.., behind)| *behind > 0).peekable();
        behind.peek()?;
        let mut sql = QueryBuilder::new("SELECT task, seq, body FROM events WHERE ");
        let mut any = sql.separated(" OR ");
        for (key, _, version, behind) in behind {
            any.push("(task = ").push_bind_unseparated(*key);
            any.push_unseparated(" AND seq > ").push_bind_unseparated(version - behind);
            any.push_unseparated(" AND seq <= ").push_bind_unseparated(*version).push_unseparated(")");
        }
        sql.push(" ORDER BY task, seq");
        Some(sql)
    }

    /// `seq, body` of a task's events after `after`, oldest first.
    pub(crate) fn events<'q, DB>(scope: &'q Scope, task_id: &'q str, after: i64, limit: i64) -> QueryBuilder<'q, DB>
    where
        DB: Database,
        String: Encode<'q, DB> + Type<DB>,
        &'q str: Encode<'q, DB> + Type<DB>,
        i64: Encode<'q, DB> + Type<DB>,
    {
        let mut sql = QueryBuilder::new("SELECT seq, body FROM events WHERE task = ");
        task_key(&mut sql, scope, task_id);
        sql.push(" AND seq > ").push_bind(after).push(" ORDER BY seq LIMIT ").push_bind(limit);
        sql
    }

    /// A task's push configs ([`ConfigRow`](super::ConfigRow)s) in creation order, or the one named.
    pub(crate) fn configs<'q, DB>(
        scope: &'q Scope,
        task_id: &'q str,
        config_id: Option<&'q str>,
    ) -> QueryBuilder<'q, DB>
    where
        DB: Database,
        String: Encode<'q, DB> + Type<DB>,
        &'q str: Encode<'q, DB> + Type<DB>,
    {
        let mut sql = QueryBuilder::new("SELECT dialect, config, delivered_through FROM push_configs WHERE task = ");
        task_key(&mut sql, scope, task_id);
        if let Some(config_id) = config_id {
            sql.push(" AND id = ").push_bind(config_id);
        }
        sql.push(" ORDER BY position");
        sql
    }

    /// Removes one push config of a task.
    pub(crate) fn delete_config<'q, DB>(scope: &'q Scope, task_id: &'q str, config_id: &'q str) -> QueryBuilder<'q, DB>
    where
        DB: Database,
        String: Encode<'q, DB> + Type<DB>,
        &'q str: Encode<'q, DB> + Type<DB>,
    {
        let mut sql = QueryBuilder::new("DELETE FROM push_configs WHERE id = ");
        sql.push_bind(config_id).push(" AND task = ");
        task_key(&mut sql, scope, task_id);
        sql
    }

    /// Moves a push config's delivery cursor forward to `seq`.
    pub(crate) fn mark_delivered<'q, DB>(
        scope: &'q Scope,
        task_id: &'q str,
        config_id: &'q str,
        seq: i64,
    ) -> QueryBuilder<'q, DB>
    where
        DB: Database,
        String: Encode<'q, DB> + Type<DB>,
        &'q str: Encode<'q, DB> + Type<DB>,
        i64: Encode<'q, DB> + Type<DB>,
    {
        let mut sql = QueryBuilder::new("UPDATE push_configs SET delivered_through = ");
        sql.push_bind(seq).push(" WHERE delivered_through < ").push_bind(seq);
        sql.push(" AND id = ").push_bind(config_id).push(" AND task = ");
        task_key(&mut sql, scope, task_id);
        sql
    }

    /// `tenant, owner, id` of tasks with a push config whose deliveries are behind the log.
    pub(crate) fn undelivered<'q, DB>(limit: i64) -> QueryBuilder<'q, DB>
    where
        DB: Database,
        i64: Encode<'q, DB> + Type<DB>,
    {
        let mut sql = QueryBuilder::new(
            "SELECT DISTINCT t.tenant, t.owner, t.id FROM push_configs c JOIN tasks t ON t.key = c.task
             WHERE c.delivered_through < t.version LIMIT ",
        );
        sql.push_bind(limit);
        sql
    }

    /// How many unfinished tasks `scope` has.
    pub(crate) fn count_unfinished<'q, DB>(scope: &'q Scope) -> QueryBuilder<'q, DB>
    where
        DB: Database,
        String: Encode<'q, DB> + Type<DB>,
    {
        let mut sql = QueryBuilder::new("SELECT COUNT(*) FROM tasks WHERE tenant = ");
        sql.push_bind(&scope.tenant).push(" AND owner = ").push_bind(&scope.owner).push(" AND ended_at IS NULL");
        sql
    }

    /// Ends the `SELECT` of a task's insert with its condition: there is room for one more
    /// unfinished task in `scope` under `limit` (always, without one).
    pub(crate) fn push_room_under<'q, DB>(sql: &mut QueryBuilder<'q, DB>, scope: &'q Scope, limit: Option<usize>)
    where
        DB: Database,
        String: Encode<'q, DB> + Type<DB>,
        i64: Encode<'q, DB> + Type<DB>,
    {
        let Some(limit) = limit else {
            sql.push(" WHERE TRUE");
            return;
        };
        let limit = super::limit(limit);
        sql.push(" WHERE (SELECT COUNT(*) FROM (SELECT 1 FROM tasks WHERE tenant = ").push_bind(&scope.tenant);
        sql.push(" AND owner = ").push_bind(&scope.owner).push(" AND ended_at IS NULL LIMIT ").push_bind(limit);
        sql.push(") AS unfinished) < ").push_bind(limit);
    }

    /// Whether a task exists in `scope`.
    pub(crate) fn exists<'q, DB>(scope: &'q Scope, task_id: &'q str) -> QueryBuilder<'q, DB>
    where
        DB: Database,
        String: Encode<'q, DB> + Type<DB>,
        &'q str: Encode<'q, DB> + Type<DB>,
    {
        let mut sql = QueryBuilder::new("SELECT EXISTS ");
        task_key(&mut sql, scope, task_id);
        sql
    }

    /// `tenant, owner, id` of tasks in SUBMITTED or WORKING state.
    pub(crate) fn in_progress<'q, DB>(limit: i64) -> QueryBuilder<'q, DB>
    where
        DB: Database,
        i64: Encode<'q, DB> + Type<DB>,
        i32: Encode<'q, DB> + Type<DB>,
    {
        let mut sql = QueryBuilder::new("SELECT tenant, owner, id FROM tasks WHERE ended_at IS NULL AND state IN (");
        sql.push_bind(agentwire_types::TaskState::Submitted.number()).push(", ");
        sql.push_bind(agentwire_types::TaskState::Working.number()).push(") LIMIT ").push_bind(limit);
        sql
    }
}

/// A listing's page from its tasks (one more than the page if there is a next page) and its
/// total.
pub(crate) fn page_of(tasks: Vec<TaskRecord>, total: i64, page_size: usize) -> crate::TaskPage {
    let more = tasks.len() > page_size;
    let tasks: Vec<Arc<Task>> = tasks.into_iter().take(page_size).map(|record| record.task).collect();
    let next = if more { tasks.last().map(|t| crate::PageToken::after(t)) } else { None };
    crate::TaskPage { tasks, next, total: usize::try_from(total).unwrap_or_default() }
}

/// SQL's `LIMIT` for a count.
pub(crate) fn limit(count: usize) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// Task keys as the SQL backends read them.
pub(crate) fn scoped((tenant, owner, id): (String, String, String)) -> (Scope, String) {
    (Scope::new(tenant, owner), id)
}
