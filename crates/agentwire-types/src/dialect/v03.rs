//! The v0.3 JSON shapes (seed 001): a `kind` on every object, lowercase roles, kebab-case states,
//! `kind`-tagged parts with `file: {bytes | uri, name, mimeType}`, and `final` on status events.
//!
//! [`V03`] borrows a canonical value and serializes it in the v0.3 shape; [`stream_event`] adds
//! the `final` flag a stream item carries. Decoding goes through the canonical types, which accept
//! these shapes too, and through the mirrors of the requests whose v0.3 form differs from v1.0's
//! ([`MessageSendParams`], [`PushConfigParams`], [`PushConfigRef`], [`TaskIdParams`]). v0.3's
//! HTTP+JSON binding speaks ProtoJSON of the `a2a.v1` package instead: see [`proto`].
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

use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use super::json::{Event, Flavor};
use super::Dialect;
use crate::de::{lenient_i32, null_default};
use crate::{
    Artifact, ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse, ListTasksResponse,
    Message, Part, SendMessageConfiguration, SendMessageRequest, SendMessageResponse, StreamResponse, Task,
    TaskPushNotificationConfig, TaskPushNotificationConfigRef, TaskStatus,
};

pub mod proto;
mod requests;

/// A canonical value, serialized in its v0.3 shape.
#[derive(Debug, Clone, Copy)]
pub struct V03<'a, T: ?Sized>(pub &'a T);

/// Implements `Serialize` for `$wrapper<'_, T>` over every canonical type both JSON generations
/// write, through the shared encoder in `$flavor`.
macro_rules! shaped {
    ($wrapper:ident, $flavor:expr) => {
        $crate::dialect::v03::shaped!(
            @each $wrapper, $flavor,
            Task, TaskStatus, Message, Artifact, Part, [Part], [Message], [Artifact],
            TaskPushNotificationConfig, [TaskPushNotificationConfig], ListTasksResponse,
            ListTaskPushNotificationConfigsResponse, SendMessageResponse
        );
    };
    (@each $wrapper:ident, $flavor:expr, $($ty:ty),*) => {$(
        impl serde::Serialize for $wrapper<'_, $ty> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                $crate::dialect::json::Shaped::new(self.0, $flavor).serialize(serializer)
            }
        }
    )*};
}
pub(crate) use shaped;

shaped!(V03, Flavor::V03);

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
///     ..Default::default()
/// });
/// let json = serde_json::to_value(stream_event(&done, true)).unwrap();
/// assert_eq!((json["kind"].as_str(), json["final"].as_bool()), (Some("status-update"), Some(true)));
/// ```
pub fn stream_event(response: &StreamResponse, is_final: bool) -> impl Serialize + '_ {
    Event { response, is_final, flavor: Flavor::V03 }
}

/// Without a `final` flag of its own: a status update is final when the stream closes after it.
impl Serialize for V03<'_, StreamResponse> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        stream_event(self.0, Dialect::V03.profile().closes_stream(self.0)).serialize(serializer)
    }
}

/// `message/send` and `message/stream` parameters (also the body of v0.3's `/v1/message:send`).
///
/// ```
/// use agentwire_types::dialect::v03::MessageSendParams;
/// use agentwire_types::SendMessageRequest;
///
/// let params: MessageSendParams = serde_json::from_str(
///     r#"{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}"#,
/// ).unwrap();
/// let request = SendMessageRequest::from(params);
/// // v0.3 waits for the result unless the client says `blocking: false`.
/// assert!(!request.configuration.unwrap().return_immediately);
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageSendParams {
    /// The message.
    pub message: Message,
    /// How to run the request.
    #[serde(default)]
    pub configuration: Option<MessageSendConfiguration>,
    /// Free-form metadata.
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

/// v0.3's `MessageSendConfiguration`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageSendConfiguration {
    /// Media types the client accepts.
    #[serde(default, deserialize_with = "null_default")]
    pub accepted_output_modes: Vec<String>,
    /// How many recent messages to return.
    #[serde(default, deserialize_with = "lenient_i32")]
    pub history_length: Option<i32>,
    /// A webhook for the task (`pushNotification` in ProtoJSON).
    #[serde(default, alias = "pushNotification")]
    pub push_notification_config: Option<TaskPushNotificationConfig>,
    /// Wait for the task to end or pause; unset means wait, as the official v0.3 servers do.
    #[serde(default)]
    pub blocking: Option<bool>,
}

impl From<MessageSendParams> for SendMessageRequest {
    fn from(params: MessageSendParams) -> Self {
        let config = params.configuration.unwrap_or_default();
        let configuration = SendMessageConfiguration {
            if_generation_match: None,
            accepted_output_modes: config.accepted_output_modes,
            task_push_notification_config: config.push_notification_config,
            history_length: config.history_length,
            return_immediately: config.blocking == Some(false),
        };
        Self {
            tenant: String::new(),
            message: params.message,
            configuration: Some(configuration),
            metadata: params.metadata,
        }
    }
}

/// `tasks/pushNotificationConfig/set` parameters: `{taskId, pushNotificationConfig}`. v0.1 and
/// the legacy family name the task `id`, and seed 004's clients write both: they must then name
/// the same task.
///
/// ```
/// use agentwire_types::dialect::v03::PushConfigParams;
///
/// let config = r#""pushNotificationConfig": {"url": "https://client.example/hook"}"#;
/// let both: PushConfigParams = serde_json::from_str(&format!(r#"{{"id": "t1", "taskId": "t1", {config}}}"#)).unwrap();
/// assert_eq!(both.task_id, "t1");
/// let error = serde_json::from_str::<PushConfigParams>(&format!(r#"{{"id": "t1", "taskId": "t2", {config}}}"#));
/// assert!(error.unwrap_err().to_string().contains("`id` and `taskId` name different tasks"));
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "PushConfigNames")]
pub struct PushConfigParams {
    /// The task.
    pub task_id: String,
    /// The webhook.
    pub push_notification_config: TaskPushNotificationConfig,
}

/// [`PushConfigParams`] as written, with the task under either name or both.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PushConfigNames {
    #[serde(default)]
    task_id: Option<String>,
    #[serde(default)]
    id: Option<String>,
    push_notification_config: TaskPushNotificationConfig,
}

impl TryFrom<PushConfigNames> for PushConfigParams {
    type Error = &'static str;

    fn try_from(names: PushConfigNames) -> Result<Self, Self::Error> {
        let task_id = match (names.task_id, names.id) {
            (Some(task_id), Some(id)) if task_id != id => return Err("`id` and `taskId` name different tasks"),
            (Some(task_id), _) | (None, Some(task_id)) => task_id,
            (None, None) => return Err("missing field `taskId`"),
        };
        Ok(Self { task_id, push_notification_config: names.push_notification_config })
    }
}

impl From<PushConfigParams> for TaskPushNotificationConfig {
    fn from(params: PushConfigParams) -> Self {
        Self { task_id: params.task_id, ..params.push_notification_config }
    }
}

/// `tasks/pushNotificationConfig/{get,delete}` parameters: the task `id` and, optionally for get,
/// the config's id (without it, the task's first config).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushConfigRef {
    /// The task.
    pub id: String,
    /// The config.
    #[serde(default, deserialize_with = "null_default")]
    pub push_notification_config_id: String,
}

impl From<PushConfigRef> for TaskPushNotificationConfigRef {
    fn from(params: PushConfigRef) -> Self {
        Self { tenant: String::new(), task_id: params.id, id: params.push_notification_config_id }
    }
}

/// Parameters naming a task by `id` (`tasks/pushNotificationConfig/list`).
#[derive(Debug, Clone, Deserialize)]
pub struct TaskIdParams {
    /// The task.
    pub id: String,
}

impl From<TaskIdParams> for ListTaskPushNotificationConfigsRequest {
    fn from(params: TaskIdParams) -> Self {
        Self { task_id: params.id, ..Self::default() }
    }
}

#[cfg(test)]
mod tests;
