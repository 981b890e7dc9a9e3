//! What the SQL backends share: how a task, an event and a push config become columns, and back.
//! Snapshots, events and configs are stored as their ProtoJSON text, the form every binding
//! already reads and writes; the columns beside them exist only to find and order rows.

use std::future::Future;
use std::sync::Arc;

use agentwire_types::{Dialect, StreamResponse, Task, TaskPushNotificationConfig, Timestamp};

use crate::page::status_millis;
use crate::{PushConfigRecord, Scope, StoreError, StoredEvent};

/// A task's columns.
pub(crate) struct TaskRow {
    pub(crate) context_id: String,
    /// The state's number in `lf.a2a.v1.TaskState`.
    pub(crate) state: i32,
    pub(crate) status_millis: i64,
    /// Whether it is in a terminal state.
    pub(crate) ended: bool,
    pub(crate) snapshot: String,
}

impl TaskRow {
    pub(crate) fn of(task: &Task) -> Result<Self, StoreError> {
        Ok(Self {
            context_id: task.context_id.clone(),
            state: task.status.state.number(),
            status_millis: status_millis(task),
            ended: task.status.state.is_terminal(),
            snapshot: encode(task)?,
        })
    }
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

pub(crate) fn decode_task(snapshot: &str) -> Result<Arc<Task>, StoreError> {
    decode(snapshot).map(Arc::new)
}

pub(crate) fn encode_events(events: &[Arc<StreamResponse>]) -> Result<Vec<String>, StoreError> {
    events.iter().map(|e| encode(&**e)).collect()
}

pub(crate) fn decode_event(seq: i64, body: &str) -> Result<StoredEvent, StoreError> {
    Ok(StoredEvent { seq: as_seq(seq), event: Arc::new(decode(body)?) })
}

pub(crate) fn decode_config(dialect: &str, config: &str) -> Result<PushConfigRecord, StoreError> {
    let config: TaskPushNotificationConfig = decode(config)?;
    let dialect = match dialect {
        "v03" => Dialect::V03,
        "legacy" => Dialect::Legacy,
        _ => Dialect::V1,
    };
    Ok(PushConfigRecord { config, dialect })
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
