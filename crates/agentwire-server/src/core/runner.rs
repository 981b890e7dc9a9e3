//! Drives one execution: reads the agent's events, commits each to the task, and ends it.

use std::future::Future;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::task::Poll;

use agentwire_store::Scope;
use agentwire_types::{A2AError, Message, StreamResponse, Task, TaskState};
use futures_util::StreamExt;
use opentelemetry::context::FutureExt as _;
use tokio::time::Instant;

use agentwire_store::Notice;

use super::apply::{add_user_message, apply, apply_ready, cancel_events, ending_events, settles};
use super::send::CREATED_VERSION;
use super::turn::{Appended, Appending, Creation, FirstWrite, Run, Settled, Waiter};
use super::Core;
use crate::agent::{AgentEvent, EventStream, ExecutionContext, TaskReader};

/// An execution's agent: asked already, or waiting for its task to be written first (boxed: the
/// execution's future is held for as long as the agent works).
enum Agent {
    Started(EventStream),
    Waiting(Box<ExecutionContext>),
}

/// What the server keeps of a running execution (the agent owns its [`ExecutionContext`]).
struct Execution {
    scope: Scope,
    /// Shared with the registry of running executions.
    task_id: Arc<str>,
    context_id: String,
    cancel: tokio_util::sync::CancellationToken,
    /// For a new task, the task as created until the agent's first event: a direct reply then
    /// removes it, since a reply makes no task.
    fresh: Option<Arc<Task>>,
    /// A blocking SendMessage waiting for the result.
    waiter: Option<Waiter>,
    /// The legacy family answers every send with a task: a direct reply completes one.
    reply_as_task: bool,
    /// The execution ran past [`Limits::max_execution`](super::Limits::max_execution) and was
    /// canceled: a task it leaves unfinished fails.
    timed_out: bool,
}

/// Ends an execution that stopped without winding up: its agent panicked, or its future was
/// dropped. The execution is unregistered, a task it left unfinished becomes FAILED, and readers
/// are told the execution ended, so no stream waits for it and a later cancel answers at once.
struct ExecutionGuard {
    core: Arc<Core>,
    scope: Scope,
    task_id: Arc<str>,
    armed: bool,
}

impl ExecutionGuard {
    /// The execution wound up by itself.
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for ExecutionGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        if self.core.maintenance.is_cancelled() {
            // Dropped by a shutdown that did not wait for it any longer: the agent did nothing wrong.
            tracing::warn!(task_id = %self.task_id, "the execution was stopped unfinished: the server is shutting down");
        } else {
            tracing::error!(task_id = %self.task_id, "the execution stopped abruptly (did the agent panic?)");
        }
        self.core.cancel.finished(&self.scope, &self.task_id);
        let (core, scope, task_id) = (Arc::clone(&self.core), self.scope.clone(), Arc::clone(&self.task_id));
        let fail = async move {
            let reason = "the agent stopped unexpectedly";
            let mut change = |task: &mut Task| Ok(ending_events(task, TaskState::Failed, Some(reason)));
            // A task the execution never created is not there to fail.
            if let Err(error) = core.mutate(&scope, &task_id, &mut change).await {
                tracing::debug!(%error, "could not fail the task of an abrupt execution");
            }
            core.bus.publish(&scope, &task_id, Notice::Ended);
        };
        // Outside a runtime (it is shutting down) there is nobody left to tell.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(fail);
        }
    }
}

impl Core {
    /// Starts `run` in a task of its own, with the task's shared cancellation token: executions
    /// outlive the request that started them.
    pub(crate) fn launch(self: &Arc<Self>, run: Run) {
        self.tracker.spawn(self.execution(run));
    }

    /// The future that drives `run` from start to end.
    fn execution(self: &Arc<Self>, run: Run) -> impl Future<Output = ()> + Send + 'static + use<> {
        let Run { scope, task_id: id, context_id, message, task, first_write, mut request, streaming, waiter } = run;
        // The execution outlives its request: it keeps nothing of the request's connection.
        crate::context::detach_metadata(&mut request.metadata);
        let new_task = matches!(first_write, FirstWrite::Create(_));
        let task_id: Arc<str> = Arc::from(id.as_str());
        let cancel = self.cancel.started(&scope, &task_id);
        let reply_as_task = request.dialect.profile().reply_as_task();
        let fresh = new_task.then(|| Arc::clone(&task));
        // The agent sees a new task as it did before it existed: no task yet, only the message.
        let task = (!new_task).then_some(task);
        let tasks = Some(TaskReader { store: Arc::clone(&self.tasks), scope: scope.clone() });
        let ctx = ExecutionContext { task_id: id, context_id, message, task, request, streaming, cancel, tasks };
        let execution = Execution {
            timed_out: false,
            reply_as_task,
            scope,
            task_id,
            context_id: ctx.context_id.clone(),
            cancel: ctx.cancel.clone(),
            fresh,
            waiter,
        };
        let traced = crate::spans::execution_context(&self.card.public().name, &ctx.task_id, &ctx.context_id);
        let guard = ExecutionGuard {
            core: Arc::clone(self),
            scope: execution.scope.clone(),
            task_id: Arc::clone(&execution.task_id),
            armed: true,
        };
        // A task written first is written before its agent is even asked: a refused write (an
        // id or an idempotency key taken) starts no work at all.
        let agent = match &first_write {
            FirstWrite::Create(creation) if creation.write_first => Agent::Waiting(Box::new(ctx)),
            _ => Agent::Started(self.agent.execute(ctx)),
        };
        Arc::clone(self).drive(execution, first_write, agent, guard).with_context(traced)
    }

    /// Reads the agent's events until it stops or the task ends. The events the agent has
    /// already queued when one arrives are committed with it, in one store write (see
    /// [`ready_events`]). Handling them is boxed: an execution's future is held for as long as
    /// its agent works or waits, so it keeps only what the wait needs.
    async fn drive(
        self: Arc<Self>,
        mut execution: Execution,
        first_write: FirstWrite,
        agent: Agent,
        guard: ExecutionGuard,
    ) {
        {
            let cancel = execution.cancel.clone();
            // One wait for the whole execution: a wait made afresh for each event would join and
            // leave the token's list of waiters every time.
            let mut cancelled = std::pin::pin!(cancel.cancelled());
            let mut grace_deadline: Option<Instant> = None;
            let limit = self.limits.max_execution;
            let execution_deadline = limit.map(|limit| Instant::now() + limit);
            // One timer for the whole execution, like the wait for cancellation.
            let mut past_limit = std::pin::pin!(sleep_until(execution_deadline));
            // The send's own write goes first, with whatever the agent does before it first waits.
            let mut batch = Vec::new();
            let mut agent = agent;
            let agent_ended = match &mut agent {
                Agent::Started(events) => ready_events(events, &mut batch).await,
                Agent::Waiting(_) => false,
            };
            let flow = match first_write {
                FirstWrite::Create(creation) => Box::pin(self.create_task(&mut execution, creation, &mut batch)).await,
                FirstWrite::Append(appending) => {
                    Box::pin(self.append_message(&mut execution, appending, &mut batch)).await
                }
            };
            let mut stopped = agent_ended || flow.is_break();
            let mut events: EventStream = match agent {
                Agent::Started(events) => events,
                Agent::Waiting(ctx) if !stopped => self.agent.execute(*ctx),
                Agent::Waiting(_) => Box::pin(futures_util::stream::empty()),
            };
            while !stopped {
                let next = tokio::select! {
                    event = events.next() => event,
                    () = &mut cancelled, if grace_deadline.is_none() => {
                        grace_deadline = Some(Instant::now() + self.limits.cancel_grace);
                        continue;
                    }
                    () = &mut past_limit, if execution_deadline.is_some() && !execution.timed_out => {
                        tracing::warn!(limit = ?limit, "the execution ran past its limit; canceling it");
                        execution.timed_out = true;
                        execution.cancel.cancel();
                        continue;
                    }
                    () = sleep_until(grace_deadline), if grace_deadline.is_some() => {
                        tracing::warn!("execution ignored cancellation; canceling the task without it");
                        break;
                    }
                };
                let Some(event) = next else { break };
                stopped = Box::pin(self.handle(&mut execution, &mut events, event)).await.is_break();
            }
            drop(events);
            self.wind_up(&mut execution).await;
        }
        guard.disarm();
    }

    /// Commits `event` and the events the agent has queued behind it, creating the task with them
    /// if this is the first. Each store write takes as many events as it can, in order, and ends
    /// after an event that settles the task, so that a waiting caller gets the task in exactly
    /// that state. Breaks when the task has ended or the agent has.
    async fn handle(&self, execution: &mut Execution, events: &mut EventStream, event: AgentEvent) -> ControlFlow<()> {
        let mut batch = vec![event];
        let agent_ended = ready_events(events, &mut batch).await;
        let flow = self.commit_batch(execution, &mut batch).await;
        if agent_ended {
            return ControlFlow::Break(());
        }
        flow
    }

    /// Writes a new task with the events its agent produced before it first waited (`batch`,
    /// none if it waits at once or the task is written first): one commit for a send whose agent
    /// answers at once. Tells the send how it went, then commits what the write left of `batch`.
    /// A direct reply writes no task.
    async fn create_task(
        &self,
        execution: &mut Execution,
        creation: Creation,
        batch: &mut Vec<AgentEvent>,
    ) -> ControlFlow<()> {
        let Creation { push, place, written, key, reserved, .. } = creation;
        if let Some(reply) = direct_reply(execution, batch) {
            execution.fresh = None;
            self.reply(execution, reply);
            let _ = written.send(Ok(None));
            return ControlFlow::Break(());
        }
        let Some(created) = execution.fresh.take() else { return ControlFlow::Break(()) };
        let announcement = Arc::new(StreamResponse::Task(Task::clone(&created)));
        // The send no longer holds the task: the events fold into it without another copy.
        let mut task = Arc::unwrap_or_clone(created);
        let mut events = Vec::new();
        let mut ready = std::mem::take(batch).into_iter();
        let (taken, refused) = apply_ready(&mut task, ready.by_ref(), &mut events, self.limits.max_task_bytes);
        batch.extend(ready);
        report_refused(refused);
        super::trim_history(&mut task, self.limits.max_history_length);
        let task = Arc::new(task);
        let events: Vec<_> =
            std::iter::once(Arc::clone(&announcement)).chain(events.into_iter().map(Arc::new)).collect();
        // A new task's version is the length of its log.
        let version = events.len() as u64;
        let created =
            self.create(&execution.scope, &task, events, push.as_ref(), key.as_ref(), reserved.as_ref()).await;
        // Written or not, the key is no longer this send's to hold.
        drop(reserved);
        match created {
            Ok(None) => {}
            // Nothing was written: there is no task to end or hand over, and the send fails
            // with the reason, or answers with the task of the send that holds its key.
            refused => {
                execution.waiter = None;
                let _ = written.send(refused);
                return ControlFlow::Break(());
            }
        }
        drop(place);
        let _ = written.send(Ok(None));
        if taken == 0 {
            // The agent has not taken the task on yet: it is still as created.
            execution.fresh = Some(Arc::clone(&task));
        } else if execution.waiter.as_ref().is_some_and(|w| w.on_creation) {
            // The agent took the task on: a caller who returns immediately gets it as created.
            if let StreamResponse::Task(created) = &*announcement {
                settle_if(&mut execution.waiter, &Arc::new(created.clone()), CREATED_VERSION, |_| true);
            }
        }
        settle_if(&mut execution.waiter, &task, version, |_| settles(&task));
        if task.status.state.is_terminal() {
            return ControlFlow::Break(());
        }
        self.commit_batch(execution, batch).await
    }

    /// Appends the message that started this execution to its task, with the events its agent
    /// produced before it first waited (`batch`): one commit for a turn whose agent answers at
    /// once. Tells the send how it went, then commits what the write left of `batch`.
    async fn append_message(
        &self,
        execution: &mut Execution,
        appending: Appending,
        batch: &mut Vec<AgentEvent>,
    ) -> ControlFlow<()> {
        let Appending { message, keep_snapshot, expected_version, place, written } = appending;
        let (max_history, max_task_bytes) = (self.limits.max_history_length, self.limits.max_task_bytes);
        let mut outcome = (0, Vec::new(), 0, None);
        let mut change = |task: &mut Task| {
            if task.status.state.is_terminal() {
                return Err(super::validate::terminal_task(task));
            }
            // A retry after a conflict applies the message and the events again to the fresh task.
            let mut events = vec![add_user_message(task, message.clone())];
            // The message is what an interrupted task waited for: it is the agent's turn again.
            // As the message's commit says so, a stream of the turn opens with the task working,
            // not with the question it answers (which a client takes for the end of the turn).
            if task.status.state.is_interrupted() {
                let working = AgentEvent::Status { state: TaskState::Working, message: None, metadata: None };
                events.extend(apply(task, working).ok());
            }
            let snapshot = keep_snapshot.then(|| {
                let mut snapshot = task.clone();
                super::trim_history(&mut snapshot, max_history);
                Arc::new(snapshot)
            });
            let (taken, refused) = apply_ready(task, batch.iter().cloned(), &mut events, max_task_bytes);
            outcome = (taken, refused, events.len(), snapshot);
            Ok(events)
        };
        let (scope, task_id) = (&execution.scope, &*execution.task_id);
        let committed = match expected_version {
            Some(expected) => self.mutate_at(scope, task_id, expected, &mut change).await,
            None => self.mutate(scope, task_id, &mut change).await,
        };
        drop(place);
        let (taken, refused, written_events, snapshot) = outcome;
        let (task, version) = match committed {
            Ok(committed) => committed,
            Err(error) => {
                // The message was not appended: the send fails with the reason.
                execution.waiter = None;
                let _ = written.send(Err(error));
                return ControlFlow::Break(());
            }
        };
        report_refused(refused);
        let _ = written.send(Ok(Appended { snapshot, seq: version + 1 - written_events as u64 }));
        batch.drain(..taken);
        // Until the agent answers, the task is working on this message.
        settle_if(&mut execution.waiter, &task, version, |_| taken > 0 && settles(&task));
        if task.status.state.is_terminal() {
            return ControlFlow::Break(());
        }
        self.commit_batch(execution, batch).await
    }

    /// Commits `batch` (see [`handle`](Self::handle)).
    async fn commit_batch(&self, execution: &mut Execution, batch: &mut Vec<AgentEvent>) -> ControlFlow<()> {
        if let Some(reply) = direct_reply(execution, batch) {
            if let Err(error) = self.tasks.delete(&execution.scope, &execution.task_id).await {
                tracing::warn!(%error, "could not remove the task a direct reply made unnecessary");
            }
            self.reply(execution, reply);
            return ControlFlow::Break(());
        }
        if let Some(created) = execution.fresh.take_if(|_| !batch.is_empty()) {
            // The agent took the task on: a caller who returns immediately gets it as created.
            settle_if(&mut execution.waiter, &created, CREATED_VERSION, |w| w.on_creation);
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
            waiter.settle(Settled::Reply(Box::new(reply.clone())));
        }
        let event = Some(Arc::new(StreamResponse::Message(reply)));
        self.bus.publish(&execution.scope, &execution.task_id, Notice::Event { seq: 0, event });
    }

    /// After the agent stopped: ends a task it left without a word, cancels the task if asked to,
    /// answers a caller still waiting, and tells readers the execution ended.
    async fn wind_up(&self, execution: &mut Execution) {
        if execution.fresh.take().is_some() {
            let reason = "the agent ended without producing anything";
            tracing::warn!("{reason}");
            let mut change = |task: &mut Task| Ok(ending_events(task, TaskState::Failed, Some(reason)));
            if let Err(error) = self.mutate(&execution.scope, &execution.task_id, &mut change).await {
                tracing::warn!(%error, "could not fail a task its agent left untouched");
            }
            // A caller waiting gets InvalidAgentResponse: the agent answered nothing.
            execution.waiter = None;
        }
        if execution.cancel.is_cancelled() || execution.waiter.is_some() {
            self.settle_unfinished(execution).await;
        }
        self.cancel.finished(&execution.scope, &execution.task_id);
        self.bus.publish(&execution.scope, &execution.task_id, Notice::Ended);
    }

    /// Cancels the task of a canceled execution, and hands a caller still waiting the task as it is.
    async fn settle_unfinished(&self, execution: &mut Execution) {
        let task_id = &*execution.task_id;
        self.finish(execution, execution.cancel.is_cancelled()).await;
        if let Some(waiter) = execution.waiter.take() {
            // The agent stopped before the task settled: the caller gets the task as it is.
            match self.load(&execution.scope, task_id).await {
                Ok(record) => waiter.settle(Settled::Task(record.task, record.version)),
                Err(error) => tracing::warn!(%error, "could not read the task back"),
            }
        }
    }

    /// Commits the ready events at the front of `batch` in one store write, and removes them.
    async fn commit_events(&self, execution: &mut Execution, batch: &mut Vec<AgentEvent>) -> ControlFlow<()> {
        let (task_id, max_task_bytes) = (&*execution.task_id, self.limits.max_task_bytes);
        let mut outcome = (0, Vec::new());
        let mut change = |task: &mut Task| {
            // A retry after a conflict applies the same events again to the fresh task.
            let mut events = Vec::new();
            outcome = apply_ready(task, batch.iter().cloned(), &mut events, max_task_bytes);
            Ok(events)
        };
        let committed = self.mutate(&execution.scope, task_id, &mut change).await;
        let (taken, refused) = outcome;
        report_refused(refused);
        let (task, version) = match committed {
            Ok(committed) => committed,
            Err(error) => {
                tracing::warn!(%error, "agent events rejected");
                batch.clear();
                return ControlFlow::Continue(());
            }
        };
        batch.drain(..taken);
        // Until the agent answers, the task is working on this message.
        settle_if(&mut execution.waiter, &task, version, |_| taken > 0 && settles(&task));
        if task.status.state.is_terminal() {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    /// After the agent stopped: a canceled execution that did not end the task cancels it; one
    /// canceled for running past its limit fails it.
    async fn finish(&self, execution: &Execution, canceled: bool) {
        if !canceled {
            return;
        }
        if execution.timed_out {
            let limit = self.limits.max_execution.unwrap_or_default();
            let reason = format!("the execution ran longer than {} and was stopped", super::expiry::shown(limit));
            let mut failed = false;
            let mut change = |task: &mut Task| {
                let events = ending_events(task, TaskState::Failed, Some(&reason));
                failed = !events.is_empty();
                Ok(events)
            };
            match self.mutate(&execution.scope, &execution.task_id, &mut change).await {
                Ok(_) if failed => self.count_expired(super::expiry::Expired::Execution),
                Ok(_) => {}
                Err(error) => tracing::warn!(%error, "could not fail the task of an execution past its limit"),
            }
            return;
        }
        let result = self.mutate(&execution.scope, &execution.task_id, &mut |task| Ok(cancel_events(task))).await;
        if let Err(error) = result {
            tracing::warn!(%error, "could not mark the task canceled");
        }
    }
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

/// The reply of an agent that answered a new task's message with a message: it makes no task, and
/// nothing after it counts. In the legacy family, where every send is answered with a task, the
/// reply completes the task instead (as its status message, and so in its history) and `batch`
/// says so.
fn direct_reply(execution: &Execution, batch: &mut Vec<AgentEvent>) -> Option<Message> {
    execution.fresh.as_ref()?;
    let Some(AgentEvent::Message(reply)) = batch.first_mut() else { return None };
    let reply = std::mem::take(reply);
    batch.truncate(1);
    if execution.reply_as_task {
        batch[0] = AgentEvent::Status { state: TaskState::Completed, message: Some(reply), metadata: None };
        return None;
    }
    batch.clear();
    Some(reply)
}

fn report_refused(refused: Vec<A2AError>) {
    for error in refused {
        tracing::warn!(%error, "agent event rejected");
    }
}

/// Hands `task`, at `version`, to the waiting request, if there is one and `ready` says so.
fn settle_if(waiter: &mut Option<Waiter>, task: &Arc<Task>, version: u64, ready: impl FnOnce(&Waiter) -> bool) {
    if let Some(waiter) = waiter.take_if(|w| ready(w)) {
        waiter.settle(Settled::Task(Arc::clone(task), version));
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}
