//! The transport-agnostic core: every A2A operation once, over canonical v1.0 types.

mod admission;
mod apply;
mod card;
mod expiry;
mod feed;
mod generation;
mod handler;
pub(crate) mod idempotency;
mod limits;
mod orphans;
mod push_configs;
mod runner;
mod send;
mod shared_load;
mod tasks;
mod turn;
mod validate;

use std::sync::Arc;

use agentwire_store::{
    CancelSignal, Commit, EventBus, KeyGuard, KeyedSend, PushConfigRecord, PushConfigStore, Scope, SendKey, StoreError,
    TaskStore,
};
use agentwire_types::{A2AError, StreamResponse, Task};
use tokio_util::task::TaskTracker;

use crate::agent::AgentExecutor;

pub(crate) use card::card_json;
pub use card::{advertised_interfaces, CardConfig};
pub use handler::{RequestHandler, RequestHandlerBuilder};
pub use limits::{Limits, Retention};
pub use validate::check_input_modes;

/// Storage failures become internal errors; the cause is logged, never sent.
pub(crate) fn store_error(error: StoreError) -> A2AError {
    match error {
        StoreError::NotFound(id) => A2AError::task_not_found(&id),
        StoreError::Limit(what) => A2AError::invalid_params(what),
        StoreError::TooManyUnfinished { limit } => A2AError::resource_exhausted(format!(
            "at most {limit} tasks of one principal may be in progress at once; wait for one to end, or cancel one"
        )),
        StoreError::Refused(error) => error,
        other => {
            tracing::error!(error = %other, "task store failed");
            A2AError::internal("an internal storage error occurred")
        }
    }
}

/// Shared state behind a [`RequestHandler`].
pub(crate) struct Core {
    pub(crate) agent: Arc<dyn AgentExecutor>,
    pub(crate) tasks: Arc<dyn TaskStore>,
    pub(crate) push_configs: Arc<dyn PushConfigStore>,
    /// Announces committed events to the readers of a task.
    pub(crate) bus: Arc<dyn EventBus>,
    /// Asks the executions of a task to stop.
    pub(crate) cancel: Arc<dyn CancelSignal>,
    /// What the instances serving a shared store agree on through it.
    pub(crate) shared: Option<Arc<dyn agentwire_store::SharedState>>,
    /// Owns every spawned execution and the purge of ended tasks, so shutdown can wait for them.
    pub(crate) tracker: TaskTracker,
    /// How webhooks are called; the addresses of new configs are checked with its guard.
    pub(crate) push_settings: crate::PushSettings,
    /// Delivers webhooks, following the bus's feed; `None` where the card offers no push.
    pub(crate) webhooks: Option<crate::push::PushDispatcher>,
    pub(crate) card: card::Cards,
    pub(crate) limits: Limits,
    /// Stops the background work that keeps the store within its retention.
    pub(crate) maintenance: tokio_util::sync::CancellationToken,
    /// Rung when a task ends, for the purge of ended tasks to run soon: a doorbell that wakes
    /// nobody while a purge is waiting its turn, unlike a follower of the feed of commits.
    pub(crate) task_ended: Arc<tokio::sync::Notify>,
    /// Which ended tasks are kept: the purge loop and the shutdown apply it.
    pub(crate) retention: Retention,
    /// What sends were admitted under the limits of work in progress and is not yet written.
    pub(crate) admissions: admission::Admissions,
    /// Where commits are timed, if anywhere.
    pub(crate) metrics: Option<Arc<crate::metrics::Instruments>>,
    /// Cancelled when the server begins to stop: it is no longer ready for new work.
    pub(crate) draining: tokio_util::sync::CancellationToken,
    /// Reads of a task that the long polls woken together share.
    pub(crate) shared_loads: shared_load::SharedLoads,
}

/// What a writer wants to do to a task, given its current state.
pub(crate) use agentwire_store::Change as Mutation;

impl Core {
    pub(crate) fn capabilities(&self) -> &agentwire_types::AgentCapabilities {
        &self.card.public().capabilities
    }

    pub(crate) fn streaming_enabled(&self) -> bool {
        self.capabilities().streaming == Some(true)
    }

    pub(crate) fn push_enabled(&self) -> bool {
        self.capabilities().push_notifications == Some(true)
    }

    /// Loads a task visible in `scope`, or fails with TaskNotFound.
    pub(crate) async fn load(&self, scope: &Scope, task_id: &str) -> Result<agentwire_store::TaskRecord, A2AError> {
        self.tasks.get(scope, task_id).await.map_err(store_error)?.ok_or_else(|| A2AError::task_not_found(task_id))
    }

    /// Stores a new task with its first events (the event that announces it, then what its agent
    /// did before the task was written) and the push config given with the send that made it,
    /// then announces it. Returns the task's version. The store refuses it while the principal
    /// has [`Limits::max_unfinished_tasks`] tasks in progress (the send's admission counted this
    /// process's; the store's check catches other processes racing it).
    ///
    /// With an idempotency `key`, the key is recorded in the same write; a key the scope holds
    /// already writes nothing and returns the send that holds it.
    pub(crate) async fn create(
        &self,
        scope: &Scope,
        task: &Arc<Task>,
        events: Vec<Arc<StreamResponse>>,
        push: Option<&PushConfigRecord>,
        key: Option<&SendKey>,
        reserved: Option<&KeyGuard>,
    ) -> Result<Option<KeyedSend>, A2AError> {
        let stored = async {
            let limit = Some(self.limits.max_unfinished_tasks);
            let create = async {
                match key {
                    Some(key) => self.tasks.create_keyed(scope, Arc::clone(task), &events, limit, key, reserved).await,
                    None => self.tasks.create(scope, Arc::clone(task), &events, limit).await,
                }
            };
            let version = self.committed(&task.id, create).await?;
            if let Some(record) = push {
                self.push_configs.put_config(scope, record).await?;
            }
            Ok(version)
        };
        let version = match stored.await {
            Ok(version) => version,
            Err(StoreError::KeyTaken(held)) => return Ok(Some(held)),
            Err(error) => return Err(store_error(error)),
        };
        self.announce(scope, task, version, events);
        Ok(None)
    }

    /// Takes a place for what a send brings (a new task or not, and a message of `message_bytes`)
    /// under the limits of what `scope`'s principal may have in progress, before its agent starts.
    pub(crate) async fn admit(
        &self,
        scope: &Scope,
        new_task: bool,
        message_bytes: usize,
    ) -> Result<admission::Place, A2AError> {
        let bringing = agentwire_store::Unfinished { tasks: usize::from(new_task), bytes: message_bytes as u64 };
        self.admissions.admit(&*self.tasks, &scope.owner, bringing, &self.limits).await
    }

    /// The one write path for existing tasks: the store applies `change` and commits it with its
    /// events atomically, then the commit is announced to readers and to the feed. Returns the
    /// task as committed and its version.
    pub(crate) async fn mutate(
        &self,
        scope: &Scope,
        task_id: &str,
        change: &mut Mutation<'_>,
    ) -> Result<(Arc<Task>, u64), A2AError> {
        let max_history = self.limits.max_history_length;
        let mut limited = |task: &mut Task| {
            let events = change(task)?;
            trim_history(task, max_history);
            Ok(events)
        };
        let updated =
            self.committed(task_id, self.tasks.update(scope, task_id, &mut limited)).await.map_err(store_error)?;
        if !updated.events.is_empty() {
            self.announce(scope, &updated.task, updated.version, updated.events);
        }
        Ok((updated.task, updated.version))
    }

    /// [`mutate`](Self::mutate), if the task is still at version `expected`: a send's
    /// precondition on the task's generation (the dev-1.1 draft's `ifGenerationMatch`). Another
    /// version, found now or by the store's commit, is TaskGenerationMismatch.
    pub(crate) async fn mutate_at(
        &self,
        scope: &Scope,
        task_id: &str,
        expected: u64,
        change: &mut Mutation<'_>,
    ) -> Result<(Arc<Task>, u64), A2AError> {
        let mismatch = |found: u64| {
            A2AError::task_generation_mismatch(task_id, generation::generation(expected), generation::generation(found))
        };
        let record = self.load(scope, task_id).await?;
        if record.version != expected {
            return Err(mismatch(record.version));
        }
        let mut task = Arc::unwrap_or_clone(record.task);
        let events: Vec<Arc<StreamResponse>> = change(&mut task)?.into_iter().map(Arc::new).collect();
        trim_history(&mut task, self.limits.max_history_length);
        let task = Arc::new(task);
        match self.committed(task_id, self.tasks.commit(scope, Arc::clone(&task), &events, expected)).await {
            Ok(version) => {
                self.announce(scope, &task, version, events);
                Ok((task, version))
            }
            Err(StoreError::Conflict { found, .. }) => Err(mismatch(found)),
            Err(error) => Err(store_error(error)),
        }
    }

    /// Runs a commit to `task_id`'s log in a span of its own, timing it where metrics are kept.
    async fn committed<T>(&self, task_id: &str, commit: impl std::future::Future<Output = T>) -> T {
        let commit = crate::spans::committing(task_id, commit);
        let Some(metrics) = &self.metrics else { return commit.await };
        let started = tokio::time::Instant::now();
        let committed = commit.await;
        metrics.commit_duration.observe(started.elapsed().as_secs_f64());
        committed
    }

    /// Announces a commit to the task's readers and to the feed of commits.
    fn announce(&self, scope: &Scope, task: &Task, version: u64, events: Vec<Arc<StreamResponse>>) {
        let state = task.status.state;
        if state.is_terminal() {
            self.task_ended.notify_one();
        }
        let trace = crate::spans::current_trace_context();
        self.bus.announce(Commit { scope: scope.clone(), task_id: task.id.clone(), version, state, events, trace });
    }
}

/// Runs `round` on the core every `every` (the first at once; a round that runs long delays the
/// next), until `stop` or until the core is gone.
pub(crate) async fn periodically<F, Fut>(
    core: std::sync::Weak<Core>,
    every: std::time::Duration,
    stop: tokio_util::sync::CancellationToken,
    round: F,
) where
    F: Fn(Arc<Core>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = ticks.tick() => {}
        }
        let Some(core) = core.upgrade() else { return };
        round(core).await;
    }
}

/// Keeps a task's history within `max` messages: the first (the request that started the task,
/// which agents read for what the task is about) and the most recent ones.
pub(crate) fn trim_history(task: &mut Task, max: usize) {
    let excess = task.history.len().saturating_sub(max);
    if excess == 0 {
        return;
    }
    let first_kept = usize::from(max > 1);
    task.history.drain(first_kept..first_kept + excess);
}
