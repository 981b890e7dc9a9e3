//! SendMessage and SendStreamingMessage.

use std::sync::Arc;

use agentwire_store::Scope;
use agentwire_types::{
    A2AError, Dialect, ErrorKind, Message, Result, SendMessageRequest, SendMessageResponse, StreamResponse, Task,
    TaskPushNotificationConfig, TaskState, TaskStatus,
};
use tokio::sync::oneshot;

use agentwire_store::{Reservation, SendKey, TaskRecord};
use agentwire_types::dialect::EndedSubscription;

use super::apply::add_user_message;
use super::feed::{task_event_stream, EventFeed, Opening};
use super::generation::{generation, stamped, stamped_stream};
use super::idempotency;
use super::turn::{Appended, Appending, Creation, FirstWrite, Run, Settled, Waiter};
use super::{store_error, validate, Core};
use crate::context::scope;
use crate::ids::new_id;
use crate::RequestContext;
use agentwire_types::{StreamItem, TaskEventStream};

/// How the request that starts an execution follows it.
#[derive(Clone, Copy)]
enum Follow {
    /// SendStreamingMessage: every event, through the task's feed.
    Stream,
    /// SendMessage: one result, handed over by the execution.
    Block { return_immediately: bool },
}

/// What the request follows the execution with.
enum Following {
    Feed(EventFeed),
    Result(oneshot::Receiver<Settled>),
    /// The send repeats an earlier one (its idempotency key, or its message already in the
    /// task): no execution starts, and the send answers the earlier one's task as it is now.
    Repeat {
        scope: Scope,
        task_id: String,
    },
}

/// A started execution, seen from the request that started it.
struct Started {
    following: Following,
    /// The task with the new message, and the message's sequence number: kept for a stream,
    /// which opens with it, and for a turn that returns immediately. A blocking send answers with
    /// what the execution hands over instead (not holding the task lets the execution change it
    /// without a copy).
    snapshot: Option<(Arc<Task>, u64)>,
    /// Whether the send created the task.
    new_task: bool,
    history_length: Option<usize>,
}

/// A send that passed its checks, ready to start.
struct Checked {
    ctx: RequestContext,
    scope: Scope,
    message: Message,
    /// The memory the message takes ([`MemorySize`](agentwire_types::MemorySize)).
    message_bytes: usize,
    history_length: Option<usize>,
    push: Option<TaskPushNotificationConfig>,
    follow: Follow,
    /// The send's idempotency key.
    key: Option<SendKey>,
    /// The generation a message to an existing task expects it at (the dev-1.1 draft's
    /// `ifGenerationMatch`, from a caller asking for it).
    expected_generation: Option<i64>,
}

impl Core {
    /// Starts the execution a send asks for: a new task, or the next turn of an existing one.
    async fn start(self: &Arc<Self>, ctx: RequestContext, req: SendMessageRequest, follow: Follow) -> Result<Started> {
        let mut send = self.check(ctx, req, follow)?;
        let task_id = std::mem::take(&mut send.message.task_id);
        if !task_id.is_empty() {
            match self.load(&send.scope, &task_id).await {
                Ok(record) if send.key.is_some() && has_message(&record.task, &send.message.message_id) => {
                    // A keyed turn whose message the task holds already: a retry of it.
                    let history_length = send.history_length;
                    return Ok(Started::repeat(send.scope, task_id, history_length));
                }
                Ok(record) => {
                    send.message.task_id = task_id;
                    return self.continue_task(send, record).await;
                }
                // Where the client chooses a new task's id (the legacy `tasks/send`'s `id`), an
                // unknown id names the task to create; elsewhere it is TaskNotFound.
                Err(error)
                    if error.kind() == ErrorKind::TaskNotFound
                        && send.ctx.dialect.profile().client_names_new_tasks() => {}
                Err(error) => return Err(error),
            }
        }
        let client_named = !task_id.is_empty();
        let task_id = if client_named {
            validate::client_task_id(&task_id, self.limits.max_client_task_id_bytes)?;
            task_id
        } else {
            new_id()
        };
        self.start_new_task(send, task_id, client_named).await
    }

    fn check(&self, mut ctx: RequestContext, mut req: SendMessageRequest, follow: Follow) -> Result<Checked> {
        // Taken from the request as the client sent it, before any id is given to its message.
        let key = idempotency::send_key(&ctx, &req, &self.limits)?;
        if !req.tenant.is_empty() {
            ctx.tenant = std::mem::take(&mut req.tenant);
        }
        if ctx.dialect.profile().client_names_new_tasks() && req.message.message_id.is_empty() {
            // v0.1 messages have no id of their own.
            req.message.message_id = new_id();
        }
        let message_bytes = validate::message(&req.message, self.limits.max_message_bytes)?;
        validate::required_extensions(self.card.required_extensions(), &ctx.extensions)?;
        validate::check_input_modes(self.card.public(), &req.message)?;
        let config = req.configuration.unwrap_or_default();
        let expected_generation = config.if_generation_match.filter(|_| ctx.task_generations);
        let history_length = validate::history_length(config.history_length)?;
        if config.task_push_notification_config.is_some() && !self.push_enabled() {
            return Err(A2AError::push_notification_not_supported());
        }
        let scope = scope(&ctx, "");
        let push = config.task_push_notification_config;
        if let Some(push) = &push {
            self.push_settings.guard.check_url(&push.url)?;
        }
        let message = req.message;
        Ok(Checked { ctx, scope, message, message_bytes, history_length, push, follow, key, expected_generation })
    }

    /// Starts a new task at SUBMITTED with the message. Its execution writes it before the agent
    /// starts waiting: together with the agent's first events when it answers at once (one
    /// commit), alone otherwise, so that an accepted send leaves a record whatever happens next.
    /// The send waits for that write, and fails if the store refuses it.
    ///
    /// A send with an idempotency key held already is answered with the task of the send that
    /// holds it, and starts nothing. Where the store reserves the key for the send (a store this
    /// process alone writes), the key is written with the task; elsewhere the task and its key
    /// are written before the agent starts, and a key found held then starts nothing either.
    async fn start_new_task(self: &Arc<Self>, send: Checked, task_id: String, client_named: bool) -> Result<Started> {
        let Checked { ctx, scope, message, message_bytes, history_length, push, follow, key, .. } = send;
        let context_id = if message.context_id.is_empty() { new_id() } else { message.context_id.clone() };
        let first = Message { task_id: task_id.clone(), context_id: context_id.clone(), ..message.clone() };
        let task = Arc::new(Task {
            id: task_id.clone(),
            context_id: context_id.clone(),
            status: TaskStatus::new(TaskState::Submitted),
            history: vec![first],
            // Who asked through whom, for the console and for audits: only for a caller whose
            // token names parties acting for it (a task's own caller is otherwise its owner).
            metadata: ctx.principal.as_ref().filter(|principal| principal.claims.contains_key("act")).map(
                |principal| serde_json::Map::from_iter([(agentwire_types::CALLER_KEY.to_owned(), principal.record())]),
            ),
            ..Task::default()
        });
        let push = push
            .map(|config| {
                let config = TaskPushNotificationConfig { task_id: task_id.clone(), ..config };
                self.push_record(&scope, config, ctx.dialect)
            })
            .transpose()?;
        // A key the store can reserve lets the agent start at once, its task and the key written
        // with its first events; otherwise the task is written first.
        let (write_first, reserved) = match &key {
            Some(key) if !client_named => match self.tasks.reserve_key(&scope, key).await.map_err(store_error)? {
                Reservation::Held(held) => {
                    idempotency::check_repeat(&held, key)?;
                    return Ok(Started::repeat(scope, held.task_id, history_length));
                }
                Reservation::Reserved(guard) => (false, Some(guard)),
                Reservation::Unchecked => (true, None),
            },
            Some(_) => (true, None),
            None => (client_named, None),
        };
        let place = self.admit(&scope, true, message_bytes).await?;
        let (mut following, waiter) = self.follow(follow, &scope, &task_id);
        if let Following::Feed(feed) = &mut following {
            // The task's first event, which announces it, is the one the stream opens with.
            feed.start_after(CREATED_VERSION);
        }
        let snapshot = matches!(follow, Follow::Stream).then(|| (Arc::clone(&task), CREATED_VERSION));
        let (written, creation_result) = oneshot::channel();
        let asked = key.as_ref().map(|key| (key.clone(), scope.clone()));
        let creation = Creation { push, place, write_first, key, reserved, written };
        let run = Run {
            scope,
            task_id,
            context_id,
            message,
            task,
            first_write: FirstWrite::Create(creation),
            request: ctx,
            streaming: matches!(follow, Follow::Stream),
            waiter,
        };
        self.launch(run);
        let held = creation_result
            .await
            .map_err(|_| A2AError::invalid_agent_response("the agent stopped before its task was stored"))??;
        if let (Some(held), Some((key, scope))) = (held, asked) {
            idempotency::check_repeat(&held, &key)?;
            return Ok(Started::repeat(scope, held.task_id, history_length));
        }
        Ok(Started { following, snapshot, new_task: true, history_length })
    }

    /// A message that continues `existing`. Its execution appends it to the history together with
    /// the events the agent produces before it first waits (one commit for a turn whose agent
    /// answers at once, the message alone otherwise); the send waits for that write.
    ///
    /// A send that expects the task at a generation (the dev-1.1 draft's `ifGenerationMatch`) is
    /// refused with TaskGenerationMismatch unless the task is at it, now and when the message is
    /// written.
    async fn continue_task(self: &Arc<Self>, send: Checked, existing: TaskRecord) -> Result<Started> {
        let Checked { ctx, scope, message, message_bytes, history_length, push, follow, expected_generation, .. } =
            send;
        let task_id = message.task_id.clone();
        let expected_version = match expected_generation {
            Some(expected) if expected != generation(existing.version) => {
                return Err(A2AError::task_generation_mismatch(&task_id, expected, generation(existing.version)));
            }
            Some(_) => Some(existing.version),
            None => None,
        };
        let existing = existing.task;
        if existing.status.state.is_terminal() {
            return Err(validate::terminal_task(&existing));
        }
        if !message.context_id.is_empty() && message.context_id != existing.context_id {
            return Err(A2AError::invalid_params(format!(
                "message.contextId {:?} does not match the contextId of task {task_id}",
                message.context_id
            )));
        }
        if let Some(push) = push {
            // Stored before the message, so that its webhook is due the message and what follows.
            self.register_push_config(&scope, &task_id, push, ctx.dialect).await?;
        }
        super::validate::task_size(&existing, message_bytes, self.limits.max_task_bytes)?;
        let place = self.admit(&scope, false, message_bytes).await?;
        // What the agent sees: the task with the message, as the commit will make it.
        let mut task = Arc::unwrap_or_clone(existing);
        add_user_message(&mut task, message.clone());
        super::trim_history(&mut task, self.limits.max_history_length);
        let keep_snapshot = matches!(follow, Follow::Stream | Follow::Block { return_immediately: true });
        let (mut following, waiter) = self.follow(follow, &scope, &task_id);
        let (written, append_result) = oneshot::channel();
        let appending = Appending { message: message.clone(), keep_snapshot, expected_version, place, written };
        let run = Run {
            scope,
            task_id,
            context_id: task.context_id.clone(),
            message,
            task: Arc::new(task),
            first_write: FirstWrite::Append(appending),
            request: ctx,
            streaming: matches!(follow, Follow::Stream),
            waiter,
        };
        self.launch(run);
        let Appended { snapshot, seq } = append_result
            .await
            .map_err(|_| A2AError::invalid_agent_response("the agent stopped before the message was stored"))??;
        if let Following::Feed(feed) = &mut following {
            feed.start_after(seq);
        }
        Ok(Started { following, snapshot: snapshot.map(|task| (task, seq)), new_task: false, history_length })
    }

    /// Attaches the request to the execution it is about to start: a stream subscribes now, so
    /// that it misses nothing; a blocking send gets the execution's one hand-over.
    fn follow(&self, follow: Follow, scope: &Scope, task_id: &str) -> (Following, Option<Waiter>) {
        match follow {
            Follow::Stream => {
                let feed = self.feed(scope, task_id);
                (Following::Feed(feed), None)
            }
            Follow::Block { return_immediately } => {
                let (waiter, result) = Waiter::new(return_immediately);
                (Following::Result(result), Some(waiter))
            }
        }
    }

    async fn register_push_config(
        &self,
        scope: &Scope,
        task_id: &str,
        config: TaskPushNotificationConfig,
        dialect: Dialect,
    ) -> Result<()> {
        let config = TaskPushNotificationConfig { task_id: task_id.to_owned(), ..config };
        self.store_push_config(scope, config, dialect).await.map(drop)
    }

    pub(crate) async fn send_message(
        self: &Arc<Self>,
        ctx: RequestContext,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse> {
        let return_immediately = req.configuration.as_ref().is_some_and(|c| c.return_immediately);
        let generations = ctx.task_generations;
        let Started { following, snapshot, new_task, history_length } =
            self.start(ctx, req, Follow::Block { return_immediately }).await?;
        let result = match following {
            Following::Result(result) => result,
            Following::Repeat { scope, task_id } => {
                let record = self.load(&scope, &task_id).await?;
                let task = stamped(generations, record.task.view(history_length, true), record.version);
                return Ok(SendMessageResponse::Task(task));
            }
            Following::Feed(_) => return Err(A2AError::internal("a blocking send lost its execution's result")),
        };
        let settled = match snapshot {
            // A continuation that returns immediately answers with the task holding the message.
            Some((task, version)) if return_immediately && !new_task => Some(Settled::Task(task, version)),
            // Not held while waiting: the execution's first commit would otherwise have to copy
            // the whole task rather than change the store's in place.
            _ => result.await.ok(),
        };
        match settled {
            Some(Settled::Reply(message)) => Ok(SendMessageResponse::Message(*message)),
            Some(Settled::Task(task, version)) => {
                Ok(SendMessageResponse::Task(stamped(generations, task.view(history_length, true), version)))
            }
            None => Err(A2AError::invalid_agent_response("the agent ended without a reply or a task")),
        }
    }

    pub(crate) async fn send_streaming_message(
        self: &Arc<Self>,
        ctx: RequestContext,
        req: SendMessageRequest,
    ) -> Result<TaskEventStream> {
        if !self.streaming_enabled() {
            return Err(A2AError::unsupported_operation("streaming is not supported by this agent"));
        }
        let (profile, last_event_id, generations) = (ctx.dialect.profile(), ctx.last_event_id, ctx.task_generations);
        let started = self.start(ctx, req, Follow::Stream).await?;
        let feed = match started.following {
            Following::Feed(feed) => feed,
            // A repeated send follows the task it made, from the event the client saw last.
            Following::Repeat { scope, task_id } => {
                let stream =
                    self.task_stream(&scope, &task_id, last_event_id, profile, EndedSubscription::Snapshot).await?;
                return Ok(stamped_stream(generations, stream));
            }
            Following::Result(_) => return Err(A2AError::internal("a streaming send lost its execution's events")),
        };
        let Some((task, seq)) = started.snapshot else {
            return Err(A2AError::internal("a streaming send lost its task"));
        };
        let first = StreamItem { seq, response: Arc::new(StreamResponse::Task(Arc::unwrap_or_clone(task))) };
        // A new task is announced only once the agent takes it on: an agent that replies with a
        // message makes no task, and its stream is the message alone.
        let opening = if started.new_task { Opening::UntilTakenOn(first) } else { Opening::Now(first) };
        Ok(stamped_stream(generations, task_event_stream(feed, opening, true, profile)))
    }
}

impl Started {
    /// The answer to a send that repeats the one that made `task_id`.
    fn repeat(scope: Scope, task_id: String, history_length: Option<usize>) -> Self {
        Started { following: Following::Repeat { scope, task_id }, snapshot: None, new_task: false, history_length }
    }
}

/// Whether `task` holds a message with this id.
fn has_message(task: &Task, message_id: &str) -> bool {
    !message_id.is_empty() && task.history.iter().any(|message| message.message_id == message_id)
}

/// The version of a task as created: its log holds the one event that announces it.
pub(crate) const CREATED_VERSION: u64 = 1;
