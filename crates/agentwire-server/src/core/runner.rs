//! Drives one execution: reads the agent's events, commits each to the task, and ends it.

use std::sync::Arc;

use agentwire_store::Scope;
use agentwire_types::{A2AError, Message, StreamResponse, Task, TaskState, TaskStatus};
use futures_util::StreamExt;
use tokio::time::Instant;
use tracing::Instrument;

use super::apply::apply;
use super::broker::Published;
use super::{Core, DEFAULT_CANCEL_GRACE};
use crate::agent::{AgentEvent, EventStream, ExecutionContext};

/// What the server keeps of a running execution (the agent owns its [`ExecutionContext`]).
struct Execution {
    scope: Scope,
    task_id: String,
    context_id: String,
    cancel: tokio_util::sync::CancellationToken,
}

/// One execution, ready to start.
pub(crate) struct Run {
    pub(crate) scope: Scope,
    pub(crate) ctx: ExecutionContext,
    /// For a new task: the first user message; the task is created by the agent's first event.
    pub(crate) new_task_message: Option<Message>,
}

impl Core {
    /// The cancellation token shared by every execution of `task_id`, registering one more.
    fn begin_execution(&self, task_id: &str) -> tokio_util::sync::CancellationToken {
        let mut entry = self.running.entry(task_id.to_owned()).or_default();
        entry.count += 1;
        entry.token.clone()
    }

    fn end_execution(&self, task_id: &str) {
        if let Some(mut entry) = self.running.get_mut(task_id) {
            entry.count = entry.count.saturating_sub(1);
        }
        self.running.remove_if(task_id, |_, e| e.count == 0);
    }

    /// Starts `run` in the background, with the task's shared cancellation token. Executions
    /// outlive the request that started them.
    pub(crate) fn spawn(self: &Arc<Self>, run: Run) {
        let Run { scope, mut ctx, new_task_message } = run;
        ctx.cancel = self.begin_execution(&ctx.task_id);
        let execution = Execution {
            scope,
            task_id: ctx.task_id.clone(),
            context_id: ctx.context_id.clone(),
            cancel: ctx.cancel.clone(),
        };
        // A debug span: at the default info level it costs nothing per request.
        let span = tracing::debug_span!("execution", task_id = %ctx.task_id);
        let events = self.agent.execute(ctx);
        let core = Arc::clone(self);
        self.tracker.spawn(async move { core.drive(execution, new_task_message, events).await }.instrument(span));
    }

    async fn drive(
        self: Arc<Self>,
        execution: Execution,
        mut pending_creation: Option<Message>,
        mut events: EventStream,
    ) {
        let task_id = execution.task_id.clone();
        let publisher = self.broker.publisher(&task_id);
        let cancel = execution.cancel.clone();
        let mut grace_deadline: Option<Instant> = None;
        loop {
            let next = tokio::select! {
                event = events.next() => event,
                () = cancel.cancelled(), if grace_deadline.is_none() => {
                    grace_deadline = Some(Instant::now() + DEFAULT_CANCEL_GRACE);
                    continue;
                }
                () = sleep_until(grace_deadline), if grace_deadline.is_some() => {
                    tracing::warn!("execution ignored cancellation; canceling the task without it");
                    break;
                }
            };
            let Some(event) = next else { break };
            if let Some(first_message) = pending_creation.take() {
                if let AgentEvent::Message(reply) = event {
                    // A direct reply: no task is created.
                    let reply = Message { context_id: execution.context_id.clone(), task_id: String::new(), ..reply };
                    publisher.send(Published::Event(0, Arc::new(StreamResponse::Message(reply))));
                    break;
                }
                if let Err(error) = self.create_task(&execution, first_message).await {
                    tracing::error!(%error, "could not create the task");
                    break;
                }
            }
            match self.commit_event(&execution.scope, &task_id, event).await {
                Ok(state) if state.is_terminal() => break,
                Ok(_) => {}
                Err(error) => tracing::warn!(%error, "agent event rejected"),
            }
        }
        drop(events);
        if pending_creation.is_none() {
            self.finish(&execution, cancel.is_cancelled()).await;
        } else {
            tracing::warn!("the agent ended without producing anything");
        }
        self.end_execution(&task_id);
        publisher.send(Published::Ended);
    }

    async fn create_task(&self, execution: &Execution, first_message: Message) -> Result<(), A2AError> {
        let mut history_message = first_message;
        history_message.task_id.clone_from(&execution.task_id);
        history_message.context_id.clone_from(&execution.context_id);
        let task = Task {
            id: execution.task_id.clone(),
            context_id: execution.context_id.clone(),
            status: TaskStatus::new(TaskState::Submitted),
            history: vec![history_message],
            ..Task::default()
        };
        let first_event = StreamResponse::Task(task.clone());
        self.create(&execution.scope, task, vec![first_event]).await.map(drop)
    }

    async fn commit_event(&self, scope: &Scope, task_id: &str, event: AgentEvent) -> Result<TaskState, A2AError> {
        // A retry after a conflict re-applies the same event to the fresh task.
        let (task, _) = self.mutate(scope, task_id, &mut |task| apply(task, event.clone()).map(|e| vec![e])).await?;
        Ok(task.status.state)
    }

    /// After the agent stopped: a canceled execution that did not end the task cancels it.
    async fn finish(&self, execution: &Execution, canceled: bool) {
        if !canceled {
            return;
        }
        let result = self.mutate(&execution.scope, &execution.task_id, &mut |task| Ok(cancel_events(task))).await;
        if let Err(error) = result {
            tracing::warn!(%error, "could not mark the task canceled");
        }
    }
}

/// The events that cancel `task`, or none if it already ended.
pub(crate) fn cancel_events(task: &mut Task) -> Vec<StreamResponse> {
    if task.status.state.is_terminal() {
        return Vec::new();
    }
    let event = AgentEvent::Status { state: TaskState::Canceled, message: None, metadata: None };
    apply(task, event).map(|e| vec![e]).unwrap_or_default()
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}
