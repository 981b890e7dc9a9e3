//! Several `agentwire serve` processes on one PostgreSQL database behave as one server: events,
//! cancels and listings cross instances, the limit of tasks in progress and the principal of an
//! unnamed credential are the same on each, the tasks of a killed instance end FAILED, and a
//! PostgreSQL restart is ridden out.
//!
//! Each test makes a database of its own in the cluster `AGENTWIRE_TEST_POSTGRES_URL` names
//! (`scripts/test` starts one); without it the tests are skipped, except under CI. The restart
//! test starts a cluster of its own with `scripts/pg-cluster`, to restart it.

use std::process::Command;
use std::time::Duration;

use tokio::time::Instant;

use crate::common::{fresh_database, rpc, Cluster, Server, TempDir};
use agentwire_test::{SseEvent, SseReader};
use serde_json::{json, Value};

fn message(id: &str, text: &str, task_id: Option<&str>) -> Value {
    let mut message = json!({"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]});
    if let Some(task_id) = task_id {
        message["taskId"] = json!(task_id);
    }
    message
}

async fn ok(client: &reqwest::Client, server: &Server, method: &str, params: Value) -> Value {
    let reply = rpc(client, &server.base, method, params).await.expect("the server answers");
    reply.get("result").cloned().unwrap_or_else(|| panic!("{method} failed: {reply}"))
}

/// Two instances, `--agent conformance`, on `database`, with a short lease.
async fn two_instances(dir: &TempDir, database: &str) -> (Server, Server) {
    let args = ["--agent", "conformance", "--store", database, "--lease", "2"];
    (Server::start(&dir.0, &args).await, Server::start(&dir.0, &args).await)
}

/// A stream opened on instance 2 follows a task whose executions run on instance 1, a cancel sent
/// to instance 2 stops an execution on instance 1, and each lists the other's tasks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_one_database_serve_as_one() {
    let Some(database) = fresh_database("scale_out").await else { return };
    let dir = TempDir::new("scale-out");
    let (one, two) = two_instances(&dir, &database).await;
    let client = reqwest::Client::new();

    // A multi-turn task started on instance 1 waits for input.
    let task = ok(&client, &one, "SendMessage", json!({"message": message("m1", "tck-multi-turn start", None)})).await;
    let task_id = task["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(task["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");

    // Instance 2 streams it; the next turn runs on instance 1.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}});
    let response = client.post(format!("{}/", two.base)).json(&body).send().await.unwrap();
    let mut stream = SseReader::new(response);
    let snapshot = stream.next_event().await.expect("the task first");
    assert_eq!(snapshot.data["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let turn = json!({"message": message("m2", "done", Some(&task_id))});
    let finished = ok(&client, &one, "SendMessage", turn).await;
    assert_eq!(finished["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let id = |event: &SseEvent| event.id.as_deref().and_then(|id| id.parse::<u64>().ok()).expect("a numeric id");
    let mut ids = vec![id(&snapshot)];
    let mut last = Value::Null;
    while let Some(event) = stream.next_event().await {
        ids.push(id(&event));
        last = event.data;
    }
    assert_eq!(last["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED", "{last}");
    let log = ok(&client, &one, "GetTask", json!({"id": task_id})).await;
    assert_eq!(ids, (ids[0]..ids[0] + ids.len() as u64).collect::<Vec<_>>(), "every event, in order: {log}");

    // A task working on instance 1 until canceled, canceled through instance 2.
    let send = json!({"message": message("m3", "tck-cancel", None), "configuration": {"returnImmediately": true}});
    let working = ok(&client, &one, "SendMessage", send).await;
    let working_id = working["task"]["id"].as_str().unwrap().to_owned();
    wait_for_state(&client, &two, &working_id, "TASK_STATE_WORKING", Duration::from_secs(5)).await;
    let started = Instant::now();
    let canceled = ok(&client, &two, "CancelTask", json!({"id": working_id})).await;
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
    // Without the signal reaching instance 1, instance 2 would wait out the agent's grace period
    // (2 s) before canceling the task without it.
    assert!(started.elapsed() < Duration::from_millis(1_500), "the execution on instance 1 did not stop at once");

    // Each instance lists every task.
    for server in [&one, &two] {
        let listed = ok(&client, server, "ListTasks", json!({})).await;
        assert_eq!(listed["totalSize"], 2, "{listed}");
    }
}

/// A task whose instance is killed ends FAILED once the instance's lease has run out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tasks_of_a_killed_instance_end_failed() {
    let Some(database) = fresh_database("lease").await else { return };
    let dir = TempDir::new("lease");
    let (mut one, two) = two_instances(&dir, &database).await;
    let client = reqwest::Client::new();
    let send = json!({"message": message("m1", "tck-cancel", None), "configuration": {"returnImmediately": true}});
    let task = ok(&client, &one, "SendMessage", send).await;
    let task_id = task["task"]["id"].as_str().unwrap().to_owned();
    wait_for_state(&client, &two, &task_id, "TASK_STATE_WORKING", Duration::from_secs(5)).await;
    one.kill();
    // The lease is 2 s; the task last changed about then too. Both must pass, then a check runs.
    let failed = wait_for_state(&client, &two, &task_id, "TASK_STATE_FAILED", Duration::from_secs(8)).await;
    let why = failed["status"]["message"]["parts"][0]["text"].as_str().unwrap_or_default();
    assert!(why.contains("lease"), "the status message says why: {failed}");
}

/// A task that works for longer than a lease without a commit is not failed by the instances
/// that live on, the one running it included: its execution is recorded although it started
/// before the task was first committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_working_for_three_leases_is_not_failed() {
    let Some(database) = fresh_database("long_task").await else { return };
    let dir = TempDir::new("long-task");
    let args = ["--agent", "conformance", "--store", &database, "--lease", "1"];
    // Each instance logs every look for orphans.
    let looks = [("RUST_LOG", "info,agentwire_server::core::orphans=debug")];
    let one = Server::start_with_env(&dir.0, &args, &looks).await;
    let two = Server::start_with_env(&dir.0, &args, &looks).await;
    let client = reqwest::Client::new();
    let send = json!({"message": message("m1", "tck-cancel", None), "configuration": {"returnImmediately": true}});
    let task = ok(&client, &one, "SendMessage", send).await;
    let task_id = task["task"]["id"].as_str().unwrap().to_owned();
    wait_for_state(&client, &one, &task_id, "TASK_STATE_WORKING", Duration::from_secs(5)).await;
    // Nothing is to happen while each instance looks for orphans a dozen times (every quarter
    // lease: three leases).
    let looked = |server: &Server| {
        std::fs::read_to_string(&server.log).unwrap().matches("looked for tasks left running").count()
    };
    let before = [looked(&one), looked(&two)];
    let deadline = Instant::now() + Duration::from_secs(30);
    while looked(&one) < before[0] + 12 || looked(&two) < before[1] + 12 {
        assert!(Instant::now() < deadline, "the instances did not look for orphans");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for server in [&one, &two] {
        let task = ok(&client, server, "GetTask", json!({"id": task_id})).await;
        assert_eq!(task["status"]["state"], "TASK_STATE_WORKING", "{task}");
    }
    let canceled = ok(&client, &two, "CancelTask", json!({"id": task_id})).await;
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
}

/// A JSON-RPC call with a bearer token; the `result`.
async fn ok_as(client: &reqwest::Client, server: &Server, token: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let reply: Value = client
        .post(format!("{}/", server.base))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    reply.get("result").cloned().unwrap_or_else(|| panic!("{method} failed: {reply}"))
}

/// The limit of tasks in progress holds across instances: they count one store's tasks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_limit_of_tasks_in_progress_counts_every_instance() {
    let Some(database) = fresh_database("in_progress").await else { return };
    let dir = TempDir::new("in-progress");
    let args = ["--agent", "conformance", "--store", &database, "--max-tasks-in-progress", "1"];
    let (one, two) = (Server::start(&dir.0, &args).await, Server::start(&dir.0, &args).await);
    let client = reqwest::Client::new();
    let send =
        |id: &str| json!({"message": message(id, "tck-cancel", None), "configuration": {"returnImmediately": true}});
    let working = ok(&client, &one, "SendMessage", send("m1")).await;
    let refused = rpc(&client, &two.base, "SendMessage", send("m2")).await.unwrap();
    assert_eq!(refused["error"]["data"][0]["reason"], "RESOURCE_EXHAUSTED", "{refused}");
    ok(&client, &two, "CancelTask", json!({"id": working["task"]["id"]})).await;
    let accepted = ok(&client, &two, "SendMessage", send("m3")).await;
    assert!(accepted["task"]["id"].is_string(), "{accepted}");
}

/// A credential that names no principal is one principal on every instance: a task created
/// through one instance is the same caller's through the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unnamed_credential_is_one_principal_on_every_instance() {
    let Some(database) = fresh_database("unnamed").await else { return };
    let dir = TempDir::new("unnamed");
    let key = ["--principal-key", "a-key-every-instance-shares"];
    let args = [&["--agent", "conformance", "--store", &database, "--auth", "bearer:the-token"][..], &key].concat();
    let (one, two) = (Server::start(&dir.0, &args).await, Server::start(&dir.0, &args).await);
    let client = reqwest::Client::new();
    let send = json!({"message": message("m1", "tck-complete-task", None)});
    let task = ok_as(&client, &one, "the-token", "SendMessage", send).await;
    let task_id = task["task"]["id"].as_str().unwrap().to_owned();
    let seen = ok_as(&client, &two, "the-token", "GetTask", json!({"id": task_id})).await;
    assert_eq!(seen["status"]["state"], "TASK_STATE_COMPLETED", "{seen}");
    assert_eq!(ok_as(&client, &two, "the-token", "ListTasks", json!({})).await["totalSize"], 1);
}

/// Without a principal key, an instance on a shared store refuses to start with a credential
/// that names no principal, and says what to do.
#[tokio::test]
async fn a_shared_store_refuses_unnamed_credentials_without_a_principal_key() {
    let Some(database) = fresh_database("no_key").await else { return };
    let mut serve = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["serve", "--http", "127.0.0.1:0", "--store", &database, "--auth", "bearer:the-token"])
        .env_remove("AGENTWIRE_PRINCIPAL_KEY")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("agentwire starts");
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = serve.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = serve.kill();
            panic!("agentwire serve did not refuse to start");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut serve.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.success());
    assert!(stderr.contains("AGENTWIRE_PRINCIPAL_KEY") && stderr.contains("NAME=TOKEN"), "{stderr}");
}

/// The database restarts under two instances: both go on answering without a restart of their
/// own, and a stream opened before the restart gets every event committed after it (the lost
/// LISTEN connection is made again, and the stream catches up from the log).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgresql_restart_is_ridden_out() {
    let Some(cluster) = Cluster::start("restart") else { return };
    let dir = TempDir::new("pg-restart");
    let (one, two) = two_instances(&dir, &cluster.url).await;
    let client = reqwest::Client::new();
    let task = ok(&client, &one, "SendMessage", json!({"message": message("m1", "tck-multi-turn start", None)})).await;
    let task_id = task["task"]["id"].as_str().unwrap().to_owned();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}});
    let response = client.post(format!("{}/", two.base)).json(&body).send().await.unwrap();
    let mut stream = SseReader::new(response);
    let snapshot = stream.next_event().await.expect("the task first");
    assert_eq!(snapshot.data["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");

    cluster.restart();
    // Connections broken by the restart are replaced as they are found broken; a request that
    // meets one may fail, the next ones must not.
    let deadline = Instant::now() + Duration::from_secs(10);
    let turn = json!({"message": message("m2", "done", Some(&task_id))});
    let finished = loop {
        let reply = rpc(&client, &one.base, "SendMessage", turn.clone()).await.expect("the server answers");
        match reply.get("result") {
            Some(result) => break result.clone(),
            None => assert!(Instant::now() < deadline, "no answer after the restart: {reply}"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(finished["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let mut last = Value::Null;
    while let Some(event) = stream.next_event().await {
        last = event.data;
    }
    assert_eq!(last["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED", "{last}");
    for server in [&one, &two] {
        assert_eq!(ok(&client, server, "ListTasks", json!({})).await["totalSize"], 1);
    }
}

async fn wait_for_state(
    client: &reqwest::Client,
    server: &Server,
    task_id: &str,
    state: &str,
    within: Duration,
) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let task = ok(client, server, "GetTask", json!({"id": task_id})).await;
        if task["status"]["state"] == state {
            return task;
        }
        assert!(Instant::now() < deadline, "task {task_id} is not {state} in time: {task}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
