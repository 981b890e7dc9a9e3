//! The writes the writer commits, and why a write wrote nothing: what the writer, the group's
//! script and the single writes share.

use std::sync::Arc;

use agentwire_types::Task;
use sqlx::{Sqlite, SqliteConnection};
use tokio::sync::oneshot;

use crate::sql::{as_seq, backend, queries, TaskRow};
use crate::{Purge, PushConfigRecord, Result, Scope, SendKey, StoreError};

/// A change the writer makes. A create's `limit` is the most unfinished tasks its scope may have
/// for it to be created; its `key`, an idempotency key recorded with it.
pub(super) enum Write {
    Create { scope: Scope, task: Arc<Task>, row: TaskRow, limit: Option<usize>, key: Option<KeyWrite> },
    Commit { scope: Scope, task: Arc<Task>, row: TaskRow, expected: u64 },
    Delete { scope: Scope, id: String },
    Purge(Purge),
    PutConfig { scope: Scope, record: PushConfigRecord, config: String },
    DeleteConfig { scope: Scope, task_id: String, config_id: String },
    MarkDelivered { scope: Scope, task_id: String, config_id: String, seq: u64 },
}

/// An idempotency key to record with a create.
pub(super) struct KeyWrite {
    pub(super) key: SendKey,
    /// Reserved by this process, which no other writes: no send holds it, and the create records
    /// it without looking again (in the group's script). Otherwise the create looks first, on
    /// its own.
    pub(super) reserved: bool,
}

pub(super) struct Job {
    pub(super) write: Write,
    pub(super) reply: oneshot::Sender<Result<u64>>,
}

/// Why a create wrote nothing: the id is taken in the scope, or the scope had no room under
/// `limit`.
pub(super) async fn create_refusal(
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

/// [`StoreError::KeyTaken`] with the send holding `key` in `scope`.
pub(super) async fn key_holder(conn: &mut SqliteConnection, scope: &Scope, key: &str) -> Result<StoreError> {
    let held: Option<(String, String)> = queries::keyed_send::<Sqlite>(scope, key, false)
        .build_query_as()
        .fetch_optional(&mut *conn)
        .await
        .map_err(backend)?;
    Ok(crate::sql::key_taken(held))
}

/// Why a commit wrote nothing: the task changed since `expected`, or is not there.
pub(super) async fn refusal(
    conn: &mut SqliteConnection,
    scope: &Scope,
    task_id: &str,
    expected: u64,
) -> Result<StoreError> {
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
