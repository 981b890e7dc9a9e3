//! The legacy `tasks/send` family (seed 004, with the v0.1 shapes of seed 002).
//!
//! Results are always tasks. A task is written with seed 004's `contextId` and v0.1's `sessionId`,
//! parts with seed 004's `kind` and v0.1's `type`, states in lowercase with hyphens, and stream
//! events as `{"type": "TaskStatusUpdateEvent" | "TaskArtifactUpdateEvent", "id", "taskId", …,
//! "final"}`, so that clients of either document read them.
//!
//! ```
//! use agentwire_types::dialect::legacy::{Legacy, TaskSendParams};
//! use agentwire_types::{SendMessageRequest, Task, TaskState, TaskStatus};
//!
//! let params: TaskSendParams = serde_json::from_str(
//!     r#"{"id":"task-1","sessionId":"s-1","message":{"role":"user","parts":[{"type":"text","text":"hi"}]}}"#,
//! ).unwrap();
//! let request = SendMessageRequest::from(params);
//! assert_eq!((request.message.task_id.as_str(), request.message.context_id.as_str()), ("task-1", "s-1"));
//!
//! let task = Task { id: "task-1".into(), context_id: "s-1".into(), status: TaskStatus::new(TaskState::InputRequired), ..Task::default() };
//! let json = serde_json::to_value(Legacy(&task)).unwrap();
//! assert_eq!(json["sessionId"], "s-1");
//! assert_eq!(json["status"]["state"], "input-required");
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::json::{Event, Flavor};
use super::v03::shaped;
use super::Dialect;
use crate::de::{lenient_i32, null_default};
use crate::{
    Artifact, ListTaskPushNotificationConfigsResponse, ListTasksResponse, Message, Part, SendMessageConfiguration,
    SendMessageRequest, SendMessageResponse, StreamResponse, Task, TaskPushNotificationConfig, TaskStatus,
};

/// A canonical value, serialized in its legacy shape.
#[derive(Debug, Clone, Copy)]
pub struct Legacy<'a, T: ?Sized>(pub &'a T);

shaped!(Legacy, Flavor::Legacy);

/// A stream item as `tasks/sendSubscribe` sends it: a status or artifact update event, with
/// `final: is_final`. A task snapshot is sent as its status.
///
/// ```
/// use agentwire_types::dialect::legacy::stream_event;
/// use agentwire_types::{StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent};
///
/// let done = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
///     task_id: "t1".into(),
///     context_id: "c1".into(),
///     status: TaskStatus::new(TaskState::Completed),
///     ..Default::default()
/// });
/// let json = serde_json::to_value(stream_event(&done, true)).unwrap();
/// assert_eq!(json["type"], "TaskStatusUpdateEvent");
/// assert_eq!((json["taskId"].as_str(), json["final"].as_bool()), (Some("t1"), Some(true)));
/// ```
pub fn stream_event(response: &StreamResponse, is_final: bool) -> impl Serialize + '_ {
    Event { response, is_final, flavor: Flavor::Legacy }
}

/// Final when the stream closes after it.
impl Serialize for Legacy<'_, StreamResponse> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        stream_event(self.0, Dialect::Legacy.profile().closes_stream(self.0)).serialize(serializer)
    }
}

/// `tasks/send` and `tasks/sendSubscribe` parameters. The task is the client's: `id` names it
/// (a new id creates it) and `sessionId` its context.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskSendParams {
    /// The task, chosen by the client.
    #[serde(default, deserialize_with = "null_default")]
    pub id: String,
    /// The session (context), chosen by the client.
    #[serde(default, deserialize_with = "null_default")]
    pub session_id: String,
    /// The message.
    pub message: Message,
    /// A webhook for the task.
    #[serde(default, alias = "pushNotificationConfig")]
    pub push_notification: Option<TaskPushNotificationConfig>,
    /// How many recent messages to return.
    #[serde(default, deserialize_with = "lenient_i32")]
    pub history_length: Option<i32>,
    /// Media types the client accepts.
    #[serde(default, deserialize_with = "null_default")]
    pub accepted_output_modes: Vec<String>,
    /// Free-form metadata.
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

impl From<TaskSendParams> for SendMessageRequest {
    fn from(params: TaskSendParams) -> Self {
        let mut message = params.message;
        if message.task_id.is_empty() {
            message.task_id = params.id;
        }
        if message.context_id.is_empty() {
            message.context_id = params.session_id;
        }
        let configuration = SendMessageConfiguration {
            if_generation_match: None,
            accepted_output_modes: params.accepted_output_modes,
            task_push_notification_config: params.push_notification,
            history_length: params.history_length,
            // `tasks/send` answers with the task once it ends or pauses.
            return_immediately: false,
        };
        Self { tenant: String::new(), message, configuration: Some(configuration), metadata: params.metadata }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{
        AuthenticationInfo, StreamResponse, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent, Timestamp,
    };

    fn task() -> Task {
        Task {
            generation: None,
            id: "task-abc-123".into(),
            context_id: "session-1".into(),
            status: TaskStatus {
                state: TaskState::Completed,
                message: Some(Box::new(Message::agent("m2", "done"))),
                timestamp: Timestamp::from_millis(1_700_000_000_000),
            },
            artifacts: vec![Artifact::new(
                "a1",
                "answer",
                vec![Part::text("42"), Part::url("https://example.com/r.pdf", "r.pdf", "application/pdf")],
            )],
            history: vec![Message::user("m1", "question")],
            metadata: None,
        }
    }

    #[test]
    fn tasks_round_trip_through_the_canonical_model() {
        let task = task();
        let json = serde_json::to_value(Legacy(&task)).unwrap();
        assert_eq!((json["id"].as_str(), json["sessionId"].as_str()), (Some("task-abc-123"), Some("session-1")));
        assert!(json.get("kind").is_none());
        assert_eq!(json["artifacts"][0]["parts"][0], json!({"kind": "text", "type": "text", "text": "42"}));
        assert_eq!(json["artifacts"][0]["parts"][1]["file"]["uri"], "https://example.com/r.pdf");
        let back: Task = serde_json::from_value(json).unwrap();
        assert_eq!(back, task);
    }

    #[test]
    fn stream_events_have_the_v01_type_names_and_final() {
        let artifact = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            generation: None,
            task_id: "t1".into(),
            context_id: "c1".into(),
            artifact: Artifact::new("a1", "", vec![Part::text("chunk")]),
            append: true,
            last_chunk: false,
            metadata: None,
        });
        let json = serde_json::to_value(Legacy(&artifact)).unwrap();
        assert_eq!(json["type"], "TaskArtifactUpdateEvent");
        assert_eq!((json["id"].as_str(), json["final"].as_bool()), (Some("t1"), Some(false)));
        assert_eq!(
            (json["artifact"]["append"].as_bool(), json["artifact"]["lastChunk"].as_bool()),
            (Some(true), Some(false))
        );
        let back: TaskArtifactUpdateEvent = serde_json::from_value(json).unwrap();
        assert_eq!(StreamResponse::ArtifactUpdate(back), artifact);

        let working = TaskStatus { state: TaskState::Working, ..task().status };
        let snapshot = StreamResponse::Task(Task { status: working.clone(), ..task() });
        let json = serde_json::to_value(Legacy(&snapshot)).unwrap();
        assert_eq!(json["type"], "TaskStatusUpdateEvent");
        assert_eq!((json["status"]["state"].as_str(), json["final"].as_bool()), (Some("working"), Some(false)));
        let back: TaskStatusUpdateEvent = serde_json::from_value(json).unwrap();
        assert_eq!(back.status, working);
    }

    #[test]
    fn push_configs_name_the_task_both_ways_and_read_back() {
        let config = TaskPushNotificationConfig {
            task_id: "t1".into(),
            id: "p1".into(),
            url: "https://client.example/hook".into(),
            token: "tok".into(),
            authentication: Some(AuthenticationInfo { scheme: "Bearer".into(), credentials: String::new() }),
            ..TaskPushNotificationConfig::default()
        };
        let json = serde_json::to_value(Legacy(&config)).unwrap();
        assert_eq!((json["id"].as_str(), json["taskId"].as_str()), (Some("t1"), Some("t1")));
        assert_eq!(json["pushNotificationConfig"]["authentication"], json!({"schemes": ["Bearer"]}));
        let mut object = json.as_object().unwrap().clone();
        object.remove("taskId");
        let back: super::super::v03::PushConfigParams = serde_json::from_value(Value::Object(object)).unwrap();
        assert_eq!(TaskPushNotificationConfig::from(back), config);
    }
}
