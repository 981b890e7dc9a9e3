//! Webhook delivery: the follower of the feed of commits, and one bounded lane per (task, config)
//! that hands its notifications, in order, to the courier.
//!
//! The task's event log is the outbox. Each config stores how far its webhook has been served
//! (`delivered_through`), and a lane moves that cursor after each delivery, so the events still
//! due to a webhook are always the log's events past its cursor. Committed events reach the lanes
//! from the feed; whatever does not (a full lane, a feed that lagged, a restart) is read back from
//! the log.
//!
//! A webhook of an older generation receives the whole task. Its lane queues only which event it
//! is owed, and writes the body when the delivery starts, from the task as it is then: that one
//! body covers every event queued before it, and the lanes of a task's webhooks share it.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use agentwire_store::{
    Commit, CommitFeed, FeedNotice, PushConfigRecord, PushConfigStore, Scope, TaskStore, TraceContext,
};
use agentwire_types::dialect::{Encoded, PushPayload};
use agentwire_types::Dialect;
use agentwire_types::TaskState;
use bytes::Bytes;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::mpsc::{self, error::TrySendError};
use tokio_util::sync::{CancellationToken, DropGuard};
use tokio_util::task::TaskTracker;

use super::courier::{Courier, Delivery, DeliverySigner, Target};
use super::PushSettings;

/// What the dispatcher matches with a task's webhooks: a commit from the feed, or, with no
/// events, a task whose webhooks catch up with its log. It holds no task snapshot: most tasks
/// have no webhook, and copying the task for each commit would cost every request; a config that
/// wants the whole task reads it when the job is handled.
type Job = Arc<Commit>;

/// A job asking every webhook of a task to catch up with the task's log.
fn catch_up(scope: Scope, task_id: String) -> Job {
    Arc::new(Commit { scope, task_id, version: 0, state: TaskState::Unspecified, events: Vec::new(), trace: None })
}

/// Webhook delivery, following the bus's feed of commits.
pub(crate) struct PushDispatcher {
    tracker: TaskTracker,
    /// Tells the dispatcher to take no more commits, so that shutdown does not wait on an idle
    /// feed.
    closing: CancellationToken,
}

impl PushDispatcher {
    /// Starts delivery: first what the store holds due (left by an earlier process), then every
    /// commit `feed` brings.
    pub(crate) fn start(
        settings: PushSettings,
        feed: CommitFeed,
        configs: Arc<dyn PushConfigStore>,
        tasks: Arc<dyn TaskStore>,
        metrics: Option<Arc<crate::metrics::Instruments>>,
        signer: Option<DeliverySigner>,
    ) -> Self {
        let tracker = TaskTracker::new();
        let worker = Dispatcher {
            context: Arc::new(LaneContext {
                courier: Courier::new(settings.clone(), metrics, signer),
                configs,
                tasks,
                task_bodies: Mutex::default(),
            }),
            lane_capacity: settings.lane_capacity.max(1),
            lanes: HashMap::new(),
            tracker: tracker.clone(),
            missed: false,
            deliver: settings.deliver,
        };
        let closing = CancellationToken::new();
        tracker.spawn(worker.run(feed, closing.clone()));
        Self { tracker, closing }
    }

    /// Waits (at most a few seconds) for the deliveries under way.
    pub(crate) async fn shutdown(&self) {
        self.closing.cancel();
        self.tracker.close();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.tracker.wait()).await;
    }
}

/// What every lane uses: the courier, and the store to read the log from and to keep cursors in.
struct LaneContext {
    courier: Courier,
    configs: Arc<dyn PushConfigStore>,
    tasks: Arc<dyn TaskStore>,
    /// The whole-task bodies being delivered, by task and generation, with the task's version:
    /// held by the deliveries only, so a body is gone once its last delivery is.
    task_bodies: Mutex<HashMap<(Scope, String, Dialect), TaskBody>>,
}

/// A task's body in one generation's shape, and the task's version it was written from.
type TaskBody = (u64, Weak<Vec<u8>>);

/// A body several deliveries share, which the cache in [`LaneContext`] sees without keeping.
struct SharedBody(Arc<Vec<u8>>);

impl AsRef<[u8]> for SharedBody {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl LaneContext {
    /// The body of `task` (at `version`) in `dialect`'s shape: the one another lane is delivering,
    /// or a new one.
    fn task_body(&self, scope: &Scope, dialect: Dialect, task: &agentwire_types::Task, version: u64) -> Option<Bytes> {
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

struct Dispatcher {
    context: Arc<LaneContext>,
    lane_capacity: usize,
    /// By (scope, task id, config id).
    lanes: HashMap<(Scope, String, String), Lane>,
    tracker: TaskTracker,
    /// Set when commits may have been missed (the feed lagged, the store failed): the dispatcher
    /// then looks in the store for what is due.
    missed: bool,
    /// Off, the cursors are moved past each job's events instead: nothing is delivered, and
    /// nothing is owed to a later run that delivers.
    deliver: bool,
}

/// How many tasks with deliveries due one look at the store picks up.
const DUE_BATCH: usize = 10_000;

/// How often the dispatcher checks whether a job was missed.
const MISSED_CHECK: Duration = Duration::from_secs(2);

/// Most jobs handled together: their tasks' configs are read at once.
const JOB_BATCH: usize = 256;

impl Dispatcher {
    /// Delivers what an earlier process left due, then the commits of the feed until `closing`
    /// fires and the commits already in the feed are handled.
    async fn run(mut self, mut feed: CommitFeed, closing: CancellationToken) {
        self.catch_up_with_store().await;
        let mut check = tokio::time::interval(MISSED_CHECK);
        loop {
            let received = tokio::select! {
                received = feed.recv() => received,
                _ = check.tick() => {
                    if std::mem::take(&mut self.missed) {
                        self.catch_up_with_store().await;
                    }
                    continue;
                }
                () = closing.cancelled() => {
                    let batch = self.take_ready(&mut feed, Vec::new(), usize::MAX);
                    self.handle(batch).await;
                    return;
                }
            };
            match received {
                Ok(FeedNotice::Commit(commit)) => {
                    let batch = self.take_ready(&mut feed, vec![commit], JOB_BATCH);
                    self.handle(batch).await;
                }
                Ok(FeedNotice::Check) => self.catch_up_with_store().await,
                Err(RecvError::Lagged(missed)) => {
                    tracing::warn!(
                        missed,
                        "webhook delivery fell behind the commits; reading what is due from the store"
                    );
                    self.catch_up_with_store().await;
                }
                Err(RecvError::Closed) => return,
            }
        }
    }

    /// `batch` with the commits the feed already holds, up to `limit` in all.
    fn take_ready(&mut self, feed: &mut CommitFeed, mut batch: Vec<Job>, limit: usize) -> Vec<Job> {
        while batch.len() < limit {
            match feed.try_recv() {
                Ok(FeedNotice::Commit(commit)) => batch.push(commit),
                Ok(FeedNotice::Check) | Err(TryRecvError::Lagged(_)) => self.missed = true,
                Err(TryRecvError::Empty | TryRecvError::Closed) => break,
            }
        }
        batch
    }

    /// Asks the webhooks of every task with deliveries due to catch up with the log.
    async fn catch_up_with_store(&mut self) {
        let due = match self.context.configs.undelivered(DUE_BATCH).await {
            Ok(due) => due,
            Err(error) => {
                tracing::error!(%error, "cannot look for push notifications due; they wait for the next look");
                self.missed = true;
                return;
            }
        };
        if !due.is_empty() {
            tracing::info!(tasks = due.len(), "resuming the push notifications due");
        }
        self.handle(due.into_iter().map(|(scope, task_id)| catch_up(scope, task_id)).collect()).await;
    }

    /// Matches jobs with their tasks' configs, read at once, and queues their deliveries.
    async fn handle(&mut self, jobs: Vec<Job>) {
        // Before the configs are read: a lane that ended has stored its cursor, so the one that
        // replaces it starts from there.
        self.lanes.retain(|_, lane| !lane.finished.is_cancelled());
        // Each task once, copied only once seen: a batch holds several commits of most tasks.
        let mut seen = HashSet::with_hasher(foldhash::fast::RandomState::default());
        let tasks: Vec<(Scope, String)> = jobs
            .iter()
            .filter(|job| seen.insert((&job.scope, job.task_id.as_str())))
            .map(|job| (job.scope.clone(), job.task_id.clone()))
            .collect();
        drop(seen);
        let found = match self.context.configs.configs_of(&tasks).await {
            Ok(found) => found,
            Err(error) => {
                tracing::error!(%error, "cannot read push configs; their events wait for the next look");
                self.missed = true;
                return;
            }
        };
        // Most tasks have no webhook: then no job has anything to deliver.
        if found.is_empty() {
            return;
        }
        let mut configs: HashMap<(Scope, String), Vec<PushConfigRecord>> = HashMap::new();
        for (scope, record) in found {
            configs.entry((scope, record.config.task_id.clone())).or_default().push(record);
        }
        for job in jobs {
            let Some(records) = configs.get(&(job.scope.clone(), job.task_id.clone())) else { continue };
            if !self.deliver {
                tracing::info!(task_id = %job.task_id, events = job.events.len(), "webhook delivery is off; these events are not delivered");
                self.pass_over(&job, records).await;
                continue;
            }
            for (record, target, dues) in fan_out(records.clone(), &job) {
                self.send(&job.scope, &record, target, dues);
            }
        }
    }

    /// Moves the cursors of `records` past the job's events (past the task's whole log for a job
    /// without events), delivering nothing.
    async fn pass_over(&self, job: &Job, records: &[PushConfigRecord]) {
        let through = match job.events.len() as u64 {
            0 => match self.context.tasks.get(&job.scope, &job.task_id).await {
                Ok(Some(record)) => record.version,
                Ok(None) => return,
                Err(error) => {
                    tracing::error!(%error, task_id = %job.task_id, "cannot read a task whose webhooks are passed over");
                    return;
                }
            },
            _ => job.version,
        };
        for record in records.iter().filter(|r| r.delivered_through < through) {
            let config = &record.config;
            let marked = self.context.configs.mark_delivered(&job.scope, &config.task_id, &config.id, through).await;
            if let Err(error) = marked {
                tracing::error!(%error, task_id = %config.task_id, config_id = %config.id, "cannot record a push notification passed over");
            }
        }
    }

    /// Queues `dues` on the config's lane, started on first use.
    fn send(&mut self, scope: &Scope, record: &PushConfigRecord, target: Arc<Target>, dues: Vec<Due>) {
        let config = &record.config;
        let key = (scope.clone(), config.task_id.clone(), config.id.clone());
        let (context, tracker, capacity) = (&self.context, &self.tracker, self.lane_capacity);
        let lane = self.lanes.entry(key).or_insert_with(|| {
            let progress = Arc::new(Progress::from(record.delivered_through));
            Lane::start(context, tracker, capacity, scope, &target, progress, None)
        });
        for due in dues {
            let refused = match lane.queue.try_send(due) {
                Ok(()) => continue,
                Err(TrySendError::Full(due)) => {
                    // The lane reads it back from the log once it has worked through its queue.
                    lane.progress.behind.fetch_max(due.seq(), Ordering::Relaxed);
                    continue;
                }
                Err(TrySendError::Closed(refused)) => refused,
            };
            // The lane went idle and delivers what it had; its successor waits for it and goes
            // on from its cursor, so the webhook still gets events in order.
            let progress = Arc::clone(&lane.progress);
            *lane = Lane::start(context, tracker, capacity, scope, &target, progress, Some(lane.finished.clone()));
            if let Err(e) = lane.queue.try_send(refused) {
                lane.progress.behind.fetch_max(e.into_inner().seq(), Ordering::Relaxed);
            }
        }
    }
}

/// Something a lane owes its webhook. A commit's trace context goes with what it owes.
enum Due {
    /// A v1.0 config's event: one `StreamResponse`.
    Event { target: Arc<Target>, seq: u64, body: Bytes, trace: Trace },
    /// An older generation's config: the whole task, as it is when the delivery starts, which
    /// covers event `seq`.
    Task { target: Arc<Target>, seq: u64, trace: Trace },
    /// Whatever the log holds past the cursor.
    CatchUp { target: Arc<Target> },
}

impl Due {
    /// The last event it covers (a catch-up covers the whole log).
    fn seq(&self) -> u64 {
        match self {
            Self::Event { seq, .. } | Self::Task { seq, .. } => *seq,
            Self::CatchUp { .. } => u64::MAX,
        }
    }
}

/// The trace context of the commit a delivery is owed for, if it was traced.
type Trace = Option<Arc<TraceContext>>;

/// Pairs each config with what it is due. Each event is serialized once, whatever the number of
/// configs, and every lane shares those bytes; a config that receives the task is owed the
/// job's last event, and its body is written when the delivery starts.
fn fan_out(records: Vec<PushConfigRecord>, job: &Job) -> Vec<(PushConfigRecord, Arc<Target>, Vec<Due>)> {
    let task_id = job.task_id.as_str();
    let mut event_bodies: Option<Vec<(u64, Bytes)>> = None;
    let mut deliveries = Vec::with_capacity(records.len());
    for record in records {
        let config = &record.config;
        let url = match reqwest::Url::parse(&config.url) {
            Ok(url) => url,
            Err(error) => {
                tracing::warn!(task_id, config_id = %config.id, %error, "push config has an invalid url; skipped");
                continue;
            }
        };
        let target = Arc::new(Target { url, config: config.clone(), dialect: record.dialect });
        let dues = match record.dialect.profile().push_payload() {
            _ if job.events.is_empty() => vec![Due::CatchUp { target: Arc::clone(&target) }],
            PushPayload::Event => event_bodies
                .get_or_insert_with(|| {
                    let numbered = job.events.iter().zip(job.first_seq()..);
                    numbered.filter_map(|(event, seq)| Some((seq, to_body(&**event, task_id)?))).collect()
                })
                .iter()
                .map(|(seq, body)| Due::Event {
                    target: Arc::clone(&target),
                    seq: *seq,
                    body: body.clone(),
                    trace: job.trace.clone(),
                })
                .collect(),
            PushPayload::Task => {
                vec![Due::Task { target: Arc::clone(&target), seq: job.version, trace: job.trace.clone() }]
            }
        };
        deliveries.push((record, target, dues));
    }
    deliveries
}

fn to_body<T: serde::Serialize>(value: &T, task_id: &str) -> Option<Bytes> {
    match serde_json::to_vec(value) {
        Ok(body) => Some(Bytes::from(body)),
        Err(error) => {
            tracing::error!(task_id, %error, "cannot serialize a push notification; it is dropped");
            None
        }
    }
}

/// How far a config's webhook has been served, shared by a lane and the one that replaces it.
struct Progress {
    /// The last event handed to the webhook (as stored in the config's cursor).
    delivered: AtomicU64,
    /// The last event that did not fit in the lane's queue; 0 when none was left out.
    behind: AtomicU64,
}

impl From<u64> for Progress {
    fn from(delivered: u64) -> Self {
        Self { delivered: AtomicU64::new(delivered), behind: AtomicU64::new(0) }
    }
}

/// The ordered queue of one webhook config, and the task that delivers it.
struct Lane {
    queue: mpsc::Sender<Due>,
    progress: Arc<Progress>,
    /// Cancelled once the lane's task has ended, so a successor can wait for it.
    finished: CancellationToken,
}

/// How long an idle lane waits for more deliveries before it ends.
const LANE_IDLE: Duration = Duration::from_secs(30);

/// How many events a catch-up reads from the log at a time.
const LOG_PAGE: usize = 64;

impl Lane {
    /// Starts a lane, which delivers nothing before `after` (the lane it replaces) has ended.
    fn start(
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

struct LaneWorker {
    context: Arc<LaneContext>,
    scope: Scope,
    /// The config as last seen: a catch-up delivers to it.
    target: Arc<Target>,
    progress: Arc<Progress>,
}

impl LaneWorker {
    async fn run(mut self, mut queue: mpsc::Receiver<Due>, after: Option<CancellationToken>, _finished: DropGuard) {
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

    fn delivered(&self) -> u64 {
        self.progress.delivered.load(Ordering::Relaxed)
    }

    async fn handle(&mut self, due: Due) {
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
    async fn catch_up(&self, through: u64, trace: Trace) {
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
    async fn deliver(&self, seq: u64, body: Bytes, trace: Trace) {
        let delivery = Delivery { target: Arc::clone(&self.target), body, trace };
        let _ = self.context.courier.deliver(&delivery).await;
        self.passed(seq).await;
    }

    /// Moves the cursor past event `seq`, here and in the store.
    async fn passed(&self, seq: u64) {
        self.progress.delivered.fetch_max(seq, Ordering::Relaxed);
        let config = &self.target.config;
        if let Err(error) = self.context.configs.mark_delivered(&self.scope, &config.task_id, &config.id, seq).await {
            tracing::error!(%error, task_id = %config.task_id, config_id = %config.id, seq, "cannot record a push delivery; it may be made again");
        }
    }
}

#[cfg(test)]
mod tests;
