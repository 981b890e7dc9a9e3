//! The v0.3 JSON shapes (seed 001): a `kind` on every object, lowercase roles, kebab-case states,
//! `kind`-tagged parts with `file: {bytes | uri, name, mimeType}`, and `final` on status events.
//!
//! [`V03`] borrows a canonical value and serializes it in the v0.3 shape; [`stream_event`] adds
//! the `final` flag a stream item carries. Decoding v0.3 JSON goes through the canonical types,
//! which accept these shapes too.
//!
//! ```
//! use agentwire_types::dialect::v03::V03;
//! use agentwire_types::{Message, Task, TaskState, TaskStatus};
//!
//! let message = Message::user("m1", "hi");
//! let json = serde_json::to_value(V03(&message)).unwrap();
//! assert_eq!(json["kind"], "message");
//! assert_eq!(json["role"], "user");
//! assert_eq!(json["parts"][0], serde_json::json!({"kind": "text", "text": "hi"}));
//!
//! let task = Task { id: "t1".into(), context_id: "c1".into(), status: TaskStatus::new(TaskState::InputRequired), ..Task::default() };
//! let json = serde_json::to_value(V03(&task)).unwrap();
//! assert_eq!((json["kind"].as_str(), json["status"]["state"].as_str()), (Some("task"), Some("input-required")));
//! // Read back through the canonical model.
//! let back: Task = serde_json::from_value(json).unwrap();
//! assert_eq!(back.status.state, TaskState::InputRequired);
//! ```

use base64::Engine as _;
use serde::ser::{Error as _, SerializeMap};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use crate::{
    Artifact, Message, Part, PartContent, Role, StreamResponse, Task, TaskArtifactUpdateEvent, TaskStatus,
    TaskStatusUpdateEvent,
};

/// A canonical value, serialized in its v0.3 shape.
#[derive(Debug, Clone, Copy)]
pub struct V03<'a, T: ?Sized>(pub &'a T);

/// A stream item in its v0.3 shape, with `final: is_final` on a status update (v0.3 marks the
/// event after which the server closes the stream).
///
/// ```
/// use agentwire_types::dialect::v03::stream_event;
/// use agentwire_types::{StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent};
///
/// let done = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
///     task_id: "t1".into(),
///     context_id: "c1".into(),
///     status: TaskStatus::new(TaskState::Completed),
///     metadata: None,
/// });
/// let json = serde_json::to_value(stream_event(&done, true)).unwrap();
/// assert_eq!((json["kind"].as_str(), json["final"].as_bool()), (Some("status-update"), Some(true)));
/// ```
pub fn stream_event(response: &StreamResponse, is_final: bool) -> impl Serialize + '_ {
    StreamEvent { response, is_final }
}

struct StreamEvent<'a> {
    response: &'a StreamResponse,
    is_final: bool,
}

impl Serialize for StreamEvent<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.response {
            StreamResponse::Task(task) => V03(task).serialize(serializer),
            StreamResponse::Message(message) => V03(message).serialize(serializer),
            StreamResponse::StatusUpdate(update) => status_update(update, self.is_final, serializer),
            StreamResponse::ArtifactUpdate(update) => V03(update).serialize(serializer),
        }
    }
}

/// Without a `final` flag of its own: a status update is final when the stream closes after it.
impl Serialize for V03<'_, StreamResponse> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let is_final = self.0.task_state().is_some_and(|s| s.is_terminal() || s.is_interrupted());
        stream_event(self.0, is_final).serialize(serializer)
    }
}

fn status_update<S: Serializer>(
    update: &TaskStatusUpdateEvent,
    is_final: bool,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let mut map = serializer.serialize_map(None)?;
    map.serialize_entry("kind", "status-update")?;
    map.serialize_entry("taskId", &update.task_id)?;
    map.serialize_entry("contextId", &update.context_id)?;
    map.serialize_entry("status", &V03(&update.status))?;
    map.serialize_entry("final", &is_final)?;
    metadata(&mut map, update.metadata.as_ref())?;
    map.end()
}

impl Serialize for V03<'_, TaskArtifactUpdateEvent> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let update = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("kind", "artifact-update")?;
        map.serialize_entry("taskId", &update.task_id)?;
        map.serialize_entry("contextId", &update.context_id)?;
        map.serialize_entry("artifact", &V03(&update.artifact))?;
        map.serialize_entry("append", &update.append)?;
        map.serialize_entry("lastChunk", &update.last_chunk)?;
        metadata(&mut map, update.metadata.as_ref())?;
        map.end()
    }
}

impl Serialize for V03<'_, Task> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let task = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("kind", "task")?;
        map.serialize_entry("id", &task.id)?;
        map.serialize_entry("contextId", &task.context_id)?;
        map.serialize_entry("status", &V03(&task.status))?;
        if !task.artifacts.is_empty() {
            map.serialize_entry("artifacts", &V03(task.artifacts.as_slice()))?;
        }
        if !task.history.is_empty() {
            map.serialize_entry("history", &V03(task.history.as_slice()))?;
        }
        metadata(&mut map, task.metadata.as_ref())?;
        map.end()
    }
}

impl Serialize for V03<'_, TaskStatus> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let status = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("state", status.state.as_kebab_name())?;
        if let Some(message) = &status.message {
            map.serialize_entry("message", &V03(&**message))?;
        }
        if let Some(timestamp) = &status.timestamp {
            map.serialize_entry("timestamp", timestamp)?;
        }
        map.end()
    }
}

impl Serialize for V03<'_, Message> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let message = self.0;
        let role = match message.role {
            Role::User => "user",
            Role::Agent => "agent",
            Role::Unspecified => return Err(S::Error::custom("a v0.3 message needs a role")),
        };
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("kind", "message")?;
        map.serialize_entry("messageId", &message.message_id)?;
        map.serialize_entry("role", role)?;
        map.serialize_entry("parts", &V03(message.parts.as_slice()))?;
        non_empty(&mut map, "contextId", &message.context_id)?;
        non_empty(&mut map, "taskId", &message.task_id)?;
        if !message.reference_task_ids.is_empty() {
            map.serialize_entry("referenceTaskIds", &message.reference_task_ids)?;
        }
        if !message.extensions.is_empty() {
            map.serialize_entry("extensions", &message.extensions)?;
        }
        metadata(&mut map, message.metadata.as_ref())?;
        map.end()
    }
}

impl Serialize for V03<'_, Artifact> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let artifact = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("artifactId", &artifact.artifact_id)?;
        non_empty(&mut map, "name", &artifact.name)?;
        non_empty(&mut map, "description", &artifact.description)?;
        map.serialize_entry("parts", &V03(artifact.parts.as_slice()))?;
        if !artifact.extensions.is_empty() {
            map.serialize_entry("extensions", &artifact.extensions)?;
        }
        metadata(&mut map, artifact.metadata.as_ref())?;
        map.end()
    }
}

impl Serialize for V03<'_, Part> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let part = self.0;
        let mut map = serializer.serialize_map(None)?;
        match &part.content {
            PartContent::Text(text) => {
                map.serialize_entry("kind", "text")?;
                map.serialize_entry("text", text)?;
            }
            PartContent::Raw(_) | PartContent::Url(_) => {
                map.serialize_entry("kind", "file")?;
                map.serialize_entry("file", &File(part))?;
            }
            PartContent::Data(value @ Value::Object(_)) => {
                map.serialize_entry("kind", "data")?;
                map.serialize_entry("data", value)?;
            }
            // v0.3 data is an object; other JSON values travel wrapped.
            PartContent::Data(value) => {
                map.serialize_entry("kind", "data")?;
                map.serialize_entry("data", &Wrapped(value))?;
            }
        }
        metadata(&mut map, part.metadata.as_ref())?;
        map.end()
    }
}

/// A part's file: its bytes (base64) or URI, name and media type.
struct File<'a>(&'a Part);

impl Serialize for File<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let part = self.0;
        let mut map = serializer.serialize_map(None)?;
        match &part.content {
            PartContent::Raw(bytes) => {
                map.serialize_entry("bytes", &base64::engine::general_purpose::STANDARD.encode(bytes))?
            }
            PartContent::Url(uri) => map.serialize_entry("uri", uri)?,
            PartContent::Text(_) | PartContent::Data(_) => return Err(S::Error::custom("not a file part")),
        }
        if let Some(name) = part.filename.as_deref().filter(|n| !n.is_empty()) {
            map.serialize_entry("name", name)?;
        }
        if let Some(media_type) = part.media_type.as_deref().filter(|t| !t.is_empty()) {
            map.serialize_entry("mimeType", media_type)?;
        }
        map.end()
    }
}

/// A non-object data value as v0.3 carries it: `{"value": …}`.
struct Wrapped<'a>(&'a Value);

impl Serialize for Wrapped<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("value", self.0)?;
        map.end()
    }
}

impl Serialize for V03<'_, [Part]> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(V03))
    }
}

impl Serialize for V03<'_, [Message]> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(V03))
    }
}

impl Serialize for V03<'_, [Artifact]> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(V03))
    }
}

fn non_empty<M: SerializeMap>(map: &mut M, key: &'static str, value: &str) -> Result<(), M::Error> {
    if value.is_empty() {
        return Ok(());
    }
    map.serialize_entry(key, value)
}

fn metadata<M: SerializeMap>(map: &mut M, metadata: Option<&Map<String, Value>>) -> Result<(), M::Error> {
    match metadata {
        Some(metadata) => map.serialize_entry("metadata", metadata),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests;
