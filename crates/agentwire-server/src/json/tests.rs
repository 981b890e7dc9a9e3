use std::collections::BTreeMap;

use agentwire_types::{
    Artifact, Message, Part, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use serde::Serialize;
use serde_json::{json, Value};

use super::*;

/// Our bytes must be serde_json's, exactly.
fn same_as_serde_json<T: Serialize + ?Sized>(value: &T) {
    let ours = to_vec_with_capacity(value, 0).expect("our writer");
    let theirs = serde_json::to_vec(value).expect("serde_json");
    assert_eq!(String::from_utf8_lossy(&ours), String::from_utf8_lossy(&theirs));
}

/// Every character class the escaper tells apart.
const TRICKY: &str = "plain \"quoted\" back\\slash \u{0}\u{1}\u{8}\t\n\u{b}\u{c}\r\u{1f} \u{7f} é ü 中文 🙂 </script>";

fn metadata() -> serde_json::Map<String, Value> {
    let value = json!({
        "text": TRICKY,
        "numbers": [0, -1, 1.5, -2.25e-10, 1e300, u64::MAX, i64::MIN, 0.1],
        "flags": [true, false, null],
        "nested": {"empty object": {}, "empty array": [], TRICKY: {"deeper": [[], [{}]]}},
    });
    let Value::Object(map) = value else { unreachable!() };
    map
}

fn full_task() -> Task {
    let mut message = Message::agent("m-1", TRICKY);
    message.context_id = "ctx".into();
    message.task_id = "task".into();
    message.metadata = Some(metadata());
    message.extensions = vec!["https://ext.example/a".into()];
    message.reference_task_ids = vec!["other".into()];
    message.parts.push(Part::raw(b"\x00\x01binary\xff".to_vec(), "f.bin", "application/octet-stream"));
    message.parts.push(Part::url("https://files.example/x?a=1&b=\"2\"", "x", "text/plain"));
    message.parts.push(Part::data(json!({"k": [1, 2, {"v": TRICKY}]})));
    let mut artifact = Artifact::new("a-1", "name", message.parts.clone());
    artifact.description = TRICKY.into();
    artifact.metadata = Some(metadata());
    Task {
        id: "task".into(),
        context_id: "ctx".into(),
        status: TaskStatus::new(TaskState::InputRequired).with_message(message.clone()),
        artifacts: vec![artifact],
        history: vec![Message::user("m-0", "hello"), message],
        metadata: Some(metadata()),
    }
}

#[test]
fn a2a_types_come_out_as_serde_json_writes_them() {
    let task = full_task();
    same_as_serde_json(&task);
    same_as_serde_json(&Task::default());
    same_as_serde_json(&StreamResponse::Task(task.clone()));
    same_as_serde_json(&StreamResponse::Message(task.history[1].clone()));
    same_as_serde_json(&StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: task.id.clone(),
        context_id: task.context_id.clone(),
        status: task.status.clone(),
        metadata: Some(metadata()),
    }));
    same_as_serde_json(&StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: task.id.clone(),
        context_id: task.context_id.clone(),
        artifact: task.artifacts[0].clone(),
        append: true,
        last_chunk: false,
        metadata: None,
    }));
    same_as_serde_json(&json!({"metadata": metadata()}));
}

#[test]
fn every_escape_at_every_offset() {
    // The escaper looks at eight bytes at a time: an escape must be found wherever it falls.
    for special in ['"', '\\', '\u{0}', '\n', '\u{1f}', '\u{7f}', 'é', '🙂', ' ', '!', '#', '[', ']'] {
        for offset in 0..20 {
            for tail in 0..10 {
                let text = format!("{}{special}{}", "x".repeat(offset), "y".repeat(tail));
                same_as_serde_json(&text);
                same_as_serde_json(&json!({ text.clone(): text }));
            }
        }
    }
    for byte in 0..=0x7fu8 {
        same_as_serde_json(&String::from(byte as char).repeat(9));
    }
}

#[derive(Serialize)]
enum Shapes {
    Unit,
    Newtype(u8),
    Tuple(i32, String),
    Struct { a: Option<u8>, b: Vec<()> },
}

#[derive(Serialize)]
struct Wrapper<'a>(&'a str);

#[derive(Serialize)]
struct UnitStruct;

#[test]
fn serde_data_model_corners() {
    same_as_serde_json(&[Shapes::Unit, Shapes::Newtype(7), Shapes::Tuple(-3, TRICKY.into())]);
    same_as_serde_json(&Shapes::Struct { a: None, b: vec![(), ()] });
    same_as_serde_json(&(Wrapper("w"), UnitStruct, 'c', '"', Some(1u128), None::<i128>, (), f32::MIN_POSITIVE));
    same_as_serde_json(&[f64::NAN, f64::INFINITY, -0.0]);
    same_as_serde_json(&BTreeMap::from([(1, "one"), (-2, "minus two")]));
    same_as_serde_json(&BTreeMap::from([(true, 1), (false, 0)]));
    same_as_serde_json(&BTreeMap::from([('k', 1)]));
    same_as_serde_json(&BTreeMap::from([(Some("k"), 1)]));
    same_as_serde_json(&BTreeMap::<String, Vec<u8>>::new());
}

#[test]
fn what_serde_json_refuses_is_refused() {
    assert!(to_vec_with_capacity(&BTreeMap::from([(vec![1], 1)]), 0).is_err());
    assert!(serde_json::to_vec(&BTreeMap::from([(vec![1], 1)])).is_err());
    let raw = serde_json::value::RawValue::from_string("{}".into()).unwrap();
    assert!(to_vec_with_capacity(&raw, 0).is_err(), "RawValue would come out quoted");
}

#[test]
fn strings_are_utf8() {
    assert_eq!(to_string(&json!({"a": TRICKY})).unwrap(), serde_json::to_string(&json!({"a": TRICKY})).unwrap());
}
