//! The agent API: implement [`AgentExecutor`] and the server does the rest.
//!
//! An execution turns one incoming message into a stream of [`AgentEvent`]s. Most agents write it
//! with [`ExecutionContext::run`] and a [`TaskUpdater`], one line per step:
//!
//! ```
//! use agentwire_server::agent::{AgentExecutor, EventStream, ExecutionContext};
//!
//! struct Shout;
//!
//! impl AgentExecutor for Shout {
//!     fn execute(&self, ctx: ExecutionContext) -> EventStream {
//!         ctx.run(|ctx, updater| async move {
//!             updater.working().await?;
//!             updater.add_text_artifact("shout", ctx.message.text().to_uppercase()).await?;
//!             updater.complete().await
//!         })
//!     }
//! }
//! ```

mod conformance;
mod echo;
mod updater;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use agentwire_types::{Artifact, Message, Task, TaskState};
use futures_util::stream::{self, Stream, StreamExt};
use futures_util::FutureExt;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use agentwire_store::{Scope, TaskQuery, TaskStore};

use crate::RequestContext;

pub use conformance::ConformanceAgent;
pub use echo::EchoAgent;
pub use updater::{AgentError, TaskUpdater};

/// What an execution produces, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    /// The task moved to a new state, optionally with a message (the question for
    /// INPUT_REQUIRED, the reason for FAILED, ...).
    Status {
        /// The new state.
        state: TaskState,
        /// An explanation, added to the task's history too.
        message: Option<Message>,
        /// Event metadata.
        metadata: Option<Map<String, Value>>,
    },
    /// An artifact, or a chunk of one.
    Artifact {
        /// The artifact (for a chunk: its id and the new parts).
        artifact: Artifact,
        /// Append to the artifact with the same id instead of replacing it.
        append: bool,
        /// This is the last chunk.
        last_chunk: bool,
    },
    /// A message. As the first event of a new conversation turn it is the whole reply and no
    /// task is created; on an existing task it is added to the history.
    Message(Message),
}

impl AgentEvent {
    /// How much memory the event may add to its task's history and artifacts, as
    /// [`MemorySize`](agentwire_types::MemorySize) estimates it: a message's or an artifact's
    /// (a replaced artifact may add less).
    pub(crate) fn added_size(&self) -> usize {
        use agentwire_types::MemorySize;
        match self {
            Self::Status { message, .. } => message.as_ref().map_or(0, MemorySize::memory_size),
            Self::Artifact { artifact, .. } => artifact.memory_size(),
            Self::Message(message) => message.memory_size(),
        }
    }
}

/// The events of one execution.
pub type EventStream = Pin<Box<dyn Stream<Item = AgentEvent> + Send + 'static>>;

/// User code: turns a message into events.
pub trait AgentExecutor: Send + Sync + 'static {
    /// Starts working on `ctx.message`. The stream may outlive the request that started it; it
    /// should end soon after `ctx.cancellation()` fires (with a CANCELED status, ideally).
    fn execute(&self, ctx: ExecutionContext) -> EventStream;
}

/// Everything an execution needs to know.
#[derive(Debug, Clone)]
pub struct ExecutionContext {
    /// The task the message belongs to (new or existing).
    pub task_id: String,
    /// The task's context.
    pub context_id: String,
    /// The incoming message.
    pub message: Message,
    /// For a continuation, the task with this message already in its history (the conversation
    /// so far); `None` for a new task.
    pub task: Option<Arc<Task>>,
    /// Who asked, for which tenant, with which extensions and protocol version.
    pub request: RequestContext,
    /// Whether the client is reading a stream (SendStreamingMessage) rather than waiting.
    pub streaming: bool,
    pub(crate) cancel: CancellationToken,
    /// Where the caller's other tasks are read from; `None` for a context made by [`Self::new`].
    pub(crate) tasks: Option<TaskReader>,
}

/// The store and the caller's scope in it, for an execution to read the conversation so far.
#[derive(Clone)]
pub(crate) struct TaskReader {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) scope: Scope,
}

impl std::fmt::Debug for TaskReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskReader").field("scope", &self.scope).finish_non_exhaustive()
    }
}

impl ExecutionContext {
    /// A context for `message` on a new task; mostly useful for testing executors directly.
    pub fn new(task_id: impl Into<String>, context_id: impl Into<String>, message: Message) -> Self {
        Self {
            task_id: task_id.into(),
            context_id: context_id.into(),
            message,
            task: None,
            request: RequestContext::default(),
            streaming: false,
            cancel: CancellationToken::new(),
            tasks: None,
        }
    }

    /// The caller's earlier tasks in this context, oldest first, with their history and
    /// artifacts: the conversation before this task, for an agent that answers in context. The
    /// newest are kept: the list ends before the task that would take it past `max_bytes` (as
    /// [`MemorySize`](agentwire_types::MemorySize) estimates it), and holds at most 100 tasks.
    /// A context made by [`ExecutionContext::new`] has none.
    ///
    /// ```
    /// use agentwire_server::agent::ExecutionContext;
    /// use agentwire_types::Message;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let ctx = ExecutionContext::new("t2", "c1", Message::user("m2", "and in Celsius?"));
    /// assert!(ctx.earlier_tasks(64 * 1024).await.unwrap().is_empty());
    /// # });
    /// ```
    pub async fn earlier_tasks(&self, max_bytes: usize) -> Result<Vec<Task>, AgentError> {
        const MAX_TASKS: usize = 100;
        let Some(reader) = &self.tasks else { return Ok(Vec::new()) };
        let query = TaskQuery {
            context_id: Some(self.context_id.clone()),
            page_size: MAX_TASKS,
            include_artifacts: true,
            max_bytes: Some(max_bytes),
            ..TaskQuery::default()
        };
        let page = reader.store.list(&reader.scope, &query).await?;
        // Newest first from the store; a single task larger than the budget is left out too.
        let mut tasks: Vec<Task> = page
            .tasks
            .into_iter()
            .filter(|task| task.id != self.task_id)
            .scan(0usize, |used, task| {
                *used += agentwire_types::MemorySize::memory_size(&task);
                Some((*used <= max_bytes).then_some(task))
            })
            .map_while(|task| task)
            .collect();
        tasks.reverse();
        Ok(tasks)
    }

    /// Fires when a client cancels the task.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// The first user message of the task (the one that created it), or this message for a new task.
    pub fn first_message(&self) -> &Message {
        self.task
            .as_ref()
            .and_then(|t| t.history.iter().find(|m| m.role == agentwire_types::Role::User))
            .unwrap_or(&self.message)
    }

    /// An agent message in this task and context, with a fresh id.
    pub fn agent_message(&self, text: impl Into<String>) -> Message {
        Message {
            task_id: self.task_id.clone(),
            context_id: self.context_id.clone(),
            ..Message::agent(crate::ids::new_id(), text)
        }
    }

    /// Runs `body` with a [`TaskUpdater`] and returns the events it sends, in order. An error
    /// returned by `body` becomes a FAILED status carrying the error text.
    pub fn run<F, Fut>(self, body: F) -> EventStream
    where
        F: FnOnce(ExecutionContext, TaskUpdater) -> Fut,
        Fut: Future<Output = Result<(), AgentError>> + Send + 'static,
    {
        let (updater, mut receiver) = TaskUpdater::channel(&self);
        let failure_sink = updater.clone();
        // `then` rather than an async block awaiting `body`: the block would hold the agent's
        // future twice, as its capture and as the future it awaits, for as long as the agent runs.
        let driver = body(self, updater).then(move |result| async move {
            if let Err(error) = result {
                let _ = failure_sink.fail(error.to_string()).await;
            }
        });
        // The driver yields nothing: it runs alongside the channel, in the same task, so an
        // execution needs no task of its own for its agent. The bounded channel makes a busy agent
        // wait for its reader.
        let driver = stream::once(driver).filter_map(|()| std::future::ready(None));
        let events = stream::poll_fn(move |cx| receiver.poll_recv(cx).map(|event| event.map(|e| *e)));
        Box::pin(stream::select(driver, events))
    }
}
