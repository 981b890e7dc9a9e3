//! Tasks that last too long: those left waiting for input or authorization past
//! [`Limits::expire_waiting`](super::Limits::expire_waiting) are canceled here; executions past
//! [`Limits::max_execution`](super::Limits::max_execution) are stopped by their runner.
//!
//! Both end the task through the one write path ([`Core::mutate`]), so streams, webhooks and
//! metrics see it as any other end. On a store several instances share, each instance looks for
//! the tasks left waiting; the commit is conditional on the task still waiting since before the
//! limit, so one instance ends each task, once.

use std::sync::{Arc, Weak};
use std::time::Duration;

use agentwire_store::Scope;
use agentwire_types::{Task, TaskState, Timestamp};
use tokio_util::sync::CancellationToken;

use super::apply::ending_events;
use super::Core;

/// The states of a task left waiting for its client.
const WAITING: [TaskState; 2] = [TaskState::InputRequired, TaskState::AuthRequired];

/// How many tasks one look ends at most; the next look follows at once when it found as many.
const EXPIRY_BATCH: usize = 256;

/// Why an ending is counted in `agentwire_tasks_expired`.
pub(crate) enum Expired {
    /// Left waiting for input or authorization.
    Waiting,
    /// An execution past its limit.
    Execution,
}

impl Core {
    /// Cancels the tasks left waiting longer than `after`, looking every `after / 4` (at least
    /// every minute), until `stop` or the core is gone.
    pub(crate) async fn expire_waiting(core: Weak<Self>, after: Duration, stop: CancellationToken) {
        let every = (after / 4).clamp(Duration::from_millis(50), Duration::from_secs(60));
        let looking = stop.clone();
        super::periodically(core, every, stop, |core| {
            let looking = looking.clone();
            async move { while core.expire_waiting_once(after).await == EXPIRY_BATCH && !looking.is_cancelled() {} }
        })
        .await;
    }

    /// One look: ends the tasks found waiting since before `after` ago; returns how many it found.
    async fn expire_waiting_once(&self, after: Duration) -> usize {
        let now = Timestamp::now().as_millis();
        let Some(before) = Timestamp::from_millis(now.saturating_sub(millis(after))) else { return 0 };
        let found = match self.tasks.tasks_unchanged_since(&WAITING, before, EXPIRY_BATCH).await {
            Ok(found) => found,
            Err(error) => {
                tracing::warn!(%error, "could not look for tasks left waiting");
                return 0;
            }
        };
        let reason = format!("the task waited for input longer than {} and was canceled", shown(after));
        for (scope, task_id) in &found {
            self.expire(scope, task_id, &reason, before).await;
        }
        found.len()
    }

    /// Cancels `task_id` if it still waits since before `before`, and stops an execution of it
    /// that is still running.
    async fn expire(&self, scope: &Scope, task_id: &str, reason: &str, before: Timestamp) {
        let mut ended = false;
        let mut change = |task: &mut Task| {
            // Another instance may have ended it, or its client answered, since it was found.
            let waiting_since = task.status.timestamp.map_or(i64::MIN, |at| at.as_millis());
            ended = task.status.state.is_interrupted() && waiting_since < before.as_millis();
            Ok(if ended { ending_events(task, TaskState::Canceled, Some(reason)) } else { Vec::new() })
        };
        match self.mutate(scope, task_id, &mut change).await {
            Ok(_) if ended => {
                tracing::info!(%task_id, "{reason}");
                self.count_expired(Expired::Waiting);
                // An agent may still be running after it asked for input.
                self.cancel.cancel(scope, task_id).await;
            }
            Ok(_) => {}
            Err(error) => tracing::warn!(%task_id, %error, "could not cancel a task left waiting"),
        }
    }

    /// Counts an ending in `agentwire_tasks_expired`, where metrics are kept.
    pub(crate) fn count_expired(&self, why: Expired) {
        let Some(metrics) = &self.metrics else { return };
        let reason = match why {
            Expired::Waiting => "waiting",
            Expired::Execution => "execution",
        };
        metrics.tasks_expired.get_or_create(&crate::metrics::ReasonLabel { reason }).inc();
    }

    /// Starts the expiry of tasks left waiting, if the limits ask for it.
    pub(crate) fn start_expiry(self: &Arc<Self>) {
        if let Some(after) = self.limits.expire_waiting {
            let expiry = Self::expire_waiting(Arc::downgrade(self), after, self.maintenance.clone());
            self.tracker.spawn(expiry);
        }
    }
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// A duration as a person reads it: "7 days", "15 minutes", "90 seconds", "250 ms".
pub(crate) fn shown(duration: Duration) -> String {
    let seconds = duration.as_secs();
    let units = [(86_400, "day"), (3_600, "hour"), (60, "minute"), (1, "second")];
    for (size, unit) in units {
        if seconds >= size && seconds.is_multiple_of(size) {
            let n = seconds / size;
            return format!("{n} {unit}{}", if n == 1 { "" } else { "s" });
        }
    }
    format!("{} ms", duration.as_millis())
}
