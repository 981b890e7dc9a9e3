//! Drives one execution: reads the agent's events, commits each to the task, and ends it.

use std::future::Future;
use std::ops::ControlFlow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use agentwire_store::Scope;
use agentwire_types::{A2AError, Message, StreamResponse, Task, TaskState, TaskStatus};
use futures_util::StreamExt;
use tokio::sync::oneshot;
use tokio::time::Instant;
use tracing::Instrument;

use super::apply::apply;
use super::broker::Published;
use super::{Core, DEFAULT_CANCEL_GRACE};
use crate::agent::{AgentEvent, EventStream, ExecutionContext};

/// What the server keeps of a running execution (the agent owns its [`ExecutionContext`]).
struct Execution {
    scope: Scope,
    /// Shared with the registry of running executions.
    task_id: Arc<str>,
    context_id: String,
    cancel: tokio_util::sync::CancellationToken,
    /// For a new task, its first user message until the agent's first event creates the task.
    pending_creation: Option<Message>,
    /// A blocking SendMessage waiting for the result.
    waiter: Option<Waiter>,
}

/// One execution, ready to start: what its [`ExecutionContext`] is built from (the cancellation
/// token comes from the task's running executions).
pub(crate) struct Run {
    pub(crate) scope: Scope,
    pub(crate) task_id: String,
    pub(crate) context_id: String,
    /// The message that starts this execution.
    pub(crate) message: Message,
    /// The task as it was before, for a continuation.
    pub(crate) task: Option<Arc<Task>>,
    pub(crate) request: crate::RequestContext,
    pub(crate) streaming: bool,
    /// For a new task: the first user message; the task is created by the agent's first event.
    pub(crate) new_task_message: Option<Message>,
    /// A blocking SendMessage waiting for this execution's result.
    pub(crate) waiter: Option<Waiter>,
}

/// What a blocking SendMessage gets from the execution it started.
#[derive(Debug)]
pub(crate) enum Settled {
    /// The agent answered with a message and created no task.
    Reply(Message),
    /// The task as committed when it settled.
    Task(Arc<Task>),
}

/// The request side of a blocking SendMessage: the execution hands it the result directly, so the
/// request is woken once instead of once per event.
pub(crate) struct Waiter {
    tx: oneshot::Sender<Settled>,
    /// `returnImmediately`: hand over the task as soon as it exists.
    on_creation: bool,
}

impl Waiter {
    pub(crate) fn new(on_creation: bool) -> (Self, oneshot::Receiver<Settled>) {
        let (tx, rx) = oneshot::channel();
        (Self { tx, on_creation }, rx)
    }

    fn settle(self, result: Settled) {
        // The request may be gone (client disconnected); the task lives on regardless.
        let _ = self.tx.send(result);
    }
}

/// An execution whose first step the blocking SendMessage that started it takes in place. An
/// agent that never waits, like the echo agent, finishes in that step, which spares a task, a
/// wake-up and a second pass through the connection's stack. An execution that has to wait
/// continues in a task of its own, and so does one whose step is never taken (dropped unpolled).
pub(crate) struct FirstStep(Option<Pin<Box<dyn Future<Output = ()> + Send>>>);

impl FirstStep {
    /// Polls the execution once; if it has to wait, it goes on in a task of its own.
    pub(crate) async fn run(mut self) {
        std::future::poll_fn(|cx| {
            if let Some(mut execution) = self.0.take() {
                // A panicking agent must not take the connection down: as in a task of its own,
                // the panic is reported and the execution dropped (its caller gets an error).
                match catch_unwind(AssertUnwindSafe(|| execution.as_mut().poll(cx))) {
                    Ok(Poll::Ready(())) => {}
                    Ok(Poll::Pending) => drop(tokio::spawn(execution)),
                    Err(_) => tracing::error!("the agent panicked during its first step"),
                }
            }
            Poll::Ready(())
        })
        .await;
    }
}

impl Drop for FirstStep {
    fn drop(&mut self) {
        if let Some(execution) = self.0.take() {
            tokio::spawn(execution);
        }
    }
}

/// Whether a blocking send can return: the task ended or waits for the client.
fn settles(task: &Task) -> bool {
    task.status.state.is_terminal() || task.status.state.is_interrupted()
}

impl Core {
    /// The cancellation token shared by every execution of `task_id`, registering one more.
    fn begin_execution(&self, task_id: &Arc<str>) -> tokio_util::sync::CancellationToken {
        let mut entry = self.running.entry(Arc::clone(task_id)).or_default();
        entry.count += 1;
        entry.token.clone()
    }

    fn end_execution(&self, task_id: &str) {
        self.running.remove_if_mut(task_id, |_, e| {
            e.count = e.count.saturating_sub(1);
            e.count == 0
        });
    }

    /// Starts `run`, with the task's shared cancellation token. Executions outlive the request
    /// that started them, so they run as tasks of their own; with `first_step_here`, the caller
    /// gets the execution back to take its first step in place (see [`FirstStep`]).
    pub(crate) fn launch(self: &Arc<Self>, run: Run, first_step_here: bool) -> Option<FirstStep> {
        let execution = self.tracker.track_future(self.execution(run));
        if first_step_here {
            return Some(FirstStep(Some(Box::pin(execution))));
        }
        tokio::spawn(execution);
        None
    }

    /// The future that drives `run` from start to end.
    fn execution(self: &Arc<Self>, run: Run) -> impl Future<Output = ()> + Send + 'static {
        let Run { scope, task_id: id, context_id, message, task, request, streaming, new_task_message, waiter } = run;
        let task_id: Arc<str> = Arc::from(id.as_str());
        let cancel = self.begin_execution(&task_id);
        let ctx = ExecutionContext { task_id: id, context_id, message, task, request, streaming, cancel };
        let execution = Execution {
            scope,
            task_id,
            context_id: ctx.context_id.clone(),
            cancel: ctx.cancel.clone(),
            pending_creation: new_task_message,
            waiter,
        };
        // A debug span: at the default info level it costs nothing per request.
        let span = tracing::debug_span!("execution", task_id = %ctx.task_id);
        let events = self.agent.execute(ctx);
        Arc::clone(self).drive(execution, events).instrument(span)
    }

    /// Reads the agent's events until it stops or the task ends. Only the wait for the next event
    /// is inline; handling events is boxed, so an execution that waits (for input, for a long
    /// job) holds little more than its [`Execution`].
    ///
    /// The events the agent has already queued when one arrives are committed with it, in one
    /// store write (see [`ready_events`]).
    ///
    /// A plain function returning an `async move` block, here and below: an `async fn` moves its
    /// arguments into locals of its own, which doubles the room a large one takes in the future.
    #[allow(clippy::manual_async_fn)] // see above
    fn drive(self: Arc<Self>, mut execution: Execution, mut events: EventStream) -> impl Future<Output = ()> + Send {
        async move {
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
                if Box::pin(self.handle(&mut execution, &mut events, event)).await.is_break() {
                    break;
                }
            }
            drop(events);
            self.wind_up(&mut execution).await;
        }
    }

    /// Commits `event` and the events the agent has queued behind it, creating the task with them
    /// if this is the first. Each store write takes as many events as it can, in order, and ends
    /// after an event that settles the task, so that a waiting caller gets the task in exactly
    /// that state. Breaks when the task has ended or the agent has.
    #[allow(clippy::manual_async_fn)] // see `drive`
    fn handle<'a>(
        &'a self,
        execution: &'a mut Execution,
        events: &'a mut EventStream,
        event: AgentEvent,
    ) -> impl Future<Output = ControlFlow<()>> + Send + 'a {
        async move {
            // Room for a typical burst (an artifact and a status) without growing.
            let mut batch = Vec::with_capacity(4);
            batch.push(event);
            let agent_ended = ready_events(events, &mut batch).await;
            let flow = self.commit_batch(execution, &mut batch).await;
            if agent_ended {
                return ControlFlow::Break(());
            }
            flow
        }
    }

    /// Commits `batch` (see [`handle`](Self::handle)).
    async fn commit_batch(&self, execution: &mut Execution, batch: &mut Vec<AgentEvent>) -> ControlFlow<()> {
        if let Some(first_message) = execution.pending_creation.take() {
            if let Some(AgentEvent::Message(reply)) = batch.first_mut() {
                // A direct reply: no task is created, and nothing after it counts.
                self.reply(execution, std::mem::take(reply));
                return ControlFlow::Break(());
            }
            let (task, events) = self.new_task(execution, first_message, batch);
            match self.create(&execution.scope, task, events).await {
                Ok(task) => {
                    settle_if(&mut execution.waiter, &task, |w| w.on_creation || settles(&task));
                    if task.status.state.is_terminal() {
                        return ControlFlow::Break(());
                    }
                }
                Err(error) => {
                    tracing::error!(%error, "could not create the task");
                    return ControlFlow::Break(());
                }
            }
        }
        while !batch.is_empty() {
            self.commit_events(execution, batch).await?;
        }
        ControlFlow::Continue(())
    }

    /// Hands a direct reply to the caller waiting for it, or to the stream that started the
    /// execution.
    fn reply(&self, execution: &mut Execution, reply: Message) {
        let reply = Message { context_id: execution.context_id.clone(), task_id: String::new(), ..reply };
        if let Some(waiter) = execution.waiter.take() {
            waiter.settle(Settled::Reply(reply.clone()));
        }
        self.broker.publish(&execution.task_id, Published::Event(0, Arc::new(StreamResponse::Message(reply))));
    }

    /// After the agent stopped: cancels the task if asked to, answers a caller still waiting, and
    /// tells readers the execution ended.
    async fn wind_up(&self, execution: &mut Execution) {
        if execution.pending_creation.is_some() {
            tracing::warn!("the agent ended without producing anything");
        } else if execution.cancel.is_cancelled() || execution.waiter.is_some() {
            // Boxed: an execution that ends its task by itself, the common case, has nothing to await.
            Box::pin(self.settle_unfinished(execution)).await;
        }
        self.end_execution(&execution.task_id);
        self.broker.publish(&execution.task_id, Published::Ended);
    }

    /// Cancels the task of a canceled execution, and hands a caller still waiting the task as it is.
    async fn settle_unfinished(&self, execution: &mut Execution) {
        let task_id = &*execution.task_id;
        self.finish(execution, execution.cancel.is_cancelled()).await;
        if let Some(waiter) = execution.waiter.take() {
            // The agent stopped before the task settled: the caller gets the task as it is.
            match self.load(&execution.scope, task_id).await {
                Ok(record) => waiter.settle(Settled::Task(record.task)),
                Err(error) => tracing::warn!(%error, "could not read the task back"),
            }
        }
    }

    /// A new task holding its first message, with the events that announce it if anyone can
    /// hear. The ready events at the front of `batch` are applied to it (and removed), so that it
    /// is created with them in one write; not when the caller returns as soon as the task exists,
    /// who must get it as it was created.
    fn new_task(
        &self,
        execution: &Execution,
        first_message: Message,
        batch: &mut Vec<AgentEvent>,
    ) -> (Task, Vec<StreamResponse>) {
        let history_message = Message {
            task_id: String::from(&*execution.task_id),
            context_id: execution.context_id.clone(),
            ..first_message
        };
        let mut task = Task {
            id: String::from(&*execution.task_id),
            context_id: execution.context_id.clone(),
            status: TaskStatus::new(TaskState::Submitted),
            history: vec![history_message],
            ..Task::default()
        };
        // The first event is the task itself, and only a reader present at its creation can want
        // it (the stream that started the task, or a webhook registered with the send): a later
        // reader starts from a snapshot. Without one, no event is kept and the task starts at
        // version 0.
        let audience = self.has_audience(&execution.task_id);
        let mut events = if audience { vec![StreamResponse::Task(task.clone())] } else { Vec::new() };
        if !execution.waiter.as_ref().is_some_and(|w| w.on_creation) {
            // Applied once, outside the store: the events move into the task.
            let mut ready = std::mem::take(batch).into_iter();
            let (_, refused) = apply_ready(&mut task, ready.by_ref(), audience, &mut events);
            report_refused(refused);
            *batch = ready.collect();
        }
        (task, events)
    }

    /// Commits the ready events at the front of `batch` in one store write, and removes them.
    async fn commit_events(&self, execution: &mut Execution, batch: &mut Vec<AgentEvent>) -> ControlFlow<()> {
        let task_id = &*execution.task_id;
        // With a store whose update excludes reads, events nobody can read are left out: the
        // check runs inside the change, so a reader who subscribes after it gets a snapshot taken
        // after the commit (see `TaskStore::update_excludes_reads`).
        let may_leave_out = self.tasks.update_excludes_reads();
        let mut announced = true;
        let mut outcome = (0, Vec::new());
        let mut change = |task: &mut Task| {
            announced = !may_leave_out || self.has_audience(task_id);
            // A retry after a conflict applies the same events again to the fresh task.
            let mut events = Vec::new();
            outcome = apply_ready(task, batch.iter().cloned(), announced, &mut events);
            Ok(events)
        };
        let committed = self.mutate(&execution.scope, task_id, &mut change).await;
        let (taken, refused) = outcome;
        report_refused(refused);
        let task = match committed {
            Ok((task, _)) => task,
            Err(error) => {
                tracing::warn!(%error, "agent events rejected");
                batch.clear();
                return ControlFlow::Continue(());
            }
        };
        batch.drain(..taken);
        settle_if(&mut execution.waiter, &task, |_| settles(&task));
        if !task.status.state.is_terminal() {
            return ControlFlow::Continue(());
        }
        if !announced {
            // Its end announced to no one, the task is as unobserved as if nobody had heard it.
            self.tasks.ended_unobserved(task_id);
        }
        ControlFlow::Break(())
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
    apply(task, event, true).map(|e| e.into_iter().collect()).unwrap_or_default()
}

/// The most events one store write commits. An agent's stream may have any number ready; this is
/// the capacity of the channel `ExecutionContext::run` gives an agent, so its bursts fit one write.
const MAX_BATCH: usize = 32;

/// Moves the events the agent has already produced into `batch`, without waiting, until it holds
/// [`MAX_BATCH`]. Resolves to true if the agent has ended (its stream must not be polled again).
fn ready_events<'a>(
    events: &'a mut EventStream,
    batch: &'a mut Vec<AgentEvent>,
) -> impl Future<Output = bool> + Send + 'a {
    std::future::poll_fn(move |cx| {
        while batch.len() < MAX_BATCH {
            match events.poll_next_unpin(cx) {
                Poll::Ready(Some(event)) => batch.push(event),
                Poll::Ready(None) => return Poll::Ready(true),
                Poll::Pending => break,
            }
        }
        Poll::Ready(false)
    })
}

/// Applies `events` to `task` in order, up to and including the first that settles it (the rest
/// are left in the iterator), adding their announcements to `announcements` if `announce`.
/// Returns how many events it took and the reasons the task refused some of them (a refused event
/// changes nothing).
fn apply_ready(
    task: &mut Task,
    events: impl Iterator<Item = AgentEvent>,
    announce: bool,
    announcements: &mut Vec<StreamResponse>,
) -> (usize, Vec<A2AError>) {
    let mut refused = Vec::new();
    let mut taken = 0;
    for event in events {
        taken += 1;
        match apply(task, event, announce) {
            Ok(announcement) => announcements.extend(announcement),
            Err(error) => refused.push(error),
        }
        if settles(task) {
            break;
        }
    }
    (taken, refused)
}

fn report_refused(refused: Vec<A2AError>) {
    for error in refused {
        tracing::warn!(%error, "agent event rejected");
    }
}

/// Hands `task` to the waiting request, if there is one and `ready` says so.
fn settle_if(waiter: &mut Option<Waiter>, task: &Arc<Task>, ready: impl FnOnce(&Waiter) -> bool) {
    if let Some(waiter) = waiter.take_if(|w| ready(w)) {
        waiter.settle(Settled::Task(Arc::clone(task)));
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use agentwire_types::Role;

    use super::*;

    /// An execution's future is boxed when it starts and kept for as long as the agent runs (an
    /// idle stream holds one), and each event's step is boxed too: both are copied whole. They
    /// were 944 bytes each while `async fn` arguments were held twice; these bounds catch a return.
    #[tokio::test]
    async fn executions_and_their_steps_stay_small() {
        let handler = crate::RequestHandler::builder(crate::agent::EchoAgent).build();
        let core = &handler.core;
        let message = Message { role: Role::User, ..Message::default() };
        let run = Run {
            scope: Scope::default(),
            task_id: "t".into(),
            context_id: "c".into(),
            message: message.clone(),
            task: None,
            request: crate::RequestContext::default(),
            streaming: false,
            new_task_message: Some(message.clone()),
            waiter: None,
        };
        let execution = core.tracker.track_future(core.execution(run));
        assert!(std::mem::size_of_val(&execution) <= 768, "execution: {} bytes", std::mem::size_of_val(&execution));
        let mut state = Execution {
            scope: Scope::default(),
            task_id: "t".into(),
            context_id: "c".into(),
            cancel: tokio_util::sync::CancellationToken::new(),
            pending_creation: None,
            waiter: None,
        };
        let mut events: EventStream = Box::pin(futures_util::stream::empty());
        let step = core.handle(&mut state, &mut events, AgentEvent::Message(message));
        assert!(std::mem::size_of_val(&step) <= 640, "an event's step: {} bytes", std::mem::size_of_val(&step));
    }
}
