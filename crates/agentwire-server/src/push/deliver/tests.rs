use agentwire_store::PushConfigRecord;
use agentwire_types::{Dialect, StreamResponse, TaskPushNotificationConfig, TaskStatusUpdateEvent};

use super::dispatch::fan_out;
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
    let job = Arc::new(Commit {
        scope: Scope::default(),
        task_id: "t1".into(),
        version: 5,
        state: agentwire_types::TaskState::Working,
        events: events.to_vec(),
        trace: None,
    });
    let fanned = fan_out(records, &job);
    let ids: Vec<&str> = fanned.iter().map(|(record, _, _)| record.config.id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "v03-task", "legacy-task"]);
    let bodies = |i: usize| -> Vec<(u64, Bytes)> {
        fanned[i]
            .2
            .iter()
            .map(|due| match due {
                Due::Event { seq, body, .. } => (*seq, body.clone()),
                _ => panic!("a v1.0 config is owed events"),
            })
            .collect()
    };
    let (a, b) = (bodies(0), bodies(1));
    assert_eq!(a.iter().map(|(seq, _)| *seq).collect::<Vec<_>>(), [4, 5], "numbered from the job's first");
    assert_eq!(a, b, "every v1.0 config gets the same bodies");
    // The older generations are owed the task as of the job's last event, written when delivered.
    for i in [2, 3] {
        assert!(matches!(fanned[i].2[..], [Due::Task { seq: 5, .. }]), "one due, for event 5");
    }
}

#[test]
fn a_job_without_events_asks_every_webhook_to_catch_up() {
    let job = catch_up(Scope::default(), "t1".into());
    let fanned = fan_out(vec![record("a", Dialect::V1), record("b", Dialect::V03)], &job);
    assert!(fanned.iter().all(|(_, _, dues)| matches!(dues[..], [Due::CatchUp { .. }])));
}

#[tokio::test]
async fn the_lanes_of_a_task_share_its_body_while_one_holds_it() {
    let store = Arc::new(agentwire_store::MemoryStore::default());
    let context = LaneContext {
        courier: Courier::new(PushSettings::default(), None, None),
        configs: Arc::clone(&store) as Arc<dyn PushConfigStore>,
        tasks: store,
        task_bodies: Mutex::default(),
    };
    let task = agentwire_types::Task { id: "t1".into(), context_id: "c1".into(), ..Default::default() };
    let scope = Scope::default();
    let first = context.task_body(&scope, Dialect::V03, &task, 3).unwrap();
    let second = context.task_body(&scope, Dialect::V03, &task, 3).unwrap();
    assert_eq!(first.as_ptr(), second.as_ptr(), "one body for both lanes");
    let legacy = context.task_body(&scope, Dialect::Legacy, &task, 3).unwrap();
    assert_ne!(legacy, first, "each generation in its own shape");
    let newer = context.task_body(&scope, Dialect::V03, &task, 4).unwrap();
    assert_ne!(newer.as_ptr(), first.as_ptr(), "a newer version is written anew");
    drop((first, second, legacy, newer));
    let again = context.task_body(&scope, Dialect::V03, &task, 4).unwrap();
    drop(again);
    assert!(context.task_bodies.lock().unwrap().values().all(|(_, body)| body.strong_count() == 0), "nothing kept");
}
