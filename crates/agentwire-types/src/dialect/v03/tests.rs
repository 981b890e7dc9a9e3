use serde::de::DeserializeOwned;
use serde_json::json;

use super::*;
use crate::{Role, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent, Timestamp};

/// Encodes in the v0.3 shape, decodes through the canonical model, and expects the value back.
fn round_trip<T>(value: &T) -> Value
where
    T: DeserializeOwned + PartialEq + std::fmt::Debug,
    for<'a> V03<'a, T>: Serialize,
{
    let json = serde_json::to_value(V03(value)).unwrap();
    let back: T = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(&back, value, "{json}");
    json
}

fn metadata() -> Option<Map<String, Value>> {
    json!({"ext": {"k": [1, 2]}}).as_object().cloned()
}

#[test]
fn parts_of_every_kind_round_trip_with_their_kind() {
    let text = Part { metadata: metadata(), ..Part::text("hello") };
    assert_eq!(round_trip(&text), json!({"kind": "text", "text": "hello", "metadata": {"ext": {"k": [1, 2]}}}));

    let raw = Part::raw(b"hi".to_vec(), "a.txt", "text/plain");
    let json = round_trip(&raw);
    assert_eq!(json, json!({"kind": "file", "file": {"bytes": "aGk=", "name": "a.txt", "mimeType": "text/plain"}}));

    let url = Part::url("https://example.com/a.pdf", "a.pdf", "application/pdf");
    let json = round_trip(&url);
    assert_eq!(json["file"]["uri"], "https://example.com/a.pdf");
    assert!(json["file"].get("bytes").is_none());

    let data = Part::data(json!({"amount": 3}));
    assert_eq!(round_trip(&data), json!({"kind": "data", "data": {"amount": 3}}));
}

#[test]
fn data_that_is_not_an_object_is_wrapped() {
    let json = serde_json::to_value(V03(&Part::data(json!([1, 2])))).unwrap();
    assert_eq!(json, json!({"kind": "data", "data": {"value": [1, 2]}}));
}

fn agent_message() -> Message {
    Message {
        context_id: "c1".into(),
        task_id: "t1".into(),
        metadata: metadata(),
        extensions: vec!["urn:x".into()],
        reference_task_ids: vec!["t0".into()],
        ..Message::agent("m2", "done")
    }
}

#[test]
fn messages_round_trip_with_lowercase_roles() {
    let json = round_trip(&agent_message());
    assert_eq!((json["kind"].as_str(), json["role"].as_str()), (Some("message"), Some("agent")));
    assert_eq!(json["referenceTaskIds"], json!(["t0"]));
    let user = round_trip(&Message::user("m1", "hi"));
    assert_eq!(
        user,
        json!({"kind": "message", "messageId": "m1", "role": "user", "parts": [{"kind": "text", "text": "hi"}]})
    );
}

#[test]
fn a_message_without_a_role_is_not_written() {
    let mut message = Message::user("m1", "hi");
    message.role = Role::Unspecified;
    assert!(serde_json::to_value(V03(&message)).is_err());
}

fn full_task() -> Task {
    let status = TaskStatus {
        state: TaskState::InputRequired,
        message: Some(Box::new(agent_message())),
        timestamp: Timestamp::from_millis(1_700_000_000_123),
    };
    Task {
        generation: None,
        id: "t1".into(),
        context_id: "c1".into(),
        status,
        artifacts: vec![Artifact {
            description: "d".into(),
            metadata: metadata(),
            ..Artifact::new("a1", "n", vec![Part::text("x")])
        }],
        history: vec![
            Message { context_id: "c1".into(), task_id: "t1".into(), ..Message::user("m1", "hi") },
            agent_message(),
        ],
        metadata: metadata(),
    }
}

#[test]
fn tasks_round_trip_with_kebab_states() {
    let json = round_trip(&full_task());
    assert_eq!(json["kind"], "task");
    assert_eq!(json["status"]["state"], "input-required");
    assert_eq!(json["status"]["message"]["kind"], "message");
    assert_eq!(json["artifacts"][0]["parts"][0]["kind"], "text");
    assert_eq!(json["history"][1]["role"], "agent");
    for state in TaskState::ALL.iter().copied().filter(|s| *s != TaskState::Unspecified) {
        let task = Task { status: TaskStatus::new(state), ..full_task() };
        assert_eq!(round_trip(&task)["status"]["state"], state.as_kebab_name());
    }
}

#[test]
fn stream_events_carry_kind_and_final_and_round_trip() {
    let status = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        generation: None,
        task_id: "225d6247-06ba-4cda-a08b-33ae35c8dcfa".into(),
        context_id: "05217e44-7e9f-473e-ab4f-2c2dde50a2b1".into(),
        status: TaskStatus { state: TaskState::Completed, message: None, timestamp: None },
        metadata: None,
    });
    let artifact = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        generation: None,
        task_id: "225d6247-06ba-4cda-a08b-33ae35c8dcfa".into(),
        context_id: "05217e44-7e9f-473e-ab4f-2c2dde50a2b1".into(),
        artifact: Artifact::new("9b6934dd-37e3-4eb1-8766-962efaab63a1", "", vec![Part::text("<section 3...>")]),
        append: true,
        last_chunk: true,
        metadata: None,
    });
    // The shapes of seed 001 §9.3's stream (its timestamp aside).
    assert_eq!(
        serde_json::to_value(stream_event(&status, true)).unwrap(),
        json!({"taskId": "225d6247-06ba-4cda-a08b-33ae35c8dcfa", "contextId": "05217e44-7e9f-473e-ab4f-2c2dde50a2b1",
            "status": {"state": "completed"}, "final": true, "kind": "status-update"})
    );
    assert_eq!(
        serde_json::to_value(stream_event(&artifact, false)).unwrap(),
        json!({"taskId": "225d6247-06ba-4cda-a08b-33ae35c8dcfa", "contextId": "05217e44-7e9f-473e-ab4f-2c2dde50a2b1",
            "artifact": {"artifactId": "9b6934dd-37e3-4eb1-8766-962efaab63a1",
                "parts": [{"kind": "text", "text": "<section 3...>"}]},
            "append": true, "lastChunk": true, "kind": "artifact-update"})
    );

    let working = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        status: TaskStatus::new(TaskState::Working),
        ..match &status {
            StreamResponse::StatusUpdate(update) => update.clone(),
            _ => unreachable!(),
        }
    });
    for (event, is_final) in [(&status, true), (&working, false), (&artifact, false)] {
        assert_eq!(
            serde_json::to_value(V03(event)).unwrap().get("final").and_then(Value::as_bool),
            match event {
                StreamResponse::StatusUpdate(_) => Some(is_final),
                _ => None,
            }
        );
    }
    for event in
        [status, working, artifact, StreamResponse::Task(full_task()), StreamResponse::Message(agent_message())]
    {
        let json = serde_json::to_value(V03(&event)).unwrap();
        let back = decode_stream_item(json.clone());
        assert_eq!(back, event, "{json}");
    }
}

/// What a client does with a v0.3 stream item: its `kind` names the canonical member.
fn decode_stream_item(mut json: Value) -> StreamResponse {
    let kind = json.as_object_mut().unwrap().remove("kind").unwrap();
    let member = match kind.as_str().unwrap() {
        "task" => "task",
        "message" => "message",
        "status-update" => "statusUpdate",
        "artifact-update" => "artifactUpdate",
        other => panic!("unknown kind {other}"),
    };
    serde_json::from_value(json!({ member: json })).unwrap()
}
