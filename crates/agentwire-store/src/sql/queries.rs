//! The statements the SQL backends share, built with each backend's placeholders.

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

/// The [`PageRow`](super::PageRow)s of a listing's page, and one more if there is a next
/// page.
pub(crate) fn page<'q, DB>(scope: &'q Scope, query: &'q TaskQuery) -> QueryBuilder<'q, DB>
where
    DB: Database,
    String: Encode<'q, DB> + Type<DB>,
    i64: Encode<'q, DB> + Type<DB>,
    i32: Encode<'q, DB> + Type<DB>,
{
    let mut sql = tasks("key, status_millis, id, log_bytes, head", scope, query, true);
    let limit = i64::try_from(query.page_size.saturating_add(1)).unwrap_or(i64::MAX);
    sql.push(" ORDER BY status_millis DESC, id DESC LIMIT ").push_bind(limit);
    sql
}

/// The [`LogRow`](super::LogRow)s of the tasks the condition that follows selects (`t` is
/// the task): push it, then end the statement with [`end_logs`].
fn logs<'q, DB: Database>() -> QueryBuilder<'q, DB> {
    QueryBuilder::new(
        "SELECT t.key, t.version, t.base, t.log_bytes, e.seq, e.body
         FROM tasks t JOIN events e ON e.task = t.key AND e.seq >= t.base WHERE ",
    )
}

fn end_logs<DB: Database>(sql: &mut QueryBuilder<'_, DB>) {
    sql.push(" ORDER BY t.key, e.seq");
}

/// The [`LogRow`](super::LogRow)s of a task: one statement, so that a compaction cannot come
/// between the task's row and its events.
pub(crate) fn log<'q, DB>(scope: &'q Scope, task_id: &'q str) -> QueryBuilder<'q, DB>
where
    DB: Database,
    String: Encode<'q, DB> + Type<DB>,
    &'q str: Encode<'q, DB> + Type<DB>,
{
    let mut sql = logs();
    sql.push("t.tenant = ").push_bind(&scope.tenant).push(" AND t.owner = ").push_bind(&scope.owner);
    sql.push(" AND t.id = ").push_bind(task_id);
    end_logs(&mut sql);
    sql
}

/// The [`LogRow`](super::LogRow)s of the tasks with these row keys.
pub(crate) fn logs_of<'q, DB>(keys: Vec<i64>) -> QueryBuilder<'q, DB>
where
    DB: Database,
    i64: Encode<'q, DB> + Type<DB>,
{
    let mut sql = logs();
    sql.push("t.key IN (");
    let mut keys_list = sql.separated(", ");
    for key in keys {
        keys_list.push_bind(key);
    }
    sql.push(")");
    end_logs(&mut sql);
    sql
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
pub(crate) fn configs<'q, DB>(scope: &'q Scope, task_id: &'q str, config_id: Option<&'q str>) -> QueryBuilder<'q, DB>
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

/// Ends the `SELECT` of a task's insert with its condition: there is room for one more
/// unfinished task of `scope`'s owner under `limit` (always, without one).
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
    sql.push(" WHERE (SELECT COUNT(*) FROM (SELECT 1 FROM tasks WHERE owner = ").push_bind(&scope.owner);
    sql.push(" AND ended_at IS NULL LIMIT ").push_bind(limit);
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

/// `tenant, owner, id` of unfinished tasks in one of `states` whose status timestamp is
/// before `before_millis`, the oldest first.
pub(crate) fn unchanged_since<'q, DB>(
    states: &[agentwire_types::TaskState],
    before_millis: i64,
    limit: i64,
) -> QueryBuilder<'q, DB>
where
    DB: Database,
    i64: Encode<'q, DB> + Type<DB>,
    i32: Encode<'q, DB> + Type<DB>,
{
    let mut sql = QueryBuilder::new("SELECT tenant, owner, id FROM tasks WHERE ended_at IS NULL AND state IN (");
    let mut separated = sql.separated(", ");
    for state in states {
        separated.push_bind(state.number());
    }
    sql.push(") AND status_millis < ").push_bind(before_millis);
    sql.push(" ORDER BY status_millis LIMIT ").push_bind(limit);
    sql
}

/// Records a keyed create's key for the task at row `task`, unless the scope holds the key
/// already and it has not expired: returns the task's row when recorded.
pub(crate) fn claim_key<'q, DB>(scope: &'q Scope, key: &'q crate::SendKey, task: i64) -> QueryBuilder<'q, DB>
where
    DB: Database,
    i64: Encode<'q, DB> + Type<DB>,
    &'q str: Encode<'q, DB> + Type<DB>,
    String: Encode<'q, DB> + Type<DB>,
{
    let now = super::now_millis();
    let expires = key.expires_at(now);
    let mut sql = QueryBuilder::new("INSERT INTO send_keys (tenant, owner, key, request, task, expires_at) VALUES (");
    let mut values = sql.separated(", ");
    values.push_bind(scope.tenant.as_str()).push_bind(scope.owner.as_str()).push_bind(key.key.as_str());
    values.push_bind(key.request.as_str()).push_bind(task).push_bind(expires);
    sql.push(
        ") ON CONFLICT (tenant, owner, key) DO UPDATE SET request = excluded.request, task = excluded.task,
             expires_at = excluded.expires_at WHERE send_keys.expires_at <= ",
    );
    sql.push_bind(now).push(" RETURNING task");
    sql
}

/// The request digest and task id of the send holding `key` in `scope`; with `unexpired`,
/// only while the key has not expired.
pub(crate) fn keyed_send<'q, DB>(scope: &'q Scope, key: &'q str, unexpired: bool) -> QueryBuilder<'q, DB>
where
    DB: Database,
    i64: Encode<'q, DB> + Type<DB>,
    &'q str: Encode<'q, DB> + Type<DB>,
{
    let mut sql =
        QueryBuilder::new("SELECT k.request, t.id FROM send_keys k JOIN tasks t ON t.key = k.task WHERE k.tenant = ");
    sql.push_bind(scope.tenant.as_str()).push(" AND k.owner = ").push_bind(scope.owner.as_str());
    sql.push(" AND k.key = ").push_bind(key);
    if unexpired {
        sql.push(" AND k.expires_at > ").push_bind(super::now_millis());
    }
    sql
}

/// Removes the keys that have expired.
pub(crate) fn forget_expired_keys<'q, DB>() -> QueryBuilder<'q, DB>
where
    DB: Database,
    i64: Encode<'q, DB> + Type<DB>,
{
    let mut sql = QueryBuilder::new("DELETE FROM send_keys WHERE expires_at <= ");
    sql.push_bind(super::now_millis());
    sql
}
