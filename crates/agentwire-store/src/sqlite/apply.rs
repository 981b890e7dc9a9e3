//! One write applied to the file, and the statements it takes.

use sqlx::{QueryBuilder, Sqlite, SqliteConnection};

use crate::sql::{as_seq, as_sql, backend, now_millis, queries};
use crate::{Purge, Result, Scope, StoreError};

use super::known::{Ended, Known, Removed};
use super::write::{create_refusal, key_holder, refusal, KeyWrite, Write};

pub(super) async fn apply(
    conn: &mut SqliteConnection,
    write: &Write,
    known: &Known,
    removed: &mut Removed,
) -> Result<u64> {
    match write {
        Write::Create { scope, task, row, limit, key } => {
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
            let row_key: Option<i64> = sql.build_query_scalar().fetch_optional(&mut *conn).await.map_err(backend)?;
            let Some(row_key) = row_key else { return Err(create_refusal(conn, scope, id, *limit).await?) };
            if let Some(KeyWrite { key, .. }) = key {
                let claimed: Option<i64> = queries::claim_key::<Sqlite>(scope, key, row_key)
                    .build_query_scalar()
                    .fetch_optional(&mut *conn)
                    .await
                    .map_err(backend)?;
                if claimed.is_none() {
                    sqlx::query("DELETE FROM tasks WHERE key = ?")
                        .bind(row_key)
                        .execute(&mut *conn)
                        .await
                        .map_err(backend)?;
                    return Err(key_holder(conn, scope, &key.key).await?);
                }
            }
            append(conn, row_key, row.first_seq(0), row.bodies()).await?;
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
            queries::forget_expired_keys::<Sqlite>().build().execute(&mut *conn).await.map_err(backend)?;
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
pub(super) async fn purge(
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
        while budget > 0 && oldest.len() < PURGE_SLICE_TASKS {
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
        delete.push(")");
        if known.with_configs.is_empty() {
            // No task has configs to forget: nothing to read back.
            delete.build().execute(&mut *conn).await.map_err(backend)?;
        } else {
            delete.push(" RETURNING tenant, owner, id");
            let gone: Vec<(String, String, String)> =
                delete.build_query_as().fetch_all(&mut *conn).await.map_err(backend)?;
            let forgotten = gone.into_iter().map(|(tenant, owner, id)| (Scope::new(tenant, owner), id));
            removed.purged.extend(forgotten.filter(|key| known.with_configs.contains_key(key)));
        }
        known.vacuum_due.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    Ok(removed.ended.tasks - before.tasks)
}

/// Most tasks one purge removes: the writes waiting behind it wait about 2 ms, not the tens of
/// milliseconds a purge of thousands takes (the handler purges slice after slice until none is
/// left, with the groups of other writes between them).
const PURGE_SLICE_TASKS: usize = 256;

/// Writes `events` to a task's log, the first numbered `first`.
pub(super) async fn append(conn: &mut SqliteConnection, task: i64, first: u64, events: &[String]) -> Result<()> {
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
