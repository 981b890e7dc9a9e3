//! Webhook delivery: the queue of committed events, and one bounded lane per (task, config) that
//! hands its notifications, in order, to the courier.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use agentwire_store::{PushConfigRecord, PushConfigStore, Scope, TaskStore};
use agentwire_types::dialect::Encoded;
use agentwire_types::StreamResponse;
use agentwire_types::{Dialect, Task};
use bytes::Bytes;
use tokio::sync::mpsc::{self, error::TrySendError};
use tokio_util::sync::{CancellationToken, DropGuard};
use tokio_util::task::TaskTracker;

use super::courier::{Courier, Delivery, Target};
use super::PushSettings;

/// Committed events of one task, waiting to be matched with its webhooks. It holds no task
/// snapshot: most tasks have no webhook, and copying the task for each commit would cost every
/// request; a config that wants the whole task reads it when the job is handled.
struct Job {
    scope: Scope,
    task_id: String,
    events: Vec<Arc<StreamResponse>>,
}

pub(crate) struct PushDispatcher {
    jobs: mpsc::Sender<Job>,
    pub(crate) settings: PushSettings,
    tracker: TaskTracker,
    /// Tells the dispatcher to take no more jobs, so that shutdown does not wait on an idle queue.
    closing: CancellationToken,
}

impl PushDispatcher {
    pub(crate) fn start(settings: PushSettings, configs: Arc<dyn PushConfigStore>, tasks: Arc<dyn TaskStore>) -> Self {
        let (jobs, rx) = mpsc::channel(settings.queue_capacity.max(1));
        let tracker = TaskTracker::new();
        let worker = Dispatcher {
            courier: Arc::new(Courier::new(settings.clone())),
            lane_capacity: settings.lane_capacity.max(1),
            lanes: HashMap::new(),
            tracker: tracker.clone(),
            configs,
            tasks,
        };
        let closing = CancellationToken::new();
        tracker.spawn(worker.run(rx, closing.clone()));
        Self { jobs, settings, tracker, closing }
    }

    pub(crate) fn enqueue(&self, scope: Scope, task_id: &str, events: Vec<Arc<StreamResponse>>) {
        if !self.settings.deliver {
            tracing::info!(task_id, events = events.len(), "webhook delivery is off; these events are not delivered");
            return;
        }
        let job = Job { scope, task_id: task_id.to_owned(), events };
        if let Err(e) = self.jobs.try_send(job) {
            tracing::warn!(task_id, error = %e, "push queue full; no webhook of the task is told of these events");
        }
    }

    /// Waits (at most a few seconds) for queued deliveries.
    pub(crate) async fn shutdown(&self) {
        self.closing.cancel();
        self.tracker.close();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.tracker.wait()).await;
    }
}

struct Dispatcher {
    courier: Arc<Courier>,
    lane_capacity: usize,
    /// By (task id, config id).
    lanes: HashMap<(String, String), Lane>,
    tracker: TaskTracker,
    configs: Arc<dyn PushConfigStore>,
    tasks: Arc<dyn TaskStore>,
}

impl Dispatcher {
    /// Handles jobs until `closing` fires and the jobs already queued are handled.
    async fn run(mut self, mut jobs: mpsc::Receiver<Job>, closing: CancellationToken) {
        loop {
            let job = tokio::select! {
                job = jobs.recv() => job,
                () = closing.cancelled(), if !jobs.is_closed() => {
                    jobs.close();
                    continue;
                }
            };
            let Some(job) = job else { break };
            self.handle(job).await;
        }
    }

    async fn handle(&mut self, job: Job) {
        let records = match self.configs.list_configs(&job.scope, &job.task_id).await {
            Ok(records) => records,
            Err(error) => {
                tracing::error!(%error, task_id = %job.task_id, "cannot read push configs; these events are not pushed");
                return;
            }
        };
        let wants_task = records.iter().any(|r| r.dialect != Dialect::V1);
        let task = if wants_task { self.task(&job).await } else { None };
        self.lanes.retain(|_, lane| !lane.finished.is_cancelled());
        for (target, bodies) in fan_out(records, &job.task_id, &job.events, task) {
            self.send(&target, bodies);
        }
    }

    /// The task as it is now, for configs that receive the whole task (v0.3 and legacy).
    async fn task(&self, job: &Job) -> Option<Arc<Task>> {
        match self.tasks.get(&job.scope, &job.task_id).await {
            Ok(Some(record)) => Some(record.task),
            Ok(None) => None,
            Err(error) => {
                tracing::error!(%error, task_id = %job.task_id, "cannot read the task for a push notification");
                None
            }
        }
    }

    /// Queues `bodies` on the target's lane, started on first use.
    fn send(&mut self, target: &Arc<Target>, bodies: Vec<Bytes>) {
        let config = &target.config;
        let (courier, tracker, capacity) = (&self.courier, &self.tracker, self.lane_capacity);
        let key = (config.task_id.clone(), config.id.clone());
        let lane = self.lanes.entry(key).or_insert_with(|| Lane::start(courier, tracker, capacity, None));
        for body in bodies {
            let delivery = Delivery { target: Arc::clone(target), body };
            let refused = match lane.queue.try_send(delivery) {
                Ok(()) => continue,
                Err(TrySendError::Full(_)) => {
                    tracing::warn!(
                        task_id = %config.task_id,
                        config_id = %config.id,
                        "webhook lane full; the newest notification is dropped"
                    );
                    continue;
                }
                Err(TrySendError::Closed(refused)) => refused,
            };
            // The lane went idle and delivers what it had; its successor waits for it, so the
            // webhook still gets events in order.
            *lane = Lane::start(courier, tracker, capacity, Some(lane.finished.clone()));
            if lane.queue.try_send(refused).is_err() {
                tracing::warn!(task_id = %config.task_id, config_id = %config.id, "webhook lane closed; a notification is dropped");
            }
        }
    }
}

/// Pairs each config with the bodies it receives. Each event is serialized once, whatever the
/// number of configs, and every lane shares those bytes.
fn fan_out(
    records: Vec<PushConfigRecord>,
    task_id: &str,
    events: &[Arc<StreamResponse>],
    task: Option<Arc<Task>>,
) -> Vec<(Arc<Target>, Vec<Bytes>)> {
    let mut event_bodies: Option<Vec<Bytes>> = None;
    let mut task_bodies: [Option<Option<Bytes>>; 2] = [None, None];
    let mut deliveries = Vec::with_capacity(records.len());
    for PushConfigRecord { config, dialect } in records {
        let url = match reqwest::Url::parse(&config.url) {
            Ok(url) => url,
            Err(error) => {
                tracing::warn!(task_id, config_id = %config.id, %error, "push config has an invalid url; skipped");
                continue;
            }
        };
        let bodies = match dialect {
            Dialect::V1 => event_bodies
                .get_or_insert_with(|| events.iter().filter_map(|event| to_body(&**event, task_id)).collect())
                .clone(),
            Dialect::V03 | Dialect::Legacy => {
                let slot = &mut task_bodies[usize::from(dialect == Dialect::Legacy)];
                let body = slot
                    .get_or_insert_with(|| task.as_deref().and_then(|task| to_body(&Encoded(dialect, task), task_id)));
                body.iter().cloned().collect()
            }
        };
        deliveries.push((Arc::new(Target { url, config }), bodies));
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

/// The ordered queue of one webhook config, and the task that delivers it.
struct Lane {
    queue: mpsc::Sender<Delivery>,
    /// Cancelled once the lane's task has ended, so a successor can wait for it.
    finished: CancellationToken,
}

/// How long an idle lane waits for more deliveries before it ends.
const LANE_IDLE: Duration = Duration::from_secs(30);

impl Lane {
    /// Starts a lane, which delivers nothing before `after` (the lane it replaces) has ended.
    fn start(courier: &Arc<Courier>, tracker: &TaskTracker, capacity: usize, after: Option<CancellationToken>) -> Self {
        let (queue, rx) = mpsc::channel(capacity);
        let finished = CancellationToken::new();
        tracker.spawn(deliver_in_order(Arc::clone(courier), rx, after, finished.clone().drop_guard()));
        Self { queue, finished }
    }
}

async fn deliver_in_order(
    courier: Arc<Courier>,
    mut queue: mpsc::Receiver<Delivery>,
    after: Option<CancellationToken>,
    _finished: DropGuard,
) {
    if let Some(previous) = after {
        previous.cancelled().await;
    }
    loop {
        let next = match tokio::time::timeout(LANE_IDLE, queue.recv()).await {
            Ok(next) => next,
            // Idle: take nothing more, but deliver what was queued before the lane closed.
            Err(_) => {
                queue.close();
                queue.recv().await
            }
        };
        let Some(delivery) = next else { break };
        let _ = courier.deliver(&delivery).await;
    }
}

#[cfg(test)]
mod tests;
