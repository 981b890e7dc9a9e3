use agentwire_types::{TaskPushNotificationConfig, TaskStatusUpdateEvent};

use super::*;

fn record(id: &str, dialect: Dialect) -> PushConfigRecord {
    let config = TaskPushNotificationConfig {
        id: id.into(),
        task_id: "t1".into(),
        url: "https://hooks.example.com/a2a".into(),
        ..TaskPushNotificationConfig::default()
    };
    PushConfigRecord { config, dialect }
}

#[test]
fn every_config_shares_the_one_serialization_of_each_event() {
    let event = |id: &str| {
        Arc::new(StreamResponse::StatusUpdate(TaskStatusUpdateEvent { task_id: id.into(), ..Default::default() }))
    };
    let events = [event("t1"), event("t1")];
    let records = vec![
        record("a", Dialect::V1),
        record("b", Dialect::V1),
        record("v03-task", Dialect::V03),
        record("legacy-task", Dialect::Legacy),
    ];
    let task = Arc::new(Task { id: "t1".into(), context_id: "c1".into(), ..Task::default() });
    let fanned = fan_out(records, "t1", &events, Some(task));
    let ids: Vec<&str> = fanned.iter().map(|(target, _)| target.config.id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "v03-task", "legacy-task"]);
    let (a, b) = (&fanned[0].1, &fanned[1].1);
    assert_eq!(a.len(), 2);
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x.as_ptr(), y.as_ptr(), "one buffer per event, not one per config");
    }
    // The older generations get the whole task, in their own shape.
    let body = |i: usize| serde_json::from_slice::<serde_json::Value>(&fanned[i].1[0]).unwrap();
    assert_eq!((body(2)["kind"].as_str(), body(2)["id"].as_str()), (Some("task"), Some("t1")));
    assert_eq!((body(3)["sessionId"].as_str(), body(3).get("kind")), (Some("c1"), None));
}
