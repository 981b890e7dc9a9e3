//! Webhook deliveries reach a receiver on a loopback port, with the configured credentials.

use std::sync::{Arc, Mutex};

use agentwire_server::{PushSettings, WebhookGuard};
use agentwire_test::{conformance, user_message, TestServer, TIMEOUT};
use axum::http::HeaderMap;
use axum::routing::post;
use serde_json::{json, Value};
use tokio::sync::mpsc;

type Received = (HeaderMap, Value);

async fn receiver() -> (String, mpsc::UnboundedReceiver<Received>, tokio::task::JoinHandle<()>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let tx = Arc::new(Mutex::new(tx));
    let app = axum::Router::new().route(
        "/hook",
        post(move |headers: HeaderMap, body: axum::body::Bytes| {
            let tx = Arc::clone(&tx);
            async move {
                let value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let _ = tx.lock().unwrap().send((headers, value));
                ""
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
