//! The bus and cancel signal of one process serving a [`PostgresStore`] beside others.

use std::sync::{Arc, Weak};
use std::time::Duration;

use agentwire_types::TaskState;
use async_trait::async_trait;
use sqlx::postgres::PgListener;
use sqlx::{Postgres, QueryBuilder, Row};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{parse_notice, PostgresStore};
use crate::bus::{CancelSignal, EventBus, LocalBus, LocalCancel, Notice, Subscription};
use crate::sql::{backend, now_millis};
use crate::{Result, Scope};

/// The [`EventBus`] and [`CancelSignal`] of one process serving a [`PostgresStore`] beside others.
/// Its background work stops when the last clone is dropped.
#[derive(Clone)]
pub(super) struct Coordinator {
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

impl Coordinator {
    /// Starts this process's coordinator.
    pub(super) async fn start(store: &PostgresStore, lease: Duration) -> Result<Self> {
        let (registry, registrations) = mpsc::unbounded_channel();
        let inner = Arc::new(CoordinatorInner {
            store: store.clone(),
            bus: LocalBus::default(),
            local: LocalCancel::default(),
            instance: uuid::Uuid::now_v7().to_string(),
            lease,
            registry,
            stop: CancellationToken::new(),
        });
        inner.renew_lease().await?;
        let mut listener = PgListener::connect_with(&store.pool).await.map_err(backend)?;
        listener.listen_all([&*store.events_channel, &*store.cancel_channel]).await.map_err(backend)?;
        tokio::spawn(listen(Arc::downgrade(&inner), listener));
        tokio::spawn(hold_lease(Arc::downgrade(&inner)));
        tokio::spawn(register(Arc::downgrade(&inner), registrations));
        Ok(Self { inner })
    }
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
async fn listen(weak: Weak<CoordinatorInner>, mut listener: PgListener) {
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
async fn listen_again(weak: &Weak<CoordinatorInner>) -> Option<PgListener> {
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
async fn hold_lease(inner: Weak<CoordinatorInner>) {
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
async fn register(inner: Weak<CoordinatorInner>, mut registrations: mpsc::UnboundedReceiver<Registration>) {
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

    fn subscribe(&self, scope: &Scope, task_id: &str, buffer: usize) -> Subscription {
        self.inner.bus.subscribe(scope, task_id, buffer)
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
