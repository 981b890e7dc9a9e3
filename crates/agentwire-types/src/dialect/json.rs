//! The JSON shapes v0.3 and the legacy family share, written from canonical values by reference.
//!
//! The two differ in a few places only, which [`Flavor`] names: v0.3 puts a `kind` on every
//! object; the legacy family tags parts with `type` (v0.1) as well as `kind` (seed 004), repeats a
//! task's context as `sessionId`, and tags stream events with their v0.1 type names.
//!
//! v0.3 is also encoded for HTTP+JSON in `dialect::v03::proto` and for gRPC in
//! `agentwire_proto::convert::v03`: a change to a v0.3 shape goes into all three.

use base64::Engine as _;
use serde::ser::{Error as _, SerializeMap};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use crate::{
    Artifact, ListTaskPushNotificationConfigsResponse, ListTasksResponse, Message, Part, PartContent, Role,
    SendMessageResponse, StreamResponse, Task, TaskArtifactUpdateEvent, TaskPushNotificationConfig, TaskStatus,
    TaskStatusUpdateEvent,
};

/// Which generation's JSON to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    V03,
    Legacy,
}

/// A canonical value, to be written in `flavor`'s shape.
pub(crate) struct Shaped<'a, T: ?Sized> {
    pub(crate) value: &'a T,
    pub(crate) flavor: Flavor,
}

impl<'a, T: ?Sized> Shaped<'a, T> {
    pub(crate) fn new(value: &'a T, flavor: Flavor) -> Self {
        Self { value, flavor }
    }

    fn of<U: ?Sized>(&self, value: &'a U) -> Shaped<'a, U> {
        Shaped { value, flavor: self.flavor }
    }
}

/// A stream event with an explicit `final` flag.
pub(crate) struct Event<'a> {
    pub(crate) response: &'a StreamResponse,
    pub(crate) is_final: bool,
    pub(crate) flavor: Flavor,
}

impl Serialize for Event<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (flavor, is_final) = (self.flavor, self.is_final);
        match (self.response, flavor) {
            (StreamResponse::StatusUpdate(update), _) => status_update(update, is_final, flavor, serializer),
            (StreamResponse::ArtifactUpdate(update), _) => artifact_update(update, flavor, serializer),
            (StreamResponse::Task(task), Flavor::V03) => Shaped::new(task, flavor).serialize(serializer),
            (StreamResponse::Message(message), Flavor::V03) => Shaped::new(message, flavor).serialize(serializer),
            // The legacy stream carries only update events: a task snapshot is its status.
            (StreamResponse::Task(task), Flavor::Legacy) => {
                let update = TaskStatusUpdateEvent {
                    generation: None,
                    task_id: task.id.clone(),
                    context_id: task.context_id.clone(),
                    status: task.status.clone(),
                    metadata: None,
                };
                status_update(&update, is_final, flavor, serializer)
            }
            (StreamResponse::Message(_), Flavor::Legacy) => {
                Err(S::Error::custom("the legacy stream carries tasks, not direct messages"))
            }
        }
    }
}

fn status_update<S: Serializer>(
    update: &TaskStatusUpdateEvent,
    is_final: bool,
    flavor: Flavor,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let mut map = serializer.serialize_map(None)?;
    event_header(&mut map, flavor, "status-update", "TaskStatusUpdateEvent", &update.task_id)?;
    map.serialize_entry("contextId", &update.context_id)?;
    map.serialize_entry("status", &Shaped::new(&update.status, flavor))?;
    map.serialize_entry("final", &is_final)?;
    metadata(&mut map, update.metadata.as_ref())?;
    map.end()
}

fn artifact_update<S: Serializer>(
    update: &TaskArtifactUpdateEvent,
    flavor: Flavor,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let mut map = serializer.serialize_map(None)?;
    event_header(&mut map, flavor, "artifact-update", "TaskArtifactUpdateEvent", &update.task_id)?;
    map.serialize_entry("contextId", &update.context_id)?;
    let chunk = Chunk { artifact: &update.artifact, append: update.append, last_chunk: update.last_chunk, flavor };
    map.serialize_entry("artifact", &chunk)?;
    map.serialize_entry("append", &update.append)?;
    map.serialize_entry("lastChunk", &update.last_chunk)?;
    if flavor == Flavor::Legacy {
        map.serialize_entry("final", &false)?;
    }
    metadata(&mut map, update.metadata.as_ref())?;
    map.end()
}

/// v0.3 names an event by `kind`; the legacy family by `type`, with v0.1's task `id` beside
/// seed 004's `taskId`.
fn event_header<M: SerializeMap>(
    map: &mut M,
    flavor: Flavor,
    kind: &str,
    legacy_type: &str,
    task_id: &str,
) -> Result<(), M::Error> {
    match flavor {
        Flavor::V03 => map.serialize_entry("kind", kind)?,
        Flavor::Legacy => {
            map.serialize_entry("type", legacy_type)?;
            map.serialize_entry("id", task_id)?;
        }
    }
    map.serialize_entry("taskId", task_id)
}

/// An artifact in an update event; v0.1 carries `append` and `lastChunk` inside it.
struct Chunk<'a> {
    artifact: &'a Artifact,
    append: bool,
    last_chunk: bool,
    flavor: Flavor,
}

impl Serialize for Chunk<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let extra = (self.flavor == Flavor::Legacy).then_some((self.append, self.last_chunk));
        artifact(self.artifact, self.flavor, extra, serializer)
    }
}

impl Serialize for Shaped<'_, Task> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let task = self.value;
        let mut map = serializer.serialize_map(None)?;
        if self.flavor == Flavor::V03 {
            map.serialize_entry("kind", "task")?;
        }
        map.serialize_entry("id", &task.id)?;
        map.serialize_entry("contextId", &task.context_id)?;
        if self.flavor == Flavor::Legacy {
            map.serialize_entry("sessionId", &task.context_id)?;
        }
        map.serialize_entry("status", &self.of(&task.status))?;
        if !task.artifacts.is_empty() {
            map.serialize_entry("artifacts", &self.of(task.artifacts.as_slice()))?;
        }
        if !task.history.is_empty() {
            map.serialize_entry("history", &self.of(task.history.as_slice()))?;
        }
        metadata(&mut map, task.metadata.as_ref())?;
        map.end()
    }
}

impl Serialize for Shaped<'_, TaskStatus> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let status = self.value;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("state", status.state.as_kebab_name())?;
        if let Some(message) = &status.message {
            map.serialize_entry("message", &self.of(&**message))?;
        }
        if let Some(timestamp) = &status.timestamp {
            map.serialize_entry("timestamp", timestamp)?;
        }
        map.end()
    }
}

impl Serialize for Shaped<'_, Message> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let message = self.value;
        let role = match message.role {
            Role::User => "user",
            Role::Agent => "agent",
            Role::Unspecified => return Err(S::Error::custom("a v0.3 or legacy message needs a role")),
        };
        let mut map = serializer.serialize_map(None)?;
        if self.flavor == Flavor::V03 {
            map.serialize_entry("kind", "message")?;
        }
        map.serialize_entry("messageId", &message.message_id)?;
        map.serialize_entry("role", role)?;
        map.serialize_entry("parts", &self.of(message.parts.as_slice()))?;
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

impl Serialize for Shaped<'_, Artifact> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        artifact(self.value, self.flavor, None, serializer)
    }
}

fn artifact<S: Serializer>(
    artifact: &Artifact,
    flavor: Flavor,
    chunk: Option<(bool, bool)>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let mut map = serializer.serialize_map(None)?;
    map.serialize_entry("artifactId", &artifact.artifact_id)?;
    non_empty(&mut map, "name", &artifact.name)?;
    non_empty(&mut map, "description", &artifact.description)?;
    map.serialize_entry("parts", &Shaped::new(artifact.parts.as_slice(), flavor))?;
    if let Some((append, last_chunk)) = chunk {
        map.serialize_entry("append", &append)?;
        map.serialize_entry("lastChunk", &last_chunk)?;
    }
    if !artifact.extensions.is_empty() {
        map.serialize_entry("extensions", &artifact.extensions)?;
    }
    metadata(&mut map, artifact.metadata.as_ref())?;
    map.end()
}

impl Serialize for Shaped<'_, Part> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let part = self.value;
        let kind = match &part.content {
            PartContent::Text(_) => "text",
            PartContent::Raw(_) | PartContent::Url(_) => "file",
            PartContent::Data(_) => "data",
        };
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("kind", kind)?;
        if self.flavor == Flavor::Legacy {
            map.serialize_entry("type", kind)?;
        }
        match &part.content {
            PartContent::Text(text) => map.serialize_entry("text", text)?,
            PartContent::Raw(_) | PartContent::Url(_) => map.serialize_entry("file", &File(part))?,
            PartContent::Data(value @ Value::Object(_)) => map.serialize_entry("data", value)?,
            // Data is an object in these generations; other JSON values travel wrapped.
            PartContent::Data(value) => map.serialize_entry("data", &Wrapped(value))?,
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

/// A non-object data value as these generations carry it: `{"value": …}`.
pub(crate) struct Wrapped<'a>(pub(crate) &'a Value);

impl Serialize for Wrapped<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("value", self.0)?;
        map.end()
    }
}

impl<T> Serialize for Shaped<'_, [T]>
where
    for<'b> Shaped<'b, T>: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.value.iter().map(|item| self.of(item)))
    }
}

/// A push config: `{taskId, pushNotificationConfig: {id, url, token, authentication}}`; the legacy
/// family names the task `id` (v0.1) as well.
impl Serialize for Shaped<'_, TaskPushNotificationConfig> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let config = self.value;
        let mut map = serializer.serialize_map(None)?;
        if self.flavor == Flavor::Legacy {
            map.serialize_entry("id", &config.task_id)?;
        }
        map.serialize_entry("taskId", &config.task_id)?;
        map.serialize_entry("pushNotificationConfig", &PushNotificationConfig(config))?;
        map.end()
    }
}

/// A send's result: the task, or the agent's direct reply (v0.3 only: the legacy core answers
/// every send with a task).
impl Serialize for Shaped<'_, SendMessageResponse> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.value {
            SendMessageResponse::Task(task) => self.of(task).serialize(serializer),
            SendMessageResponse::Message(message) => self.of(message).serialize(serializer),
        }
    }
}

/// A ListTasks page, its tasks in this generation's shape.
impl Serialize for Shaped<'_, ListTasksResponse> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let page = self.value;
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("tasks", &self.of(page.tasks.as_slice()))?;
        map.serialize_entry("nextPageToken", &page.next_page_token)?;
        map.serialize_entry("pageSize", &page.page_size)?;
        map.serialize_entry("totalSize", &page.total_size)?;
        map.end()
    }
}

/// A task's push configs: v0.1 and v0.3 answer with the list itself.
impl Serialize for Shaped<'_, ListTaskPushNotificationConfigsResponse> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.of(self.value.configs.as_slice()).serialize(serializer)
    }
}

/// The inner `PushNotificationConfig` of v0.1 and v0.3, with `schemes` as a list.
pub(crate) struct PushNotificationConfig<'a>(pub(crate) &'a TaskPushNotificationConfig);

impl Serialize for PushNotificationConfig<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let config = self.0;
        let mut map = serializer.serialize_map(None)?;
        non_empty(&mut map, "id", &config.id)?;
        map.serialize_entry("url", &config.url)?;
        non_empty(&mut map, "token", &config.token)?;
        if let Some(auth) = &config.authentication {
            map.serialize_entry("authentication", &Schemes(auth))?;
        }
        map.end()
    }
}

struct Schemes<'a>(&'a crate::AuthenticationInfo);

impl Serialize for Schemes<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("schemes", &[&self.0.scheme])?;
        non_empty(&mut map, "credentials", &self.0.credentials)?;
        map.end()
    }
}

pub(crate) fn non_empty<M: SerializeMap>(map: &mut M, key: &'static str, value: &str) -> Result<(), M::Error> {
    if value.is_empty() {
        return Ok(());
    }
    map.serialize_entry(key, value)
}

pub(crate) fn metadata<M: SerializeMap>(map: &mut M, metadata: Option<&Map<String, Value>>) -> Result<(), M::Error> {
    match metadata {
        Some(metadata) => map.serialize_entry("metadata", metadata),
        None => Ok(()),
    }
}
