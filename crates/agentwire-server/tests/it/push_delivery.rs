//! Webhook deliveries reach a receiver on a loopback port, with the configured credentials, and
//! within the server's limits: no redirects, bounded lanes, a cap on deliveries in flight.

use std::collections::HashSet;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agentwire_server::{Limits, PushSettings, WebhookGuard};
use agentwire_test::{conformance, user_message, Gate, TestServer, TIMEOUT};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
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
    webhook(move |n, _| std::future::ready(status(n).into_response())).await
}

/// A webhook on a loopback port that hands every delivery to the test, then answers the `n`th
/// (from 0) with what `respond(n, body)` resolves to.
#[expect(clippy::disallowed_methods, reason = "a test's webhook records every delivery, and the test reads them all")]
async fn webhook<F, R>(respond: F) -> (String, mpsc::UnboundedReceiver<Received>, tokio::task::JoinHandle<()>)
where
    F: Fn(usize, Value) -> R + Send + Sync + 'static,
    R: Future<Output = Response> + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel();
    let tx = Arc::new(Mutex::new(tx));
    let respond = Arc::new(respond);
    let count = Arc::new(AtomicUsize::new(0));
    let app = axum::Router::new().route(
        "/hook",
        post(move |headers: HeaderMap, body: axum::body::Bytes| {
            let value: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let _ = tx.lock().unwrap().send((headers, value.clone()));
            respond(count.fetch_add(1, Ordering::SeqCst), value)
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, rx, task)
}

/// A webhook that answers nothing until `gate` opens.
async fn held_webhook(gate: &Gate) -> (String, mpsc::UnboundedReceiver<Received>, tokio::task::JoinHandle<()>) {
    let held = gate.clone();
    webhook(move |_, _| {
        let gate = held.clone();
        async move {
            gate.wait().await;
            StatusCode::OK.into_response()
        }
    })
    .await
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
        for name in ["x-a2a-notification-token", "a2a-notification-token", "x-opvs-notification-token"] {
            assert_eq!(headers[name], "tok-1", "{name}");
        }
        assert!(headers.get("content-length").is_some(), "not chunked");
        bodies.push(body);
    }
    assert_eq!(bodies[0]["task"]["id"], task["id"], "the first notification is the new task");
    let kinds: Vec<&str> = bodies.iter().map(|b| b.as_object().unwrap().keys().next().unwrap().as_str()).collect();
    assert_eq!(kinds, ["task", "statusUpdate", "message", "statusUpdate", "statusUpdate"]);
    let states: Vec<&str> = bodies.iter().filter_map(|b| b["statusUpdate"]["status"]["state"].as_str()).collect();
    // The follow-up is what the task waited for: it works on it again, then completes.
    assert_eq!(states, ["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);
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

fn completes(body: &Value) -> bool {
    body["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
}

/// A redirect answer ends the delivery: following it would carry the event and its token to an
/// address the guard never checked.
#[tokio::test]
async fn a_webhook_that_redirects_is_not_followed() {
    let (elsewhere, mut landed, landing) = receiver().await;
    // The last event is taken, so once it arrives every redirect before it has been answered.
    let (url, mut rx, hook) = webhook(move |_, body| {
        let answer = if completes(&body) {
            StatusCode::OK.into_response()
        } else {
            (StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, elsewhere.clone())]).into_response()
        };
        std::future::ready(answer)
    })
    .await;
    let server = TestServer::start(conformance()).await;
    send_with_webhook(&server, &url).await;
    let kinds = deliveries_until_completed(&mut rx).await;
    assert_eq!(kinds, ["task", "statusUpdate", "artifactUpdate", "statusUpdate"], "each event once: no retry");
    assert!(landed.try_recv().is_err(), "the redirect target received nothing");
    hook.abort();
    landing.abort();
}

#[tokio::test]
async fn webhooks_to_special_purpose_addresses_are_refused() {
    let push = PushSettings { guard: WebhookGuard::default(), ..PushSettings::default() };
    let server = TestServer::start(conformance().push_settings(push)).await;
    let task =
        server.rpc_ok("SendMessage", json!({"message": user_message("tck-complete-task", "x")})).await["task"].clone();
    for url in [
        "http://[::127.0.0.1]/hook",
        "http://[::ffff:0:127.0.0.1]/hook",
        "http://[64:ff9b::127.0.0.1]/hook",
        "http://[2002:7f00:1::]/hook",
        "http://[fec0::1]/hook",
        "http://0.1.2.3/hook",
        "http://192.0.0.1/hook",
        "http://192.0.2.2/hook",
        "http://198.18.0.1/hook",
        "http://198.51.100.1/hook",
        "http://203.0.113.1/hook",
        "http://240.0.0.1/hook",
        "http://localhost./hook",
    ] {
        let config = json!({"taskId": task["id"], "url": url});
        assert_eq!(server.rpc_error_code("CreateTaskPushNotificationConfig", config).await, -32602, "{url}");
    }
    let public = json!({"taskId": task["id"], "url": "https://[2606:4700::1111]/hook"});
    server.rpc_ok("CreateTaskPushNotificationConfig", public).await;
}

/// Receives deliveries until one satisfies `last`; returns them all.
async fn deliveries_until(rx: &mut mpsc::UnboundedReceiver<Received>, last: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut bodies = Vec::new();
    loop {
        let (_, body) = tokio::time::timeout(TIMEOUT, rx.recv()).await.expect("delivery in time").unwrap();
        let done = last(&body);
        bodies.push(body);
        if done {
            return bodies;
        }
    }
}

fn asks_for_input(body: &Value) -> bool {
    body["statusUpdate"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
}

/// A webhook that does not answer holds at most a lane's worth of deliveries in memory, and the
/// server carries on; what did not fit is read back from the task's log once the webhook answers,
/// so it still gets every event, in order.
#[tokio::test]
async fn a_stalled_webhook_gets_what_overflowed_its_lane_from_the_log() {
    let push = PushSettings {
        guard: WebhookGuard { allow_private: true },
        lane_capacity: 2,
        initial_backoff: std::time::Duration::from_millis(50),
        ..PushSettings::default()
    };
    let server = TestServer::start(conformance().push_settings(push)).await;
    let gate = Gate::default();
    let (stalled_url, mut stalled, stalled_hook) = held_webhook(&gate).await;
    // A prompt webhook on the same task sees every event, in the order the stalled one should.
    let (url, mut prompt, prompt_hook) = receiver().await;

    let task =
        server.rpc_ok("SendMessage", json!({"message": user_message("m0", "tck-multi-turn")})).await["task"].clone();
    for (id, url) in [("stalled", &stalled_url), ("prompt", &url)] {
        server.rpc_ok("CreateTaskPushNotificationConfig", json!({"taskId": task["id"], "id": id, "url": url})).await;
    }
    let turn = |n: usize, text: &str| {
        let mut message = user_message(&format!("m{n}"), text);
        message["taskId"] = task["id"].clone();
        json!({"message": message})
    };
    let mut produced = Vec::new();
    for n in 1..=8 {
        server.rpc_ok("SendMessage", turn(n, "more")).await;
        produced.extend(deliveries_until(&mut prompt, asks_for_input).await);
    }
    assert!(produced.len() > 3, "more events than the lane holds: {}", produced.len());
    server.rpc_ok("SendMessage", turn(9, "done")).await;
    produced.extend(deliveries_until(&mut prompt, completes).await);
    gate.open();
    assert_eq!(deliveries_until(&mut stalled, completes).await, produced, "every event, in order, once");
    stalled_hook.abort();
    prompt_hook.abort();
}

/// However many webhooks are due, at most `max_concurrent_deliveries` requests are in flight,
/// and the others follow once those are answered.
#[tokio::test]
async fn deliveries_in_flight_are_capped_across_webhooks() {
    let push = PushSettings {
        guard: WebhookGuard { allow_private: true },
        max_concurrent_deliveries: 3,
        initial_backoff: std::time::Duration::from_millis(50),
        ..PushSettings::default()
    };
    let server = TestServer::start(conformance().push_settings(push)).await;
    let gate = Gate::default();
    let held = gate.clone();
    let in_flight = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (counted, most_seen) = (Arc::clone(&in_flight), Arc::clone(&most));
    let (url, mut rx, hook) = webhook(move |_, _| {
        let (gate, in_flight, most) = (held.clone(), Arc::clone(&counted), Arc::clone(&most_seen));
        most.fetch_max(in_flight.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
        async move {
            gate.wait().await;
            in_flight.fetch_sub(1, Ordering::SeqCst);
            StatusCode::OK.into_response()
        }
    })
    .await;

    let tasks = 10;
    for n in 0..tasks {
        let config = json!({"url": url, "id": format!("c{n}")});
        let params = json!({"message": user_message(&format!("tck-complete-task-{n}"), "x"), "configuration": {"taskPushNotificationConfig": config}});
        server.rpc_ok("SendMessage", params).await;
    }
    for _ in 0..3 {
        tokio::time::timeout(TIMEOUT, rx.recv()).await.expect("a delivery starts").unwrap();
    }
    // While three are held, the server still answers, and the other webhooks have time to call.
    server.rpc_ok("SendMessage", json!({"message": user_message("tck-complete-task", "x")})).await;
    gate.open();
    let mut completed = HashSet::new();
    while completed.len() < tasks {
        let (_, body) = tokio::time::timeout(TIMEOUT, rx.recv()).await.expect("every delivery in time").unwrap();
        if completes(&body) {
            completed.insert(body["statusUpdate"]["taskId"].as_str().unwrap().to_owned());
        }
    }
    assert_eq!(most.load(Ordering::SeqCst), 3, "at most three requests in flight");
    hook.abort();
}

/// A config made by a v0.3 or legacy client gets the whole task after each event, in that
/// client's shape, with the same headers as v1.0's deliveries.
#[tokio::test]
async fn older_generations_get_the_task_in_their_own_shape() {
    let (url, mut rx, hook) = receiver().await;
    let server = TestServer::start(conformance()).await;
    let config = json!({"url": url, "token": "tok-3", "authentication": {"schemes": ["Bearer"], "credentials": "c3"}});
    let message = json!({"kind": "message", "messageId": "tck-complete-task-1", "role": "user", "parts": [{"kind": "text", "text": "x"}]});
    let params = json!({"message": message, "configuration": {"blocking": true, "pushNotificationConfig": config}});
    server.rpc_with_headers("message/send", params, &[]).await;
    let (headers, first) = tokio::time::timeout(TIMEOUT, rx.recv()).await.expect("delivery in time").unwrap();
    assert_eq!(
        (&headers["authorization"], &headers["x-a2a-notification-token"]),
        (&"Bearer c3".parse().unwrap(), &"tok-3".parse().unwrap())
    );
    assert_eq!(first["kind"], "task", "{first}");
    let completed = |body: &Value| body["status"]["state"] == "completed";
    if !completed(&first) {
        let bodies = deliveries_until(&mut rx, completed).await;
        assert!(bodies.iter().all(|b| b["kind"] == "task"), "v0.3 tasks: {bodies:?}");
    }

    let legacy = json!({"id": "legacy-push-1", "message": {"role": "user", "parts": [{"type": "text", "text": "hi"}]}, "pushNotification": config});
    server.rpc_with_headers("tasks/send", legacy, &[]).await;
    let bodies = deliveries_until(&mut rx, completed).await;
    let last = bodies.last().unwrap();
    assert_eq!((last["id"].as_str(), last.get("kind")), (Some("legacy-push-1"), None), "a legacy task: {last}");
    assert_eq!(last["sessionId"], last["contextId"]);
    hook.abort();
}

/// A webhook that receives the whole task (v0.3, legacy) and stalls is not owed one copy of the
/// task per event meanwhile: when it answers, it gets the task as it is then, once.
#[tokio::test]
async fn a_stalled_whole_task_webhook_gets_the_latest_task_once() {
    let server = TestServer::start(conformance()).await;
    let gate = Gate::default();
    let (url, mut rx, hook) = held_webhook(&gate).await;
    let task =
        server.rpc_ok("SendMessage", json!({"message": user_message("m0", "tck-multi-turn")})).await["task"].clone();
    let config = json!({"taskId": task["id"], "pushNotificationConfig": {"id": "v03", "url": url}});
    let set = server.rpc_with_headers("tasks/pushNotificationConfig/set", config, &[]).await;
    assert!(set.get("result").is_some(), "{set}");
    let turn = |n: usize, text: &str| {
        let mut message = user_message(&format!("m{n}"), text);
        message["taskId"] = task["id"].clone();
        json!({"message": message})
    };
    server.rpc_ok("SendMessage", turn(1, "more")).await;
    let (_, stalled) = tokio::time::timeout(TIMEOUT, rx.recv()).await.expect("a delivery starts").unwrap();
    assert_eq!(stalled["kind"], "task", "{stalled}");
    for n in 2..=8 {
        server.rpc_ok("SendMessage", turn(n, "more")).await;
    }
    server.rpc_ok("SendMessage", turn(9, "done")).await;
    gate.open();
    let completed = |body: &Value| body["status"]["state"] == "completed";
    let after = deliveries_until(&mut rx, completed).await;
    assert_eq!(after.len(), 1, "one delivery, of the task as it is now: {} deliveries", after.len());
    let now = server.rpc_ok("GetTask", json!({"id": task["id"]})).await;
    let turns = |task: &Value| task["history"].as_array().map(Vec::len);
    assert_eq!(turns(&after[0]), turns(&now), "the whole history: {}", after[0]);
    hook.abort();
}

/// With delivery off, configs are still validated and stored, and no webhook is called, then or
/// later: a server that serves the same store with delivery on owes them nothing from before.
#[tokio::test]
async fn with_delivery_off_configs_are_kept_and_no_webhook_is_called() {
    let (url, mut rx, hook) = receiver().await;
    let push = PushSettings { deliver: false, guard: WebhookGuard { allow_private: true }, ..PushSettings::default() };
    let store = agentwire_store::MemoryStore::default();
    let server = TestServer::start(conformance().push_settings(push).backend(store.clone().backend())).await;
    let config = json!({"id": "p1", "url": url});
    let params = json!({"message": user_message("tck-complete-task", "x"), "configuration": {"taskPushNotificationConfig": config}});
    let task = server.rpc_ok("SendMessage", params).await["task"].clone();
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    let stored = server.rpc_ok("GetTaskPushNotificationConfig", json!({"taskId": task["id"], "id": "p1"})).await;
    assert_eq!(stored["url"], url.as_str());
    let refused = server.rpc("CreateTaskPushNotificationConfig", json!({"taskId": task["id"], "url": "ftp://x"})).await;
    assert_eq!(refused["error"]["code"], -32602, "still validated: {refused}");
    let nothing = tokio::time::timeout(std::time::Duration::from_millis(500), rx.recv()).await;
    assert!(nothing.is_err(), "a webhook was called: {nothing:?}");

    drop(server);
    let _later = TestServer::start(conformance().backend(store.backend())).await;
    let nothing = tokio::time::timeout(std::time::Duration::from_millis(500), rx.recv()).await;
    assert!(nothing.is_err(), "the events of a run without delivery were delivered later: {nothing:?}");
    hook.abort();
}
