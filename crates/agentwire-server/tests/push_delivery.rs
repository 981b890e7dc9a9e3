//! Webhook deliveries reach a receiver on a loopback port, with the configured credentials.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agentwire_server::{Limits, PushSettings, WebhookGuard};
use agentwire_test::{conformance, user_message, TestServer, TIMEOUT};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::{json, Value};
use tokio::sync::mpsc;

type Received = (HeaderMap, Value);

async fn receiver() -> (String, mpsc::UnboundedReceiver<Received>, tokio::task::JoinHandle<()>) {
    receiver_answering(|_| StatusCode::OK).await
}

/// A webhook on a loopback port that answers the `n`th delivery (from 0) with `status(n)`, and
/// hands every delivery it gets to the test.
async fn receiver_answering(
    status: impl Fn(usize) -> StatusCode + Send + Sync + 'static,
) -> (String, mpsc::UnboundedReceiver<Received>, tokio::task::JoinHandle<()>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let tx = Arc::new(Mutex::new(tx));
    let status = Arc::new(status);
    let count = Arc::new(AtomicUsize::new(0));
    let app = axum::Router::new().route(
        "/hook",
        post(move |headers: HeaderMap, body: axum::body::Bytes| {
            let (tx, status, count) = (Arc::clone(&tx), Arc::clone(&status), Arc::clone(&count));
            async move {
                let value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let _ = tx.lock().unwrap().send((headers, value));
                status(count.fetch_add(1, Ordering::SeqCst))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, rx, task)
}

#[tokio::test]
async fn every_event_is_delivered_in_order_with_credentials() {
    let (url, mut rx, hook) = receiver().await;
    let server = TestServer::start(conformance()).await;
    let config = json!({"id": "p1", "url": url, "token": "tok-1", "authentication": {"scheme": "Bearer", "credentials": "cred-1"}});
    let params = json!({"message": user_message("tck-input-required", "x"), "configuration": {"taskPushNotificationConfig": config}});
    let task = server.rpc_ok("SendMessage", params).await["task"].clone();
    let mut follow_up = user_message("tck-complete-task", "y");
    follow_up["taskId"] = task["id"].clone();
    server.rpc_ok("SendMessage", json!({"message": follow_up})).await;

    let mut bodies = Vec::new();
    while bodies.last().and_then(|b: &Value| b["statusUpdate"]["status"]["state"].as_str())
        != Some("TASK_STATE_COMPLETED")
    {
        let (headers, body) = tokio::time::timeout(TIMEOUT, rx.recv()).await.expect("delivery in time").unwrap();
        assert_eq!(headers["authorization"], "Bearer cred-1");
        assert_eq!(headers["x-a2a-notification-token"], "tok-1");
        assert!(headers.get("content-length").is_some(), "not chunked");
        bodies.push(body);
    }
    assert_eq!(bodies[0]["task"]["id"], task["id"], "the first notification is the new task");
    let kinds: Vec<&str> = bodies.iter().map(|b| b.as_object().unwrap().keys().next().unwrap().as_str()).collect();
    assert_eq!(kinds, ["task", "statusUpdate", "message", "statusUpdate"]);
    hook.abort();
}

#[tokio::test]
async fn private_webhooks_are_refused_by_default() {
    let push = PushSettings { guard: WebhookGuard::default(), ..PushSettings::default() };
    let server = TestServer::start(conformance().push_settings(push)).await;
    let task =
        server.rpc_ok("SendMessage", json!({"message": user_message("tck-complete-task", "x")})).await["task"].clone();
    for url in [
        "http://127.0.0.1:9/hook",
        "http://localhost/hook",
        "http://[::1]/hook",
        "http://10.1.2.3/x",
        "ftp://example.com/x",
    ] {
        let config = json!({"taskId": task["id"], "url": url});
        assert_eq!(server.rpc_error_code("CreateTaskPushNotificationConfig", config).await, -32602, "{url}");
    }
}

/// Shutdown waits for queued deliveries, not for the idle queue itself (it used to sit out its
/// whole five-second limit). Time is paused, so a wait shows up as virtual time, not as a slow test.
#[tokio::test(start_paused = true)]
async fn shutdown_of_an_idle_handler_does_not_wait() {
    let handler = agentwire_server::RequestHandler::builder(agentwire_server::agent::EchoAgent).build();
    let started = tokio::time::Instant::now();
    handler.shutdown().await;
    assert!(started.elapsed() < std::time::Duration::from_secs(1), "shutdown took {:?}", started.elapsed());
}

/// The kind of each StreamResponse delivered, until the one that completes the task.
async fn deliveries_until_completed(rx: &mut mpsc::UnboundedReceiver<Received>) -> Vec<String> {
    let mut kinds = Vec::new();
    loop {
        let (_, body) = tokio::time::timeout(TIMEOUT, rx.recv()).await.expect("delivery in time").unwrap();
        let kind = body.as_object().and_then(|b| b.keys().next()).cloned().unwrap_or_default();
        let completed = body["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED";
        kinds.push(kind);
        if completed {
            return kinds;
        }
    }
}

async fn send_with_webhook(server: &TestServer, url: &str) {
    let config = json!({"url": url, "token": "tok"});
    let params = json!({"message": user_message("tck-stream-001", "x"), "configuration": {"taskPushNotificationConfig": config}});
    server.rpc_ok("SendMessage", params).await;
}

#[tokio::test]
async fn a_webhook_that_fails_for_a_while_gets_every_event_again_in_order() {
    // The first two attempts meet a server error; the third is taken.
    let (url, mut rx, hook) =
        receiver_answering(|n| if n < 2 { StatusCode::SERVICE_UNAVAILABLE } else { StatusCode::OK }).await;
    let server = TestServer::start(conformance()).await;
    send_with_webhook(&server, &url).await;
    let kinds = deliveries_until_completed(&mut rx).await;
    assert_eq!(
        kinds,
        ["task", "task", "task", "statusUpdate", "artifactUpdate", "statusUpdate"],
        "retried, then the rest"
    );
    hook.abort();
}

#[tokio::test]
async fn a_webhook_that_refuses_a_delivery_is_not_asked_again() {
    // A client error (400) is final: the delivery is dropped, and the next event follows.
    let (url, mut rx, hook) =
        receiver_answering(|n| if n == 0 { StatusCode::BAD_REQUEST } else { StatusCode::OK }).await;
    let server = TestServer::start(conformance()).await;
    send_with_webhook(&server, &url).await;
    let kinds = deliveries_until_completed(&mut rx).await;
    assert_eq!(kinds, ["task", "statusUpdate", "artifactUpdate", "statusUpdate"], "no retry of the refused one");
    hook.abort();
}

#[tokio::test]
async fn a_task_has_at_most_the_configured_number_of_push_configs() {
    let limits = Limits { max_push_configs_per_task: 2, ..Limits::default() };
    let server = TestServer::start(conformance().limits(limits)).await;
    let task =
        server.rpc_ok("SendMessage", json!({"message": user_message("tck-complete-task", "x")})).await["task"].clone();
    let config = |id: &str| json!({"taskId": task["id"], "id": id, "url": "https://example.com/hook"});
    server.rpc_ok("CreateTaskPushNotificationConfig", config("a")).await;
    server.rpc_ok("CreateTaskPushNotificationConfig", config("b")).await;
    assert_eq!(server.rpc_error_code("CreateTaskPushNotificationConfig", config("c")).await, -32602);
    let replaced = server.rpc_ok("CreateTaskPushNotificationConfig", config("b")).await;
    assert_eq!(replaced["id"], "b", "replacing a config at the limit is allowed");
    let path = format!("/tasks/{}/pushNotificationConfigs", task["id"].as_str().unwrap());
    let (status, _) =
        server.rest(reqwest::Method::POST, &path, Some(json!({"id": "c", "url": "https://example.com/hook"}))).await;
    assert_eq!(status, 400);
    let listed = server.rpc_ok("ListTaskPushNotificationConfigs", json!({"taskId": task["id"]})).await;
    assert_eq!(listed["configs"].as_array().map(Vec::len), Some(2));
}
