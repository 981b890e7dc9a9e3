//! The shared backend: one PostgreSQL database serving several `agentwire` processes as one.
//!
//! [`PostgresStore`] keeps tasks, logs and configs. Each commit is followed by a `NOTIFY` carrying
//! only the task and its new sequence number, so it is heard once the event can be read. The
//! `Coordinator` (its own module) is the [`EventBus`](crate::EventBus) and
//! [`CancelSignal`](crate::CancelSignal) of one process: it listens for those notices and for
//! cancels, and holds the process's lease, by which the others find the tasks it was running if
//! it dies.

mod coordinator;
mod registry;
mod shared;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use agentwire_types::{StreamResponse, Task, TaskState, Timestamp};
use async_trait::async_trait;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Executor, PgPool, Postgres, QueryBuilder};

use self::coordinator::Coordinator;
use crate::sql::{
    as_seq, as_sql, backend, decode_config, decode_event, encode, fold_logs, limit as sql_limit, now_millis,
    plan_commit, plan_create, queries, scoped, ConfigRow, Folded, LogRow, PageRow, RunningTasks, TaskRow, Turns,
};
use crate::{
    Change, Purge, PushConfigRecord, PushConfigStore, Result, Scope, SendKey, StoreError, StoredEvent, TaskPage,
    TaskQuery, TaskRecord, TaskStore, Unfinished, Updated,
};

/// Stores tasks, event logs and push configs in PostgreSQL.
///
/// ```no_run
/// use agentwire_store::PostgresStore;
///
/// # async fn open() -> agentwire_store::Result<()> {
/// let store = PostgresStore::connect("postgres://agentwire@localhost/agentwire").await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct PostgresStore {
    pool: PgPool,
    turns: Arc<Turns>,
    /// The tasks this process last committed while they were running (SUBMITTED or WORKING), as
    /// it committed them: an update starts from there rather than reading the task, and a commit
    /// whose events reads can fold appends them to the log. Another process may have changed a
    /// task since; its commit then fails on the version, and the update reads the task.
    written: Arc<RunningTasks>,
    /// Hands the notices of commits to the task that sends them.
    notices: tokio::sync::mpsc::Sender<String>,
    /// The channel commits notify on: one per schema, so that databases shared by several
    /// deployments keep their notices apart.
    events_channel: Arc<str>,
    cancel_channel: Arc<str>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore").field("events_channel", &self.events_channel).finish_non_exhaustive()
    }
}

/// How long connecting to the database may take when the store opens.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

crate::sql::sql_reads!(PostgresStore, Postgres, pool);

impl PostgresStore {
    /// Connects to the database at `url` and brings its schema up to date.
    pub async fn connect(url: &str) -> Result<Self> {
        Self::connect_in_schema(url, "public").await
    }

    /// Like [`connect`](Self::connect), with every table in `schema` (created if needed): several
    /// deployments, or tests, can share one database.
    pub async fn connect_in_schema(url: &str, schema: &str) -> Result<Self> {
        // The notification channels are named after the schema, within PostgreSQL's 63 bytes.
        if schema.is_empty() || schema.len() > 40 || !schema.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(StoreError::Backend(format!("schema {schema:?} must be 1 to 40 letters, digits and _")));
        }
        let options = PgConnectOptions::from_str(url).map_err(backend)?;
        // One attempt, with the cause: a pool would retry until its timeout, then say only that.
        let server = format!("{}:{}", options.get_host(), options.get_port());
        let unreachable =
            |cause: String| StoreError::Backend(format!("cannot connect to PostgreSQL at {server}: {cause}"));
        let connecting = <sqlx::PgConnection as sqlx::Connection>::connect_with(&options);
        let mut setup = tokio::time::timeout(CONNECT_TIMEOUT, connecting)
            .await
            .map_err(|_| unreachable(format!("no answer within {} s", CONNECT_TIMEOUT.as_secs())))?
            .map_err(|e| unreachable(e.to_string()))?;
        setup.execute(format!("CREATE SCHEMA IF NOT EXISTS {schema}").as_str()).await.map_err(backend)?;
        let _ = sqlx::Connection::close(setup).await;
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .connect_with(options.options([("search_path", schema)]))
            .await
            .map_err(backend)?;
        sqlx::migrate!("migrations/postgres")
            .run(&pool)
            .await
            .map_err(|e| StoreError::Backend(format!("could not bring the database schema up to date: {e}")))?;
        let events_channel: Arc<str> = format!("agentwire_events_{schema}").into();
        let (notices, queued) = tokio::sync::mpsc::channel(NOTICE_BATCH * 4);
        tokio::spawn(send_notices(pool.clone(), Arc::clone(&events_channel), queued));
        Ok(Self {
            pool,
            turns: Arc::default(),
            written: Arc::default(),
            notices,
            events_channel,
            cancel_channel: format!("agentwire_cancel_{schema}").into(),
        })
    }

    /// The store with this process's bus and cancel signal, which cross every process serving
    /// the database, for a server. Starts the process's lease, which lasts `lease` unless
    /// renewed (it is renewed every third of it): when it runs out, the other processes fail the
    /// tasks this one was running.
    pub async fn backend(&self, lease: Duration) -> Result<crate::Backend> {
        let coordinator = Coordinator::start(self, lease, coordinator::REGISTRY_CAPACITY).await?;
        let shared = coordinator.shared();
        let registry = registry::PostgresRegistry { pool: self.pool.clone() };
        Ok(crate::Backend::from_parts(self.clone(), coordinator.clone(), coordinator)
            .with_shared(shared)
            .with_registry(registry))
    }

    /// Tells every instance that the task's log reached `version`, once that is committed. The
    /// notice is sent after the commit, by a task of its own that sends the notices waiting in
    /// one statement: a notice inside the commit's transaction would hold PostgreSQL's global
    /// notification lock through the commit's flush to disk, and every commit that notifies, on
    /// every instance, would wait in line for it; and a statement of its own after each commit
    /// would be a second round trip. The notice is lost only with this process, whose lease then
    /// runs out: every instance reads its logs again when it sees that (see `orphans`).
    async fn announce(&self, scope: &Scope, task_id: &str, version: u64) {
        self.queue_notice(notice_payload(scope, task_id, version)).await;
    }

    /// Queues a notice on the events channel. Notices are sent in the order they are queued.
    async fn queue_notice(&self, payload: String) {
        // The receiver lives as long as the store; a full queue holds the caller back.
        let _ = self.notices.send(payload).await;
    }

    async fn notify(&self, channel: &str, scope: &Scope, task_id: &str, seq: u64) -> Result<()> {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(channel)
            .bind(notice_payload(scope, task_id, seq))
            .execute(&self.pool)
            .await
            .map_err(backend)?;
        Ok(())
    }
}

/// Most commit notices sent by one statement.
const NOTICE_BATCH: usize = 256;

/// Sends the notices of commits on `channel`, those waiting together in one statement, until
/// the store is dropped.
async fn send_notices(pool: PgPool, channel: Arc<str>, mut queued: tokio::sync::mpsc::Receiver<String>) {
    let mut batch = Vec::with_capacity(NOTICE_BATCH);
    while queued.recv_many(&mut batch, NOTICE_BATCH).await > 0 {
        let sent = sqlx::query("SELECT pg_notify($1, notice) FROM UNNEST($2::text[]) AS notice")
            .bind(&*channel)
            .bind(&batch)
            .execute(&pool)
            .await;
        if let Err(error) = sent {
            // Committed is committed; readers elsewhere catch up at their next notice.
            tracing::warn!(%error, notices = batch.len(), "could not notify the other instances of events");
        }
        batch.clear();
    }
}

/// What a notice carries: the task and a sequence number (0: an execution ended).
fn notice_payload(scope: &Scope, task_id: &str, seq: u64) -> String {
    serde_json::json!([scope.tenant, scope.owner, task_id, seq]).to_string()
}

fn parse_notice(payload: &str) -> Option<(Scope, String, u64)> {
    let (tenant, owner, task_id, seq): (String, String, String, u64) = serde_json::from_str(payload).ok()?;
    Some((Scope::new(tenant, owner), task_id, seq))
}

/// Ends a statement that wrote a task row (the CTE `written`, returning its `key`) with what
/// `row` stores in the log when the write starts from version `from`: its events, and for a
/// compaction the removal of the events it replaces. All in one statement: one round trip, and
/// atomic without a transaction around it. Selects the task's key, if it was written.
fn with_log<'q>(sql: &mut QueryBuilder<'q, Postgres>, from: u64, row: &'q TaskRow) {
    let first = row.first_seq(from);
    if !row.bodies().is_empty() {
        sql.push(", logged AS (INSERT INTO events (task, seq, body) SELECT written.key, v.seq, v.body FROM written, (");
        sql.push_values(row.bodies().iter().zip(as_sql(first)..), |mut values, (body, seq)| {
            values.push_bind(seq).push_bind(body);
        });
        sql.push(") AS v (seq, body)) ");
    }
    if row.compacts() && from > 0 {
        sql.push(", replaced AS (DELETE FROM events WHERE task IN (SELECT key FROM written) AND seq < ");
        sql.push_bind(as_sql(first)).push(")");
    }
    sql.push(" SELECT key FROM written");
}

impl PostgresStore {
    /// A create: one statement, the insert if the owner has room for the task, and its log. With
    /// a key, the key's insert follows in the same transaction, which a key already held rolls
    /// back. Creates that race for one owner each count the tasks committed before them, so
    /// together they may pass the limit by their number.
    async fn insert(
        &self,
        scope: &Scope,
        task: Arc<Task>,
        events: &[Arc<StreamResponse>],
        max_unfinished: Option<usize>,
        key: Option<&SendKey>,
    ) -> Result<u64> {
        let row = plan_create(&task, events)?;
        let mut sql = QueryBuilder::<Postgres>::new(
            "WITH written AS (INSERT INTO tasks (tenant, owner, id, context_id, state, status_millis, version,
                 changed_at, ended_at, base, log_bytes, head) SELECT ",
        );
        let mut values = sql.separated(", ");
        values.push_bind(&scope.tenant).push_bind(&scope.owner).push_bind(&task.id).push_bind(&row.context_id);
        values.push_bind(row.state).push_bind(row.status_millis).push_bind(as_sql(row.added));
        values.push_bind(now_millis()).push_bind(row.ended.then(now_millis));
        values.push_bind(as_sql(row.first_seq(0))).push_bind(row.bytes()).push_bind(&row.head);
        let limit = max_unfinished.filter(|_| !row.ended);
        queries::push_room_under(&mut sql, scope, limit);
        sql.push(" ON CONFLICT DO NOTHING RETURNING key)");
        with_log(&mut sql, 0, &row);
        let mut transaction = match key {
            Some(_) => Some(self.pool.begin().await.map_err(backend)?),
            None => None,
        };
        let inserted: Option<i64> = match &mut transaction {
            Some(transaction) => sql.build_query_scalar().fetch_optional(&mut **transaction).await,
            None => sql.build_query_scalar().fetch_optional(&self.pool).await,
        }
        .map_err(backend)?;
        let Some(row_key) = inserted else {
            // A transaction dropped unfinished is rolled back.
            drop(transaction);
            let taken: bool = queries::exists::<Postgres>(scope, &task.id)
                .build_query_scalar()
                .fetch_one(&self.pool)
                .await
                .map_err(backend)?;
            return Err(match limit {
                Some(limit) if !taken => StoreError::TooManyUnfinished { limit },
                _ => StoreError::AlreadyExists(task.id.clone()),
            });
        };
        if let (Some(mut transaction), Some(key)) = (transaction, key) {
            let claimed: Option<i64> = queries::claim_key::<Postgres>(scope, key, row_key)
                .build_query_scalar()
                .fetch_optional(&mut *transaction)
                .await
                .map_err(backend)?;
            if claimed.is_none() {
                transaction.rollback().await.map_err(backend)?;
                return Err(self.key_holder(scope, &key.key).await?);
            }
            transaction.commit().await.map_err(backend)?;
        }
        let version = row.added;
        self.written.committed(scope, &task, version, row.lag);
        if version > 0 {
            self.announce(scope, &task.id, version).await;
        }
        Ok(version)
    }

    /// [`StoreError::KeyTaken`] with the send holding `key`.
    async fn key_holder(&self, scope: &Scope, key: &str) -> Result<StoreError> {
        let held: Option<(String, String)> = queries::keyed_send::<Postgres>(scope, key, false)
            .build_query_as()
            .fetch_optional(&self.pool)
            .await
            .map_err(backend)?;
        Ok(crate::sql::key_taken(held))
    }
}

#[async_trait]
impl TaskStore for PostgresStore {
    /// One statement: the insert, if the owner has room for the task, and its log. Creates that
    /// race for one owner each count the tasks committed before them, so together they may pass
    /// the limit by their number.
    async fn create(
        &self,
        scope: &Scope,
        task: Arc<Task>,
        events: &[Arc<StreamResponse>],
        max_unfinished: Option<usize>,
    ) -> Result<u64> {
        self.insert(scope, task, events, max_unfinished, None).await
    }

    /// The create's statement and the key's, in one transaction.
    async fn create_keyed(
        &self,
        scope: &Scope,
        task: Arc<Task>,
        events: &[Arc<StreamResponse>],
        max_unfinished: Option<usize>,
        key: &SendKey,
        _reserved: Option<&crate::KeyGuard>,
    ) -> Result<u64> {
        self.insert(scope, task, events, max_unfinished, Some(key)).await
    }

    async fn commit(
        &self,
        scope: &Scope,
        task: Arc<Task>,
        events: &[Arc<StreamResponse>],
        expected: u64,
    ) -> Result<u64> {
        let before = self.written.at(scope, &task.id, expected);
        let row = plan_commit(before.as_ref(), &task, events)?;
        let version = expected + row.added;
        let now = now_millis();
        let mut sql = QueryBuilder::<Postgres>::new("WITH written AS (UPDATE tasks SET context_id = ");
        sql.push_bind(&row.context_id).push(", state = ").push_bind(row.state);
        sql.push(", status_millis = ").push_bind(row.status_millis);
        sql.push(", version = ").push_bind(as_sql(version)).push(", changed_at = ").push_bind(now);
        sql.push(", ended_at = CASE WHEN ").push_bind(row.ended).push(" THEN COALESCE(ended_at, ").push_bind(now);
        sql.push(") END");
        if let Some(head) = &row.head {
            sql.push(", head = ").push_bind(head);
        }
        if row.compacts() {
            sql.push(", base = ").push_bind(as_sql(version)).push(", log_bytes = ").push_bind(row.bytes());
        } else {
            sql.push(", log_bytes = log_bytes + ").push_bind(row.bytes());
        }
        sql.push(" WHERE tenant = ").push_bind(&scope.tenant).push(" AND owner = ").push_bind(&scope.owner);
        sql.push(" AND id = ").push_bind(&task.id).push(" AND version = ").push_bind(as_sql(expected));
        sql.push(" RETURNING key)");
        with_log(&mut sql, expected, &row);
        let written: Option<i64> = sql.build_query_scalar().fetch_optional(&self.pool).await.map_err(backend)?;
        if written.is_none() {
            self.written.forget(scope, &task.id);
            let found: Option<i64> =
                sqlx::query_scalar("SELECT version FROM tasks WHERE tenant = $1 AND owner = $2 AND id = $3")
                    .bind(&scope.tenant)
                    .bind(&scope.owner)
                    .bind(&task.id)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(backend)?;
            return Err(match found {
                Some(found) => StoreError::Conflict { task_id: task.id.clone(), expected, found: as_seq(found) },
                None => StoreError::NotFound(task.id.clone()),
            });
        }
        self.written.committed(scope, &task, version, row.lag);
        if row.added > 0 {
            self.announce(scope, &task.id, version).await;
        }
        Ok(version)
    }

    async fn get(&self, scope: &Scope, task_id: &str) -> Result<Option<TaskRecord>> {
        Ok(self.read_log(scope, task_id).await?.map(|folded| folded.record))
    }

    async fn events_after(&self, scope: &Scope, task_id: &str, after: u64, limit: usize) -> Result<Vec<StoredEvent>> {
        self.read_events(scope, task_id, after, limit).await
    }

    async fn list(&self, scope: &Scope, query: &TaskQuery) -> Result<TaskPage> {
        self.read_page(scope, query).await
    }

    async fn unfinished(&self, owner: &str) -> Result<Unfinished> {
        let (tasks, bytes): (i64, i64) = sqlx::query_as(
            "SELECT COUNT(*), CAST(COALESCE(SUM(log_bytes), 0) AS BIGINT) FROM tasks
             WHERE owner = $1 AND ended_at IS NULL",
        )
        .bind(owner)
        .fetch_one(&self.pool)
        .await
        .map_err(backend)?;
        Ok(Unfinished { tasks: usize::try_from(tasks).unwrap_or_default(), bytes: as_seq(bytes) })
    }

    async fn check(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await.map_err(backend)?;
        Ok(())
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

    /// From what this process last committed of the task when it has that: then one round trip,
    /// the commit.
    async fn update(&self, scope: &Scope, task_id: &str, change: &mut Change<'_>) -> Result<Updated> {
        let read = || self.read_log(scope, task_id);
        crate::sql::update(self, &self.written, &self.turns, scope, task_id, change, read).await
    }

    async fn delete(&self, scope: &Scope, task_id: &str) -> Result<bool> {
        self.written.forget(scope, task_id);
        let done = sqlx::query("DELETE FROM tasks WHERE tenant = $1 AND owner = $2 AND id = $3")
            .bind(&scope.tenant)
            .bind(&scope.owner)
            .bind(task_id)
            .execute(&self.pool)
            .await
            .map_err(backend)?;
        Ok(done.rows_affected() > 0)
    }

    /// One statement over the ended tasks, newest first, with their positions and the running
    /// sum of their logs' sizes: it reads every ended task's row. PostgreSQL reuses the space of
    /// the removed rows once its autovacuum has passed.
    async fn purge(&self, rules: &Purge) -> Result<u64> {
        let mut sql = QueryBuilder::<Postgres>::new(
            "DELETE FROM tasks WHERE key IN (SELECT key FROM (SELECT key, ended_at,
                 ROW_NUMBER() OVER newest AS position, SUM(log_bytes) OVER newest AS kept
             FROM tasks WHERE ended_at IS NOT NULL WINDOW newest AS (ORDER BY ended_at DESC, key DESC)) AS ended
             WHERE FALSE",
        );
        if let Some(before) = rules.ended_before {
            sql.push(" OR ended_at < ").push_bind(before.as_millis());
        }
        if let Some(keep) = rules.keep_ended {
            sql.push(" OR position > ").push_bind(sql_limit(keep));
        }
        if let Some(keep) = rules.keep_ended_bytes {
            sql.push(" OR kept > ").push_bind(i64::try_from(keep).unwrap_or(i64::MAX));
        }
        sql.push(")");
        let done = sql.build().execute(&self.pool).await.map_err(backend)?;
        queries::forget_expired_keys::<Postgres>().build().execute(&self.pool).await.map_err(backend)?;
        Ok(done.rows_affected())
    }
}

#[async_trait]
impl PushConfigStore for PostgresStore {
    async fn put_config(&self, scope: &Scope, record: &PushConfigRecord) -> Result<()> {
        let done = sqlx::query(
            "INSERT INTO push_configs (task, id, position, dialect, config, delivered_through)
             SELECT key, $1, (SELECT COALESCE(MAX(position), 0) + 1 FROM push_configs WHERE task = tasks.key), $2, $3, $7
             FROM tasks WHERE tenant = $4 AND owner = $5 AND id = $6
             ON CONFLICT (task, id) DO UPDATE SET dialect = excluded.dialect, config = excluded.config",
        )
        .bind(&record.config.id)
        .bind(record.dialect.name())
        .bind(encode(&record.config)?)
        .bind(&scope.tenant)
        .bind(&scope.owner)
        .bind(&record.config.task_id)
        .bind(as_sql(record.delivered_through))
        .execute(&self.pool)
        .await
        .map_err(backend)?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(record.config.task_id.clone()));
        }
        Ok(())
    }

    async fn get_config(&self, scope: &Scope, task_id: &str, config_id: &str) -> Result<Option<PushConfigRecord>> {
        Ok(self.read_configs(scope, task_id, Some(config_id)).await?.pop())
    }

    async fn list_configs(&self, scope: &Scope, task_id: &str) -> Result<Vec<PushConfigRecord>> {
        self.read_configs(scope, task_id, None).await
    }

    async fn delete_config(&self, scope: &Scope, task_id: &str, config_id: &str) -> Result<bool> {
        let done = queries::delete_config::<Postgres>(scope, task_id, config_id)
            .build()
            .execute(&self.pool)
            .await
            .map_err(backend)?;
        Ok(done.rows_affected() > 0)
    }

    async fn configs_of(&self, tasks: &[(Scope, String)]) -> Result<Vec<(Scope, PushConfigRecord)>> {
        if tasks.is_empty() {
            return Ok(Vec::new());
        }
        // A database without configs (most have none) answers at once, whatever its statistics:
        // on a table of tasks grown since it was last analyzed, the planner found these tasks
        // by scanning the index of their owner's tasks by status time (4 ms per call at 8,000
        // tasks, more than the send's own insert), where the EXISTS is a one-time filter.
        let mut sql = QueryBuilder::<Postgres>::new(
            "SELECT t.tenant, t.owner, c.dialect, c.config, c.delivered_through
             FROM push_configs c JOIN tasks t ON t.key = c.task
             WHERE EXISTS (SELECT FROM push_configs) AND (t.tenant, t.owner, t.id) IN ",
        );
        sql.push_tuples(tasks, |mut row, (scope, task_id)| {
            row.push_bind(&scope.tenant).push_bind(&scope.owner).push_bind(task_id);
        });
        sql.push(" ORDER BY c.task, c.position");
        let rows: Vec<(String, String, String, String, i64)> =
            sql.build_query_as().fetch_all(&self.pool).await.map_err(backend)?;
        rows.into_iter()
            .map(|(tenant, owner, dialect, config, delivered)| {
                Ok((Scope::new(tenant, owner), decode_config(&(dialect, config, delivered))?))
            })
            .collect()
    }

    async fn mark_delivered(&self, scope: &Scope, task_id: &str, config_id: &str, seq: u64) -> Result<()> {
        queries::mark_delivered::<Postgres>(scope, task_id, config_id, as_sql(seq))
            .build()
            .execute(&self.pool)
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn undelivered(&self, limit: usize) -> Result<Vec<(Scope, String)>> {
        self.read_undelivered(limit).await
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance;

    /// The database the test command started (`scripts/test`), if any.
    fn database() -> Option<String> {
        match std::env::var("AGENTWIRE_TEST_POSTGRES_URL") {
            Ok(url) => Some(url),
            Err(_) if std::env::var_os("CI").is_some() => panic!("CI runs need AGENTWIRE_TEST_POSTGRES_URL"),
            Err(_) => None,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_postgres_store_passes_the_conformance_suite() {
        let Some(url) = database() else {
            eprintln!("skipped: AGENTWIRE_TEST_POSTGRES_URL is not set");
            return;
        };
        let counter = std::sync::atomic::AtomicUsize::new(0);
        let run = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
        conformance::run(|| {
            let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let (url, schema) = (url.clone(), format!("conformance_{run}_{n}"));
            async move { PostgresStore::connect_in_schema(&url, &schema).await.unwrap() }
        })
        .await;
        let schema = format!("conformance_{run}_registry");
        let registry =
            registry::PostgresRegistry { pool: PostgresStore::connect_in_schema(&url, &schema).await.unwrap().pool };
        conformance::registry(&registry).await;
    }

    /// What a budget's holder spent is summed within a window, stops at what a row holds, starts
    /// again in a later window, reads without a write for a check, and is forgotten on a reset.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn budgets_are_summed_per_window_and_reset() {
        let Some(url) = database() else {
            eprintln!("skipped: AGENTWIRE_TEST_POSTGRES_URL is not set");
            return;
        };
        let schema = format!("budgets_{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
        let store = PostgresStore::connect_in_schema(&url, &schema).await.unwrap();
        let backend = store.backend(Duration::from_secs(5)).await.unwrap();
        let shared = backend.shared().unwrap();
        let spent = |tokens, tool_rounds| crate::Spent { tokens, tool_rounds };
        assert_eq!(shared.charge_budget("principal:a", 1000, 0, 0).await.unwrap(), spent(0, 0));
        assert!(shared.budgets_spent().await.unwrap().is_empty(), "a check keeps nothing");
        assert_eq!(shared.charge_budget("principal:a", 1000, 5, 1).await.unwrap(), spent(5, 1));
        let most = i64::MAX as u64;
        assert_eq!(shared.charge_budget("principal:a", 1000, u64::MAX, 0).await.unwrap(), spent(most, 1));
        assert_eq!(shared.charge_budget("principal:a", 1000, 0, 0).await.unwrap(), spent(most, 1));
        assert_eq!(shared.charge_budget("principal:a", 2000, 3, 0).await.unwrap(), spent(3, 0));
        assert_eq!(shared.charge_budget("tenant:a", 2000, 1, 1).await.unwrap(), spent(1, 1));
        let all = shared.budgets_spent().await.unwrap();
        assert_eq!(all, [("principal:a".to_owned(), 2000, spent(3, 0)), ("tenant:a".to_owned(), 2000, spent(1, 1))]);
        assert!(shared.reset_budget("principal:a").await.unwrap());
        assert!(!shared.reset_budget("principal:a").await.unwrap());
        assert_eq!(shared.charge_budget("principal:a", 2000, 0, 0).await.unwrap(), spent(0, 0));
    }

    /// A database made before the log was the write path opens, is brought up to date, and reads
    /// its tasks as stored; their next commits append to the log and still read back as written.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_database_from_before_the_log_write_path_opens_and_reads() {
        let Some(url) = database() else {
            eprintln!("skipped: AGENTWIRE_TEST_POSTGRES_URL is not set");
            return;
        };
        let schema = format!("before_log_{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
        let dir = std::env::temp_dir().join(format!("agentwire-pg-old-{schema}"));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["0001_tasks.sql", "0002_unfinished_tasks.sql"] {
            let from = format!("{}/migrations/postgres/{name}", env!("CARGO_MANIFEST_DIR"));
            std::fs::copy(from, dir.join(name)).unwrap();
        }
        let options = PgConnectOptions::from_str(&url).unwrap();
        let old = PgPoolOptions::new().max_connections(1).connect_with(options.clone()).await.unwrap();
        old.execute(format!("CREATE SCHEMA {schema}").as_str()).await.unwrap();
        old.close().await;
        let old = PgPoolOptions::new()
            .max_connections(1)
            .connect_with(options.options([("search_path", schema.as_str())]))
            .await
            .unwrap();
        sqlx::migrate::Migrator::new(dir.as_path()).await.unwrap().run(&old).await.unwrap();
        let mut stored = conformance::task("t", "c", 1, agentwire_types::TaskState::Working);
        stored.history.push(agentwire_types::Message::user("m1", "hello"));
        sqlx::query(
            "INSERT INTO tasks (tenant, owner, id, context_id, state, status_millis, version, changed_at, snapshot)
             VALUES ('', 'a', 't', 'c', 3, 1, 1, 0, $1)",
        )
        .bind(encode(&stored).unwrap())
        .execute(&old)
        .await
        .unwrap();
        old.close().await;
        std::fs::remove_dir_all(&dir).unwrap();

        let store = PostgresStore::connect_in_schema(&url, &schema).await.unwrap();
        let scope = Scope::new("", "a");
        let read = store.get(&scope, "t").await.unwrap().unwrap();
        assert_eq!((&*read.task, read.version), (&stored, 1));
        let mut written = None;
        for n in 0..3 {
            let mut say = |task: &mut Task| {
                let event = StreamResponse::Message(agentwire_types::Message::agent(format!("r{n}"), "hi"));
                task.fold(&event);
                Ok(vec![event])
            };
            written = Some(store.update(&scope, "t", &mut say).await.unwrap());
        }
        let written = written.unwrap();
        let other = PostgresStore::connect_in_schema(&url, &schema).await.unwrap();
        let read = other.get(&scope, "t").await.unwrap().unwrap();
        assert_eq!((read.task, read.version), (written.task, 4));
    }

    /// Executions started and finished faster than a registry of one can take are all recorded
    /// once the writer has caught up: it rewrites them from the ones running here.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_full_registry_is_rewritten_from_the_executions_running_here() {
        use crate::CancelSignal;
        let Some(url) = database() else {
            eprintln!("skipped: AGENTWIRE_TEST_POSTGRES_URL is not set");
            return;
        };
        let schema = format!("registry_{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
        let store = PostgresStore::connect_in_schema(&url, &schema).await.unwrap();
        let scope = Scope::new("", "a");
        let ids: Vec<String> = (0..40).map(|i| format!("t{i}")).collect();
        for id in &ids {
            let task = conformance::task(id, "c", 1, agentwire_types::TaskState::Working);
            let first = Arc::new(StreamResponse::Task(task.clone()));
            store.create(&scope, Arc::new(task), &[first], None).await.unwrap();
        }
        let coordinator = Coordinator::start(&store, Duration::from_secs(10), 1).await.unwrap();
        let recorded = || async {
            let count: i64 =
                sqlx::query_scalar("SELECT COUNT(*) FROM executions").fetch_one(&store.pool).await.unwrap();
            count
        };
        let eventually = |expected: i64| async move {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
            while recorded().await != expected {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "{} executions recorded, not {expected}",
                    recorded().await
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        let _tokens: Vec<_> = ids.iter().map(|id| coordinator.started(&scope, id)).collect();
        eventually(40).await;
        for id in ids.iter().step_by(2) {
            coordinator.finished(&scope, id);
        }
        eventually(20).await;
    }
}
