//! What the SQL backends share: how a task, an event and a push config become columns, and back.
//! Events and configs are stored as their ProtoJSON text, the form every binding already reads
//! and writes; the columns beside them exist only to find and order rows.
//!
//! A task is its event log: a read folds the events from the log's base, an event holding the
//! whole task, to its last ([`Task::fold`]). A commit appends its events; it compacts the log
//! instead (one event holding the task as committed, numbered like the commit's last event, in
//! place of every event before it) when the events after the base have grown as large as the
//! base (and 64 KiB) or as many as [`MAX_LOG_EVENTS`], and when folding them would not give the
//! task. So the log holds each message once, a read folds no more than twice the task and a
//! bounded number of events, and the compactions of a growing task add up to a few times its
//! size. A task that ends keeps its log as it is: every event since the last compaction stays
//! there for the readers and webhooks that resume after one.

use std::future::Future;
use std::sync::Arc;

use agentwire_types::{Dialect, StreamResponse, Task, TaskPushNotificationConfig, Timestamp};

use crate::page::status_millis;
use crate::{PushConfigRecord, Scope, StoreError, StoredEvent, TaskRecord};

/// A task's columns and what a write of it stores in its log.
pub(crate) struct TaskRow {
    pub(crate) context_id: String,
    /// The state's number in `lf.a2a.v1.TaskState`.
    pub(crate) state: i32,
    pub(crate) status_millis: i64,
    /// Whether it is in a terminal state.
    pub(crate) ended: bool,
    /// How many events the write commits: the task's version moves on by as many.
    pub(crate) added: u64,
    /// What the write stores in the log.
    pub(crate) log: LogWrite,
    /// The log once written.
    pub(crate) lag: Lag,
    /// The task without its history and artifacts ([`encode_head`]), when the write changes it
    /// (its status, or more); `None` leaves the stored one.
    pub(crate) head: Option<String>,
}

/// What a write stores in a task's log.
pub(crate) enum LogWrite {
    /// The events, appended after the version the write starts from.
    Append(Vec<String>),
    /// The task as committed, as one event numbered like the write's last, in place of the whole
    /// log: the task's new base.
    Compact(String),
}

impl TaskRow {
    /// The bodies the write inserts.
    pub(crate) fn bodies(&self) -> &[String] {
        match &self.log {
            LogWrite::Append(bodies) => bodies,
            LogWrite::Compact(task) => std::slice::from_ref(task),
        }
    }

    /// The sequence number of the first body the write inserts, when it starts from `expected`.
    pub(crate) fn first_seq(&self, expected: u64) -> u64 {
        match &self.log {
            LogWrite::Append(_) => expected + 1,
            LogWrite::Compact(_) => expected + self.added,
        }
    }

    /// Whether the write compacts the log.
    pub(crate) fn compacts(&self) -> bool {
        matches!(self.log, LogWrite::Compact(_))
    }

    /// The size of the log's new part.
    pub(crate) fn bytes(&self) -> i64 {
        self.bodies().iter().map(|body| body.len() as i64).sum()
    }

    /// The columns of `task`, written with `events` as `log` says, leaving `lag` in the log. The
    /// head is written with a compaction and with a new status; otherwise the events changed
    /// only the history or the artifacts.
    fn with_log(task: &Task, events: &[Arc<StreamResponse>], log: LogWrite, lag: Lag) -> Result<Self, StoreError> {
        let new_status = events.iter().any(|event| matches!(**event, StreamResponse::StatusUpdate(_)));
        let head = (new_status || matches!(log, LogWrite::Compact(_))).then(|| encode_head(task)).transpose()?;
        Ok(Self {
            context_id: task.context_id.clone(),
            state: task.status.state.number(),
            status_millis: status_millis(task),
            ended: task.status.state.is_terminal(),
            added: events.len() as u64,
            log,
            lag,
            head,
        })
    }
}

/// `task` without its history and artifacts, as a task's ProtoJSON: what a listing with
/// `historyLength` 0 and without artifacts sends, read without the task's log.
fn encode_head(task: &Task) -> Result<String, StoreError> {
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Head<'a> {
        id: &'a str,
        context_id: &'a str,
        status: &'a agentwire_types::TaskStatus,
        #[serde(skip_serializing_if = "Option::is_none")]
        metadata: Option<&'a serde_json::Map<String, serde_json::Value>>,
    }
    encode(&Head { id: &task.id, context_id: &task.context_id, status: &task.status, metadata: task.metadata.as_ref() })
}

/// A task's log is compacted at least every this many events: a read folds at most this many.
pub(crate) const MAX_LOG_EVENTS: u64 = 256;

/// The events after a small base are kept until they take this much: a task in progress whose
/// events replace earlier ones (a status, an artifact sent whole each time) is compacted, while
/// most keep every event until they end, for the readers that resume after one.
const MIN_COMPACTED_BYTES: usize = 64 * 1024;

/// What a task's log holds.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Lag {
    /// Its events, the base included.
    pub(crate) events: u64,
    /// Their size as stored.
    pub(crate) bytes: usize,
    /// The size of the base.
    pub(crate) base_bytes: usize,
}

impl Lag {
    /// A log of one event of `bytes`, the base.
    fn base(bytes: usize) -> Self {
        Self { events: 1, bytes, base_bytes: bytes }
    }

    /// Whether the log should be compacted: the events after the base have grown as large as
    /// the base (and [`MIN_COMPACTED_BYTES`]), or too many.
    fn outgrown(&self) -> bool {
        self.bytes - self.base_bytes >= self.base_bytes.max(MIN_COMPACTED_BYTES) || self.events > MAX_LOG_EVENTS
    }
}

/// What a commit needs to know of the task it starts from to tell whether its events describe
/// it: the parts of the task that a change may edit beyond its events, and what the log holds.
#[derive(Debug, Clone)]
pub(crate) struct Before {
    context_id: String,
    history: usize,
    artifact_ids: Vec<String>,
    status: agentwire_types::TaskStatus,
    metadata: Option<serde_json::Map<String, serde_json::Value>>,
    lag: Lag,
}

impl Before {
    fn of(task: &Task, lag: Lag) -> Self {
        Self {
            context_id: task.context_id.clone(),
            history: task.history.len(),
            artifact_ids: task.artifacts.iter().map(|a| a.artifact_id.clone()).collect(),
            status: task.status.clone(),
            metadata: task.metadata.clone(),
            lag,
        }
    }

    /// Whether folding `events` into this task gives `after`: they announce every change,
    /// unlike a change that trims the history or edits the task beyond its events.
    fn folds_into(&self, after: &Task, events: &[Arc<StreamResponse>]) -> bool {
        let Some(history) = Task::history_added_by(events.iter().map(|e| &**e)) else { return false };
        let mut new_artifacts: Vec<&str> = Vec::new();
        let mut status = &self.status;
        for event in events {
            match &**event {
                StreamResponse::ArtifactUpdate(update) => {
                    let id = update.artifact.artifact_id.as_str();
                    if !self.artifact_ids.iter().any(|known| known == id) && !new_artifacts.contains(&id) {
                        new_artifacts.push(id);
                    }
                }
                StreamResponse::StatusUpdate(update) => status = &update.status,
                StreamResponse::Message(_) | StreamResponse::Task(_) => {}
            }
        }
        after.context_id == self.context_id
            && after.history.len() == self.history + history
            && after.artifacts.len() == self.artifact_ids.len() + new_artifacts.len()
            && after.status == *status
            && after.metadata == self.metadata
    }
}

/// How a commit of `after` with `events`, from the task as this process last wrote or read it
/// (`before`; `None` if it does not know the version the commit starts from), stores the log: it
/// appends the events, or compacts the log when the log has outgrown its base, or when the
/// events would not fold into the task.
pub(crate) fn plan_commit(
    before: Option<&Before>,
    after: &Task,
    events: &[Arc<StreamResponse>],
) -> Result<TaskRow, StoreError> {
    if events.is_empty() {
        let lag = before.map(|before| before.lag).unwrap_or_default();
        return TaskRow::with_log(after, events, LogWrite::Append(Vec::new()), lag);
    }
    let appended = match before {
        Some(before) => {
            let bodies = encode_events(events)?;
            let mut lag = before.lag;
            lag.events += events.len() as u64;
            lag.bytes += bodies.iter().map(String::len).sum::<usize>();
            (!lag.outgrown() && before.folds_into(after, events)).then_some((bodies, lag))
        }
        _ => None,
    };
    match appended {
        Some((bodies, lag)) => TaskRow::with_log(after, events, LogWrite::Append(bodies), lag),
        None => compacted(after, events),
    }
}

/// How a new task with its first `events` is stored: the events, when the first holds the task
/// as the others found it and they fold into it; else the task alone.
pub(crate) fn plan_create(task: &Task, events: &[Arc<StreamResponse>]) -> Result<TaskRow, StoreError> {
    if let Some(StreamResponse::Task(first)) = events.first().map(|e| &**e) {
        let base = encode(&*events[0])?;
        let before = Before::of(first, Lag::base(base.len()));
        let mut row = plan_commit(Some(&before), task, &events[1..])?;
        if let LogWrite::Append(bodies) = &mut row.log {
            bodies.insert(0, base);
            row.added += 1;
            if row.head.is_none() {
                row.head = Some(encode_head(task)?);
            }
            return Ok(row);
        }
    }
    compacted(task, events)
}

/// A write of `task` that compacts its log.
fn compacted(task: &Task, events: &[Arc<StreamResponse>]) -> Result<TaskRow, StoreError> {
    let body = encode_task_event(task)?;
    let lag = Lag::base(body.len());
    TaskRow::with_log(task, events, LogWrite::Compact(body), lag)
}

/// `task` as the event that holds it whole, as [`StreamResponse::Task`] is written, without
/// copying it into one.
fn encode_task_event(task: &Task) -> Result<String, StoreError> {
    #[derive(serde::Serialize)]
    struct TaskEvent<'a> {
        task: &'a Task,
    }
    encode(&TaskEvent { task })
}

/// What this process last committed of a task, or read of it for an update.
struct Written {
    /// The task, unless an update has borrowed it ([`RunningTasks::lend`]), or this process
    /// only read it.
    task: Option<Arc<Task>>,
    version: u64,
    before: Before,
}

/// The tasks a process last committed while they were running (SUBMITTED or WORKING), as it
/// committed them, and the tasks it is updating.
#[derive(Default)]
pub(crate) struct RunningTasks(dashmap::DashMap<(Scope, String), Written, foldhash::fast::RandomState>);

impl RunningTasks {
    /// Records a commit of `task` at `version`, whose log now holds `lag`.
    pub(crate) fn committed(&self, scope: &Scope, task: &Arc<Task>, version: u64, lag: Lag) {
        let key = (scope.clone(), task.id.clone());
        if task.status.state.is_running() {
            let before = Before::of(task, lag);
            self.0.insert(key, Written { task: Some(Arc::clone(task)), version, before });
        } else {
            self.0.remove(&key);
        }
    }

    /// Records what a read for an update found: its commit then knows what it starts from.
    pub(crate) fn read(&self, scope: &Scope, record: &TaskRecord, lag: Lag) {
        let before = Before::of(&record.task, lag);
        let key = (scope.clone(), record.task.id.clone());
        self.0.insert(key, Written { task: None, version: record.version, before });
    }

    /// Forgets a task an update has borrowed or read and did not commit.
    pub(crate) fn settle(&self, scope: &Scope, task_id: &str) {
        self.0.remove_if(&(scope.clone(), task_id.to_owned()), |_, written| written.task.is_none());
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

    /// What a commit from version `expected` starts from, if this process wrote or read that
    /// version.
    pub(crate) fn at(&self, scope: &Scope, task_id: &str, expected: u64) -> Option<Before> {
        let written = self.0.get(&(scope.clone(), task_id.to_owned()))?;
        (written.version == expected).then(|| written.before.clone())
    }

    pub(crate) fn forget(&self, scope: &Scope, task_id: &str) {
        self.0.remove(&(scope.clone(), task_id.to_owned()));
    }
}

/// A task's log as a read selects it, event by event with its task's columns: the task's key,
/// version, base and log size, then the event's sequence number and body.
pub(crate) type LogRow = (i64, i64, i64, i64, i64, String);

/// A task as its log folds, with its row key and what its log holds.
pub(crate) struct Folded {
    pub(crate) key: i64,
    pub(crate) record: TaskRecord,
    pub(crate) lag: Lag,
}

/// The tasks whose logs `rows` hold (ordered by task, then sequence number), in the order of
/// `rows`. A log that does not run from its base to its version, because a compaction removed
/// it meanwhile, is left out.
pub(crate) fn fold_logs(rows: &[LogRow]) -> Result<Vec<Folded>, StoreError> {
    let mut tasks = Vec::new();
    let mut rest = rows;
    while let Some(&(key, version, base, log_bytes, ..)) = rest.first() {
        let len = rest.iter().take_while(|row| row.0 == key).count();
        let (log, after) = rest.split_at(len);
        rest = after;
        if log[0].4 != base || log[len - 1].4 != version {
            continue;
        }
        // The base holds the whole task: it becomes the task, without the copy a fold makes.
        let mut task = match decode::<StreamResponse>(&log[0].5)? {
            StreamResponse::Task(base) => base,
            other => {
                let mut task = Task::default();
                task.fold(&other);
                task
            }
        };
        for (.., body) in &log[1..] {
            task.fold(&decode::<StreamResponse>(body)?);
        }
        let lag = Lag {
            events: len as u64,
            bytes: usize::try_from(log_bytes).unwrap_or_default(),
            base_bytes: log[0].5.len(),
        };
        tasks.push(Folded { key, record: TaskRecord { task: Arc::new(task), version: as_seq(version) }, lag });
    }
    Ok(tasks)
}

/// A task of a listing's page, as [`queries::page`] selects it: its key, status time, id, log
/// size and head (the task without history and artifacts; `NULL` in rows from before it).
pub(crate) type PageRow = (i64, i64, String, i64, Option<String>);

/// Most bytes of logs one read of a listing's page fetches: tasks are read a few at a time, and
/// the page ends once it is full, so a listing of large tasks never holds more than it sends.
const PAGE_READ_BYTES: i64 = 1 << 20;

/// A listing's page: the tasks of `rows` (one more than the page if there is a next page) as the
/// query's view, read by `read_logs` a few at a time ([`queries::logs_of`]) until the page or
/// its byte budget is full.
pub(crate) async fn read_page<'r, F, Fut>(
    rows: &'r [PageRow],
    total: i64,
    query: &crate::TaskQuery,
    mut read_logs: F,
) -> Result<crate::TaskPage, StoreError>
where
    F: FnMut(Vec<i64>) -> Fut,
    Fut: Future<Output = Result<Vec<LogRow>, StoreError>>,
{
    use agentwire_types::MemorySize;

    let total = usize::try_from(total).unwrap_or_default();
    let mut page = crate::TaskPage { tasks: Vec::new(), next: None, total };
    let (mut bytes, mut last) = (0, None);
    // A view without history and artifacts is the task's head: no log to read.
    let heads_suffice = query.history_length == Some(0) && !query.include_artifacts;
    let head = |row: &'r PageRow| row.4.as_ref().filter(|_| heads_suffice);
    let mut waiting = rows.iter().take(query.page_size).peekable();
    'page: while waiting.peek().is_some() {
        let (mut batch, mut logged, mut batch_bytes) = (Vec::new(), Vec::new(), 0);
        while let Some(row) = waiting.next_if(|row| logged.is_empty() || batch_bytes + row.3 <= PAGE_READ_BYTES) {
            if head(row).is_none() {
                batch_bytes += row.3;
                logged.push(row.0);
            }
            batch.push(row);
        }
        let mut read = if logged.is_empty() { Vec::new() } else { fold_logs(&read_logs(logged).await?)? };
        for row in batch {
            let task = match head(row) {
                Some(head) => decode::<Task>(head)?,
                // A task deleted since the page was selected is left out.
                None => match read.iter().position(|folded| folded.key == row.0) {
                    Some(at) => read.swap_remove(at).record.task.view(query.history_length, query.include_artifacts),
                    None => continue,
                },
            };
            bytes += task.memory_size();
            if query.max_bytes.is_some_and(|max| bytes > max) && !page.tasks.is_empty() {
                page.next = last.take();
                break 'page;
            }
            page.tasks.push(task);
            last = Some(crate::PageToken { status_millis: row.1, task_id: row.2.clone() });
        }
    }
    if page.next.is_none() && rows.len() > query.page_size {
        page.next = last;
    }
    Ok(page)
}

/// The time that marks when a task ended, in ms since the epoch.
pub(crate) fn now_millis() -> i64 {
    Timestamp::now().as_millis()
}

/// Why a keyed create wrote nothing, from the row [`queries::keyed_send`] read: the key's
/// holder. A holder gone meanwhile (its task removed) makes the create worth retrying.
pub(crate) fn key_taken(held: Option<(String, String)>) -> StoreError {
    match held {
        Some((request, task_id)) => StoreError::KeyTaken(crate::KeyedSend { request, task_id }),
        None => StoreError::Backend("an idempotency key changed hands during the create; retry it".into()),
    }
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
    // Written by `Dialect::name`; a config of a generation this build does not know is v1.0's.
    let dialect = Dialect::from_name(dialect).unwrap_or(Dialect::V1);
    Ok(PushConfigRecord { config, dialect, delivered_through: as_seq(*delivered_through) })
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

/// [`TaskStore::update`](crate::TaskStore::update) on a SQL store: optimistic, with this
/// process's updates of a task taking turns, from what this process last committed of the task
/// if it has that, else from the task as `read` finds it now. Either way the commit knows what
/// the log holds, and appends to it rather than compacting it.
pub(crate) async fn update<S, R, Fut>(
    store: &S,
    running: &RunningTasks,
    turns: &Turns,
    scope: &Scope,
    task_id: &str,
    change: &mut crate::Change<'_>,
    read: R,
) -> crate::Result<crate::Updated>
where
    S: crate::TaskStore,
    R: FnOnce() -> Fut,
    Fut: Future<Output = Result<Option<Folded>, StoreError>>,
{
    turns
        .take(scope, task_id, async {
            let known = match running.lend(scope, task_id) {
                Some(record) => Some(record),
                None => read().await?.map(|folded| {
                    running.read(scope, &folded.record, folded.lag);
                    folded.record
                }),
            };
            let updated = crate::optimistic_update_from(store, scope, task_id, change, known).await;
            if !matches!(&updated, Ok(done) if !done.events.is_empty()) {
                running.settle(scope, task_id);
            }
            updated
        })
        .await
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

pub(crate) mod registry;

mod reads;
pub(crate) use reads::sql_reads;

pub(crate) mod queries;

/// SQL's `LIMIT` for a count.
pub(crate) fn limit(count: usize) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// Task keys as the SQL backends read them.
pub(crate) fn scoped((tenant, owner, id): (String, String, String)) -> (Scope, String) {
    (Scope::new(tenant, owner), id)
}
