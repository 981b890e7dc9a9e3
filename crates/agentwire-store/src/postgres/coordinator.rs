//! The bus and cancel signal of one process serving a [`PostgresStore`] beside others.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use agentwire_types::TaskState;
use async_trait::async_trait;
use sqlx::postgres::PgListener;
use sqlx::{Postgres, QueryBuilder, Row};
use tokio::sync::mpsc::{self, error::TrySendError};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::{notice_payload, parse_notice, PostgresStore};
use crate::bus::{CancelSignal, Commit, CommitFeed, EventBus, LocalBus, LocalCancel, Notice, Subscription};
use crate::sql::{backend, now_millis};
use crate::{Result, Scope};

/// Most registrations waiting to be written (see [`CoordinatorInner::queue`]).
pub(super) const REGISTRY_CAPACITY: usize = 4096;

/// The [`EventBus`] and [`CancelSignal`] of one process serving a [`PostgresStore`] beside others.
/// Its background work (listening, the lease, the registry writer) is owned by it, and stops when
/// the last clone is dropped.
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
    /// What the registry writer is to do, in order: record which executions run here as they
    /// start and finish, and tell the other processes when one ended.
    registry: mpsc::Sender<Registration>,
    /// A registration found the registry full and was dropped: the writer rewrites this
    /// process's executions from the ones running here once it catches up.
    overflowed: AtomicBool,
    /// The notification connection listens: notices of the other processes arrive.
    listening: AtomicBool,
    /// Counts the commits whose notices arrive, from every instance.
    commits: tokio::sync::watch::Sender<u64>,
    stop: CancellationToken,
    /// The background work; aborted when the coordinator goes.
    work: Mutex<JoinSet<()>>,
}

impl Drop for CoordinatorInner {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[derive(Clone)]
enum Registration {
    Started(Scope, String),
    Finished(Scope, String),
    /// An execution of the task ended: other processes' readers are told.
    Ended(Scope, String),
}

impl Registration {
    fn task(&self) -> (&Scope, &str) {
        match self {
            Self::Started(scope, task_id) | Self::Finished(scope, task_id) | Self::Ended(scope, task_id) => {
                (scope, task_id)
            }
        }
    }
}

impl Coordinator {
    /// Starts this process's coordinator, with a registry of `capacity` registrations.
    pub(super) async fn start(store: &PostgresStore, lease: Duration, capacity: usize) -> Result<Self> {
        let (registry, registrations) = mpsc::channel(capacity.max(1));
        let inner = Arc::new(CoordinatorInner {
            store: store.clone(),
            bus: LocalBus::default(),
            local: LocalCancel::default(),
            instance: uuid::Uuid::now_v7().to_string(),
            lease,
            registry,
            overflowed: AtomicBool::new(false),
            listening: AtomicBool::new(true),
            commits: tokio::sync::watch::Sender::new(0),
            stop: CancellationToken::new(),
            work: Mutex::new(JoinSet::new()),
        });
        inner.renew_lease().await?;
        let mut listener = PgListener::connect_with(&store.pool).await.map_err(backend)?;
        listener.listen_all([&*store.events_channel, &*store.cancel_channel]).await.map_err(backend)?;
        {
            let mut work = inner.work.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            work.spawn(listen(Arc::downgrade(&inner), listener));
            work.spawn(hold_lease(Arc::downgrade(&inner)));
            work.spawn(register(Arc::downgrade(&inner), registrations));
        }
        Ok(Self { inner })
    }
}

impl Coordinator {
    /// What this instance counts in the tables the instances share.
    pub(super) fn shared(&self) -> super::shared::SharedTables {
        super::shared::SharedTables {
            store: self.inner.store.clone(),
            instance: self.inner.instance.clone(),
            commits: self.inner.commits.subscribe(),
        }
    }
}

impl CoordinatorInner {
    /// Hands a registration to the writer. The registry is bounded: when it is full (the
    /// database is slower than executions start and end), the registration is dropped. A start or
    /// finish dropped is made good by the writer, which rewrites this process's executions from
    /// the ones running here once it has caught up; an end dropped is not told to the other
    /// processes, whose readers then learn of it from the task's log (and a cancel waiting for it
    /// there waits out its grace period).
    fn queue(&self, registration: Registration) {
        if let Err(TrySendError::Full(registration)) = self.registry.try_send(registration)
            && !self.overflowed.swap(true, Ordering::Relaxed)
        {
            let (_, task_id) = registration.task();
            tracing::warn!(task_id, "the execution registry is full; it is rewritten once it catches up");
        }
    }

    /// Writes a run of registrations of one kind in one statement.
    async fn write(&self, run: &[Registration]) -> Result<(), sqlx::Error> {
        let tasks = run.iter().map(Registration::task);
        match run.first() {
            Some(Registration::Started(..)) => self.insert_executions(tasks).build().execute(&self.store.pool).await?,
            Some(Registration::Finished(..)) => {
                let mut sql = QueryBuilder::<Postgres>::new("DELETE FROM executions WHERE instance = ");
                sql.push_bind(&self.instance);
                sql.push(" AND (tenant, owner, task_id) IN ");
                sql.push_tuples(tasks, |mut row, (scope, task_id)| {
                    row.push_bind(&scope.tenant).push_bind(&scope.owner).push_bind(task_id);
                });
                sql.build().execute(&self.store.pool).await?
            }
            Some(Registration::Ended(..)) => {
                // Behind the notices of the executions' commits, in the store's one queue of
                // notices: another instance hears of an execution's last event before its end.
                for (scope, task_id) in tasks {
                    self.store.queue_notice(notice_payload(scope, task_id, 0)).await;
                }
                return Ok(());
            }
            None => return Ok(()),
        };
        Ok(())
    }

    /// Records that executions of `tasks` run here. A new task's execution starts before the task
    /// is committed, so the rows name tasks by id, whether or not they are stored yet.
    fn insert_executions<'a>(
        &'a self,
        tasks: impl Iterator<Item = (&'a Scope, &'a str)>,
    ) -> QueryBuilder<'a, Postgres> {
        let mut sql = QueryBuilder::<Postgres>::new("INSERT INTO executions (tenant, owner, task_id, instance) ");
        sql.push_values(tasks, |mut row, (scope, task_id)| {
            row.push_bind(&scope.tenant).push_bind(&scope.owner).push_bind(task_id).push_bind(&self.instance);
        });
        sql.push(" ON CONFLICT DO NOTHING");
        sql
    }

    /// Replaces this process's recorded executions with the ones running here now.
    async fn rewrite_executions(&self) -> Result<(), sqlx::Error> {
        let running = self.local.running();
        let mut tx = self.store.pool.begin().await?;
        sqlx::query("DELETE FROM executions WHERE instance = $1").bind(&self.instance).execute(&mut *tx).await?;
        for chunk in running.chunks(REGISTRATION_BATCH) {
            let tasks = chunk.iter().map(|(scope, task_id)| (scope, task_id.as_str()));
            self.insert_executions(tasks).build().execute(&mut *tx).await?;
        }
        tx.commit().await
    }

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
                    inner.commits.send_modify(|count| *count = count.wrapping_add(1));
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
                inner.listening.store(false, Ordering::Relaxed);
                drop(inner);
                let Some(again) = listen_again(&weak).await else { return };
                listener = again;
                let Some(inner) = weak.upgrade() else { return };
                inner.listening.store(true, Ordering::Relaxed);
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

/// Writes the registrations waiting, a batch at a time, then rewrites this process's executions
/// if registrations were dropped or failed meanwhile. A batch comes to at most two statements
/// whatever its size ([`net_registrations`]); the ends are told in order.
async fn register(inner: Weak<CoordinatorInner>, mut registrations: mpsc::Receiver<Registration>) {
    let mut batch = Vec::new();
    while registrations.recv_many(&mut batch, REGISTRATION_BATCH).await > 0 {
        let Some(inner) = inner.upgrade() else { return };
        let (started, finished) = net_registrations(&batch, |scope, task_id| inner.local.is_running(scope, task_id));
        let ended: Vec<Registration> =
            batch.iter().filter(|r| matches!(r, Registration::Ended(..))).map(Registration::clone).collect();
        for run in [started, finished, ended] {
            if let Err(error) = inner.write(&run).await {
                tracing::warn!(%error, executions = run.len(), "could not record where executions run");
                inner.overflowed.store(true, Ordering::Relaxed);
            }
        }
        batch.clear();
        if inner.overflowed.swap(false, Ordering::Relaxed)
            && let Err(error) = inner.rewrite_executions().await
        {
            tracing::warn!(%error, "could not rewrite where executions run; trying again later");
            inner.overflowed.store(true, Ordering::Relaxed);
        }
    }
}

/// What a batch of registrations leaves recorded, as the tasks to insert and those to delete:
/// each task a start or finish in the batch names is recorded if an execution of it runs here
/// now (`running`), and removed otherwise. Written in order, a send's start, finish and end were
/// three statements, and a registry a third as fast as the sends filled; netted, a batch is two
/// statements whatever its size. Asking what runs rather than which registration came last keeps
/// the table right when a start and a finish of one task race to the queue, and after a rewrite
/// that already saw registrations still waiting here: a start or finish after this batch is
/// queued for the next one.
fn net_registrations(
    batch: &[Registration],
    running: impl Fn(&Scope, &str) -> bool,
) -> (Vec<Registration>, Vec<Registration>) {
    let mut touched: std::collections::HashSet<(&Scope, &str)> = std::collections::HashSet::with_capacity(batch.len());
    let (mut started, mut finished) = (Vec::new(), Vec::new());
    for registration in batch {
        let (scope, task_id) = registration.task();
        if matches!(registration, Registration::Ended(..)) || !touched.insert((scope, task_id)) {
            continue;
        }
        if running(scope, task_id) {
            started.push(Registration::Started(scope.clone(), task_id.to_owned()));
        } else {
            finished.push(Registration::Finished(scope.clone(), task_id.to_owned()));
        }
    }
    (started, finished)
}

/// Most registrations written by one statement.
const REGISTRATION_BATCH: usize = 256;

impl EventBus for Coordinator {
    fn connected(&self) -> bool {
        self.inner.listening.load(Ordering::Relaxed)
    }

    fn publish(&self, scope: &Scope, task_id: &str, notice: Notice) {
        // Committed events were notified by their commit; the end of an execution is told by the
        // registry writer, after the execution's finish is recorded.
        if let Notice::Ended = notice {
            self.inner.queue(Registration::Ended(scope.clone(), task_id.to_owned()));
        }
        self.inner.bus.publish(scope, task_id, notice);
    }

    fn subscribe(&self, scope: &Scope, task_id: &str, buffer: usize) -> Subscription {
        self.inner.bus.subscribe(scope, task_id, buffer)
    }

    /// Readers here are told at once; other instances learn of the commit from its notification,
    /// sent by the commit itself. The feed is this instance's commits only: each instance
    /// delivers the webhooks of what it committed, and its followers are told to read the store
    /// when another instance is found gone.
    fn announce(&self, commit: Commit) {
        self.inner.bus.announce(commit);
    }

    fn feed(&self) -> CommitFeed {
        self.inner.bus.feed()
    }
}

#[async_trait]
impl CancelSignal for Coordinator {
    fn started(&self, scope: &Scope, task_id: &str) -> CancellationToken {
        // Running here before it is queued, so that a rewrite after an overflow includes it.
        let token = self.inner.local.started(scope, task_id);
        self.inner.queue(Registration::Started(scope.clone(), task_id.to_owned()));
        token
    }

    fn finished(&self, scope: &Scope, task_id: &str) {
        self.inner.local.finished(scope, task_id);
        if !self.inner.local.is_running(scope, task_id) {
            self.inner.queue(Registration::Finished(scope.clone(), task_id.to_owned()));
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
             WHERE i.expires_at > $1 AND e.tenant = $2 AND e.owner = $3 AND e.task_id = $4)",
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
            sqlx::query(
                "DELETE FROM executions e WHERE NOT EXISTS (SELECT 1 FROM instances i WHERE i.id = e.instance)",
            )
            .execute(pool)
            .await
            .map_err(backend)?;
            // A notice the instance had yet to send after a commit died with it, and the webhook
            // deliveries it owed, which this instance's followers of the feed take over.
            self.inner.bus.check_all();
            self.inner.bus.check_feed();
        }
        super::shared::forget_gone(pool).await.map_err(backend)?;
        // Running tasks that no live instance runs, and that nobody has touched for a lease: a
        // task just created may not be registered yet.
        let rows = sqlx::query(
            "SELECT tenant, owner, id FROM tasks t WHERE ended_at IS NULL AND state IN ($1, $2) AND changed_at < $3
             AND NOT EXISTS (SELECT 1 FROM executions e JOIN instances i ON i.id = e.instance
                             WHERE e.tenant = t.tenant AND e.owner = t.owner AND e.task_id = t.id
                             AND i.expires_at > $4)
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
        let orphans = rows.iter().map(|row| (Scope::new(row.get::<String, _>(0), row.get::<String, _>(1)), row.get(2)));
        // An execution running here is no orphan, whatever the registry says (its row may be
        // waiting to be written, or lost with a failed write).
        Ok(orphans.filter(|(scope, task_id): &(Scope, String)| !self.inner.local.is_running(scope, task_id)).collect())
    }

    fn orphan_check_interval(&self) -> Option<Duration> {
        Some(self.inner.lease / 4)
    }
}

#[cfg(test)]
mod tests {
    use super::{net_registrations, Registration};
    use crate::Scope;

    fn ids(registrations: &[Registration]) -> Vec<&str> {
        let mut ids: Vec<&str> = registrations.iter().map(|r| r.task().1).collect();
        ids.sort_unstable();
        ids
    }

    #[test]
    fn a_batch_records_the_tasks_running_here_and_removes_the_others() {
        let scope = Scope::new("", "alice");
        let started = |id: &str| Registration::Started(scope.clone(), id.to_owned());
        let finished = |id: &str| Registration::Finished(scope.clone(), id.to_owned());
        let ended = |id: &str| Registration::Ended(scope.clone(), id.to_owned());
        let batch = [
            // Started and finished within the batch, no longer running: removed.
            started("quick"),
            finished("quick"),
            ended("quick"),
            // Still running: recorded.
            started("slow"),
            // Finished, running no more: removed.
            finished("earlier"),
            // A finish queued after a start that raced it, the task still running: recorded.
            started("raced"),
            finished("raced"),
            // Only ended: an end changes no record.
            ended("told"),
        ];
        let running_here = ["slow", "raced"];
        let (to_record, to_remove) = net_registrations(&batch, |_, id| running_here.contains(&id));
        assert_eq!(ids(&to_record), ["raced", "slow"]);
        assert!(to_record.iter().all(|r| matches!(r, Registration::Started(..))));
        assert_eq!(ids(&to_remove), ["earlier", "quick"]);
        assert!(to_remove.iter().all(|r| matches!(r, Registration::Finished(..))));
    }
}
