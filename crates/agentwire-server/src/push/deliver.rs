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
//!
//! The dispatcher is in `dispatch.rs`, the lanes in `lane.rs`; this module starts and stops
//! them, and holds what both use.

mod dispatch;
mod lane;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentwire_store::{Commit, CommitFeed, PushConfigStore, Scope, TaskStore, TraceContext};
use agentwire_types::TaskState;
use bytes::Bytes;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::courier::{Courier, DeliverySigner, Target};
use super::PushSettings;
use dispatch::Dispatcher;
use lane::LaneContext;

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

fn to_body<T: serde::Serialize>(value: &T, task_id: &str) -> Option<Bytes> {
    match serde_json::to_vec(value) {
        Ok(body) => Some(Bytes::from(body)),
        Err(error) => {
            tracing::error!(task_id, %error, "cannot serialize a push notification; it is dropped");
            None
        }
    }
}

#[cfg(test)]
mod tests;
