use agentwire_types::{TaskPushNotificationConfig, TaskStatusUpdateEvent};

use super::*;

fn record(id: &str, dialect: Dialect) -> PushConfigRecord {
    let config = TaskPushNotificationConfig {
        id: id.into(),
        task_id: "t1".into(),
        url: "https://hooks.example.com/a2a".into(),
        ..TaskPushNotificationConfig::default()
    };
    PushConfigRecord { config, dialect, delivered_through: 0 }
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
    let job = Job { scope: Scope::default(), task_id: "t1".into(), events: events.to_vec(), first_seq: 4 };
    let fanned = fan_out(records, &job, Some((task, 5)));
    let ids: Vec<&str> = fanned.iter().map(|(record, _, _)| record.config.id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "v03-task", "legacy-task"]);
    let bodies = |i: usize| -> Vec<(u64, Bytes)> {
        fanned[i]
            .2
            .iter()
            .map(|due| match due {
                Due::Event { seq, body, .. } | Due::Task { seq, body, .. } => (*seq, body.clone()),
                Due::CatchUp { .. } => panic!("a job with events is no catch-up"),
            })
            .collect()
    };
    let (a, b) = (bodies(0), bodies(1));
    assert_eq!(a.iter().map(|(seq, _)| *seq).collect::<Vec<_>>(), [4, 5], "numbered from the job's first");
    assert_eq!(a, b, "every v1.0 config gets the same bodies");
    // The older generations get the whole task, in their own shape, as of its version.
    let body = |i: usize| serde_json::from_slice::<serde_json::Value>(&bodies(i)[0].1).unwrap();
    assert_eq!(bodies(2)[0].0, 5);
    assert_eq!((body(2)["kind"].as_str(), body(2)["id"].as_str()), (Some("task"), Some("t1")));
    assert_eq!((body(3)["sessionId"].as_str(), body(3).get("kind")), (Some("c1"), None));
}

#[test]
fn a_job_without_events_asks_v1_webhooks_to_catch_up() {
    let job = Job { scope: Scope::default(), task_id: "t1".into(), events: Vec::new(), first_seq: 0 };
    let fanned = fan_out(vec![record("a", Dialect::V1)], &job, None);
    assert!(matches!(fanned[0].2[..], [Due::CatchUp { .. }]));
}
