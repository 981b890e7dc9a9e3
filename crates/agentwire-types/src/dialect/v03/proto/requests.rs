//! Canonical requests written as v0.3 HTTP+JSON bodies (ProtoJSON of `a2a.v1`): what a client
//! sends a v0.3 agent's REST interface. The other operations carry everything in the path and
//! the query.
//!
//! ```
//! use agentwire_types::dialect::v03::proto::{CreatePushConfig, Proto};
//! use agentwire_types::{Message, SendMessageRequest, TaskPushNotificationConfig};
//!
//! let body = serde_json::to_value(Proto(&SendMessageRequest::new(Message::user("m1", "hi")))).unwrap();
//! assert_eq!(body["message"]["content"][0]["text"], "hi");
//! assert_eq!(body["configuration"]["blocking"], true);
//!
//! let config = TaskPushNotificationConfig { task_id: "t1".into(), id: "c1".into(), url: "https://x.example/hook".into(), ..Default::default() };
//! let body = serde_json::to_value(CreatePushConfig(&config)).unwrap();
//! assert_eq!((body["parent"].as_str(), body["configId"].as_str()), (Some("tasks/t1"), Some("c1")));
//! assert_eq!(body["config"]["pushNotificationConfig"]["url"], "https://x.example/hook");
//! ```

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use super::super::super::json::non_empty;
use super::super::requests::send_params;
use super::Proto;
use crate::{SendMessageRequest, TaskPushNotificationConfig};

/// `SendMessageRequest` of `a2a.v1`: `{message, configuration, metadata}`, the configuration's
/// webhook named `pushNotification`.
impl Serialize for Proto<'_, SendMessageRequest> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        send_params(serializer, self.0, Proto(&self.0.message), "pushNotification")
    }
}

/// The body of `POST /v1/tasks/{id}/pushNotificationConfigs`: the whole
/// `CreateTaskPushNotificationConfigRequest` (`{parent, configId, config}`), the form every v0.3
/// server reads.
#[derive(Debug, Clone, Copy)]
pub struct CreatePushConfig<'a>(pub &'a TaskPushNotificationConfig);

impl Serialize for CreatePushConfig<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let config = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("parent", &format!("tasks/{}", config.task_id))?;
        non_empty(&mut map, "configId", &config.id)?;
        map.serialize_entry("config", &Proto(config))?;
        map.end()
    }
}
