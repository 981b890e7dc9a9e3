//! The `agentwire` server killed with SIGKILL and started again on the same store: what it
//! answered is still there, and what it was working on ends FAILED instead of running forever.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::common::{fresh_database, rpc, Server, TempDir};
use serde_json::json;

fn rank(state: &str) -> u8 {
    match state {
        "TASK_STATE_SUBMITTED" => 0,
        "TASK_STATE_WORKING" => 1,
        _ => 2,
    }
}

/// 1,000 sends at once on the SQLite store; the server is killed once 200 have been answered.
/// After a restart on the same file, every answered task is there in its answered state or a
/// later one, and nothing is left running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_keeps_every_answered_send() {
    let dir = TempDir::new("kill");
    killed_under_load_keeps_every_answered_send(&dir, &["--store", "sqlite:tasks.db"]).await;
}

/// The same on PostgreSQL: the instance started after the kill takes the dead one's running
/// tasks over once its lease (here a second) has run out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_keeps_every_answered_send_on_postgres() {
    let Some(url) = fresh_database("kill").await else { return };
    let dir = TempDir::new("kill-pg");
    killed_under_load_keeps_every_answered_send(&dir, &["--store", &url, "--lease", "1"]).await;
}

async fn killed_under_load_keeps_every_answered_send(dir: &TempDir, store: &[&str]) {
    const SENDS: usize = 1_000;
    const KILL_AFTER: usize = 200;
    let mut server = Server::start(&dir.0, store).await;
    let client = reqwest::Client::builder().pool_max_idle_per_host(64).build().unwrap();
    let answered: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let (killed_tx, killed) = tokio::sync::watch::channel(false);

    let sends: Vec<_> = (0..SENDS)
        .map(|i| {
            let (client, base, answered) = (client.clone(), server.base.clone(), Arc::clone(&answered));
            let (mut killed, before_kill) = (killed.clone(), killed.clone());
            tokio::spawn(async move {
                let message = json!({"messageId": format!("m{i}"), "role": "ROLE_USER", "parts": [{"text": "hi"}]});
                let send = rpc(&client, &base, "SendMessage", json!({"message": message}));
                tokio::select! {
                    reply = send => {
                        let Ok(reply) = reply else { return };
                        let task = &reply["result"]["task"];
                        let (Some(id), Some(state)) = (task["id"].as_str(), task["status"]["state"].as_str()) else {
                            return;
                        };
                        // Only what the client received before the kill counts.
                        if !*before_kill.borrow() {
                            answered.lock().unwrap().push((id.to_owned(), state.to_owned()));
                        }
                    }
                    _ = killed.wait_for(|k| *k) => {}
                }
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    while answered.lock().unwrap().len() < KILL_AFTER {
        assert!(Instant::now() < deadline, "the server answered too few sends");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let _ = killed_tx.send(true);
    server.kill();
    for send in sends {
        send.await.unwrap();
    }
    let answered = std::mem::take(&mut *answered.lock().unwrap());
    assert!(answered.len() >= KILL_AFTER);

    let server = Server::start(&dir.0, store).await;
    let client = reqwest::Client::new();
    for (id, state) in &answered {
        let reply = rpc(&client, &server.base, "GetTask", json!({"id": id})).await.unwrap();
        let stored =
            reply["result"]["status"]["state"].as_str().unwrap_or_else(|| panic!("task {id} is lost: {reply}"));
        assert!(rank(stored) >= rank(state), "task {id} went back from {state} to {stored}");
    }
    // A file is taken over as it opens; a database once the dead instance's lease has run out.
    let deadline = Instant::now() + Duration::from_secs(30);
    for state in ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"] {
        loop {
            let left = rpc(&client, &server.base, "ListTasks", json!({"status": state})).await.unwrap();
            if left["result"]["totalSize"] == 0 {
                break;
            }
            assert!(Instant::now() < deadline, "tasks left {state} after the restart: {left}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
