//! Request and response messages of the v1.0 operations.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::de::{lenient_i32, null_default, optional_int64, state_filter};
use crate::{Message, Task, TaskPushNotificationConfig, TaskState, Timestamp};

/// SendMessage / SendStreamingMessage parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageRequest {
    /// Routing tenant.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    /// The message to send.
    pub message: Message,
    /// How to run the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl SendMessageRequest {
    /// A request carrying just `message`.
    pub fn new(message: Message) -> Self {
        Self { tenant: String::new(), message, configuration: None, metadata: None }
    }
}

/// Options of a send.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageConfiguration {
    /// Media types the client accepts in replies.
    #[serde(
        alias = "accepted_output_modes",
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub accepted_output_modes: Vec<String>,
    /// A webhook to register for the task.
    #[serde(
        alias = "task_push_notification_config",
        default,
        alias = "pushNotificationConfig",
        alias = "pushNotification",
        skip_serializing_if = "Option::is_none"
    )]
    pub task_push_notification_config: Option<TaskPushNotificationConfig>,
    /// How many recent history messages to return (unset: all, 0: none).
    #[serde(
        alias = "history_length",
        default,
        deserialize_with = "lenient_i32",
        skip_serializing_if = "Option::is_none"
    )]
    pub history_length: Option<i32>,
    /// Return as soon as the task exists instead of waiting for it to finish or pause.
    #[serde(
        alias = "return_immediately",
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub return_immediately: bool,
    /// The dev-1.1 draft's precondition on a message to an existing task: refused with
    /// TaskGenerationMismatch unless the task's generation is this one. Read only from a caller
    /// asking for version 1.1; ignored for a message that starts a task.
    #[serde(alias = "if_generation_match", default, with = "optional_int64", skip_serializing_if = "Option::is_none")]
    pub if_generation_match: Option<i64>,
}

/// GetTask parameters.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskRequest {
    /// Routing tenant.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    /// The task id.
    pub id: String,
    /// How many recent history messages to return (unset: all, 0: none).
    #[serde(
        alias = "history_length",
        default,
        deserialize_with = "lenient_i32",
        skip_serializing_if = "Option::is_none"
    )]
    pub history_length: Option<i32>,
    /// The dev-1.1 draft's long poll: answer once the task's generation is past this one (at
    /// once if it is already), or when the server stops waiting. Read only from a caller asking
    /// for version 1.1.
    #[serde(alias = "current_generation", default, with = "optional_int64", skip_serializing_if = "Option::is_none")]
    pub current_generation: Option<i64>,
}

/// ListTasks parameters: filters and a page cursor.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksRequest {
    /// Routing tenant.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    /// Only tasks of this context.
    #[serde(
        alias = "context_id",
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub context_id: String,
    /// Only tasks in this state. `UNRECOGNIZED` (or -1), which clients generated with ts-proto
    /// send for an unset filter, means no filter; any other unknown state is an error.
    #[serde(default, deserialize_with = "state_filter", skip_serializing_if = "Option::is_none")]
    pub status: Option<TaskState>,
    /// At most this many tasks (1 to 100; default 50).
    #[serde(alias = "page_size", default, deserialize_with = "lenient_i32", skip_serializing_if = "Option::is_none")]
    pub page_size: Option<i32>,
    /// The cursor from a previous page's `nextPageToken`.
    #[serde(
        alias = "page_token",
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub page_token: String,
    /// How many recent history messages to return per task.
    #[serde(
        alias = "history_length",
        default,
        deserialize_with = "lenient_i32",
        skip_serializing_if = "Option::is_none"
    )]
    pub history_length: Option<i32>,
    /// Only tasks whose status changed at or after this time.
    #[serde(alias = "status_timestamp_after", default, skip_serializing_if = "Option::is_none")]
    pub status_timestamp_after: Option<Timestamp>,
    /// Include artifacts (default false: the field is omitted).
    #[serde(alias = "include_artifacts", default, skip_serializing_if = "Option::is_none")]
    pub include_artifacts: Option<bool>,
}

/// One page of ListTasks.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResponse {
    /// The tasks, newest status first.
    #[serde(default, deserialize_with = "null_default")]
    pub tasks: Vec<Task>,
    /// The cursor for the next page; `""` on the last page.
    #[serde(alias = "next_page_token", default, deserialize_with = "null_default")]
    pub next_page_token: String,
    /// The page size that was applied.
    #[serde(alias = "page_size", default, deserialize_with = "null_default")]
    pub page_size: i32,
    /// How many tasks match the filters in all.
    #[serde(alias = "total_size", default, deserialize_with = "null_default")]
    pub total_size: i32,
}

/// CancelTask parameters.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelTaskRequest {
    /// Routing tenant.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    /// The task id.
    pub id: String,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// SubscribeToTask parameters.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscribeToTaskRequest {
    /// Routing tenant.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    /// The task id.
    pub id: String,
}

/// GetTaskPushNotificationConfig / DeleteTaskPushNotificationConfig parameters.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfigRef {
    /// Routing tenant.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    /// The task id.
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// The config id.
    pub id: String,
}

/// ListTaskPushNotificationConfigs parameters.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsRequest {
    /// Routing tenant.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    /// The task id.
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// At most this many configs (unset: all).
    #[serde(alias = "page_size", default, deserialize_with = "lenient_i32", skip_serializing_if = "Option::is_none")]
    pub page_size: Option<i32>,
    /// The cursor from a previous page.
    #[serde(
        alias = "page_token",
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub page_token: String,
}

/// One page of a task's push configs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsResponse {
    /// The configs.
    #[serde(default, deserialize_with = "null_default")]
    pub configs: Vec<TaskPushNotificationConfig>,
    /// The cursor for the next page; `""` on the last page.
    #[serde(alias = "next_page_token", default, deserialize_with = "null_default")]
    pub next_page_token: String,
}

/// GetExtendedAgentCard parameters.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetExtendedAgentCardRequest {
    /// Routing tenant.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub tenant: String,
}
