//! `Task`, `TaskStatus` and `Artifact`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::de::{null_default, optional_int64};
use crate::{Message, Part, TaskState, Timestamp};

/// The unit of work an agent does for a client.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Server-generated id.
    #[serde(default, deserialize_with = "null_default")]
    pub id: String,
    /// The conversation the task belongs to.
    #[serde(alias = "context_id", default, deserialize_with = "null_default")]
    pub context_id: String,
    /// The current status.
    #[serde(default)]
    pub status: TaskStatus,
    /// What the task produced.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
    /// The messages exchanged, oldest first.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Message>,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// The dev-1.1 draft's generation: the task's number of changes, starting at 1, so far. Set only in answers to a caller asking for version 1.1.
    #[serde(default, with = "optional_int64", skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
}

impl Task {
    /// Keeps at most the `n` most recent history messages; `None` keeps all.
    pub fn truncate_history(&mut self, n: Option<usize>) {
        if let Some(n) = n {
            let excess = self.history.len().saturating_sub(n);
            self.history.drain(..excess);
        }
    }

    /// What a reader is sent of a stored task: at most `history_length` recent messages (all
    /// with `None`), and the artifacts if `artifacts`. Only that much is copied, and nothing if
    /// the caller holds the only reference.
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// use agentwire_types::{Message, Task};
    ///
    /// let task = Arc::new(Task { history: vec![Message::user("m1", "hi"), Message::user("m2", "again")], ..Task::default() });
    /// let view = Arc::clone(&task).view(Some(1), false);
    /// assert_eq!(view.history, [Message::user("m2", "again")]);
    /// assert_eq!(task.history.len(), 2);
    /// ```
    pub fn view(self: std::sync::Arc<Self>, history_length: Option<usize>, artifacts: bool) -> Task {
        let keep = history_length.unwrap_or(usize::MAX).min(self.history.len());
        match std::sync::Arc::try_unwrap(self) {
            Ok(mut task) => {
                task.truncate_history(Some(keep));
                if !artifacts {
                    task.artifacts = Vec::new();
                }
                task
            }
            Err(shared) => Task {
                id: shared.id.clone(),
                context_id: shared.context_id.clone(),
                status: shared.status.clone(),
                artifacts: if artifacts { shared.artifacts.clone() } else { Vec::new() },
                history: shared.history[shared.history.len() - keep..].to_vec(),
                metadata: shared.metadata.clone(),
                generation: shared.generation,
            },
        }
    }
}

/// A task's state, with an optional message and the time it was set.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// The lifecycle state.
    pub state: TaskState,
    /// A message explaining the state, e.g. the question for INPUT_REQUIRED. Boxed, since most
    /// statuses have none and a task keeps its status for as long as it is stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Box<Message>>,
    /// When the state was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
}

impl TaskStatus {
    /// A status in `state`, stamped now.
    pub fn new(state: TaskState) -> Self {
        Self { state, message: None, timestamp: Some(Timestamp::now()) }
    }

    /// Attaches a message.
    pub fn with_message(mut self, message: Message) -> Self {
        self.message = Some(Box::new(message));
        self
    }
}

/// An output of a task.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// Unique within the task.
    #[serde(alias = "artifact_id", default, deserialize_with = "null_default")]
    pub artifact_id: String,
    /// A human-readable name.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// A human-readable description.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The content.
    #[serde(default, deserialize_with = "null_default")]
    pub parts: Vec<Part>,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Extension URIs this artifact uses.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
}

impl Artifact {
    /// An artifact with an id, a name and parts.
    pub fn new(artifact_id: impl Into<String>, name: impl Into<String>, parts: Vec<Part>) -> Self {
        Self { artifact_id: artifact_id.into(), name: name.into(), parts, ..Self::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_boxed_status_message_reads_and_writes_as_before() {
        let status = TaskStatus::new(TaskState::InputRequired).with_message(Message::agent("m1", "which one?"));
        let json = serde_json::to_value(&status).unwrap();
        assert_eq!(json["message"]["parts"][0]["text"], "which one?");
        let back: TaskStatus = serde_json::from_value(json).unwrap();
        assert_eq!(back, status);
    }
}
