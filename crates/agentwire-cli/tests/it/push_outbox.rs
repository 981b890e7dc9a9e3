//! Push notifications outlive the process that owed them: a webhook that was down when the server
//! was killed with SIGKILL gets its notifications from the restarted server, in order, on SQLite
//! and on PostgreSQL, or, with two instances on one PostgreSQL, from the survivor once the killed
//! instance's lease has run out, whether the task was still running or had ended.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::common::{fresh_database, rpc, Server, TempDir};
use axum::http::StatusCode;
use axum::routing::post;
use serde_json::{json, Value};
use tokio::sync::mpsc;

/// A webhook on a loopback port that answers 503 until `up` is set, and hands the test every
/// notification it answers 200.
#[expect(clippy::disallowed_methods, reason = "a test's webhook records every delivery, and the test reads them all")]
async fn webhook(up: Arc<AtomicBool>) -> (String, mpsc::UnboundedReceiver<Value>, mpsc::UnboundedReceiver<()>) {
    let (delivered_tx, delivered) = mpsc::unbounded_channel();
    let (refused_tx, refused) = mpsc::unbounded_channel();
    let app = axum::Router::new().route(
        "/hook",
        post(move |body: axum::body::Bytes| {
            let (up, delivered_tx, refused_tx) = (up.clone(), delivered_tx.clone(), refused_tx.clone());
            async move {
                if !up.load(Ordering::SeqCst) {
                    let _ = refused_tx.send(());
                    return StatusCode::SERVICE_UNAVAILABLE;
                }
                let _ = delivered_tx.send(serde_json::from_slice(&body).unwrap_or(Value::Null));
                StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, delivered, refused)
}

/// The notifications delivered until one `last` accepts: they start with the task's first event,
/// and none comes twice.
async fn every_owed_notification_once(
    delivered: &mut mpsc::UnboundedReceiver<Value>,
    last: impl Fn(&Value) -> bool,
    task_id: &str,
) -> Vec<Value> {
    let mut bodies: Vec<Value> = Vec::new();
    while !bodies.last().is_some_and(&last) {
        let body = tokio::time::timeout(Duration::from_secs(20), delivered.recv())
            .await
            .expect("the notifications owed are delivered")
            .unwrap();
        bodies.push(body);
    }
    assert_eq!(bodies[0]["task"]["id"], task_id, "from the first event on: {bodies:#?}");
    for (i, body) in bodies.iter().enumerate() {
        assert!(!bodies[..i].contains(body), "delivered twice: {body}");
    }
    bodies
}

fn completes(body: &Value) -> bool {
    body["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
}

/// Sends `text` with a webhook config `hook` for `url`; the reply's task.
async fn send_with_webhook(client: &reqwest::Client, server: &Server, url: &str, text: &str, wait: bool) -> Value {
    let message = json!({"messageId": format!("{text}-1"), "role": "ROLE_USER", "parts": [{"text": text}]});
    let configuration = json!({"taskPushNotificationConfig": {"id": "hook", "url": url}, "returnImmediately": !wait});
    let reply = rpc(client, &server.base, "SendMessage", json!({"message": message, "configuration": configuration}));
    reply.await.unwrap()["result"]["task"].clone()
}

/// Two instances of `--agent conformance` on a fresh PostgreSQL database with a 2 s lease, each
/// allowed to call a webhook on loopback.
async fn two_instances(name: &str) -> Option<(TempDir, Server, Server)> {
    let database = fresh_database(name).await?;
    let dir = TempDir::new(name);
    let args = ["--agent", "conformance", "--store", &database, "--allow-private-webhooks", "--lease", "2"];
    let (one, two) = (Server::start(&dir.0, &args).await, Server::start(&dir.0, &args).await);
    Some((dir, one, two))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_due_before_a_kill_is_made_after_the_restart_on_sqlite() {
    a_delivery_due_before_a_kill_is_made_after_the_restart("outbox-sqlite", "sqlite:tasks.db").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_due_before_a_kill_is_made_after_the_restart_on_postgres() {
    let Some(database) = fresh_database("outbox").await else { return };
    a_delivery_due_before_a_kill_is_made_after_the_restart("outbox-postgres", &database).await;
}

async fn a_delivery_due_before_a_kill_is_made_after_the_restart(name: &str, store: &str) {
    let dir = TempDir::new(name);
    let args = ["--agent", "conformance", "--store", store, "--allow-private-webhooks"];
    let up = Arc::new(AtomicBool::new(false));
    let (url, mut delivered, mut refused) = webhook(Arc::clone(&up)).await;
    let mut server = Server::start(&dir.0, &args).await;
    let client = reqwest::Client::new();

    let task = send_with_webhook(&client, &server, &url, "tck-complete-task", true).await;
    let task_id = task["id"].as_str().expect("a task").to_owned();
    tokio::time::timeout(Duration::from_secs(10), refused.recv()).await.expect("a first attempt");
    server.kill();

    up.store(true, Ordering::SeqCst);
    let server = Server::start(&dir.0, &args).await;
    every_owed_notification_once(&mut delivered, completes, &task_id).await;
    let task = rpc(&client, &server.base, "GetTask", json!({"id": task_id})).await.unwrap();
    assert_eq!(task["result"]["status"]["state"], "TASK_STATE_COMPLETED");
}

/// Two instances on one PostgreSQL database; the one running a task with a webhook is killed
/// with SIGKILL while the webhook is down. Once its lease has run out, the survivor ends the task
/// FAILED and delivers every notification still owed, from the first, in order, each once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_survivor_delivers_what_a_killed_instance_owed() {
    let Some((_dir, mut one, two)) = two_instances("takeover").await else { return };
    let up = Arc::new(AtomicBool::new(false));
    let (url, mut delivered, mut refused) = webhook(Arc::clone(&up)).await;
    let client = reqwest::Client::new();

    let task = send_with_webhook(&client, &one, &url, "tck-cancel", false).await;
    let task_id = task["id"].as_str().expect("a task").to_owned();
    tokio::time::timeout(Duration::from_secs(10), refused.recv()).await.expect("a first attempt");
    let working = async {
        while rpc(&client, &two.base, "GetTask", json!({"id": task_id})).await.unwrap()["result"]["status"]["state"]
            != "TASK_STATE_WORKING"
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), working).await.expect("the task works on instance 1");
    one.kill();
    up.store(true, Ordering::SeqCst);

    let ends = |body: &Value| body["statusUpdate"]["status"]["state"] == "TASK_STATE_FAILED";
    let bodies = every_owed_notification_once(&mut delivered, ends, &task_id).await;
    let states: Vec<&str> = bodies.iter().filter_map(|b| b["statusUpdate"]["status"]["state"].as_str()).collect();
    assert_eq!(states.first(), Some(&"TASK_STATE_WORKING"), "in order: {bodies:#?}");
    let task = rpc(&client, &two.base, "GetTask", json!({"id": task_id})).await.unwrap();
    assert_eq!(task["result"]["status"]["state"], "TASK_STATE_FAILED");
}

/// Two instances on one PostgreSQL database; one completes a task while its webhook is down and
/// is killed with SIGKILL before it could deliver. Once its lease has run out, the survivor
/// delivers what it owed, in order, each once, with no restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_survivor_delivers_what_a_killed_instance_owed_on_an_ended_task() {
    let Some((_dir, mut one, two)) = two_instances("takeover_ended").await else { return };
    let up = Arc::new(AtomicBool::new(false));
    let (url, mut delivered, mut refused) = webhook(Arc::clone(&up)).await;
    let client = reqwest::Client::new();

    let task = send_with_webhook(&client, &one, &url, "tck-complete-task", true).await;
    let task_id = task["id"].as_str().expect("a task").to_owned();
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    tokio::time::timeout(Duration::from_secs(10), refused.recv()).await.expect("a first attempt");
    one.kill();
    up.store(true, Ordering::SeqCst);

    every_owed_notification_once(&mut delivered, completes, &task_id).await;
    let task = rpc(&client, &two.base, "GetTask", json!({"id": task_id})).await.unwrap();
    assert_eq!(task["result"]["status"]["state"], "TASK_STATE_COMPLETED");
}
