//! v0.3's HTTP+JSON binding: ProtoJSON of the `a2a.v1` package (seed 003), which is what the
//! official v0.3 clients send and parse (strictly: an unknown member fails the Python client).
//!
//! It differs from v1.0's ProtoJSON in a few names: a message's parts are `content`; a file part
//! is `{"file": {"fileWithUri" | "fileWithBytes", "mimeType", "name"}}`; a data part nests its
//! object, `{"data": {"data": {…}}}`; CANCELED is spelled `TASK_STATE_CANCELLED`; a push config is
//! `{name: "tasks/{id}/pushNotificationConfigs/{configId}", pushNotificationConfig}`; a status
//! update carries `final`.
//!
//! v0.3 is also encoded for JSON-RPC in `dialect::json` and for gRPC in
//! `agentwire_proto::convert::v03`: a change to a v0.3 shape goes into all three.
//!
//! The official Python, Go and Java v0.3 SDKs put the base64 *text* of a file in the bytes field
//! `file_with_bytes`, not the file: [`file_with_bytes`] and [`file_from_bytes_field`] say what
//! that field holds, here and in the gRPC binding. ProtoJSON writes a bytes field as base64, so
//! `hello` travels as `"fileWithBytes": "YUdWc2JHOD0="`.
//!
//! ```
//! use agentwire_types::dialect::v03::proto::Proto;
//! use agentwire_types::{Message, Part};
//!
//! let message = Message { parts: vec![Part::data(serde_json::json!({"k": 1}))], ..Message::user("m1", "") };
//! let json = serde_json::to_value(Proto(&message)).unwrap();
//! assert_eq!(json["role"], "ROLE_USER");
//! assert_eq!(json["content"][0], serde_json::json!({"data": {"data": {"k": 1}}}));
//! ```

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde::ser::{Error as _, SerializeMap};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use super::super::json::{metadata, non_empty, PushNotificationConfig, Wrapped};
use super::super::Dialect;
use super::MessageSendParams;
use crate::{
    Artifact, ListTaskPushNotificationConfigsResponse, ListTasksResponse, Message, Part, PartContent, Role,
    SendMessageRequest, SendMessageResponse, StreamResponse, Task, TaskArtifactUpdateEvent, TaskPushNotificationConfig,
    TaskState, TaskStatus, TaskStatusUpdateEvent,
};

mod requests;

pub use requests::CreatePushConfig;

/// What `a2a.v1`'s `FilePart.file_with_bytes` holds for the file `raw`: its base64 text, as the
/// official Python, Go and Java v0.3 SDKs write and read it.
///
/// ```
/// use agentwire_types::dialect::v03::proto::{file_from_bytes_field, file_with_bytes};
///
/// assert_eq!(file_with_bytes(b"hello"), b"aGVsbG8=");
/// assert_eq!(file_from_bytes_field(b"aGVsbG8="), b"hello");
/// // The JavaScript v0.3 SDK puts the file itself there.
/// assert_eq!(file_from_bytes_field(&[0xff, 0xd8, 0xff]), [0xff, 0xd8, 0xff]);
/// ```
pub fn file_with_bytes(raw: &[u8]) -> Vec<u8> {
    STANDARD.encode(raw).into_bytes()
}

/// The file held by `a2a.v1`'s `FilePart.file_with_bytes`: the decoded text where the field is
/// padded standard base64 (the Python, Go and Java v0.3 SDKs), else the field itself (the
/// JavaScript v0.3 SDK). A file that is itself such text is read the first way.
pub fn file_from_bytes_field(field: &[u8]) -> Vec<u8> {
    STANDARD.decode(field).unwrap_or_else(|_| field.to_vec())
}

/// A canonical value, serialized as v0.3 ProtoJSON.
#[derive(Debug, Clone, Copy)]
pub struct Proto<'a, T: ?Sized>(pub &'a T);

/// Decodes the body of `/v1/message:send` and `/v1/message:stream`.
///
/// ```
/// use agentwire_types::dialect::v03::proto::send_message_request;
///
/// let body = r#"{"message":{"messageId":"m1","role":"ROLE_USER","content":[{"data":{"data":{"k":1}}}]},
///                "configuration":{"blocking":true}}"#;
/// let request = send_message_request(body).unwrap();
/// assert_eq!(request.message.parts[0].content, agentwire_types::PartContent::Data(serde_json::json!({"k": 1})));
/// assert!(!request.configuration.unwrap().return_immediately);
/// ```
pub fn send_message_request(json: &str) -> serde_json::Result<SendMessageRequest> {
    let mut params: MessageSendParams = serde_json::from_str(json)?;
    // A `DataPart` is `{"data": {…}}` in this binding, and a file's bytes are its base64 text.
    unnest_message(&mut params.message);
    // ProtoJSON leaves out a `bool` that is false, so the official v0.3 clients write
    // `blocking: false` as a configuration without it: only a request without a configuration
    // waits by default, as over gRPC.
    if let Some(configuration) = &mut params.configuration {
        configuration.blocking.get_or_insert(false);
    }
    Ok(params.into())
}

/// The body of `POST /v1/tasks/{id}/pushNotificationConfigs`: a `TaskPushNotificationConfig`
/// (`{name, pushNotificationConfig}`, as the JS client sends it), or the whole
/// `CreateTaskPushNotificationConfigRequest` (`{parent, configId, config}`, as the Python client
/// does). The route names the task; the config's id is its own `id`, else `configId`.
///
/// ```
/// use agentwire_types::dialect::v03::proto::PushConfigBody;
///
/// let body: PushConfigBody = serde_json::from_str(
///     r#"{"parent":"tasks/t1","configId":"c1","config":{"pushNotificationConfig":{"url":"https://x.example/hook"}}}"#,
/// ).unwrap();
/// let config = body.into_config("t1").unwrap();
/// assert_eq!((config.task_id.as_str(), config.id.as_str()), ("t1", "c1"));
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushConfigBody {
    /// The webhook, when the body is the config itself.
    #[serde(default, alias = "push_notification_config")]
    pub push_notification_config: Option<TaskPushNotificationConfig>,
    /// The config, when the body is the whole request.
    #[serde(default)]
    pub config: Option<PushConfigResource>,
    /// The config's id, when the body is the whole request.
    #[serde(default, alias = "config_id", deserialize_with = "crate::de::null_default")]
    pub config_id: String,
}

/// A `TaskPushNotificationConfig` resource: its `name` is ignored, since the route names the task.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushConfigResource {
    /// The webhook.
    #[serde(alias = "push_notification_config")]
    pub push_notification_config: TaskPushNotificationConfig,
}

impl PushConfigBody {
    /// The canonical config for task `task_id`; an error names what the body lacks.
    pub fn into_config(self, task_id: &str) -> Result<TaskPushNotificationConfig, &'static str> {
        let inner = self
            .push_notification_config
            .or(self.config.map(|resource| resource.push_notification_config))
            .ok_or("the body has no pushNotificationConfig")?;
        let id = if inner.id.is_empty() { self.config_id } else { inner.id.clone() };
        Ok(TaskPushNotificationConfig { task_id: task_id.to_owned(), id, ..inner })
    }
}

impl Serialize for Proto<'_, Task> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let task = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("id", &task.id)?;
        map.serialize_entry("contextId", &task.context_id)?;
        map.serialize_entry("status", &Proto(&task.status))?;
        if !task.artifacts.is_empty() {
            map.serialize_entry("artifacts", &Proto(task.artifacts.as_slice()))?;
        }
        if !task.history.is_empty() {
            map.serialize_entry("history", &Proto(task.history.as_slice()))?;
        }
        metadata(&mut map, task.metadata.as_ref())?;
        map.end()
    }
}

fn state_name(state: TaskState) -> &'static str {
    match state {
        TaskState::Canceled => "TASK_STATE_CANCELLED",
        other => other.as_proto_name(),
    }
}

impl Serialize for Proto<'_, TaskStatus> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let status = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("state", state_name(status.state))?;
        if let Some(message) = &status.message {
            map.serialize_entry("message", &Proto(&**message))?;
        }
        if let Some(timestamp) = &status.timestamp {
            map.serialize_entry("timestamp", timestamp)?;
        }
        map.end()
    }
}

impl Serialize for Proto<'_, Message> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let message = self.0;
        if message.role == Role::Unspecified {
            return Err(S::Error::custom("a v0.3 message needs a role"));
        }
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("messageId", &message.message_id)?;
        non_empty(&mut map, "contextId", &message.context_id)?;
        non_empty(&mut map, "taskId", &message.task_id)?;
        map.serialize_entry("role", message.role.as_proto_name())?;
        map.serialize_entry("content", &Proto(message.parts.as_slice()))?;
        metadata(&mut map, message.metadata.as_ref())?;
        if !message.extensions.is_empty() {
            map.serialize_entry("extensions", &message.extensions)?;
        }
        map.end()
    }
}

impl Serialize for Proto<'_, Artifact> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let artifact = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("artifactId", &artifact.artifact_id)?;
        non_empty(&mut map, "name", &artifact.name)?;
        non_empty(&mut map, "description", &artifact.description)?;
        map.serialize_entry("parts", &Proto(artifact.parts.as_slice()))?;
        metadata(&mut map, artifact.metadata.as_ref())?;
        if !artifact.extensions.is_empty() {
            map.serialize_entry("extensions", &artifact.extensions)?;
        }
        map.end()
    }
}

impl Serialize for Proto<'_, Part> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let part = self.0;
        let mut map = serializer.serialize_map(None)?;
        match &part.content {
            PartContent::Text(text) => map.serialize_entry("text", text)?,
            PartContent::Raw(_) | PartContent::Url(_) => map.serialize_entry("file", &FilePart(part))?,
            PartContent::Data(value) => map.serialize_entry("data", &DataPart(value))?,
        }
        metadata(&mut map, part.metadata.as_ref())?;
        map.end()
    }
}

struct FilePart<'a>(&'a Part);

impl Serialize for FilePart<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let part = self.0;
        let mut map = serializer.serialize_map(None)?;
        match &part.content {
            PartContent::Url(uri) => map.serialize_entry("fileWithUri", uri)?,
            PartContent::Raw(bytes) => {
                map.serialize_entry("fileWithBytes", &STANDARD.encode(file_with_bytes(bytes)))?
            }
            PartContent::Text(_) | PartContent::Data(_) => return Err(S::Error::custom("not a file part")),
        }
        if let Some(media_type) = part.media_type.as_deref().filter(|t| !t.is_empty()) {
            map.serialize_entry("mimeType", media_type)?;
        }
        if let Some(name) = part.filename.as_deref().filter(|n| !n.is_empty()) {
            map.serialize_entry("name", name)?;
        }
        map.end()
    }
}

/// `{"data": <Struct>}`; a value that is not an object travels as `{"value": …}`.
struct DataPart<'a>(&'a Value);

impl Serialize for DataPart<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        match self.0 {
            Value::Object(_) => map.serialize_entry("data", self.0)?,
            other => map.serialize_entry("data", &Wrapped(other))?,
        }
        map.end()
    }
}

macro_rules! slices {
    ($($ty:ty),*) => {$(
        impl Serialize for Proto<'_, [$ty]> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_seq(self.0.iter().map(Proto))
            }
        }
    )*};
}
slices!(Part, Message, Artifact, Task, TaskPushNotificationConfig);

/// `{"task": …}` or `{"message": …}`.
impl Serialize for Proto<'_, SendMessageResponse> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        match self.0 {
            SendMessageResponse::Task(task) => map.serialize_entry("task", &Proto(task))?,
            SendMessageResponse::Message(message) => map.serialize_entry("message", &Proto(message))?,
        }
        map.end()
    }
}

/// A `StreamResponse`; a status update is `final` when the stream closes after it.
impl Serialize for Proto<'_, StreamResponse> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let response = self.0;
        let mut map = serializer.serialize_map(Some(1))?;
        match response {
            StreamResponse::Task(task) => map.serialize_entry("task", &Proto(task))?,
            StreamResponse::Message(message) => map.serialize_entry("message", &Proto(message))?,
            StreamResponse::StatusUpdate(update) => map.serialize_entry(
                "statusUpdate",
                &StatusUpdate(update, Dialect::V03.profile().closes_stream(response)),
            )?,
            StreamResponse::ArtifactUpdate(update) => map.serialize_entry("artifactUpdate", &Proto(update))?,
        }
        map.end()
    }
}

struct StatusUpdate<'a>(&'a TaskStatusUpdateEvent, bool);

impl Serialize for StatusUpdate<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let update = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("taskId", &update.task_id)?;
        map.serialize_entry("contextId", &update.context_id)?;
        map.serialize_entry("status", &Proto(&update.status))?;
        map.serialize_entry("final", &self.1)?;
        metadata(&mut map, update.metadata.as_ref())?;
        map.end()
    }
}

impl Serialize for Proto<'_, TaskArtifactUpdateEvent> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let update = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("taskId", &update.task_id)?;
        map.serialize_entry("contextId", &update.context_id)?;
        map.serialize_entry("artifact", &Proto(&update.artifact))?;
        map.serialize_entry("append", &update.append)?;
        map.serialize_entry("lastChunk", &update.last_chunk)?;
        metadata(&mut map, update.metadata.as_ref())?;
        map.end()
    }
}

/// `{name: "tasks/{id}/pushNotificationConfigs/{configId}", pushNotificationConfig}`.
impl Serialize for Proto<'_, TaskPushNotificationConfig> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let config = self.0;
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("name", &format!("tasks/{}/pushNotificationConfigs/{}", config.task_id, config.id))?;
        map.serialize_entry("pushNotificationConfig", &PushNotificationConfig(config))?;
        map.end()
    }
}

impl Serialize for Proto<'_, ListTaskPushNotificationConfigsResponse> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let list = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("configs", &Proto(list.configs.as_slice()))?;
        non_empty(&mut map, "nextPageToken", &list.next_page_token)?;
        map.end()
    }
}

/// A ListTasks page (`GET /v1/tasks`).
impl Serialize for Proto<'_, ListTasksResponse> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let page = self.0;
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("tasks", &Proto(page.tasks.as_slice()))?;
        map.serialize_entry("nextPageToken", &page.next_page_token)?;
        map.serialize_entry("pageSize", &page.page_size)?;
        map.serialize_entry("totalSize", &page.total_size)?;
        map.end()
    }
}

/// An empty response body (`DELETE`), the same in every generation.
impl Serialize for Proto<'_, serde_json::Map<String, Value>> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// What v0.3's ProtoJSON nests: a data part is `{"data": {"data": {…}}}`, its value the inner
/// object; a file's bytes are its base64 text ([`file_from_bytes_field`]).
pub(crate) fn unnest(parts: &mut [Part]) {
    for part in parts {
        match &mut part.content {
            PartContent::Data(Value::Object(outer)) => {
                let inner = outer.remove("data").unwrap_or_else(|| Value::Object(Default::default()));
                part.content = PartContent::Data(inner);
            }
            PartContent::Raw(field) => *field = file_from_bytes_field(field),
            _ => {}
        }
    }
}

pub(crate) fn unnest_message(message: &mut Message) {
    unnest(&mut message.parts);
}

pub(crate) fn unnest_status(status: &mut crate::TaskStatus) {
    if let Some(message) = &mut status.message {
        unnest_message(message);
    }
}

pub(crate) fn unnest_task(task: &mut Task) {
    unnest_status(&mut task.status);
    task.history.iter_mut().for_each(unnest_message);
    task.artifacts.iter_mut().for_each(|artifact| unnest(&mut artifact.parts));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{AuthenticationInfo, Timestamp};

    fn task() -> Task {
        Task {
            generation: None,
            id: "t1".into(),
            context_id: "c1".into(),
            status: TaskStatus {
                state: TaskState::Canceled,
                message: Some(Box::new(Message::agent("m2", "stopped"))),
                timestamp: Timestamp::from_millis(1_700_000_000_123),
            },
            artifacts: vec![Artifact::new(
                "a1",
                "out",
                vec![
                    Part::text("x"),
                    Part::url("https://example.com/f", "f", "text/plain"),
                    Part::raw(b"hi".to_vec(), "g", "text/plain"),
                    Part::data(json!({"k": [1]})),
                ],
            )],
            history: vec![Message::user("m1", "go")],
            metadata: None,
        }
    }

    #[test]
    fn a_task_is_written_in_the_a2a_v1_shape() {
        let json = serde_json::to_value(Proto(&task())).unwrap();
        assert_eq!(json["status"]["state"], "TASK_STATE_CANCELLED");
        assert_eq!(json["status"]["message"]["content"], json!([{"text": "stopped"}]));
        assert_eq!(json["history"][0]["role"], "ROLE_USER");
        let parts = &json["artifacts"][0]["parts"];
        assert_eq!(
            parts[1],
            json!({"file": {"fileWithUri": "https://example.com/f", "mimeType": "text/plain", "name": "f"}})
        );
        // The bytes field holds the base64 text of `hi`, which ProtoJSON writes as base64 again.
        assert_eq!(parts[2]["file"]["fileWithBytes"], "YUdrPQ==");
        assert_eq!(parts[3], json!({"data": {"data": {"k": [1]}}}));
        let list = serde_json::to_value(Proto(&Part::data(json!([1, 2])))).unwrap();
        assert_eq!(list, json!({"data": {"data": {"value": [1, 2]}}}), "a Struct holds only objects");
        assert!(json.get("kind").is_none());
    }

    #[test]
    fn messages_and_tasks_read_back_through_the_request_decoder_and_the_canonical_model() {
        let task = task();
        let back: Task = serde_json::from_value(serde_json::to_value(Proto(&task)).unwrap()).unwrap();
        // The canonical model reads everything but the nested data part and the file bytes held
        // as base64 text, which the request decoder unwraps.
        assert_eq!(back.status, task.status);
        assert_eq!(back.artifacts[0].parts[..2], task.artifacts[0].parts[..2]);
        let message = Message { parts: task.artifacts[0].parts.clone(), ..Message::user("m3", "") };
        let body = json!({"message": Proto(&message), "configuration": {"blocking": true, "historyLength": 2}});
        let request = send_message_request(&body.to_string()).unwrap();
        assert_eq!(request.message, message);
        assert_eq!(request.configuration.unwrap().history_length, Some(2));
    }

    #[test]
    fn stream_events_carry_final_and_configs_their_resource_name() {
        let done = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            generation: None,
            task_id: "t1".into(),
            context_id: "c1".into(),
            status: TaskStatus { timestamp: None, ..TaskStatus::new(TaskState::Completed) },
            metadata: None,
        });
        let json = serde_json::to_value(Proto(&done)).unwrap();
        assert_eq!(
            json,
            json!({"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}, "final": true}})
        );
        let config = TaskPushNotificationConfig {
            task_id: "t1".into(),
            id: "p1".into(),
            url: "https://client.example/hook".into(),
            token: "tok".into(),
            authentication: Some(AuthenticationInfo { scheme: "Bearer".into(), credentials: "x".into() }),
            ..TaskPushNotificationConfig::default()
        };
        let json = serde_json::to_value(Proto(&config)).unwrap();
        assert_eq!(json["name"], "tasks/t1/pushNotificationConfigs/p1");
        assert_eq!(
            json["pushNotificationConfig"]["authentication"],
            json!({"schemes": ["Bearer"], "credentials": "x"})
        );
        let body: PushConfigBody = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(body.into_config("t1"), Ok(config.clone()));
        // The whole CreateTaskPushNotificationConfigRequest, with the id beside the config.
        let mut inner = json["pushNotificationConfig"].clone();
        inner.as_object_mut().unwrap().remove("id");
        let request = json!({"parent": "tasks/t1", "configId": "p1", "config": {"name": "tasks/t1/pushNotificationConfigs/None", "pushNotificationConfig": inner}});
        let body: PushConfigBody = serde_json::from_value(request).unwrap();
        assert_eq!(body.into_config("t1"), Ok(config));
    }

    #[test]
    fn only_a_send_without_a_configuration_waits_by_default() {
        let waits = |body: serde_json::Value| {
            !send_message_request(&body.to_string()).unwrap().configuration.unwrap().return_immediately
        };
        let message = json!({"messageId": "m1", "role": "ROLE_USER", "content": [{"text": "hi"}]});
        assert!(waits(json!({"message": message})));
        assert!(!waits(json!({"message": message, "configuration": {"historyLength": 1}})));
        assert!(waits(json!({"message": message, "configuration": {"blocking": true}})));
    }

    #[test]
    fn file_bytes_are_the_base64_text_the_official_sdks_put_in_file_with_bytes() {
        // What a2a-sdk 0.3's REST client sends for the five bytes `hello`: its proto's bytes field
        // holds the text "aGVsbG8=", which ProtoJSON writes as base64.
        let body = json!({"message": {"messageId": "m1", "role": "ROLE_USER", "content": [
            {"file": {"fileWithBytes": "YUdWc2JHOD0=", "mimeType": "text/plain", "name": "hello.txt"}}
        ]}});
        let request = send_message_request(&body.to_string()).unwrap();
        assert_eq!(request.message.parts, vec![Part::raw(b"hello".to_vec(), "hello.txt", "text/plain")]);
        let json = serde_json::to_value(Proto(&request.message)).unwrap();
        assert_eq!(json["content"], body["message"]["content"]);

        // The JavaScript v0.3 SDK puts the file itself in the bytes field.
        let raw = json!({"message": {"messageId": "m1", "role": "ROLE_USER", "content": [
            {"file": {"fileWithBytes": "aGVsbG8="}}
        ]}});
        let request = send_message_request(&raw.to_string()).unwrap();
        assert_eq!(request.message.parts[0].content, PartContent::Raw(b"hello".to_vec()));
    }
}
