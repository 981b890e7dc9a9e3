//! Streaming events and the send/stream response wrappers.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::de::{is_false, null_default, optional_int64};
use crate::{Artifact, Message, Task, TaskStatus};

/// A task's status changed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// The task.
    #[serde(alias = "task_id", default, deserialize_with = "null_default")]
    pub task_id: String,
    /// The task's context.
    #[serde(alias = "context_id", default, deserialize_with = "null_default")]
    pub context_id: String,
    /// The new status.
    pub status: TaskStatus,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// The dev-1.1 draft's generation: the task's number of changes, starting at 1, after this
    /// one. Set only in answers to a caller asking for version 1.1.
    #[serde(default, with = "optional_int64", skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
}

/// An artifact was produced, or a chunk of one.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// The task.
    #[serde(alias = "task_id", default, deserialize_with = "null_default")]
    pub task_id: String,
    /// The task's context.
    #[serde(alias = "context_id", default, deserialize_with = "null_default")]
    pub context_id: String,
    /// The artifact, or the chunk of it.
    pub artifact: Artifact,
    /// Append these parts to the artifact with the same id instead of replacing it.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "is_false")]
    pub append: bool,
    /// This is the artifact's last chunk.
    #[serde(alias = "last_chunk", default, deserialize_with = "null_default", skip_serializing_if = "is_false")]
    pub last_chunk: bool,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// The dev-1.1 draft's generation: the task's number of changes, starting at 1, after this
    /// one. Set only in answers to a caller asking for version 1.1.
    #[serde(default, with = "optional_int64", skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
}

/// One item of a stream, a subscription or a push notification: exactly one member is set.
///
/// ```
/// use agentwire_types::{StreamResponse, Task};
///
/// let json = serde_json::to_string(&StreamResponse::Task(Task::default())).unwrap();
/// assert!(json.starts_with(r#"{"task":"#));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamResponse {
    /// A task snapshot.
    Task(Task),
    /// A message (a message-only reply, or a message added to a task).
    Message(Message),
    /// A status change.
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact or artifact chunk.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

impl StreamResponse {
    /// The task state the item reports: a status update's state, or a task snapshot's.
    pub fn task_state(&self) -> Option<crate::TaskState> {
        match self {
            Self::StatusUpdate(e) => Some(e.status.state),
            Self::Task(t) => Some(t.status.state),
            Self::Message(_) | Self::ArtifactUpdate(_) => None,
        }
    }

    /// The id of the task the item concerns, if any.
    pub fn task_id(&self) -> &str {
        match self {
            Self::Task(t) => &t.id,
            Self::Message(m) => &m.task_id,
            Self::StatusUpdate(e) => &e.task_id,
            Self::ArtifactUpdate(e) => &e.task_id,
        }
    }
}

/// The result of SendMessage: a task, or a direct message reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SendMessageResponse {
    /// The task the message created or continued.
    Task(Task),
    /// A direct reply, with no task.
    Message(Message),
}
