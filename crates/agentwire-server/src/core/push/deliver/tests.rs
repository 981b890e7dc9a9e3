use agentwire_types::{TaskPushNotificationConfig, TaskStatusUpdateEvent};

use super::*;

fn record(id: &str, payload: PushPayload) -> PushConfigRecord {
    let config = TaskPushNotificationConfig {
        id: id.into(),
        task_id: "t1".into(),
        url: "https://hooks.example.com/a2a".into(),
        ..TaskPushNotificationConfig::default()
    };
    PushConfigRecord { config, payload }
}

#[test]
fn every_config_shares_the_one_serialization_of_each_event() {
    let event = |id: &str| {
        Arc::new(StreamResponse::StatusUpdate(TaskStatusUpdateEvent { task_id: id.into(), ..Default::default() }))
    };
    let events = [event("t1"), event("t1")];
    let records = vec![
        record("a", PushPayload::StreamResponse),
        record("b", PushPayload::StreamResponse),
        record("whole-task", PushPayload::Task),
    ];
    let task = Bytes::from_static(b"{\"id\":\"t1\"}");
    let fanned = fan_out(records, "t1", &events, Some(task.clone()));
    let ids: Vec<&str> = fanned.iter().map(|(target, _)| target.config.id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "whole-task"]);
    let (a, b) = (&fanned[0].1, &fanned[1].1);
    assert_eq!(a.len(), 2);
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x.as_ptr(), y.as_ptr(), "one buffer per event, not one per config");
    }
    assert_eq!(fanned[2].1, [task]);
}
