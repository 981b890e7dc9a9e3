//! What several `agentwire serve` instances on one PostgreSQL database count as one: a caller's
//! rate, and the tasks in progress their metrics report. (The console's live list across
//! instances is tested in Chromium, browser/console.mjs.)
//!
//! Each test makes a database of its own in the cluster `AGENTWIRE_TEST_POSTGRES_URL` names, as
//! the scale-out tests do.

use std::time::Duration;

use tokio::time::Instant;

use crate::common::{fresh_database, rpc, Server, TempDir};
use serde_json::{json, Value};

fn message(id: &str, text: &str, task_id: Option<&str>) -> Value {
    let mut message = json!({"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]});
    if let Some(task_id) = task_id {
        message["taskId"] = json!(task_id);
    }
    json!({ "message": message })
}

/// A caller sending to both instances in turn, as fast as they answer, is served its burst and
/// its rate once, not once per instance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callers_rate_is_one_across_the_instances() {
    let Some(database) = fresh_database("shared_rate").await else { return };
    let dir = TempDir::new("shared-rate");
    let args = ["--agent", "echo", "--store", &database, "--lease", "2", "--rate-limit", "2", "--rate-burst", "4"];
    let instances = [Server::start(&dir.0, &args).await, Server::start(&dir.0, &args).await];
    let client = reqwest::Client::new();
    let started = Instant::now();
    let mut served = [0_u32; 2];
    for call in 0..24 {
        let instance = call % 2;
        let answer = client
            .get(format!("{}/tasks", instances[instance].base))
            .header("A2A-Version", "1.0")
            .send()
            .await
            .unwrap();
        match answer.status().as_u16() {
            200 => served[instance] += 1,
            429 => assert!(answer.headers().contains_key("retry-after"), "a 429 says when to retry"),
            status => panic!("unexpected {status}: {}", answer.text().await.unwrap()),
        }
    }
    // The burst, and two a second for as long as the calls took (a token begun counts).
    let allowed = 4 + (started.elapsed().as_secs_f64() * 2.0).ceil() as u32;
    let total = served[0] + served[1];
    assert!(total >= 4 && total <= allowed, "served {served:?} of 24, at most {allowed} allowed");
    assert!(served[0] > 0 && served[1] > 0, "both instances serve the caller: {served:?}");
}

/// `a2a_tasks` of each instance, summed as a dashboard sums them, is the store's count of tasks
/// in progress, also after another instance ends tasks this one started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_task_gauges_of_the_instances_add_up_to_the_stores_count() {
    let Some(database) = fresh_database("shared_gauges").await else { return };
    let dir = TempDir::new("shared-gauges");
    let args = ["--agent", "conformance", "--store", &database, "--lease", "2", "--metrics"];
    let (one, two) = (Server::start(&dir.0, &args).await, Server::start(&dir.0, &args).await);
    let client = reqwest::Client::new();
    let mut waiting = Vec::new();
    for i in 0..3 {
        let started = rpc(&client, &one.base, "SendMessage", message(&format!("m{i}"), "tck-multi-turn start", None));
        let started = started.await.unwrap();
        assert_eq!(started["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{started}");
        waiting.push(started["result"]["task"]["id"].as_str().unwrap().to_owned());
    }
    // Two of the three end through the other instance.
    for (i, task_id) in waiting.iter().take(2).enumerate() {
        let turn = rpc(&client, &two.base, "SendMessage", message(&format!("n{i}"), "done", Some(task_id)));
        let ended = turn.await.unwrap();
        assert_eq!(ended["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{ended}");
    }
    let input_required = async |server: &Server| {
        let text = client.get(format!("{}/metrics", server.base)).send().await.unwrap().text().await.unwrap();
        let line = text.lines().find_map(|line| line.strip_prefix("a2a_tasks{state=\"TASK_STATE_INPUT_REQUIRED\"} "));
        line.map_or(0, |value| value.trim().parse::<i64>().unwrap())
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let counts = [input_required(&one).await, input_required(&two).await];
        if counts.iter().sum::<i64>() == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "the instances report {counts:?} tasks waiting for input; the store has 1");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A caller's open streams are counted across the instances: with one allowed, a stream open on
/// one instance makes the other refuse a second until the first closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callers_open_streams_are_counted_across_the_instances() {
    let Some(database) = fresh_database("shared_streams").await else { return };
    let dir = TempDir::new("shared-streams");
    let args = ["--agent", "conformance", "--store", &database, "--lease", "2", "--max-streams", "1"];
    let (one, two) = (Server::start(&dir.0, &args).await, Server::start(&dir.0, &args).await);
    let client = reqwest::Client::new();
    let started = rpc(&client, &one.base, "SendMessage", message("m1", "tck-multi-turn start", None)).await.unwrap();
    let task_id = started["result"]["task"]["id"].as_str().unwrap().to_owned();
    let subscribe = |server: &Server| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}});
        client.post(format!("{}/", server.base)).header("A2A-Version", "1.0").json(&body).send()
    };
    let open = subscribe(&one).await.unwrap();
    assert_eq!(open.status(), 200);
    let mut events = agentwire_test::SseReader::new(open);
    events.next_event().await.expect("the stream opens with the task");
    let refused = subscribe(&two).await.unwrap();
    assert_eq!(refused.status(), 429, "{}", refused.text().await.unwrap());
    drop(events);
    // The stream's count is given back once its connection closes.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let again = subscribe(&two).await.unwrap();
        if again.status() == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "the closed stream is still counted: {}", again.status());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
