//! The shared backend: one PostgreSQL database serving several `agentwire` processes as one.
//!
//! [`PostgresStore`] keeps tasks, logs and configs. Each commit also sends a `NOTIFY` carrying only
//! the task and its new sequence number, in the same transaction, so it is heard exactly when the
//! event can be read. [`Coordinator`] is the [`EventBus`] and [`CancelSignal`] of one process:
//! it listens for those notices and for cancels, and holds the process's lease, by which the
//! others find the tasks it was running if it dies.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use agentwire_types::{StreamResponse, Task, TaskState, Timestamp};
use async_trait::async_trait;
use sqlx::postgres::{PgConnectOptions, PgListener, PgPoolOptions};
use sqlx::{Executor, PgPool, Postgres, QueryBuilder, Row};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::bus::{CancelSignal, EventBus, LocalBus, LocalCancel, Notice, Subscription};
use crate::sql::{
    as_seq, as_sql, backend, decode_config, decode_event, decode_task, dialect_name, encode, encode_events,
    limit as sql_limit, now_millis, page_of, queries, scoped, ConfigRow, TaskRow, Turns,
};
use crate::{
    optimistic_update, Change, PushConfigRecord, PushConfigStore, Result, Scope, StoreError, StoredEvent, TaskPage,
    TaskQuery, TaskRecord, TaskStore, Updated,
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
        let setup = PgPoolOptions::new().max_connections(1).connect_with(options.clone()).await.map_err(backend)?;
        setup.execute(format!("CREATE SCHEMA IF NOT EXISTS {schema}").as_str()).await.map_err(backend)?;
        setup.close().await;
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .connect_with(options.options([("search_path", schema)]))
            .await
            .map_err(backend)?;
        sqlx::migrate!("migrations/postgres")
            .run(&pool)
            .await
            .map_err(|e| StoreError::Backend(format!("could not bring the database schema up to date: {e}")))?;
        Ok(Self {
            pool,
            turns: Arc::default(),
            events_channel: format!("agentwire_events_{schema}").into(),
            cancel_channel: format!("agentwire_cancel_{schema}").into(),
        })
    }

    /// Starts this process's [`Coordinator`]: readers' rings hold `capacity` notices, and the
    /// process's lease lasts `lease` unless renewed (it is renewed every third of it).
    pub async fn coordinator(&self, capacity: usize, lease: Duration) -> Result<Coordinator> {
        let (registry, registrations) = mpsc::unbounded_channel();
        let inner = Arc::new(CoordinatorInner {
            store: self.clone(),
            bus: LocalBus::new(capacity),
            local: LocalCancel::default(),
            instance: uuid::Uuid::now_v7().to_string(),
            lease,
            registry,
            stop: CancellationToken::new(),
        });
        inner.renew_lease().await?;
        let mut listener = PgListener::connect_with(&self.pool).await.map_err(backend)?;
        listener.listen_all([&*self.events_channel, &*self.cancel_channel]).await.map_err(backend)?;
        tokio::spawn(listen(Arc::downgrade(&inner), listener));
        tokio::spawn(hold_lease(Arc::downgrade(&inner)));
        tokio::spawn(register(Arc::downgrade(&inner), registrations));
        Ok(Coordinator { inner })
    }

    /// Tells every instance that the task's log reached `version`, once that is committed. The
    /// notice goes after the commit, as a statement of its own: a notice inside the transaction would hold
    /// PostgreSQL's global notification lock through the commit's flush to disk, and every commit
    /// that notifies, on every instance, would wait in line for it. The notice is lost only with
    /// this process, whose lease then runs out: every instance reads its logs again when it sees
    /// that (see `orphans`).
    async fn announce(&self, scope: &Scope, task_id: &str, version: u64) {
        let sent = sqlx::query("SELECT pg_notify($1, $2)")
            .bind(&*self.events_channel)
            .bind(notice_payload(scope, task_id, version))
            .execute(&self.pool)
            .await;
        if let Err(error) = sent {
            // Committed is committed; readers elsewhere catch up at their next notice.
            tracing::warn!(%error, task_id, version, "could not notify the other instances of an event");
        }
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

/// What a notice carries: the task and a sequence number (0: an execution ended).
fn notice_payload(scope: &Scope, task_id: &str, seq: u64) -> String {
    serde_json::json!([scope.tenant, scope.owner, task_id, seq]).to_string()
}

fn parse_notice(payload: &str) -> Option<(Scope, String, u64)> {
    let (tenant, owner, task_id, seq): (String, String, String, u64) = serde_json::from_str(payload).ok()?;
    Some((Scope::new(tenant, owner), task_id, seq))
}

/// Ends a statement that wrote a task row (the CTE `written`, returning its `key`) with the
/// insert of `events` after sequence number `after`, all in one statement: one round trip, and
/// atomic without a transaction around it. Selects the task's key, if it was written.
fn with_events<'q>(sql: &mut QueryBuilder<'q, Postgres>, after: u64, events: &'q [String]) {
    if !events.is_empty() {
        sql.push(", logged AS (INSERT INTO events (task, seq, body) SELECT written.key, v.seq, v.body FROM written, (");
        sql.push_values(events.iter().zip(as_sql(after) + 1..), |mut row, (body, seq)| {
            row.push_bind(seq).push_bind(body);
        });
        sql.push(") AS v (seq, body)) ");
    }
    sql.push(" SELECT key FROM written");
}

#[async_trait]
impl TaskStore for PostgresStore {
    /// One statement: the insert, if the scope has room for the task, and its events. Creates
    /// that race in one scope each count the tasks committed before them, so together they may
    /// pass the limit by their number.
    async fn create(
        &self,
        scope: &Scope,
        task: Arc<Task>,
        events: &[Arc<StreamResponse>],
        max_unfinished: Option<usize>,
    ) -> Result<u64> {
        let (row, bodies) = (TaskRow::of(&task)?, encode_events(events)?);
        let mut sql = QueryBuilder::<Postgres>::new(
            "WITH written AS (INSERT INTO tasks
                 (tenant, owner, id, context_id, state, status_millis, version, changed_at, ended_at, snapshot) SELECT ",
        );
        let mut values = sql.separated(", ");
        values.push_bind(&scope.tenant).push_bind(&scope.owner).push_bind(&task.id).push_bind(&row.context_id);
        values.push_bind(row.state).push_bind(row.status_millis).push_bind(bodies.len() as i64);
        values.push_bind(now_millis()).push_bind(row.ended.then(now_millis)).push_bind(&row.snapshot);
        let limit = max_unfinished.filter(|_| !row.ended);
        queries::push_room_under(&mut sql, scope, limit);
        sql.push(" ON CONFLICT DO NOTHING RETURNING key)");
        with_events(&mut sql, 0, &bodies);
        let key: Option<i64> = sql.build_query_scalar().fetch_optional(&self.pool).await.map_err(backend)?;
        if key.is_none() {
            let taken: bool = queries::exists::<Postgres>(scope, &task.id)
                .build_query_scalar()
                .fetch_one(&self.pool)
                .await
                .map_err(backend)?;
            return Err(match limit {
                Some(limit) if !taken => StoreError::TooManyUnfinished { limit },
                _ => StoreError::AlreadyExists(task.id.clone()),
            });
        }
        let version = bodies.len() as u64;
        if version > 0 {
            self.announce(scope, &task.id, version).await;
        }
        Ok(version)
    }

    async fn commit(
        &self,
        scope: &Scope,
        task: Arc<Task>,
        events: &[Arc<StreamResponse>],
        expected: u64,
    ) -> Result<u64> {
        let (row, bodies) = (TaskRow::of(&task)?, encode_events(events)?);
        let now = now_millis();
        let mut sql = QueryBuilder::<Postgres>::new("WITH written AS (UPDATE tasks SET context_id = ");
        sql.push_bind(&row.context_id).push(", state = ").push_bind(row.state);
        sql.push(", status_millis = ").push_bind(row.status_millis);
        sql.push(", version = version + ").push_bind(bodies.len() as i64).push(", changed_at = ").push_bind(now);
        sql.push(", ended_at = CASE WHEN ").push_bind(row.ended).push(" THEN COALESCE(ended_at, ").push_bind(now);
        sql.push(") END, snapshot = ").push_bind(&row.snapshot);
        sql.push(" WHERE tenant = ").push_bind(&scope.tenant).push(" AND owner = ").push_bind(&scope.owner);
        sql.push(" AND id = ").push_bind(&task.id).push(" AND version = ").push_bind(as_sql(expected));
        sql.push(" RETURNING key)");
        with_events(&mut sql, expected, &bodies);
        let written: Option<i64> = sql.build_query_scalar().fetch_optional(&self.pool).await.map_err(backend)?;
        if written.is_none() {
            return Err(match self.get(scope, &task.id).await? {
                Some(record) => StoreError::Conflict { task_id: task.id.clone(), expected, found: record.version },
                None => StoreError::NotFound(task.id.clone()),
            });
        }
        let version = expected + bodies.len() as u64;
        if !bodies.is_empty() {
            self.announce(scope, &task.id, version).await;
        }
        Ok(version)
    }

    async fn get(&self, scope: &Scope, task_id: &str) -> Result<Option<TaskRecord>> {
        let row = sqlx::query("SELECT snapshot, version FROM tasks WHERE tenant = $1 AND owner = $2 AND id = $3")
            .bind(&scope.tenant)
            .bind(&scope.owner)
            .bind(task_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(backend)?;
        let Some(row) = row else { return Ok(None) };
        let task = decode_task(row.get::<&str, _>(0))?;
        Ok(Some(TaskRecord { task, version: as_seq(row.get(1)) }))
    }

    async fn events_after(&self, scope: &Scope, task_id: &str, after: u64, limit: usize) -> Result<Vec<StoredEvent>> {
        let rows: Vec<(i64, String)> = queries::events::<Postgres>(scope, task_id, as_sql(after), sql_limit(limit))
            .build_query_as()
            .fetch_all(&self.pool)
            .await
            .map_err(backend)?;
        rows.iter().map(|(seq, body)| decode_event(*seq, body)).collect()
    }

    async fn list(&self, scope: &Scope, query: &TaskQuery) -> Result<TaskPage> {
        let total: i64 = queries::count::<Postgres>(scope, query)
            .build_query_scalar()
            .fetch_one(&self.pool)
            .await
            .map_err(backend)?;
        let snapshots: Vec<String> = queries::page::<Postgres>(scope, query)
            .build_query_scalar()
            .fetch_all(&self.pool)
            .await
            .map_err(backend)?;
        page_of(snapshots, total, query.page_size)
    }

    async fn count_unfinished(&self, scope: &Scope) -> Result<usize> {
        let count: i64 = queries::count_unfinished::<Postgres>(scope)
            .build_query_scalar()
            .fetch_one(&self.pool)
            .await
            .map_err(backend)?;
        Ok(usize::try_from(count).unwrap_or_default())
    }

    async fn tasks_in_progress(&self, limit: usize) -> Result<Vec<(Scope, String)>> {
        let rows: Vec<(String, String, String)> = queries::in_progress::<Postgres>(sql_limit(limit))
            .build_query_as()
            .fetch_all(&self.pool)
            .await
            .map_err(backend)?;
        Ok(rows.into_iter().map(scoped).collect())
    }

    /// Optimistic, with this process's updates of a task taking turns.
    async fn update(&self, scope: &Scope, task_id: &str, change: &mut Change<'_>) -> Result<Updated> {
        self.turns.take(scope, task_id, optimistic_update(self, scope, task_id, change)).await
    }

    async fn delete(&self, scope: &Scope, task_id: &str) -> Result<bool> {
        let done = sqlx::query("DELETE FROM tasks WHERE tenant = $1 AND owner = $2 AND id = $3")
            .bind(&scope.tenant)
            .bind(&scope.owner)
            .bind(task_id)
            .execute(&self.pool)
            .await
            .map_err(backend)?;
        Ok(done.rows_affected() > 0)
    }

    async fn purge(&self, ended_before: Option<Timestamp>, keep_ended: Option<usize>) -> Result<u64> {
        let mut removed = 0;
        if let Some(before) = ended_before {
            let done = sqlx::query("DELETE FROM tasks WHERE ended_at IS NOT NULL AND ended_at < $1")
                .bind(before.as_millis())
                .execute(&self.pool)
                .await
                .map_err(backend)?;
            removed += done.rows_affected();
        }
        if let Some(keep) = keep_ended {
            let done = sqlx::query(
                "DELETE FROM tasks WHERE key IN (SELECT key FROM tasks WHERE ended_at IS NOT NULL
                 ORDER BY ended_at DESC, key DESC OFFSET $1)",
            )
            .bind(i64::try_from(keep).unwrap_or(i64::MAX))
            .execute(&self.pool)
            .await
            .map_err(backend)?;
            removed += done.rows_affected();
        }
        Ok(removed)
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
        .bind(dialect_name(record.dialect))
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
        let row: Option<ConfigRow> = queries::configs::<Postgres>(scope, task_id, Some(config_id))
            .build_query_as()
            .fetch_optional(&self.pool)
            .await
            .map_err(backend)?;
        row.as_ref().map(decode_config).transpose()
    }

    async fn list_configs(&self, scope: &Scope, task_id: &str) -> Result<Vec<PushConfigRecord>> {
        let rows: Vec<ConfigRow> = queries::configs::<Postgres>(scope, task_id, None)
            .build_query_as()
            .fetch_all(&self.pool)
            .await
            .map_err(backend)?;
        rows.iter().map(decode_config).collect()
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
        let mut sql = QueryBuilder::<Postgres>::new(
            "SELECT t.tenant, t.owner, c.dialect, c.config, c.delivered_through
             FROM push_configs c JOIN tasks t ON t.key = c.task WHERE (t.tenant, t.owner, t.id) IN ",
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
        let rows: Vec<(String, String, String)> = queries::undelivered::<Postgres>(sql_limit(limit))
            .build_query_as()
            .fetch_all(&self.pool)
            .await
            .map_err(backend)?;
        Ok(rows.into_iter().map(scoped).collect())
    }
}

/// The [`EventBus`] and [`CancelSignal`] of one process serving a [`PostgresStore`] beside others.
/// Its background work stops when the last clone is dropped.
#[derive(Clone)]
pub struct Coordinator {
    inner: Arc<CoordinatorInner>,
}

struct CoordinatorInner {
    store: PostgresStore,
    bus: LocalBus,
    local: LocalCancel,
    /// This process's name in the `instances` table.
    instance: String,
    lease: Duration,
    /// Records in the database which executions run here, in the order they start and finish.
    registry: mpsc::UnboundedSender<Registration>,
    stop: CancellationToken,
}

impl Drop for CoordinatorInner {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

enum Registration {
    Started(Scope, String),
    Finished(Scope, String),
}

impl CoordinatorInner {
    async fn renew_lease(&self) -> Result<()> {
        let expires_at = now_millis() + i64::try_from(self.lease.as_millis()).unwrap_or(i64::MAX);
        sqlx::query(
            "INSERT INTO instances (id, expires_at) VALUES ($1, $2)
             ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at",
        )
        .bind(&self.instance)
        .bind(expires_at)
        .execute(&self.store.pool)
        .await
        .map_err(backend)?;
        Ok(())
    }
}

/// Hands the notices of other processes to this one's readers and executions. A dropped
/// connection is made again, and every reader told to read the log, since notices sent in
/// between are lost.
async fn listen(weak: std::sync::Weak<CoordinatorInner>, mut listener: PgListener) {
    loop {
        let Some(stop) = weak.upgrade().map(|i| i.stop.clone()) else { return };
        let received = tokio::select! {
            () = stop.cancelled() => return,
            received = listener.try_recv() => received,
        };
        let Some(inner) = weak.upgrade() else { return };
        match received {
            Ok(Some(notification)) => {
                let Some((scope, task_id, seq)) = parse_notice(notification.payload()) else { continue };
                if notification.channel() == &*inner.store.cancel_channel {
                    inner.local.cancel_here(&scope, &task_id);
                } else if seq == 0 {
                    inner.bus.publish(&scope, &task_id, Notice::Ended);
                } else {
                    inner.bus.publish(&scope, &task_id, Notice::Event { seq, event: None });
                }
            }
            // The connection was lost and has been made again (the listener reconnects before
            // it reports the loss).
            Ok(None) => {
                tracing::warn!("lost the PostgreSQL notification connection; reconnected");
                inner.bus.check_all();
            }
            // The connection was lost and could not be made again yet. The listener would
            // reconnect when next asked for a notice, with no sign that it did, so a new one is
            // made instead; once it listens, every reader reads the log.
            Err(error) => {
                tracing::warn!(%error, "PostgreSQL notifications failed; listening again");
                drop(inner);
                let Some(again) = listen_again(&weak).await else { return };
                listener = again;
                let Some(inner) = weak.upgrade() else { return };
                inner.bus.check_all();
            }
        }
    }
}

/// A new listener on the coordinator's channels, made as soon as the database lets it (tried
/// every second); `None` once the coordinator is gone.
async fn listen_again(weak: &std::sync::Weak<CoordinatorInner>) -> Option<PgListener> {
    loop {
        let stop = weak.upgrade()?.stop.clone();
        tokio::select! {
            () = stop.cancelled() => return None,
            () = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
        let inner = weak.upgrade()?;
        let store = &inner.store;
        let listening = async {
            let mut listener = PgListener::connect_with(&store.pool).await?;
            listener.listen_all([&*store.events_channel, &*store.cancel_channel]).await?;
            Ok::<_, sqlx::Error>(listener)
        };
        match listening.await {
            Ok(listener) => return Some(listener),
            Err(error) => tracing::warn!(%error, "cannot listen to PostgreSQL notifications yet"),
        }
    }
}

/// Renews the process's lease every third of its length.
async fn hold_lease(inner: std::sync::Weak<CoordinatorInner>) {
    loop {
        let Some((stop, every)) = inner.upgrade().map(|i| (i.stop.clone(), i.lease / 3)) else { return };
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
        let Some(inner) = inner.upgrade() else { return };
        if let Err(error) = inner.renew_lease().await {
            tracing::warn!(%error, "could not renew this instance's lease");
        }
    }
}

/// Records where executions run, a statement per run of starts or of ends among the
/// registrations waiting (in order: a task's execution may end and another start in one batch).
async fn register(inner: std::sync::Weak<CoordinatorInner>, mut registrations: mpsc::UnboundedReceiver<Registration>) {
    let mut batch = Vec::new();
    while registrations.recv_many(&mut batch, REGISTRATION_BATCH).await > 0 {
        let Some(inner) = inner.upgrade() else { return };
        for run in
            batch.chunk_by(|a, b| matches!(a, Registration::Started(..)) == matches!(b, Registration::Started(..)))
        {
            let mut sql = QueryBuilder::<Postgres>::new(match run[0] {
                Registration::Started(..) => "INSERT INTO executions (task, instance) SELECT key, ",
                Registration::Finished(..) => "DELETE FROM executions WHERE instance = ",
            });
            sql.push_bind(&inner.instance);
            sql.push(match run[0] {
                Registration::Started(..) => " FROM tasks WHERE (tenant, owner, id) IN ",
                Registration::Finished(..) => " AND task IN (SELECT key FROM tasks WHERE (tenant, owner, id) IN ",
            });
            sql.push_tuples(
                run,
                |mut row, (Registration::Started(scope, task_id) | Registration::Finished(scope, task_id))| {
                    row.push_bind(&scope.tenant).push_bind(&scope.owner).push_bind(task_id);
                },
            );
            sql.push(match run[0] {
                Registration::Started(..) => " ON CONFLICT DO NOTHING",
                Registration::Finished(..) => ")",
            });
            if let Err(error) = sql.build().execute(&inner.store.pool).await {
                tracing::warn!(%error, executions = run.len(), "could not record where executions run");
            }
        }
        batch.clear();
    }
}

/// Most registrations written by one statement.
const REGISTRATION_BATCH: usize = 256;

impl EventBus for Coordinator {
    fn publish(&self, scope: &Scope, task_id: &str, notice: Notice) {
        // Committed events were notified by their commit; the end of an execution is told here.
        if let Notice::Ended = notice {
            let (store, scope, task_id) = (self.inner.store.clone(), scope.clone(), task_id.to_owned());
            tokio::spawn(async move {
                if let Err(error) = store.notify(&store.events_channel, &scope, &task_id, 0).await {
                    tracing::warn!(%error, "could not tell other instances that an execution ended");
                }
            });
        }
        self.inner.bus.publish(scope, task_id, notice);
    }

    fn subscribe(&self, scope: &Scope, task_id: &str) -> Subscription {
        self.inner.bus.subscribe(scope, task_id)
    }
}

#[async_trait]
impl CancelSignal for Coordinator {
    fn started(&self, scope: &Scope, task_id: &str) -> CancellationToken {
        let _ = self.inner.registry.send(Registration::Started(scope.clone(), task_id.to_owned()));
        self.inner.local.started(scope, task_id)
    }

    fn finished(&self, scope: &Scope, task_id: &str) {
        self.inner.local.finished(scope, task_id);
        if !self.inner.local.is_running(scope, task_id) {
            let _ = self.inner.registry.send(Registration::Finished(scope.clone(), task_id.to_owned()));
        }
    }

    async fn cancel(&self, scope: &Scope, task_id: &str) -> bool {
        let here = self.inner.local.cancel_here(scope, task_id);
        let store = &self.inner.store;
        if let Err(error) = store.notify(&store.cancel_channel, scope, task_id, 0).await {
            tracing::warn!(%error, "could not ask other instances to cancel");
        }
        let elsewhere: Result<bool, sqlx::Error> = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM executions e JOIN instances i ON i.id = e.instance
             WHERE i.expires_at > $1 AND e.task = (SELECT key FROM tasks WHERE tenant = $2 AND owner = $3 AND id = $4))",
        )
        .bind(now_millis())
        .bind(&scope.tenant)
        .bind(&scope.owner)
        .bind(task_id)
        .fetch_one(&store.pool)
        .await;
        here || elsewhere.unwrap_or(true)
    }

    async fn orphans(&self, limit: usize) -> Result<Vec<(Scope, String)>> {
        let pool = &self.inner.store.pool;
        let now = now_millis();
        let lease = i64::try_from(self.inner.lease.as_millis()).unwrap_or(i64::MAX);
        let gone = sqlx::query("DELETE FROM instances WHERE expires_at < $1")
            .bind(now - lease)
            .execute(pool)
            .await
            .map_err(backend)?;
        if gone.rows_affected() > 0 {
            // A notice the instance had yet to send after a commit died with it.
            self.inner.bus.check_all();
        }
        // Running tasks that no live instance runs, and that nobody has touched for a lease: a
        // task just created may not be registered yet.
        let rows = sqlx::query(
            "SELECT tenant, owner, id FROM tasks t WHERE ended_at IS NULL AND state IN ($1, $2) AND changed_at < $3
             AND NOT EXISTS (SELECT 1 FROM executions e JOIN instances i ON i.id = e.instance
                             WHERE e.task = t.key AND i.expires_at > $4)
             LIMIT $5",
        )
        .bind(TaskState::Submitted.number())
        .bind(TaskState::Working.number())
        .bind(now - lease)
        .bind(now)
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(pool)
        .await
        .map_err(backend)?;
        Ok(rows.iter().map(|row| (Scope::new(row.get::<String, _>(0), row.get::<String, _>(1)), row.get(2))).collect())
    }

    fn orphan_check_interval(&self) -> Option<Duration> {
        Some(self.inner.lease / 4)
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
    }
}
