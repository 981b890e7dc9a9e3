//! Answers read back as canonical values, whichever generation's interface wrote them: what a
//! client does with the result of a call or an event of a stream.
//!
//! The canonical decoders read most older shapes already (kebab-case states, `kind`-tagged parts,
//! `content` for parts). What they cannot tell apart on their own is decided here: v0.3's JSON
//! tags a send result or a stream event with its `kind` instead of wrapping it in a named member;
//! v0.3's ProtoJSON nests a data part's object one level deeper, holds a file's bytes as their
//! base64 text and names a push config by a resource name.
//!
//! ```
//! use agentwire_types::dialect::{FromWire, WireForm};
//! use agentwire_types::{StreamResponse, TaskState};
//! use serde_json::json;
//!
//! let event = json!({"kind": "status-update", "taskId": "t1", "contextId": "c1",
//!                    "status": {"state": "completed"}, "final": true});
//! let event = StreamResponse::from_wire(WireForm::V03, event).unwrap();
//! assert_eq!(event.task_state(), Some(TaskState::Completed));
//! ```

use serde::de::Error as _;
use serde::Deserialize;
use serde_json::Value;

use super::card;
use super::v03::proto::{unnest, unnest_message, unnest_status, unnest_task, PushConfigBody};
use super::v03::PushConfigParams;
use crate::{
    AgentCard, ListTaskPushNotificationConfigsResponse, ListTasksResponse, SendMessageResponse, StreamResponse, Task,
    TaskPushNotificationConfig,
};

/// The JSON an interface writes: its generation, and for v0.3 its binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireForm {
    /// v1.0 ProtoJSON, on every binding.
    V1,
    /// v0.3 over JSON-RPC: `kind`-tagged objects.
    V03,
    /// v0.3 over HTTP+JSON: ProtoJSON of `a2a.v1`.
    V03Proto,
}

/// A canonical value that can be read from any [`WireForm`].
pub trait FromWire: Sized {
    /// Reads `value`, written in `form`.
    fn from_wire(form: WireForm, value: Value) -> serde_json::Result<Self>;
}

impl FromWire for Task {
    fn from_wire(form: WireForm, value: Value) -> serde_json::Result<Self> {
        let mut task: Task = serde_json::from_value(value)?;
        if form == WireForm::V03Proto {
            unnest_task(&mut task);
        }
        Ok(task)
    }
}

impl FromWire for ListTasksResponse {
    fn from_wire(form: WireForm, value: Value) -> serde_json::Result<Self> {
        let mut page: ListTasksResponse = serde_json::from_value(value)?;
        if form == WireForm::V03Proto {
            page.tasks.iter_mut().for_each(unnest_task);
        }
        Ok(page)
    }
}

impl FromWire for SendMessageResponse {
    fn from_wire(form: WireForm, value: Value) -> serde_json::Result<Self> {
        let mut response = match form {
            WireForm::V03 => match kind(&value)? {
                Kind::Message => SendMessageResponse::Message(serde_json::from_value(value)?),
                Kind::Task => SendMessageResponse::Task(serde_json::from_value(value)?),
                other => return Err(serde_json::Error::custom(format!("a send result cannot be {other:?}"))),
            },
            WireForm::V1 | WireForm::V03Proto => serde_json::from_value(value)?,
        };
        if form == WireForm::V03Proto {
            match &mut response {
                SendMessageResponse::Task(task) => unnest_task(task),
                SendMessageResponse::Message(message) => unnest_message(message),
            }
        }
        Ok(response)
    }
}

impl FromWire for StreamResponse {
    fn from_wire(form: WireForm, value: Value) -> serde_json::Result<Self> {
        let mut event = match form {
            WireForm::V03 => match kind(&value)? {
                Kind::Task => StreamResponse::Task(serde_json::from_value(value)?),
                Kind::Message => StreamResponse::Message(serde_json::from_value(value)?),
                Kind::StatusUpdate => StreamResponse::StatusUpdate(serde_json::from_value(value)?),
                Kind::ArtifactUpdate => StreamResponse::ArtifactUpdate(serde_json::from_value(value)?),
            },
            WireForm::V1 | WireForm::V03Proto => serde_json::from_value(value)?,
        };
        if form == WireForm::V03Proto {
            match &mut event {
                StreamResponse::Task(task) => unnest_task(task),
                StreamResponse::Message(message) => unnest_message(message),
                StreamResponse::StatusUpdate(update) => unnest_status(&mut update.status),
                StreamResponse::ArtifactUpdate(update) => unnest(&mut update.artifact.parts),
            }
        }
        Ok(event)
    }
}

impl FromWire for TaskPushNotificationConfig {
    fn from_wire(form: WireForm, value: Value) -> serde_json::Result<Self> {
        match form {
            WireForm::V1 => serde_json::from_value(value),
            WireForm::V03 => Ok(PushConfigParams::deserialize(value)?.into()),
            WireForm::V03Proto => {
                // `name` is `tasks/{taskId}/pushNotificationConfigs/{configId}`; the config id is
                // all that follows, `/` included, as the encoder writes it.
                let name = value.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
                let segments: Vec<&str> = name.splitn(4, '/').collect();
                let (task_id, config_id) = match segments.as_slice() {
                    ["tasks", task_id, _] => (*task_id, ""),
                    ["tasks", task_id, _, config_id] => (*task_id, *config_id),
                    _ => return Err(serde_json::Error::custom(format!("{name:?} does not name a push config"))),
                };
                let mut body = PushConfigBody::deserialize(value)?;
                if body.config_id.is_empty() {
                    body.config_id = config_id.to_owned();
                }
                body.into_config(task_id).map_err(serde_json::Error::custom)
            }
        }
    }
}

impl FromWire for ListTaskPushNotificationConfigsResponse {
    fn from_wire(form: WireForm, value: Value) -> serde_json::Result<Self> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Page {
            #[serde(default)]
            configs: Vec<Value>,
            #[serde(default)]
            next_page_token: String,
        }
        let page = match (form, value) {
            (WireForm::V1, value) => return serde_json::from_value(value),
            // v0.3's JSON-RPC answers with the list itself.
            (WireForm::V03, Value::Array(configs)) => Page { configs, next_page_token: String::new() },
            (_, value) => Page::deserialize(value)?,
        };
        let configs = page.configs.into_iter().map(|config| TaskPushNotificationConfig::from_wire(form, config));
        Ok(Self { configs: configs.collect::<serde_json::Result<_>>()?, next_page_token: page.next_page_token })
    }
}

impl FromWire for AgentCard {
    fn from_wire(_: WireForm, value: Value) -> serde_json::Result<Self> {
        card::read(value)
    }
}

/// Anything: an operation that answers with nothing worth reading (a delete).
impl FromWire for () {
    fn from_wire(_: WireForm, _: Value) -> serde_json::Result<Self> {
        Ok(())
    }
}

/// What a v0.3 object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Task,
    Message,
    StatusUpdate,
    ArtifactUpdate,
}

/// The object's `kind`, or where it has none, what its members say it is.
fn kind(value: &Value) -> serde_json::Result<Kind> {
    Ok(match value.get("kind") {
        Some(Value::String(kind)) => match kind.as_str() {
            "task" => Kind::Task,
            "message" => Kind::Message,
            "status-update" => Kind::StatusUpdate,
            "artifact-update" => Kind::ArtifactUpdate,
            other => {
                let shown: String = other.chars().take(32).collect();
                return Err(serde_json::Error::custom(format!("unknown kind {shown:?}")));
            }
        },
        Some(_) => return Err(serde_json::Error::custom("`kind` is not a string")),
        None if value.get("artifact").is_some() => Kind::ArtifactUpdate,
        None if value.get("taskId").is_some() && value.get("status").is_some() => Kind::StatusUpdate,
        None if value.get("messageId").is_some() => Kind::Message,
        None => Kind::Task,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::dialect::v03::proto::Proto;
    use crate::dialect::v03::V03;
    use crate::{Artifact, Message, Part, TaskArtifactUpdateEvent, TaskState, TaskStatus};

    fn task() -> Task {
        let mut history = vec![Message::user("m1", "go")];
        history[0].parts.push(Part::data(json!({"k": [1]})));
        history[0].parts.push(Part::raw(b"hi".to_vec(), "g.txt", "text/plain"));
        Task {
            generation: None,
            id: "t1".into(),
            context_id: "c1".into(),
            status: TaskStatus { timestamp: None, ..TaskStatus::new(TaskState::Canceled) },
            artifacts: vec![Artifact::new("a1", "out", vec![Part::data(json!({"n": 2})), Part::text("x")])],
            history,
            metadata: None,
        }
    }

    #[test]
    fn what_each_form_writes_reads_back_as_the_canonical_value() {
        let task = task();
        let forms: [(WireForm, Value); 3] = [
            (WireForm::V1, serde_json::to_value(&task).unwrap()),
            (WireForm::V03, serde_json::to_value(V03(&task)).unwrap()),
            (WireForm::V03Proto, serde_json::to_value(Proto(&task)).unwrap()),
        ];
        for (form, json) in forms {
            assert_eq!(Task::from_wire(form, json).unwrap(), task, "{form:?}");
        }
        let reply = SendMessageResponse::Task(task.clone());
        let wrapped = serde_json::to_value(Proto(&reply)).unwrap();
        assert_eq!(SendMessageResponse::from_wire(WireForm::V03Proto, wrapped).unwrap(), reply);
        let message = SendMessageResponse::Message(Message::agent("m2", "hi"));
        let tagged = serde_json::to_value(V03(&message)).unwrap();
        assert_eq!(SendMessageResponse::from_wire(WireForm::V03, tagged).unwrap(), message);
    }

    #[test]
    fn stream_events_read_back_in_each_form() {
        let chunk = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            generation: None,
            task_id: "t1".into(),
            context_id: "c1".into(),
            artifact: Artifact::new("a1", "out", vec![Part::data(json!({"n": 1}))]),
            append: true,
            last_chunk: false,
            metadata: None,
        });
        let events = [StreamResponse::Task(task()), StreamResponse::Message(Message::agent("m", "hi")), chunk];
        for event in events {
            let v03 = serde_json::to_value(V03(&event)).unwrap();
            assert_eq!(StreamResponse::from_wire(WireForm::V03, v03).unwrap(), event);
            let proto = serde_json::to_value(Proto(&event)).unwrap();
            assert_eq!(StreamResponse::from_wire(WireForm::V03Proto, proto).unwrap(), event);
        }
    }

    #[test]
    fn push_configs_read_back_in_each_form() {
        let config = TaskPushNotificationConfig {
            task_id: "t1".into(),
            id: "c1".into(),
            url: "https://client.example/hook".into(),
            token: "tok".into(),
            ..TaskPushNotificationConfig::default()
        };
        let v03 = serde_json::to_value(V03(&config)).unwrap();
        assert_eq!(TaskPushNotificationConfig::from_wire(WireForm::V03, v03).unwrap(), config);
        let proto = serde_json::to_value(Proto(&config)).unwrap();
        assert_eq!(TaskPushNotificationConfig::from_wire(WireForm::V03Proto, proto).unwrap(), config);
        let list = ListTaskPushNotificationConfigsResponse { configs: vec![config], next_page_token: String::new() };
        for (form, json) in [
            (WireForm::V03, serde_json::to_value(V03(&list)).unwrap()),
            (WireForm::V03Proto, serde_json::to_value(Proto(&list)).unwrap()),
        ] {
            assert_eq!(ListTaskPushNotificationConfigsResponse::from_wire(form, json).unwrap(), list, "{form:?}");
        }
        let nameless = json!({"name": "agents/x", "pushNotificationConfig": {"url": "https://x"}});
        assert!(TaskPushNotificationConfig::from_wire(WireForm::V03Proto, nameless).is_err());
        let slashed =
            json!({"name": "tasks/t1/pushNotificationConfigs/c1/more", "pushNotificationConfig": {"url": "https://x"}});
        let read = TaskPushNotificationConfig::from_wire(WireForm::V03Proto, slashed).unwrap();
        assert_eq!((read.task_id.as_str(), read.id.as_str()), ("t1", "c1/more"), "the whole id, not its first segment");
    }

    #[test]
    fn a_v03_send_result_is_a_message_or_a_task_by_its_kind() {
        let message =
            json!({"kind": "message", "messageId": "m", "role": "agent", "parts": [{"kind": "text", "text": "hi"}]});
        assert!(matches!(
            SendMessageResponse::from_wire(WireForm::V03, message),
            Ok(SendMessageResponse::Message(m)) if m.text() == "hi"
        ));
        let update = json!({"kind": "status-update", "taskId": "t", "status": {"state": "working"}});
        assert!(SendMessageResponse::from_wire(WireForm::V03, update).is_err());
    }
}
