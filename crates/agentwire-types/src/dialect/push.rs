//! The body of a push notification, as each generation's server POSTs it to a webhook
//! (docs/PROTOCOL.md rule 13), read as the canonical stream item.
//!
//! - v1.0 servers send one `StreamResponse` per event: `{"task" | "message" | "statusUpdate" |
//!   "artifactUpdate": …}` (ProtoJSON; the proto field names `status_update` and
//!   `artifact_update` are read too).
//! - v0.3 servers send the whole task after each change, tagged `"kind": "task"`. The other v0.3
//!   kinds (`message`, `status-update`, `artifact-update`) are read as the matching item.
//! - Legacy (v0.1 and seed 004) servers send the whole task with no tag; its v0.1 `sessionId`
//!   stands for `contextId` when that is absent.
//!
//! States, roles and parts of every spelling are read by the canonical types themselves.

use serde::de::Error as _;
use serde_json::{Map, Value};

use super::{FromWire, WireForm};
use crate::StreamResponse;

/// The members of a v1.0 `StreamResponse` by their JSON names, then by the proto field names
/// ProtoJSON also accepts, each with its JSON name.
const V1_MEMBERS: [(&str, &str); 6] = [
    ("task", "task"),
    ("message", "message"),
    ("statusUpdate", "statusUpdate"),
    ("artifactUpdate", "artifactUpdate"),
    ("status_update", "statusUpdate"),
    ("artifact_update", "artifactUpdate"),
];

/// A push notification body of any generation as the stream item it carries: a v1.0
/// `StreamResponse` as it is, and the task that v0.3 and legacy servers send as
/// [`StreamResponse::Task`].
///
/// A body that is none of these (not an object, an unknown `kind`, an object that is neither a
/// stream response nor a task with an `id` and a `status`) is an error; nothing panics on any
/// input.
///
/// ```
/// use agentwire_types::dialect::push::read;
/// use agentwire_types::{StreamResponse, TaskState};
/// use serde_json::json;
///
/// // A v1.0 server's event.
/// let v1 = read(json!({"statusUpdate": {"taskId": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}})).unwrap();
/// assert!(matches!(&v1, StreamResponse::StatusUpdate(update) if update.task_id == "t1"));
///
/// // A v0.3 server's task.
/// let v03 = read(json!({"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "input-required"}})).unwrap();
/// assert_eq!(v03.task_state(), Some(TaskState::InputRequired));
///
/// // A legacy server's task, with its v0.1 session.
/// let legacy = read(json!({"id": "t1", "sessionId": "s1", "status": {"state": "completed"}})).unwrap();
/// assert!(matches!(&legacy, StreamResponse::Task(task) if task.context_id == "s1"));
///
/// assert!(read(json!({"hello": "world"})).is_err());
/// ```
pub fn read(body: Value) -> serde_json::Result<StreamResponse> {
    let Value::Object(body) = body else {
        return Err(serde_json::Error::custom("a push notification is a JSON object"));
    };
    if body.contains_key("kind") {
        return StreamResponse::from_wire(WireForm::V03, Value::Object(body));
    }
    match body.keys().filter(|key| v1_name(key).is_some()).count() {
        0 if body.contains_key("id") && body.contains_key("status") => task(body),
        0 => Err(serde_json::Error::custom("neither a stream response nor a task")),
        1 => {
            let member = body.into_iter().find_map(|(key, value)| Some((v1_name(&key)?, value)));
            let wrapper: Map<String, Value> =
                member.into_iter().map(|(name, value)| (name.to_owned(), value)).collect();
            serde_json::from_value(Value::Object(wrapper))
        }
        _ => Err(serde_json::Error::custom("a stream response has exactly one member")),
    }
}

/// The v1.0 member `key` names, if any.
fn v1_name(key: &str) -> Option<&'static str> {
    V1_MEMBERS.iter().find(|(name, _)| *name == key).map(|(_, canonical)| *canonical)
}

/// A task of v0.3 or the legacy family, whose v0.1 `sessionId` is its context.
fn task(mut body: Map<String, Value>) -> serde_json::Result<StreamResponse> {
    let session = body.remove("sessionId");
    if !body.contains_key("contextId")
        && !body.contains_key("context_id")
        && let Some(session) = session
    {
        body.insert("contextId".to_owned(), session);
    }
    serde_json::from_value(Value::Object(body)).map(StreamResponse::Task)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::dialect::legacy::Legacy;
    use crate::dialect::v03::{stream_event, V03};
    use crate::{Message, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent};

    fn task_in(state: TaskState) -> Task {
        Task {
            id: "t1".into(),
            context_id: "c1".into(),
            status: TaskStatus::new(state).with_message(Message::agent("m2", "which one?")),
            history: vec![Message::user("m1", "hi")],
            ..Task::default()
        }
    }

    #[test]
    fn what_each_generation_sends_reads_back_as_the_item_it_was() {
        let task = task_in(TaskState::InputRequired);
        for body in [
            serde_json::to_value(StreamResponse::Task(task.clone())).unwrap(),
            serde_json::to_value(V03(&task)).unwrap(),
            serde_json::to_value(Legacy(&task)).unwrap(),
        ] {
            assert_eq!(read(body.clone()).unwrap(), StreamResponse::Task(task.clone()), "{body}");
        }
        let update = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            generation: None,
            task_id: "t1".into(),
            context_id: "c1".into(),
            status: TaskStatus::new(TaskState::Completed),
            metadata: None,
        });
        let artifact = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            generation: None,
            task_id: "t1".into(),
            context_id: "c1".into(),
            artifact: crate::Artifact::new("a1", "out", vec![crate::Part::text("42")]),
            append: true,
            last_chunk: false,
            metadata: None,
        });
        let message = StreamResponse::Message(Message { task_id: "t1".into(), ..Message::agent("m3", "hello") });
        for item in [update, artifact, message] {
            assert_eq!(read(serde_json::to_value(&item).unwrap()).unwrap(), item);
            assert_eq!(read(serde_json::to_value(stream_event(&item, false)).unwrap()).unwrap(), item);
        }
    }

    #[test]
    fn proto_field_names_are_read() {
        let body =
            json!({"status_update": {"task_id": "t1", "context_id": "c1", "status": {"state": "TASK_STATE_WORKING"}}});
        let read = read(body).unwrap();
        assert_eq!((read.task_id(), read.task_state()), ("t1", Some(TaskState::Working)));
    }

    #[test]
    fn a_v01_task_takes_its_session_as_context_unless_it_has_one() {
        let v01 = json!({"id": "t1", "sessionId": "s1", "status": {"state": "working"}});
        assert!(matches!(read(v01).unwrap(), StreamResponse::Task(t) if t.context_id == "s1"));
        let both = json!({"id": "t1", "contextId": "c1", "sessionId": "s1", "status": {"state": "working"}});
        assert!(matches!(read(both).unwrap(), StreamResponse::Task(t) if t.context_id == "c1"));
    }

    #[test]
    fn bodies_that_are_no_notification_are_errors() {
        for body in [
            json!(null),
            json!("task"),
            json!(42),
            json!([{"task": {}}]),
            json!({}),
            json!({"hello": "world"}),
            json!({"id": "t1"}),
            json!({"kind": "status"}),
            json!({"kind": 3}),
            json!({"kind": "task", "status": {"state": "sleeping"}}),
            json!({"task": {"id": "t1"}, "message": {"messageId": "m1"}}),
            json!({"statusUpdate": "done"}),
            json!({"task": null}),
            json!({"id": "t1", "status": "completed"}),
        ] {
            assert!(read(body.clone()).is_err(), "{body}");
        }
    }
}
