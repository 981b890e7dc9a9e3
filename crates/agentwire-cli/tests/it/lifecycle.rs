//! The task lifecycle across processes: an idempotency key holds after a restart (SQLite) and
//! across two instances on one PostgreSQL database; tasks left waiting past `--expire-waiting`
//! are ended once, by one of the instances; a GetTask long-polled on one instance answers a
//! change made through the other (`--protocol-draft 1.1`).

use std::time::Duration;

use tokio::time::Instant;

use crate::common::{fresh_database, Server, TempDir};
use serde_json::{json, Value};

fn params(message_id: &str, text: &str) -> Value {
    json!({"message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}})
}

/// A JSON-RPC call with `A2A-Version: 1.0`, and the idempotency key when there is one.
async fn call(client: &reqwest::Client, base: &str, method: &str, params: Value, key: Option<&str>) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut request = client.post(format!("{base}/")).header("A2A-Version", "1.0").json(&body);
    if let Some(key) = key {
        request = request.header("Idempotency-Key", key);
    }
    request.send().await.unwrap().json().await.unwrap()
}

fn task_id(answer: &Value) -> String {
    answer["result"]["task"]["id"].as_str().unwrap_or_else(|| panic!("no task: {answer}")).to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_sends_with_one_key_make_one_task() {
    let dir = TempDir::new("keys-race");
    let store = format!("sqlite:{}", dir.0.join("tasks.db").display());
    let server = Server::start(&dir.0, &["--agent", "echo", "--store", &store]).await;
    let client = reqwest::Client::new();
    let sends: Vec<_> = (0..8)
        .map(|_| {
            let (client, base) = (client.clone(), server.base.clone());
            tokio::spawn(async move { call(&client, &base, "SendMessage", params("m1", "once"), Some("race")).await })
        })
        .collect();
    let mut ids = std::collections::HashSet::new();
    for send in sends {
        ids.insert(task_id(&send.await.unwrap()));
    }
    assert_eq!(ids.len(), 1, "every send is answered with one task: {ids:?}");
    let listed = call(&client, &server.base, "ListTasks", json!({}), None).await;
    assert_eq!(listed["result"]["tasks"].as_array().map(Vec::len), Some(1), "{listed}");
}

#[tokio::test]
async fn an_idempotency_key_holds_after_a_restart() {
    let dir = TempDir::new("keys-restart");
    let store = format!("sqlite:{}", dir.0.join("tasks.db").display());
    let store = store.as_str();
    let client = reqwest::Client::new();
    let mut first = Server::start(&dir.0, &["--agent", "echo", "--store", store]).await;
    let made = call(&client, &first.base, "SendMessage", params("m1", "once"), Some("restart-key")).await;
    let (exit, log) = first.terminate().await;
    assert!(exit.success(), "{log}");
    let second = Server::start(&dir.0, &["--agent", "echo", "--store", store]).await;
    let repeated = call(&client, &second.base, "SendMessage", params("m1", "once"), Some("restart-key")).await;
    assert_eq!(task_id(&repeated), task_id(&made), "{repeated}");
    let listed = call(&client, &second.base, "ListTasks", json!({}), None).await;
    assert_eq!(listed["result"]["tasks"].as_array().map(Vec::len), Some(1), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotency_key_holds_across_instances() {
    let Some(database) = fresh_database("shared_keys").await else { return };
    let dir = TempDir::new("shared-keys");
    let args = ["--agent", "echo", "--store", &database, "--lease", "2"];
    let (one, two) = (Server::start(&dir.0, &args).await, Server::start(&dir.0, &args).await);
    let client = reqwest::Client::new();
    let made = call(&client, &one.base, "SendMessage", params("m1", "once"), Some("shared-key")).await;
    let repeated = call(&client, &two.base, "SendMessage", params("m1", "once"), Some("shared-key")).await;
    assert_eq!(task_id(&repeated), task_id(&made), "{repeated}");
    let changed = call(&client, &two.base, "SendMessage", params("m1", "twice"), Some("shared-key")).await;
    assert_eq!(changed["error"]["code"], -32602, "{changed}");
    let listed = call(&client, &one.base, "ListTasks", json!({}), None).await;
    assert_eq!(listed["result"]["tasks"].as_array().map(Vec::len), Some(1), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_end_each_task_left_waiting_once() {
    let Some(database) = fresh_database("shared_expiry").await else { return };
    let dir = TempDir::new("shared-expiry");
    let args =
        ["--agent", "conformance", "--store", &database, "--lease", "2", "--metrics", "--expire-waiting", "400ms"];
    let instances = [Server::start(&dir.0, &args).await, Server::start(&dir.0, &args).await];
    let client = reqwest::Client::new();
    let mut waiting = Vec::new();
    for i in 0..6 {
        let base = &instances[i % 2].base;
        let started = call(&client, base, "SendMessage", params(&format!("m{i}"), "tck-multi-turn start"), None).await;
        assert_eq!(started["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{started}");
        waiting.push(task_id(&started));
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    for task_id in &waiting {
        loop {
            let task = call(&client, &instances[0].base, "GetTask", json!({"id": task_id}), None).await;
            let status = &task["result"]["status"];
            if status["state"] == "TASK_STATE_CANCELED" {
                let said = status["message"]["parts"][0]["text"].as_str().unwrap_or_default();
                assert!(said.contains("waited for input longer than 400 ms"), "{task}");
                break;
            }
            assert_eq!(status["state"], "TASK_STATE_INPUT_REQUIRED", "{task}");
            assert!(Instant::now() < deadline, "task {task_id} was not ended: {task}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    // Each instance counts the tasks it ended: together, each task once.
    let mut expired = 0;
    for instance in &instances {
        let text = client.get(format!("{}/metrics", instance.base)).send().await.unwrap().text().await.unwrap();
        let line =
            text.lines().find_map(|line| line.strip_prefix("agentwire_tasks_expired_total{reason=\"waiting\"} "));
        expired += line.map_or(0, |value| value.trim().parse::<u64>().unwrap());
    }
    assert_eq!(expired, 6, "each task left waiting is ended once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_poll_on_one_instance_answers_a_change_made_through_another() {
    let Some(database) = fresh_database("shared_generation").await else { return };
    let dir = TempDir::new("shared-generation");
    let args = ["--agent", "conformance", "--store", &database, "--lease", "2", "--protocol-draft", "1.1"];
    let (one, two) = (Server::start(&dir.0, &args).await, Server::start(&dir.0, &args).await);
    let client = reqwest::Client::new();
    let body = |params: Value| json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params});
    let send = |params: Value| {
        let request = client.post(format!("{}/", one.base)).header("A2A-Version", "1.1").json(&body(params));
        async move { request.send().await.unwrap().json::<Value>().await.unwrap() }
    };
    let started = send(params("m1", "tck-multi-turn start")).await;
    let task = &started["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{started}");
    let id = task_id(&started);
    let waiting: i64 = task["generation"].as_str().unwrap_or_else(|| panic!("{started}")).parse().unwrap();

    let url = format!("{}/tasks/{id}?currentGeneration={waiting}", two.base);
    let poll = client.get(url).header("A2A-Version", "1.1").send();
    let mut poll = Box::pin(async move { poll.await.unwrap().json::<Value>().await.unwrap() });
    let early = tokio::time::timeout(Duration::from_millis(300), &mut poll).await;
    assert!(early.is_err(), "the poll answered before the task changed: {early:?}");
    let mut done = params("m2", "done");
    done["message"]["taskId"] = json!(id);
    let finished = send(done).await;
    assert_eq!(finished["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{finished}");
    let moved = tokio::time::timeout(Duration::from_secs(10), poll).await.expect("the poll answers the change");
    let generation: i64 = moved["generation"].as_str().unwrap_or_else(|| panic!("{moved}")).parse().unwrap();
    assert!(generation > waiting, "{generation} > {waiting}: {moved}");
}
