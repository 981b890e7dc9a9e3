//! What the default SQLite store keeps is bounded by bytes: ended tasks within `--retain-size`,
//! in a file that shrinks as they go, and a listing of large tasks reads no more of them than
//! its page holds.
#![cfg(target_os = "linux")]

use crate::common;

use std::time::Duration;

use crate::common::{Server, TempDir};
use serde_json::{json, Value};

const MIB: u64 = 1024 * 1024;

/// Sends `count` messages of `bytes` of text, each a task of its own.
async fn send_large(client: &reqwest::Client, base: &str, count: usize, bytes: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..count {
        let message =
            json!({"messageId": format!("m{i}"), "role": "ROLE_USER", "parts": [{"text": "x".repeat(bytes)}]});
        let params = json!({"message": message, "configuration": {"historyLength": 0}});
        let sent = common::rpc(client, base, "SendMessage", params).await.unwrap();
        ids.push(sent["result"]["task"]["id"].as_str().unwrap_or_else(|| panic!("{sent}")).to_owned());
    }
    ids
}

/// The probe's unbounded file: 48 echo tasks of 1 MiB each way with 8 MiB retained leave a file
/// of the retained bytes, give or take, after a clean stop, instead of every task ever sent, twice.
#[tokio::test]
async fn the_sqlite_file_keeps_the_retained_bytes_of_ended_tasks() {
    let dir = TempDir::new("retained-bytes");
    let args = ["--agent", "echo", "--store", "sqlite:tasks.db", "--retain-size", "8MiB"];
    let mut server = Server::start(&dir.0, &args).await;
    let client = reqwest::Client::new();
    let ids = send_large(&client, &server.base, 48, MIB as usize).await;
    // The ended tasks past the budget are removed, and their pages given back, soon after the
    // burst, while the server runs: the file comes back near the budget (about 96 MiB went in).
    let bound = 8 * MIB * 3 / 2 + 16 * MIB;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let size = std::fs::metadata(dir.0.join("tasks.db")).unwrap().len();
        if size <= bound {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{} MiB on disk for 8 MiB retained", size / MIB);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let oldest = common::rpc(&client, &server.base, "GetTask", json!({"id": ids[0]})).await.unwrap();
    assert_eq!(oldest["error"]["code"], -32001, "the oldest task was purged: {oldest}");
    let (exit, log) = server.terminate().await;
    assert!(exit.success(), "{exit:?}\n{log}");

    let size = std::fs::metadata(dir.0.join("tasks.db")).unwrap().len();
    assert!(size <= bound, "{} MiB on disk for 8 MiB retained after a stop", size / MIB);
    let log_left = std::fs::metadata(dir.0.join("tasks.db-wal")).map_or(0, |wal| wal.len());
    assert_eq!(log_left, 0, "the write-ahead log is folded into the database at a clean stop\n{log}");

    let server = Server::start(&dir.0, &args).await;
    let newest = common::rpc(&client, &server.base, "GetTask", json!({"id": ids[47], "historyLength": 1})).await;
    assert_eq!(newest.unwrap()["result"]["status"]["state"], "TASK_STATE_COMPLETED", "the last ones are kept");
    let oldest = common::rpc(&client, &server.base, "GetTask", json!({"id": ids[0]})).await.unwrap();
    assert_eq!(oldest["error"]["code"], -32001, "the first ones are gone: {oldest}");
}

/// Under a sustained load the purge keeps up with the tasks that end: four clients sending for
/// 3 s keep the store within the tasks that end in a fraction of a second of the ones it retains.
/// (A purge that found the store just within its bounds used to pause a second, while a second of
/// sends went in; with large messages, that was hundreds of MiB on disk.)
#[tokio::test]
async fn sustained_sends_keep_the_store_near_its_retention() {
    const KEPT: u64 = 10;
    let dir = TempDir::new("sustained");
    let args = ["--agent", "echo", "--store", "sqlite:tasks.db", "--retain-tasks", "10"];
    let server = Server::start(&dir.0, &args).await;
    let client = reqwest::Client::new();
    let started = tokio::time::Instant::now();
    let until = started + Duration::from_secs(3);
    let senders: Vec<_> = (0..4)
        .map(|_| {
            let (client, base) = (client.clone(), server.base.clone());
            tokio::spawn(async move {
                let mut sent = 0;
                while tokio::time::Instant::now() < until {
                    sent += send_large(&client, &base, 1, 16).await.len() as u64;
                }
                sent
            })
        })
        .collect();
    let mut most = 0;
    while senders.iter().any(|sender| !sender.is_finished()) {
        let listed = common::rpc(&client, &server.base, "ListTasks", json!({"pageSize": 1})).await.unwrap();
        most = most.max(listed["result"]["totalSize"].as_u64().unwrap_or_else(|| panic!("{listed}")));
    }
    let mut sent = 0;
    for sender in senders {
        sent += sender.await.unwrap();
    }
    let per_second = sent * 1000 / started.elapsed().as_millis() as u64;
    assert!(per_second >= 50, "only {sent} sends in 3 s");
    assert!(
        most <= KEPT + per_second / 2,
        "{most} tasks held for {KEPT} retained, with {per_second} tasks ending a second"
    );
}

/// The memory of process `pid` in bytes: its resident set now, and its peak since it was last
/// reset.
fn memory(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| -> u64 {
        let line = status.lines().find(|line| line.starts_with(name)).unwrap();
        line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The probe's listing that read every task of the page whole: over 40 tasks of 1 MiB, a
/// ListTasks of 100 with a 4 MiB page budget reads a few tasks at a time and stops once the page
/// is full, so the server's memory grows by about the page it sends.
#[tokio::test]
async fn listing_large_tasks_holds_about_the_page_it_sends() {
    let dir = TempDir::new("list-bytes");
    let args = ["--agent", "echo", "--store", "sqlite:tasks.db", "--max-list-size", "4MiB"];
    let server = Server::start(&dir.0, &args).await;
    let client = reqwest::Client::new();
    send_large(&client, &server.base, 40, MIB as usize).await;

    let (mut most, mut pages) = (0, 0);
    let mut token = String::new();
    loop {
        std::fs::write(format!("/proc/{}/clear_refs", server.pid()), "5").expect("the peak resets");
        let (idle, _) = memory(server.pid());
        let params = json!({"pageSize": 100, "pageToken": token});
        let page: Value = common::rpc(&client, &server.base, "ListTasks", params).await.unwrap();
        let (_, peak) = memory(server.pid());
        most = most.max(peak.saturating_sub(idle));
        let tasks = page["result"]["tasks"].as_array().unwrap_or_else(|| panic!("{page}"));
        assert!((1..=4).contains(&tasks.len()), "{} tasks of 1 MiB on a 4 MiB page", tasks.len());
        pages += 1;
        token = page["result"]["nextPageToken"].as_str().unwrap().to_owned();
        if token.is_empty() {
            break;
        }
    }
    assert!(pages >= 10, "{pages} pages");
    assert!(most < 24 * MIB, "a page of 4 MiB took {} MiB", most / MIB);
}
