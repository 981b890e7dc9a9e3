//! Canonical requests written as v0.3 JSON-RPC parameters: what a client sends a v0.3 agent.
//!
//! v0.3 names the task `id` where v1.0 says `taskId` and has no tenant. A request always states
//! `blocking`, whose absence v0.3 servers have read both ways.
//!
//! ```
//! use agentwire_types::dialect::v03::V03;
//! use agentwire_types::{Message, SendMessageConfiguration, SendMessageRequest, TaskPushNotificationConfigRef};
//!
//! let request = SendMessageRequest::new(Message::user("m1", "hi"));
//! let params = serde_json::to_value(V03(&request)).unwrap();
//! assert_eq!(params["message"]["kind"], "message");
//! assert_eq!(params["configuration"]["blocking"], true);
//!
//! let reference = TaskPushNotificationConfigRef { task_id: "t1".into(), id: "c1".into(), ..Default::default() };
//! let params = serde_json::to_value(V03(&reference)).unwrap();
//! assert_eq!(params, serde_json::json!({"id": "t1", "pushNotificationConfigId": "c1"}));
//! ```

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use super::super::json::{metadata, non_empty, PushNotificationConfig};
use super::V03;
use crate::{
    CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTasksRequest, SendMessageConfiguration, SendMessageRequest, SubscribeToTaskRequest,
    TaskPushNotificationConfigRef,
};

/// `MessageSendParams`: the message in its v0.3 shape, and a configuration that always says
/// whether to wait.
impl Serialize for V03<'_, SendMessageRequest> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        send_params(serializer, self.0, V03(&self.0.message), "pushNotificationConfig")
    }
}

/// A send's parameters as v0.3 writes them on either binding: `message` (in the binding's shape),
/// `configuration` (its webhook under `push_member`) and `metadata`.
pub(crate) fn send_params<S: Serializer>(
    serializer: S,
    request: &SendMessageRequest,
    message: impl Serialize,
    push_member: &'static str,
) -> Result<S::Ok, S::Error> {
    let mut map = serializer.serialize_map(None)?;
    map.serialize_entry("message", &message)?;
    let default = SendMessageConfiguration::default();
    let configuration = request.configuration.as_ref().unwrap_or(&default);
    map.serialize_entry("configuration", &Configuration { configuration, push_member })?;
    metadata(&mut map, request.metadata.as_ref())?;
    map.end()
}

/// `MessageSendConfiguration` (JSON-RPC) or `SendMessageConfiguration` (ProtoJSON of `a2a.v1`):
/// alike but for the name of the webhook's member.
struct Configuration<'a> {
    configuration: &'a SendMessageConfiguration,
    push_member: &'static str,
}

impl Serialize for Configuration<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let configuration = self.configuration;
        let mut map = serializer.serialize_map(None)?;
        if !configuration.accepted_output_modes.is_empty() {
            map.serialize_entry("acceptedOutputModes", &configuration.accepted_output_modes)?;
        }
        if let Some(config) = &configuration.task_push_notification_config {
            map.serialize_entry(self.push_member, &PushNotificationConfig(config))?;
        }
        if let Some(history_length) = configuration.history_length {
            map.serialize_entry("historyLength", &history_length)?;
        }
        map.serialize_entry("blocking", &!configuration.return_immediately)?;
        map.end()
    }
}

/// `TaskQueryParams`: `{id, historyLength}`.
impl Serialize for V03<'_, GetTaskRequest> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("id", &self.0.id)?;
        if let Some(history_length) = self.0.history_length {
            map.serialize_entry("historyLength", &history_length)?;
        }
        map.end()
    }
}

/// `TaskIdParams`: `{id, metadata}`.
impl Serialize for V03<'_, CancelTaskRequest> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("id", &self.0.id)?;
        metadata(&mut map, self.0.metadata.as_ref())?;
        map.end()
    }
}

/// `TaskIdParams` of `tasks/resubscribe`.
impl Serialize for V03<'_, SubscribeToTaskRequest> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("id", &self.0.id)?;
        map.end()
    }
}

/// `GetTaskPushNotificationConfigParams` and `DeleteTaskPushNotificationConfigParams`:
/// `{id, pushNotificationConfigId}`.
impl Serialize for V03<'_, TaskPushNotificationConfigRef> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("id", &self.0.task_id)?;
        non_empty(&mut map, "pushNotificationConfigId", &self.0.id)?;
        map.end()
    }
}

/// `ListTaskPushNotificationConfigParams`: `{id}`.
impl Serialize for V03<'_, ListTaskPushNotificationConfigsRequest> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("id", &self.0.task_id)?;
        map.end()
    }
}

/// `tasks/list`, which v0.3 agents that list tasks read in v1.0's names, without the tenant.
impl Serialize for V03<'_, ListTasksRequest> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ListTasksRequest { tenant: String::new(), ..self.0.clone() }.serialize(serializer)
    }
}

/// `agent/getAuthenticatedExtendedCard` takes no parameters.
impl Serialize for V03<'_, GetExtendedAgentCardRequest> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_map(Some(0))?.end()
    }
}
