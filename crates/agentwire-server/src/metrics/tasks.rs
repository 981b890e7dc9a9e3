//! Tasks by state, from the feed of commits.

use std::collections::HashMap;
use std::sync::Arc;

use agentwire_store::{Commit, CommitFeed, FeedNotice, Scope};
use agentwire_types::TaskState;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use super::{Instruments, StateLabel, TenantLabel};

/// Follows the commits of this process, keeping the gauges of tasks in progress by state and by
/// tenant and counting the tasks that end, until `stop`. It knows a task's state from the commits
/// it saw: a task this process did not commit since it started (one resumed from the store, or
/// carried on by another instance) is counted from its next commit here, and one that another
/// instance ends stays counted here in its last state seen.
pub(crate) async fn follow_tasks(mut feed: CommitFeed, instruments: Arc<Instruments>, stop: CancellationToken) {
    let mut states = States::default();
    loop {
        let notice = tokio::select! {
            () = stop.cancelled() => return,
            notice = feed.recv() => notice,
        };
        match notice {
            Ok(FeedNotice::Commit(commit)) => states.committed(&instruments, &commit),
            Ok(FeedNotice::Check) => {}
            Err(RecvError::Lagged(missed)) => {
                tracing::debug!(
                    missed,
                    "the metrics of tasks missed commits; their counts may be off until the tasks change again"
                );
            }
            Err(RecvError::Closed) => return,
        }
    }
}

/// The last state seen of each task in progress.
#[derive(Default)]
struct States {
    in_progress: HashMap<(Scope, String), TaskState>,
}

impl States {
    fn committed(&mut self, instruments: &Instruments, commit: &Commit) {
        let key = (commit.scope.clone(), commit.task_id.clone());
        let state = commit.state;
        let before =
            if state.is_terminal() { self.in_progress.remove(&key) } else { self.in_progress.insert(key, state) };
        if before == Some(state) {
            return;
        }
        if let Some(before) = before {
            instruments.tasks.get_or_create(&StateLabel { state: before.as_proto_name() }).dec();
        }
        let tenant = TenantLabel { tenant: commit.scope.tenant.clone() };
        if state.is_terminal() {
            instruments.tasks_ended.get_or_create(&StateLabel { state: state.as_proto_name() }).inc();
            if before.is_some() {
                let left = instruments.tasks_in_progress.get_or_create(&tenant).dec() - 1;
                if left <= 0 {
                    instruments.tasks_in_progress.remove(&tenant);
                }
            }
        } else {
            instruments.tasks.get_or_create(&StateLabel { state: state.as_proto_name() }).inc();
            if before.is_none() {
                instruments.tasks_in_progress.get_or_create(&tenant).inc();
            }
        }
    }
}
