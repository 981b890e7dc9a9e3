//! Tasks left running by executions that died: with a previous run of this server, or with
//! another instance of a shared store.

use agentwire_store::Scope;
use agentwire_types::{A2AError, Task, TaskState};

use super::apply::ending_events;
use super::Core;

/// How many orphaned tasks one look finds at most.
const ORPHAN_BATCH: usize = 256;

impl Core {
    /// Fails every task an execution was working on (see [`RequestHandler::recover`]).
    ///
    /// [`RequestHandler::recover`]: crate::RequestHandler::recover
    pub(crate) async fn fail_orphans(&self) -> Result<usize, A2AError> {
        let reason = "the server stopped while the task was running; its work was lost";
        let mut ended = 0;
        loop {
            let orphans = self.tasks.tasks_in_progress(ORPHAN_BATCH).await.map_err(super::store_error)?;
            let failed = self.fail_tasks(&orphans, reason).await;
            ended += failed;
            if orphans.len() < ORPHAN_BATCH || failed == 0 {
                return Ok(ended);
            }
        }
    }

    /// Fails the tasks whose executions died with another process, as the cancel signal finds
    /// them, every `every`, for as long as the core lives.
    pub(crate) async fn reap_orphans(
        core: std::sync::Weak<Self>,
        every: std::time::Duration,
        stop: tokio_util::sync::CancellationToken,
    ) {
        let reason = "the server instance running the task stopped (its lease expired); its work was lost";
        super::periodically(core, every, stop, |core| async move {
            match core.cancel.orphans(ORPHAN_BATCH).await {
                Ok(orphans) => {
                    tracing::debug!(found = orphans.len(), "looked for tasks left running");
                    core.fail_tasks(&orphans, reason).await;
                }
                Err(error) => tracing::warn!(%error, "could not look for tasks left running"),
            }
        })
        .await;
    }

    /// Ends `tasks` FAILED with `reason`; returns how many it ended.
    async fn fail_tasks(&self, tasks: &[(Scope, String)], reason: &str) -> usize {
        let mut ended = 0;
        for (scope, task_id) in tasks {
            let mut change = |task: &mut Task| Ok(ending_events(task, TaskState::Failed, Some(reason)));
            match self.mutate(scope, task_id, &mut change).await {
                Ok(_) => {
                    ended += 1;
                    tracing::warn!(%task_id, "{reason}");
                }
                Err(error) => tracing::warn!(%task_id, %error, "could not fail a task left running"),
            }
        }
        ended
    }
}
