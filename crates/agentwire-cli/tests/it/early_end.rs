//! An agent that ends every subscription after sending the task as it stands, while the task goes
//! on: `agentwire subscribe` asks again less and less often, and after a few subscriptions that
//! brought nothing new gives up, saying how to follow the task again.

use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::response::IntoResponse;
use axum::routing::post;
use axum::Json;
use serde_json::Value;
use tokio::time::Instant;

use crate::common::binary;
use crate::common::stub::{agent, answer, events, task};

#[tokio::test]
async fn an_agent_ending_every_subscription_is_asked_less_often_then_left() {
    let subscriptions = Arc::new(Mutex::new(Vec::new()));
    let counted = subscriptions.clone();
    let root = post(move |Json(request): Json<Value>| {
        let counted = counted.clone();
        async move {
            let working = task("task-1", "TASK_STATE_WORKING");
            match request["method"].as_str() {
                Some("SubscribeToTask") => {
                    counted.lock().unwrap().push(Instant::now());
                    events([answer(&request, serde_json::json!({"task": working}))])
                }
                _ => Json(answer(&request, working)).into_response(),
            }
        }
    });
    let base = agent(root).await;

    let started = Instant::now();
    let mut child = Command::new(binary())
        .args(["subscribe", &base, "task-1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("agentwire runs");
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            let made = subscriptions.lock().unwrap().len();
            panic!("still subscribing after 20 s, {made} subscriptions made");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let output = child.wait_with_output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));

    let made = subscriptions.lock().unwrap().clone();
    let within_five_seconds = made.iter().filter(|at| at.duration_since(started) < Duration::from_secs(5)).count();
    assert!(within_five_seconds <= 10, "{within_five_seconds} subscriptions in 5 s");
    assert_eq!(output.status.code(), Some(11), "{stderr}");
    assert!(stderr.contains("without news"), "{stderr}");
    assert!(stderr.contains(&format!("`agentwire subscribe {base} task-1`")), "{stderr}");
    assert_eq!(stdout.matches("task task-1 working").count(), 1, "the same task, shown once:\n{stdout}");
}
