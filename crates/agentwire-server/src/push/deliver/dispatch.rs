//! The dispatcher: follows the feed of commits, batches them, finds the configs they are due
//! to, and hands each lane its deliveries in order (`fan_out` serializes each event once).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use agentwire_store::{CommitFeed, FeedNotice, PushConfigRecord, Scope};
use agentwire_types::dialect::PushPayload;
use bytes::Bytes;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::mpsc::error::TrySendError;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::push::courier::Target;

use super::lane::{Lane, LaneContext, Progress};
use super::{catch_up, to_body, Due, Job};

pub(super) struct Dispatcher {
    pub(super) context: Arc<LaneContext>,
    pub(super) lane_capacity: usize,
    /// By (scope, task id, config id).
    pub(super) lanes: HashMap<(Scope, String, String), Lane>,
    pub(super) tracker: TaskTracker,
    /// Set when commits may have been missed (the feed lagged, the store failed): the dispatcher
    /// then looks in the store for what is due.
    pub(super) missed: bool,
    /// Off, the cursors are moved past each job's events instead: nothing is delivered, and
    /// nothing is owed to a later run that delivers.
    pub(super) deliver: bool,
}

/// How many tasks with deliveries due one look at the store picks up.
pub(super) const DUE_BATCH: usize = 10_000;

/// How often the dispatcher checks whether a job was missed.
pub(super) const MISSED_CHECK: Duration = Duration::from_secs(2);

/// Most jobs handled together: their tasks' configs are read at once.
pub(super) const JOB_BATCH: usize = 256;

impl Dispatcher {
    /// Delivers what an earlier process left due, then the commits of the feed until `closing`
    /// fires and the commits already in the feed are handled.
    pub(super) async fn run(mut self, mut feed: CommitFeed, closing: CancellationToken) {
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
    pub(super) fn take_ready(&mut self, feed: &mut CommitFeed, mut batch: Vec<Job>, limit: usize) -> Vec<Job> {
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
    pub(super) async fn catch_up_with_store(&mut self) {
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
    pub(super) async fn handle(&mut self, jobs: Vec<Job>) {
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
    pub(super) async fn pass_over(&self, job: &Job, records: &[PushConfigRecord]) {
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
    pub(super) fn send(&mut self, scope: &Scope, record: &PushConfigRecord, target: Arc<Target>, dues: Vec<Due>) {
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

/// Pairs each config with what it is due. Each event is serialized once, whatever the number of
/// configs, and every lane shares those bytes; a config that receives the task is owed the
/// job's last event, and its body is written when the delivery starts.
pub(super) fn fan_out(records: Vec<PushConfigRecord>, job: &Job) -> Vec<(PushConfigRecord, Arc<Target>, Vec<Due>)> {
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
