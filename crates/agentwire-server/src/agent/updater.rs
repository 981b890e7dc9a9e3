//! `TaskUpdater`: one call per step of an execution.

use std::sync::Arc;

use agentwire_types::{Artifact, Message, Part, TaskState};
use tokio::sync::mpsc;

use super::{AgentEvent, ExecutionContext};

/// An error inside an agent; it fails the task with its text.
pub type AgentError = Box<dyn std::error::Error + Send + Sync>;

/// How many events an execution may run ahead of the server before `send` waits.
const UPDATE_BUFFER: usize = 32;

/// Sends an execution's events. Each method waits only if the server is behind by more than a
/// small buffer, and fails once the server stopped listening (the execution should then end).
#[derive(Debug, Clone)]
pub struct TaskUpdater {
    /// Events are boxed: the channel keeps room for a whole buffer of them for as long as the
    /// execution lives, and an idle execution should hold pointers, not events.
    tx: mpsc::Sender<Box<AgentEvent>>,
    /// Shared by the clones (one per concurrent step of an agent, and one for failures).
    ids: Arc<TaskIds>,
}

/// The server stopped reading the execution's events; the event was not delivered.
#[derive(Debug, thiserror::Error)]
#[error("the execution's events are no longer read")]
struct Closed;

#[derive(Debug)]
struct TaskIds {
    task_id: String,
    context_id: String,
}

impl TaskUpdater {
    pub(super) fn channel(ctx: &ExecutionContext) -> (Self, mpsc::Receiver<Box<AgentEvent>>) {
        let (tx, rx) = mpsc::channel(UPDATE_BUFFER);
        let ids = TaskIds { task_id: ctx.task_id.clone(), context_id: ctx.context_id.clone() };
        (Self { tx, ids: Arc::new(ids) }, rx)
    }

    /// Sends any event.
    pub async fn send(&self, event: AgentEvent) -> Result<(), AgentError> {
        self.tx.send(Box::new(event)).await.map_err(|_| Box::new(Closed) as AgentError)
    }

    /// An agent message in this task, with a fresh id.
    pub fn message(&self, text: impl Into<String>) -> Message {
        Message {
            task_id: self.ids.task_id.clone(),
            context_id: self.ids.context_id.clone(),
            ..Message::agent(crate::ids::new_id(), text)
        }
    }

    /// Moves the task to `state`, with an optional message.
    pub async fn status(&self, state: TaskState, message: Option<Message>) -> Result<(), AgentError> {
        self.send(AgentEvent::Status { state, message, metadata: None }).await
    }

    /// WORKING.
    pub async fn working(&self) -> Result<(), AgentError> {
        self.status(TaskState::Working, None).await
    }

    /// COMPLETED.
    pub async fn complete(&self) -> Result<(), AgentError> {
        self.status(TaskState::Completed, None).await
    }

    /// COMPLETED, with a message.
    pub async fn complete_with(&self, text: impl Into<String>) -> Result<(), AgentError> {
        let message = self.message(text);
        self.status(TaskState::Completed, Some(message)).await
    }

    /// INPUT_REQUIRED, with the question.
    pub async fn input_required(&self, question: impl Into<String>) -> Result<(), AgentError> {
        let message = self.message(question);
        self.status(TaskState::InputRequired, Some(message)).await
    }

    /// AUTH_REQUIRED, with what is needed.
    pub async fn auth_required(&self, explanation: impl Into<String>) -> Result<(), AgentError> {
        let message = self.message(explanation);
        self.status(TaskState::AuthRequired, Some(message)).await
    }

    /// FAILED, with the reason.
    pub async fn fail(&self, reason: impl Into<String>) -> Result<(), AgentError> {
        let message = self.message(reason);
        self.status(TaskState::Failed, Some(message)).await
    }

    /// REJECTED, with the reason.
    pub async fn reject(&self, reason: impl Into<String>) -> Result<(), AgentError> {
        let message = self.message(reason);
        self.status(TaskState::Rejected, Some(message)).await
    }

    /// CANCELED.
    pub async fn canceled(&self) -> Result<(), AgentError> {
        self.status(TaskState::Canceled, None).await
    }

    /// A whole artifact.
    pub async fn add_artifact(&self, artifact: Artifact) -> Result<(), AgentError> {
        self.send(AgentEvent::Artifact { artifact, append: false, last_chunk: false }).await
    }

    /// A whole artifact with one text part and a fresh id.
    pub async fn add_text_artifact(&self, name: impl Into<String>, text: impl Into<String>) -> Result<(), AgentError> {
        self.add_artifact(Artifact::new(crate::ids::new_id(), name, vec![Part::text(text)])).await
    }

    /// A chunk of artifact `artifact.artifact_id`: `append` adds to what was sent before, and
    /// `last_chunk` marks the end.
    pub async fn artifact_chunk(&self, artifact: Artifact, append: bool, last_chunk: bool) -> Result<(), AgentError> {
        self.send(AgentEvent::Artifact { artifact, append, last_chunk }).await
    }

    /// A direct message reply. As the first event of a new task it replaces the task entirely.
    pub async fn reply(&self, message: Message) -> Result<(), AgentError> {
        self.send(AgentEvent::Message(message)).await
    }
}
