//! The hand-off between a send and the execution it starts: the execution writes the send's
//! message together with its agent's first events (one commit), tells the send it is written,
//! and hands a blocking send the task once it settles.

use std::sync::Arc;

use agentwire_store::Scope;
use agentwire_types::{A2AError, Message, Task};
use tokio::sync::oneshot;

/// One execution, ready to start: what its [`ExecutionContext`](crate::agent::ExecutionContext) is built from (the cancellation
/// token comes from the task's running executions).
pub(crate) struct Run {
    pub(crate) scope: Scope,
    pub(crate) task_id: String,
    pub(crate) context_id: String,
    /// The message that starts this execution.
    pub(crate) message: Message,
    /// The task with the new message in its history.
    pub(crate) task: Arc<Task>,
    /// What the execution writes with its agent's first events: a new task (`task` as created),
    /// or the message appended to an existing one (`task` with it).
    pub(crate) first_write: FirstWrite,
    pub(crate) request: crate::RequestContext,
    pub(crate) streaming: bool,
    /// A blocking SendMessage waiting for this execution's result.
    pub(crate) waiter: Option<Waiter>,
}

/// What a send writes with its agent's first events, in one commit; the send waits for it.
pub(crate) enum FirstWrite {
    /// A new task.
    Create(Creation),
    /// The message, appended to an existing task.
    Append(Appending),
}

/// A message to append to an existing task.
pub(crate) struct Appending {
    /// The message, with its task's id.
    pub(crate) message: Message,
    /// Whether the send needs the task as the message left it (a stream opens with it; a
    /// `returnImmediately` caller gets it): copying it costs the whole task.
    pub(crate) keep_snapshot: bool,
    /// Append only if the task is still at this version (a send's precondition on its
    /// generation); any version when `None`.
    pub(crate) expected_version: Option<u64>,
    /// The message's place under its principal's limits of work in progress, until it is written.
    pub(crate) place: super::admission::Place,
    /// Told how the message was written, or why it was refused.
    pub(crate) written: oneshot::Sender<Result<Appended, A2AError>>,
}

/// A message appended to its task.
pub(crate) struct Appended {
    /// The task as the message left it, if [`Appending::keep_snapshot`] asked for it.
    pub(crate) snapshot: Option<Arc<Task>>,
    /// The message's sequence number in the task's log.
    pub(crate) seq: u64,
}

/// A new task to write.
pub(crate) struct Creation {
    /// The push config given with the send, stored with the task.
    pub(crate) push: Option<agentwire_store::PushConfigRecord>,
    /// The task's place under its principal's limits of work in progress, until it is written.
    pub(crate) place: super::admission::Place,
    /// Write the task before the agent starts: its id was chosen by the client, or its send
    /// carries an idempotency key, and whether the id or the key is taken is only known once the
    /// store has it.
    pub(crate) write_first: bool,
    /// The send's idempotency key, recorded with the task.
    pub(crate) key: Option<agentwire_store::SendKey>,
    /// The key's reservation, held until the task is written (or is not).
    pub(crate) reserved: Option<agentwire_store::KeyGuard>,
    /// Told when the task is written, or why it was not; a direct reply writes none. A key held
    /// already writes nothing either: the send that holds it is told instead, and the agent
    /// never starts.
    pub(crate) written: oneshot::Sender<Result<Option<agentwire_store::KeyedSend>, A2AError>>,
}

/// What a blocking SendMessage gets from the execution it started.
#[derive(Debug)]
pub(crate) enum Settled {
    /// The agent answered with a message and created no task.
    Reply(Box<Message>),
    /// The task as committed when it settled, and its version.
    Task(Arc<Task>, u64),
}

/// The request side of a blocking SendMessage: the execution hands it the result directly, so the
/// request is woken once instead of once per event.
pub(crate) struct Waiter {
    tx: oneshot::Sender<Settled>,
    /// `returnImmediately`: hand over the task as soon as the agent has taken it on.
    pub(super) on_creation: bool,
}

impl Waiter {
    pub(crate) fn new(on_creation: bool) -> (Self, oneshot::Receiver<Settled>) {
        let (tx, rx) = oneshot::channel();
        (Self { tx, on_creation }, rx)
    }

    pub(super) fn settle(self, result: Settled) {
        // The request may be gone (client disconnected); the task lives on regardless.
        let _ = self.tx.send(result);
    }
}
