//! `TaskUpdater`: one call per step of an execution.

use std::future::Future;

use agentwire_types::{Artifact, Message, Part, TaskState};

use super::channel::{self, Receiver, Sender};
use super::{AgentEvent, ExecutionContext};

/// An error inside an agent; it fails the task with its text.
pub type AgentError = Box<dyn std::error::Error + Send + Sync>;

/// How many events an execution may run ahead of the server before `send` waits.
const UPDATE_BUFFER: usize = 32;

/// Sends an execution's events. Each method waits only if the server is behind by more than a
/// small buffer, and fails once the server stopped listening (the execution should then end).
///
/// The methods build their event before returning the future that delivers it, so an agent's own
/// future holds a pointer per pending send rather than the event: an execution that waits (for
/// input, for a long job) stays small.
#[derive(Debug, Clone)]
pub struct TaskUpdater {
    tx: Sender,
    /// Shared by the clones (one per concurrent step of an agent, and one for failures).
    ids: std::sync::Arc<TaskIds>,
}

#[derive(Debug)]
struct TaskIds {
    task_id: String,
    context_id: String,
}

impl TaskUpdater {
    pub(super) fn channel(ctx: &ExecutionContext) -> (Self, Receiver) {
        let (tx, rx) = channel::channel(UPDATE_BUFFER);
        let ids = TaskIds { task_id: ctx.task_id.clone(), context_id: ctx.context_id.clone() };
        (Self { tx, ids: std::sync::Arc::new(ids) }, rx)
    }

    /// Sends any event.
    pub fn send(&self, event: AgentEvent) -> impl Future<Output = Result<(), AgentError>> + Send + '_ {
        let event = Box::new(event);
        async move { self.tx.send(event).await.map_err(|closed| Box::new(closed) as AgentError) }
    }

    /// An agent message in this task, with a fresh id.
    pub fn message(&self, text: impl Into<String>) -> Message {
        Message {
            task_id: self.ids.task_id.clone(),
            context_id: self.ids.context_id.clone(),
            ..Message::agent(crate::core::new_id(), text)
        }
    }

    /// Moves the task to `state`, with an optional message.
    pub fn status(
        &self,
        state: TaskState,
        message: Option<Message>,
    ) -> impl Future<Output = Result<(), AgentError>> + Send + '_ {
        self.send(AgentEvent::Status { state, message, metadata: None })
    }

    /// WORKING.
    pub fn working(&self) -> impl Future<Output = Result<(), AgentError>> + Send + '_ {
        self.status(TaskState::Working, None)
    }

    /// COMPLETED.
    pub fn complete(&self) -> impl Future<Output = Result<(), AgentError>> + Send + '_ {
        self.status(TaskState::Completed, None)
    }

    /// COMPLETED, with a message.
    pub fn complete_with(&self, text: impl Into<String>) -> impl Future<Output = Result<(), AgentError>> + Send + '_ {
        let message = self.message(text);
        self.status(TaskState::Completed, Some(message))
    }

    /// INPUT_REQUIRED, with the question.
    pub fn input_required(
        &self,
        question: impl Into<String>,
    ) -> impl Future<Output = Result<(), AgentError>> + Send + '_ {
        let message = self.message(question);
        self.status(TaskState::InputRequired, Some(message))
    }

    /// AUTH_REQUIRED, with what is needed.
    pub fn auth_required(
        &self,
        explanation: impl Into<String>,
    ) -> impl Future<Output = Result<(), AgentError>> + Send + '_ {
        let message = self.message(explanation);
        self.status(TaskState::AuthRequired, Some(message))
    }

    /// FAILED, with the reason.
    pub fn fail(&self, reason: impl Into<String>) -> impl Future<Output = Result<(), AgentError>> + Send + '_ {
        let message = self.message(reason);
        self.status(TaskState::Failed, Some(message))
    }

    /// REJECTED, with the reason.
    pub fn reject(&self, reason: impl Into<String>) -> impl Future<Output = Result<(), AgentError>> + Send + '_ {
        let message = self.message(reason);
        self.status(TaskState::Rejected, Some(message))
    }

    /// CANCELED.
    pub fn canceled(&self) -> impl Future<Output = Result<(), AgentError>> + Send + '_ {
        self.status(TaskState::Canceled, None)
    }

    /// A whole artifact.
    pub fn add_artifact(&self, artifact: Artifact) -> impl Future<Output = Result<(), AgentError>> + Send + '_ {
        self.send(AgentEvent::Artifact { artifact, append: false, last_chunk: false })
    }

    /// A whole artifact with one text part and a fresh id.
    pub fn add_text_artifact(
        &self,
        name: impl Into<String>,
        text: impl Into<String>,
    ) -> impl Future<Output = Result<(), AgentError>> + Send + '_ {
        self.add_artifact(Artifact::new(crate::core::new_id(), name, vec![Part::text(text)]))
    }

    /// A chunk of artifact `artifact.artifact_id`: `append` adds to what was sent before, and
    /// `last_chunk` marks the end.
    pub fn artifact_chunk(
        &self,
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
    ) -> impl Future<Output = Result<(), AgentError>> + Send + '_ {
        self.send(AgentEvent::Artifact { artifact, append, last_chunk })
    }

    /// A direct message reply. As the first event of a new task it replaces the task entirely.
    pub fn reply(&self, message: Message) -> impl Future<Output = Result<(), AgentError>> + Send + '_ {
        self.send(AgentEvent::Message(message))
    }
}
