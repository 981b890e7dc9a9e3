//! The lanes: one per webhook, delivering its events in order, catching up from the log, and
//! keeping its cursor; and the task bodies the lanes of one task share.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use agentwire_store::{PushConfigStore, Scope, TaskStore};
use agentwire_types::dialect::{Encoded, PushPayload};
use agentwire_types::Dialect;
use bytes::Bytes;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};
use tokio_util::task::TaskTracker;

use crate::push::courier::{Courier, Delivery, Target};

use super::{to_body, Due, Trace};

/// What every lane uses: the courier, and the store to read the log from and to keep cursors in.
pub(super) struct LaneContext {
    pub(super) courier: Courier,
    pub(super) configs: Arc<dyn PushConfigStore>,
    pub(super) tasks: Arc<dyn TaskStore>,
    /// The whole-task bodies being delivered, by task and generation, with the task's version:
    /// held by the deliveries only, so a body is gone once its last delivery is.
    pub(super) task_bodies: Mutex<HashMap<(Scope, String, Dialect), TaskBody>>,
}

/// A task's body in one generation's shape, and the task's version it was written from.
pub(super) type TaskBody = (u64, Weak<Vec<u8>>);

/// A body several deliveries share, which the cache in [`LaneContext`] sees without keeping.
pub(super) struct SharedBody(Arc<Vec<u8>>);

impl AsRef<[u8]> for SharedBody {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl LaneContext {
    /// The body of `task` (at `version`) in `dialect`'s shape: the one another lane is delivering,
    /// or a new one.
    pub(super) fn task_body(
        &self,
        scope: &Scope,
        dialect: Dialect,
        task: &agentwire_types::Task,
        version: u64,
    ) -> Option<Bytes> {
        let key = (scope.clone(), task.id.clone(), dialect);
        // Short sections, no await: the map is only looked at and updated.
        let cached = self.task_bodies.lock().unwrap_or_else(|e| e.into_inner()).get(&key).and_then(|(at, body)| {
            let body = body.upgrade()?;
            (*at == version).then_some(body)
        });
        if let Some(body) = cached {
            return Some(Bytes::from_owner(SharedBody(body)));
        }
        let body = Arc::new(
            serde_json::to_vec(&Encoded(dialect, task))
                .map_err(|error| {
                    tracing::error!(task_id = %task.id, %error, "cannot serialize a push notification; it is dropped");
                })
                .ok()?,
        );
        let mut bodies = self.task_bodies.lock().unwrap_or_else(|e| e.into_inner());
        bodies.retain(|_, (_, body)| body.strong_count() > 0);
        bodies.insert(key, (version, Arc::downgrade(&body)));
        drop(bodies);
        Some(Bytes::from_owner(SharedBody(body)))
    }
}

/// How far a config's webhook has been served, shared by a lane and the one that replaces it.
pub(super) struct Progress {
    /// The last event handed to the webhook (as stored in the config's cursor).
    pub(super) delivered: AtomicU64,
    /// The last event that did not fit in the lane's queue; 0 when none was left out.
    pub(super) behind: AtomicU64,
}

impl From<u64> for Progress {
    fn from(delivered: u64) -> Self {
        Self { delivered: AtomicU64::new(delivered), behind: AtomicU64::new(0) }
    }
}

/// The ordered queue of one webhook config, and the task that delivers it.
pub(super) struct Lane {
    pub(super) queue: mpsc::Sender<Due>,
    pub(super) progress: Arc<Progress>,
    /// Cancelled once the lane's task has ended, so a successor can wait for it.
    pub(super) finished: CancellationToken,
}

/// How long an idle lane waits for more deliveries before it ends.
pub(super) const LANE_IDLE: Duration = Duration::from_secs(30);

/// How many events a catch-up reads from the log at a time.
pub(super) const LOG_PAGE: usize = 64;

impl Lane {
    /// Starts a lane, which delivers nothing before `after` (the lane it replaces) has ended.
    pub(super) fn start(
        context: &Arc<LaneContext>,
        tracker: &TaskTracker,
        capacity: usize,
        scope: &Scope,
        target: &Arc<Target>,
        progress: Arc<Progress>,
        after: Option<CancellationToken>,
    ) -> Self {
        let (queue, rx) = mpsc::channel(capacity);
        let finished = CancellationToken::new();
        let worker = LaneWorker {
            context: Arc::clone(context),
            scope: scope.clone(),
            target: Arc::clone(target),
            progress: Arc::clone(&progress),
        };
        tracker.spawn(worker.run(rx, after, finished.clone().drop_guard()));
        Self { queue, progress, finished }
    }
}

pub(super) struct LaneWorker {
    pub(super) context: Arc<LaneContext>,
    pub(super) scope: Scope,
    /// The config as last seen: a catch-up delivers to it.
    pub(super) target: Arc<Target>,
    pub(super) progress: Arc<Progress>,
}

impl LaneWorker {
    pub(super) async fn run(
        mut self,
        mut queue: mpsc::Receiver<Due>,
        after: Option<CancellationToken>,
        _finished: DropGuard,
    ) {
        if let Some(previous) = after {
            previous.cancelled().await;
        }
        loop {
            let behind = self.progress.behind.swap(0, Ordering::Relaxed);
            if behind > self.delivered() {
                self.catch_up(behind, None).await;
            }
            let next = match tokio::time::timeout(LANE_IDLE, queue.recv()).await {
                Ok(next) => next,
                // Idle: take nothing more, but deliver what was queued before the lane closed.
                Err(_) => {
                    queue.close();
                    queue.recv().await
                }
            };
            let Some(due) = next else { break };
            self.handle(due).await;
        }
        let behind = self.progress.behind.swap(0, Ordering::Relaxed);
        if behind > self.delivered() {
            self.catch_up(behind, None).await;
        }
    }

    pub(super) fn delivered(&self) -> u64 {
        self.progress.delivered.load(Ordering::Relaxed)
    }

    pub(super) async fn handle(&mut self, due: Due) {
        match due {
            Due::Event { target, seq, body, trace } => {
                self.target = target;
                if seq <= self.delivered() {
                    return;
                }
                if seq > self.delivered() + 1 {
                    // Events in between never reached the lane: the log has them.
                    self.catch_up(seq - 1, None).await;
                }
                self.deliver(seq, body, trace).await;
            }
            Due::Task { target, seq, trace } => {
                self.target = target;
                if seq > self.delivered() {
                    self.catch_up(seq, trace).await;
                }
            }
            Due::CatchUp { target } => {
                self.target = target;
                self.catch_up(u64::MAX, None).await;
            }
        }
    }

    /// Delivers what the log holds past the cursor, up to event `through`; a whole-task body
    /// continues `trace`, the trace of the commit it was owed for.
    pub(super) async fn catch_up(&self, through: u64, trace: Trace) {
        let (scope, task_id) = (&self.scope, &self.target.config.task_id);
        if self.target.dialect.profile().push_payload() == PushPayload::Task {
            // The task as it is now covers every event so far.
            match self.context.tasks.get(scope, task_id).await {
                Ok(Some(record)) if record.version > self.delivered() => {
                    let body = self.context.task_body(scope, self.target.dialect, &record.task, record.version);
                    drop(record.task);
                    if let Some(body) = body {
                        self.deliver(record.version, body, trace).await;
                    }
                }
                Ok(_) => {}
                Err(error) => tracing::error!(%error, task_id, "cannot read the task for a push notification"),
            }
            return;
        }
        while self.delivered() < through {
            let events = match self.context.tasks.events_after(scope, task_id, self.delivered(), LOG_PAGE).await {
                Ok(events) => events,
                Err(error) => {
                    tracing::error!(%error, task_id, "cannot read the events due to a webhook");
                    return;
                }
            };
            if events.is_empty() {
                return;
            }
            for stored in events.into_iter().take_while(|e| e.seq <= through) {
                match to_body(&*stored.event, task_id) {
                    Some(body) => self.deliver(stored.seq, body, None).await,
                    None => self.passed(stored.seq).await,
                }
            }
        }
    }

    /// Hands one notification to the courier, then moves the cursor past it, whatever the
    /// outcome: a delivery the courier gave up on is not due any more.
    pub(super) async fn deliver(&self, seq: u64, body: Bytes, trace: Trace) {
        let delivery = Delivery { target: Arc::clone(&self.target), body, trace };
        let _ = self.context.courier.deliver(&delivery).await;
        self.passed(seq).await;
    }

    /// Moves the cursor past event `seq`, here and in the store.
    pub(super) async fn passed(&self, seq: u64) {
        self.progress.delivered.fetch_max(seq, Ordering::Relaxed);
        let config = &self.target.config;
        if let Err(error) = self.context.configs.mark_delivered(&self.scope, &config.task_id, &config.id, seq).await {
            tracing::error!(%error, task_id = %config.task_id, config_id = %config.id, seq, "cannot record a push delivery; it may be made again");
        }
    }
}
