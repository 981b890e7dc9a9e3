//! The state the instances on one PostgreSQL database agree on besides its tasks: quota counts,
//! the count of tasks in progress, and word of commits (see [`SharedState`]).

use std::time::Duration;

use agentwire_types::TaskState;
use async_trait::async_trait;
use sqlx::{PgPool, Row};

use super::PostgresStore;
use crate::sql::{backend, now_millis};
use crate::{Result, SharedState, Spent};

/// One instance's view of the shared tables: what it counts is counted under its name.
pub(super) struct SharedTables {
    pub(super) store: PostgresStore,
    /// The instance's name in the `instances` table.
    pub(super) instance: String,
    /// Counts the commits whose notices arrive, from every instance.
    pub(super) commits: tokio::sync::watch::Receiver<u64>,
}

/// How long a caller's bucket is kept after its last request.
const KEEP_BUCKET: i64 = 24 * 60 * 60 * 1000;

/// How long a budget's sums are kept after their window began: longer than the longest window
/// (`--budget`'s is 366 days), so that only windows long ended go.
const KEEP_BUDGET: i64 = 367 * 24 * 60 * 60 * 1000;

#[async_trait]
impl SharedState for SharedTables {
    async fn take_token(&self, caller: &str, rate: f64, burst: f64) -> Result<std::result::Result<(), Duration>> {
        // One statement, atomic under the row's lock: the bucket refilled to the database's now
        // gives up a token if it has one. When it has none, the row as it was says how long until
        // it has (a data-modifying CTE's outer query sees the table before the change).
        let row = sqlx::query(
            "WITH now AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms),
             taken AS (
                 INSERT INTO quota_buckets AS b (caller, tokens, at_millis)
                 SELECT $1, $3 - 1, ms FROM now
                 ON CONFLICT (caller) DO UPDATE
                 SET tokens = LEAST($3, b.tokens + (excluded.at_millis - b.at_millis) / 1000.0 * $2) - 1,
                     at_millis = excluded.at_millis
                 WHERE LEAST($3, b.tokens + (excluded.at_millis - b.at_millis) / 1000.0 * $2) >= 1
                 RETURNING tokens)
             SELECT EXISTS (SELECT 1 FROM taken),
                    (SELECT LEAST($3, b.tokens + ((SELECT ms FROM now) - b.at_millis) / 1000.0 * $2)
                     FROM quota_buckets b WHERE b.caller = $1)",
        )
        .bind(caller)
        .bind(rate)
        .bind(burst)
        .fetch_one(&self.store.pool)
        .await
        .map_err(backend)?;
        if row.get::<bool, _>(0) {
            return Ok(Ok(()));
        }
        let tokens: f64 = row.get::<Option<f64>, _>(1).unwrap_or(0.0);
        Ok(Err(Duration::from_secs_f64(((1.0 - tokens) / rate).max(0.0))))
    }

    async fn open_stream(&self, caller: &str, max: usize) -> Result<bool> {
        let pool = &self.store.pool;
        let mut tx = pool.begin().await.map_err(backend)?;
        // One caller's streams are counted one open at a time, across the instances.
        sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 7))")
            .bind(caller)
            .execute(&mut *tx)
            .await
            .map_err(backend)?;
        let open: i64 = sqlx::query(
            "SELECT COALESCE(SUM(s.open), 0)::bigint FROM quota_streams s JOIN instances i ON i.id = s.instance
             WHERE s.caller = $1 AND i.expires_at > $2",
        )
        .bind(caller)
        .bind(now_millis())
        .fetch_one(&mut *tx)
        .await
        .map_err(backend)?
        .get(0);
        if open >= i64::try_from(max).unwrap_or(i64::MAX) {
            return Ok(false);
        }
        sqlx::query(
            "INSERT INTO quota_streams (caller, instance, open) VALUES ($1, $2, 1)
             ON CONFLICT (caller, instance) DO UPDATE SET open = quota_streams.open + 1",
        )
        .bind(caller)
        .bind(&self.instance)
        .execute(&mut *tx)
        .await
        .map_err(backend)?;
        tx.commit().await.map_err(backend)?;
        Ok(true)
    }

    async fn close_stream(&self, caller: &str) -> Result<()> {
        sqlx::query("UPDATE quota_streams SET open = open - 1 WHERE caller = $1 AND instance = $2 AND open > 0")
            .bind(caller)
            .bind(&self.instance)
            .execute(&self.store.pool)
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn charge_budget(&self, holder: &str, window_start: i64, tokens: u64, tool_rounds: u64) -> Result<Spent> {
        if tokens == 0 && tool_rounds == 0 {
            // A check: read, and write nothing (a send's check would otherwise write a row).
            let row =
                sqlx::query("SELECT tokens, tool_rounds FROM budget_spent WHERE holder = $1 AND window_start >= $2")
                    .bind(holder)
                    .bind(window_start)
                    .fetch_optional(&self.store.pool)
                    .await
                    .map_err(backend)?;
            return Ok(row.map(|row| spent_in(&row, 0)).unwrap_or_default());
        }
        // One statement, atomic under the row's lock: a charge in a later window than the row's
        // starts it again. The sums stop at i64::MAX rather than overflow.
        let row = sqlx::query(
            "INSERT INTO budget_spent AS b (holder, window_start, tokens, tool_rounds) VALUES ($1, $2, $3, $4)
             ON CONFLICT (holder) DO UPDATE SET
                 window_start = GREATEST(b.window_start, excluded.window_start),
                 tokens = CASE WHEN excluded.window_start > b.window_start THEN excluded.tokens
                          ELSE LEAST(b.tokens::numeric + excluded.tokens, 9223372036854775807)::bigint END,
                 tool_rounds = CASE WHEN excluded.window_start > b.window_start THEN excluded.tool_rounds
                          ELSE LEAST(b.tool_rounds::numeric + excluded.tool_rounds, 9223372036854775807)::bigint END
             RETURNING window_start, tokens, tool_rounds",
        )
        .bind(holder)
        .bind(window_start)
        .bind(i64::try_from(tokens).unwrap_or(i64::MAX))
        .bind(i64::try_from(tool_rounds).unwrap_or(i64::MAX))
        .fetch_one(&self.store.pool)
        .await
        .map_err(backend)?;
        Ok(spent_in(&row, 1))
    }

    async fn budgets_spent(&self) -> Result<Vec<(String, i64, Spent)>> {
        let rows = sqlx::query("SELECT holder, window_start, tokens, tool_rounds FROM budget_spent ORDER BY holder")
            .fetch_all(&self.store.pool)
            .await
            .map_err(backend)?;
        Ok(rows.iter().map(|row| (row.get(0), row.get(1), spent_in(row, 2))).collect())
    }

    async fn reset_budget(&self, holder: &str) -> Result<bool> {
        let deleted = sqlx::query("DELETE FROM budget_spent WHERE holder = $1")
            .bind(holder)
            .execute(&self.store.pool)
            .await
            .map_err(backend)?;
        Ok(deleted.rows_affected() > 0)
    }

    async fn tasks_in_progress_to_report(&self) -> Result<Vec<(String, TaskState, u64)>> {
        // The live instance first in the order of names reports; a name is a UUIDv7, so that is
        // the one started first, and another takes over when its lease runs out.
        let rows = sqlx::query(
            "SELECT tenant, state, count(*) FROM tasks
             WHERE ended_at IS NULL AND $1 = (SELECT min(id) FROM instances WHERE expires_at > $2)
             GROUP BY tenant, state",
        )
        .bind(&self.instance)
        .bind(now_millis())
        .fetch_all(&self.store.pool)
        .await
        .map_err(backend)?;
        let counted = rows.iter().filter_map(|row| {
            let state = TaskState::from_number(row.get::<i32, _>(1))?;
            Some((row.get::<String, _>(0), state, u64::try_from(row.get::<i64, _>(2)).unwrap_or(0)))
        });
        Ok(counted.collect())
    }

    fn commits(&self) -> tokio::sync::watch::Receiver<u64> {
        self.commits.clone()
    }
}

/// The tokens and tool rounds of `row`, from its column `first` on.
fn spent_in(row: &sqlx::postgres::PgRow, first: usize) -> Spent {
    let count = |column: usize| u64::try_from(row.get::<i64, _>(column)).unwrap_or(0);
    Spent { tokens: count(first), tool_rounds: count(first + 1) }
}

/// Removes what the instances gone no longer hold (their streams), the counts of streams no
/// longer open, the buckets nobody has drawn on for a day, and the budgets' sums of windows
/// ended long ago.
pub(super) async fn forget_gone(pool: &PgPool) -> std::result::Result<(), sqlx::Error> {
    sqlx::query(
        "DELETE FROM quota_streams s
         WHERE s.open <= 0 OR NOT EXISTS (SELECT 1 FROM instances i WHERE i.id = s.instance)",
    )
    .execute(pool)
    .await?;
    sqlx::query(
        "DELETE FROM quota_buckets WHERE at_millis < (extract(epoch FROM clock_timestamp()) * 1000)::bigint - $1",
    )
    .bind(KEEP_BUCKET)
    .execute(pool)
    .await?;
    sqlx::query(
        "DELETE FROM budget_spent WHERE window_start < (extract(epoch FROM clock_timestamp()) * 1000)::bigint - $1",
    )
    .bind(KEEP_BUDGET)
    .execute(pool)
    .await?;
    Ok(())
}
