//! A caller within its own quotas against the draft 1.1's long polls: many polls on one large task,
//! woken together, and more polls than `--max-streams` allows.

use std::time::Duration;

use futures_util::future::join_all;
use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio::time::Instant;

use crate::common::{Server, TempDir};

/// A JSON-RPC call in version 1.1 (the draft that has task generations).
async fn call(client: &reqwest::Client, base: &str, method: &str, params: Value) -> (u16, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let request = client.post(format!("{base}/")).header("A2A-Version", "1.1").json(&body);
    let response = request.timeout(Duration::from_secs(120)).send().await.expect("the server answers");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

fn message(text: &str, task_id: Option<&str>) -> Value {
    let mut message =
        json!({"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER", "parts": [{"text": text}]});
    if let Some(task_id) = task_id {
        message["taskId"] = json!(task_id);
    }
    json!({"message": message, "configuration": {"historyLength": 0}})
}

/// A task's generation, an int64 (a string in JSON).
fn generation_of(task: &Value) -> i64 {
    let generation = &task["generation"];
    generation.as_i64().or_else(|| generation.as_str()?.parse().ok()).unwrap_or_else(|| panic!("a generation: {task}"))
}

/// A task of `turns` follow-ups of `turn_bytes` each, waiting for the next; its id and generation.
async fn large_task(client: &reqwest::Client, base: &str, turns: usize, turn_bytes: usize) -> (String, i64) {
    let (_, started) = call(client, base, "SendMessage", message("tck-multi-turn start", None)).await;
    let task_id = started["result"]["task"]["id"].as_str().expect("a task").to_owned();
    let mut generation = 0;
    for _ in 0..turns {
        let (_, turn) = call(client, base, "SendMessage", message(&"y".repeat(turn_bytes), Some(&task_id))).await;
        generation = generation_of(&turn["result"]["task"]);
    }
    (task_id, generation)
}

/// The probe's L1: long polls (`historyLength` 0) on a large task, woken by one small follow-up,
/// each loaded the whole task at once (200 polls on a 48 MiB task: 5.5 GB). They now share one
/// read: what the wake costs stays near one task's size, however many polls wait.
#[tokio::test]
async fn long_polls_woken_together_share_one_read_of_the_task() {
    let dir = TempDir::new("hostile-long-poll");
    let store = format!("sqlite:{}", dir.0.join("tasks.db").display());
    let server = Server::start(&dir.0, &["--agent", "conformance", "--store", &store, "--protocol-draft", "1.1"]).await;
    let client = reqwest::Client::new();
    let (task_id, generation) = large_task(&client, &server.base, 6, 2 * 1024 * 1024).await;
    let polls = 120;
    let params = json!({"id": task_id, "historyLength": 0, "currentGeneration": generation});
    // Sockets the server holds besides the polls' (its listener, the client's kept-alive one).
    let baseline = open_connections(server.pid());
    let polls_made = (0..polls).map(|_| call_owned(client.clone(), server.base.clone(), params.clone()));
    let waiting = tokio::spawn(join_all(polls_made));
    // Once the polls wait (each has been read once), the wake is measured from the memory held.
    let deadline = Instant::now() + Duration::from_secs(60);
    // One poll may reuse the client's kept-alive connection.
    while open_connections(server.pid()) < baseline + polls - 1 {
        assert!(Instant::now() < deadline, "the polls did not all arrive");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let before = server.peak_rss_kib();
    let (_, woke) = call(&client, &server.base, "SendMessage", message("wake", Some(&task_id))).await;
    assert!(woke["result"].is_object(), "{woke}");
    let answers =
        tokio::time::timeout(Duration::from_secs(90), waiting).await.expect("every poll is answered").unwrap();
    for (status, answer) in &answers {
        assert_eq!(*status, 200, "{answer}");
        assert!(generation_of(&answer["result"]) > generation, "{answer}");
        assert!(answer["result"]["history"].as_array().is_none_or(Vec::is_empty), "historyLength 0");
    }
    let grew_mib = server.peak_rss_kib().saturating_sub(before) / 1024;
    eprintln!("{polls} polls on a 12 MiB task: the wake took the peak from {} MiB up by {grew_mib} MiB", before / 1024);
    // One read of the task costs a few times its 12 MiB; a read each cost over a gigabyte here.
    assert!(grew_mib < 300, "the wake took {grew_mib} MiB");
}

/// The probe's W-c: long polls hold a connection as long as a stream, and count as one under
/// `--max-streams`.
#[tokio::test]
async fn long_polls_count_as_streams() {
    let dir = TempDir::new("hostile-long-poll-streams");
    let args = ["--agent", "conformance", "--store", "memory", "--protocol-draft", "1.1", "--max-streams", "3"];
    let server = Server::start(&dir.0, &args).await;
    let client = reqwest::Client::new();
    let (task_id, generation) = large_task(&client, &server.base, 1, 16).await;
    let params = json!({"id": task_id, "currentGeneration": generation});
    // Six polls at once: three are held, three refused at once.
    let mut polls: futures_util::stream::FuturesUnordered<_> =
        (0..6).map(|_| call_owned(client.clone(), server.base.clone(), params.clone())).collect();
    let mut refused = Vec::new();
    while refused.len() < 3 {
        let next = tokio::time::timeout(Duration::from_secs(20), polls.next()).await;
        let (status, answer) = next.expect("polls past --max-streams are refused at once").unwrap();
        assert_eq!(status, 429, "{answer}");
        refused.push(answer);
    }
    assert!(refused[0].to_string().contains("at most 3 streams"), "{}", refused[0]);
    // The three held are answered at the task's next change.
    let (_, woke) = call(&client, &server.base, "SendMessage", message("wake", Some(&task_id))).await;
    assert!(woke["result"].is_object(), "{woke}");
    while let Some((status, answer)) = tokio::time::timeout(Duration::from_secs(20), polls.next()).await.unwrap() {
        assert_eq!(status, 200, "{answer}");
        assert!(generation_of(&answer["result"]) > generation, "{answer}");
    }
}

async fn call_owned(client: reqwest::Client, base: String, params: Value) -> (u16, Value) {
    call(&client, &base, "GetTask", params).await
}

/// The sockets `pid` has open.
fn open_connections(pid: u32) -> usize {
    let fds =
        std::fs::read_dir(format!("/proc/{pid}/fd")).map(|dir| dir.flatten().collect::<Vec<_>>()).unwrap_or_default();
    let sockets = fds
        .iter()
        .filter(|fd| std::fs::read_link(fd.path()).is_ok_and(|link| link.to_string_lossy().starts_with("socket:")));
    sockets.count()
}
