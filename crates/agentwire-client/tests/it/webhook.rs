//! The webhook receiver takes the push notifications an agentwire server sends to configs of
//! every protocol generation, over loopback, and refuses deliveries without its credentials or
//! without a notification in them.

use std::time::Duration;

use agentwire_client::{Client, Notification, Notifications, WebhookReceiver};
use agentwire_test::{conformance, TestServer, TIMEOUT};
use agentwire_types::{
    AuthenticationInfo, Message, SendMessageRequest, SendMessageResponse, StreamResponse, Task,
    TaskPushNotificationConfig, TaskState,
};
use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

const TOKEN: &str = "tok-1";
const AUTHORIZATION: &str = "Bearer cred-1";

/// Serves `app` on a loopback port; returns its base URL.
async fn serve(app: axum::Router) -> (String, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
    let base = format!("http://{}", listener.local_addr().expect("local address"));
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (base, task)
}

/// A receiver with the test's credentials, served alone; returns the webhook URL.
async fn webhook(receiver: WebhookReceiver) -> (String, Notifications, JoinHandle<()>) {
    let (router, notifications) = receiver.into_router();
    let (base, task) = serve(router).await;
    (format!("{base}/a2a/webhook"), notifications, task)
}

fn checked() -> WebhookReceiver {
    WebhookReceiver::new().token(TOKEN).authorization(AUTHORIZATION)
}

/// The config's webhook part in the JSON of v0.3 and the legacy family.
fn wire_config(url: &str) -> Value {
    json!({"url": url, "token": TOKEN, "authentication": {"schemes": ["Bearer"], "credentials": "cred-1"}})
}

async fn next(notifications: &mut Notifications) -> Notification {
    tokio::time::timeout(TIMEOUT, notifications.recv()).await.expect("a notification in time").expect("open")
}

/// The notifications about `task_id` until the one that reports it completed.
async fn until_completed(notifications: &mut Notifications, task_id: &str) -> Vec<Notification> {
    let mut received = Vec::new();
    loop {
        let notification = next(notifications).await;
        assert_eq!(notification.event.task_id(), task_id, "{notification:?}");
        assert_eq!(notification.token.as_deref(), Some(TOKEN));
        let completed = notification.event.task_state() == Some(TaskState::Completed);
        received.push(notification);
        if completed {
            return received;
        }
    }
}

fn task_of(notification: &Notification) -> &Task {
    match &notification.event {
        StreamResponse::Task(task) => task,
        other => panic!("expected the whole task, got {other:?}"),
    }
}

#[tokio::test]
async fn a_v1_config_made_by_the_client_delivers_each_event_until_completed() {
    let (url, mut notifications, hook) = webhook(checked()).await;
    let server = TestServer::start(conformance()).await;
    let client = Client::builder(&server.base).timeout(TIMEOUT).connect().await.expect("connects");
    let reply = client.send_message(SendMessageRequest::new(Message::user("m-1", "tck-multi-turn"))).await.unwrap();
    let SendMessageResponse::Task(task) = reply else { panic!("expected a task, got {reply:?}") };
    assert_eq!(task.status.state, TaskState::InputRequired);

    let config = TaskPushNotificationConfig {
        task_id: task.id.clone(),
        url,
        token: TOKEN.into(),
        authentication: Some(AuthenticationInfo { scheme: "Bearer".into(), credentials: "cred-1".into() }),
        ..TaskPushNotificationConfig::default()
    };
    client.create_push_config(config).await.expect("CreateTaskPushNotificationConfig");
    let done = Message { task_id: task.id.clone(), ..Message::user("m-2", "done") };
    client.send_message(SendMessageRequest::new(done)).await.expect("the follow-up");

    let received = until_completed(&mut notifications, &task.id).await;
    assert!(
        matches!(&received.last().unwrap().event, StreamResponse::StatusUpdate(_)),
        "v1.0 configs get events: {received:?}"
    );
    hook.abort();
}

#[tokio::test]
async fn a_v03_config_delivers_the_task_until_completed() {
    let (url, mut notifications, hook) = webhook(checked()).await;
    let server = TestServer::start(conformance()).await;
    let first = json!({"kind": "message", "messageId": "m-1", "role": "user", "parts": [{"kind": "text", "text": "tck-multi-turn"}]});
    let started = server
        .rpc_with_headers("message/send", json!({"message": first, "configuration": {"blocking": true}}), &[])
        .await;
    let task = &started["result"];
    assert_eq!((task["kind"].as_str(), task["status"]["state"].as_str()), (Some("task"), Some("input-required")));

    let set = json!({"taskId": task["id"], "pushNotificationConfig": wire_config(&url)});
    let created = server.rpc_with_headers("tasks/pushNotificationConfig/set", set, &[]).await;
    assert!(created.get("result").is_some(), "{created}");
    let done = json!({"kind": "message", "messageId": "m-2", "role": "user", "taskId": task["id"], "contextId": task["contextId"], "parts": [{"kind": "text", "text": "done"}]});
    server.rpc_with_headers("message/send", json!({"message": done, "configuration": {"blocking": true}}), &[]).await;

    // Read as a Stream this time.
    let task_id = task["id"].as_str().unwrap();
    let mut received = Vec::new();
    while received.last().map(|n: &Notification| task_of(n).status.state) != Some(TaskState::Completed) {
        let notification = tokio::time::timeout(TIMEOUT, notifications.next()).await.expect("in time").unwrap();
        assert_eq!(task_of(&notification).id, task_id);
        assert_eq!(notification.token.as_deref(), Some(TOKEN));
        received.push(notification);
    }
    assert_eq!(task_of(received.last().unwrap()).context_id, task["contextId"].as_str().unwrap());
    hook.abort();
}

#[tokio::test]
async fn a_legacy_config_delivers_the_task_until_completed() {
    let (url, mut notifications, hook) = webhook(checked()).await;
    let server = TestServer::start(conformance()).await;
    let send = |text: &str| json!({"id": "legacy-task-1", "sessionId": "session-1", "message": {"role": "user", "parts": [{"type": "text", "text": text}]}});
    let started = server.rpc_with_headers("tasks/send", send("tck-multi-turn"), &[]).await;
    assert_eq!(started["result"]["status"]["state"], "input-required", "{started}");

    let set = json!({"id": "legacy-task-1", "pushNotificationConfig": wire_config(&url)});
    let created = server.rpc_with_headers("tasks/pushNotification/set", set, &[]).await;
    assert!(created.get("result").is_some(), "{created}");
    server.rpc_with_headers("tasks/send", send("done"), &[]).await;

    let received = until_completed(&mut notifications, "legacy-task-1").await;
    for notification in &received {
        assert_eq!(task_of(notification).context_id, "session-1");
    }
    hook.abort();
}

/// POSTs `body` to `url` with `headers`; returns the status and the body.
async fn post(url: &str, headers: &[(&str, &str)], body: impl Into<reqwest::Body>) -> (u16, String) {
    let http = reqwest::Client::builder().timeout(TIMEOUT).build().unwrap();
    let mut request = http.post(url).header("content-type", "application/json").body(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("an answer");
    (response.status().as_u16(), response.text().await.unwrap_or_default())
}

fn working(task_id: &str) -> String {
    json!({"statusUpdate": {"taskId": task_id, "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}})
        .to_string()
}

#[tokio::test]
async fn deliveries_without_the_credentials_are_refused_and_yield_nothing() {
    let (url, mut notifications, hook) = webhook(checked()).await;
    let auth = ("Authorization", AUTHORIZATION);
    let refused: [&[(&str, &str)]; 5] = [
        &[],
        &[auth],
        &[("X-A2A-Notification-Token", "wrong"), ("A2A-Notification-Token", "wrong"), auth],
        &[("X-A2A-Notification-Token", TOKEN)],
        &[("X-A2A-Notification-Token", TOKEN), ("Authorization", "Bearer wrong")],
    ];
    for headers in refused {
        assert_eq!(post(&url, headers, working("refused")).await.0, 401, "{headers:?}");
    }
    // Any one of the three token headers will do, whatever another one says.
    for name in ["X-A2A-Notification-Token", "A2A-Notification-Token", "X-OPVS-Notification-Token"] {
        let other =
            if name == "A2A-Notification-Token" { "X-A2A-Notification-Token" } else { "A2A-Notification-Token" };
        let headers = [(other, "wrong"), (name, TOKEN), auth];
        assert_eq!(post(&url, &headers, working(name)).await, (200, String::new()), "{name}");
        let notification = next(&mut notifications).await;
        assert_eq!((notification.event.task_id(), notification.token.as_deref()), (name, Some(TOKEN)));
    }
    hook.abort();
}

#[tokio::test]
async fn bodies_that_are_no_notification_are_refused_and_yield_nothing() {
    let (url, mut notifications, hook) = webhook(WebhookReceiver::new().body_limit(1024)).await;
    for body in ["", "garbage", "[]", "{}", r#"{"hello":"world"}"#, r#"{"kind":"task","status":{"state":"sleeping"}}"#]
    {
        let (status, text) = post(&url, &[], body).await;
        assert_eq!(status, 400, "{body}");
        assert!(text.starts_with("not a push notification"), "{text}");
    }
    let quoted = json!({"task": "x".repeat(900)}).to_string();
    let (status, text) = post(&url, &[], quoted).await;
    assert_eq!(status, 400);
    assert!(text.len() < 300, "a short reason: {text}");
    let large = json!({"task": {"id": "t-large", "metadata": {"padding": "x".repeat(2048)}}}).to_string();
    assert_eq!(post(&url, &[], large).await.0, 413);

    assert_eq!(post(&url, &[], working("t-1")).await.0, 200);
    let notification = next(&mut notifications).await;
    assert_eq!((notification.event.task_id(), notification.token), ("t-1", None));
    hook.abort();
}

#[tokio::test]
async fn a_nested_receiver_answers_posts_at_its_path_and_below() {
    let (router, mut notifications) = WebhookReceiver::new().into_router();
    let (base, hook) = serve(axum::Router::new().nest("/hooks", router)).await;
    for (n, path) in ["/hooks", "/hooks/task-1", "/hooks/a/b"].iter().enumerate() {
        assert_eq!(post(&format!("{base}{path}"), &[], working(&n.to_string())).await.0, 200, "{path}");
        assert_eq!(next(&mut notifications).await.event.task_id(), n.to_string());
    }
    assert_eq!(post(&format!("{base}/elsewhere"), &[], working("x")).await.0, 404);
    let get = reqwest::get(format!("{base}/hooks")).await.unwrap();
    assert_eq!(get.status(), 405);
    hook.abort();
}

#[tokio::test]
async fn a_full_channel_holds_the_delivery_until_the_reader_takes_one() {
    let (url, mut notifications, hook) = webhook(WebhookReceiver::new().capacity(1)).await;
    assert_eq!(post(&url, &[], working("first")).await.0, 200);
    let mut second = tokio::spawn({
        let url = url.clone();
        async move { post(&url, &[], working("second")).await.0 }
    });
    let early = tokio::time::timeout(Duration::from_millis(200), &mut second).await;
    assert!(early.is_err(), "answered while the channel was full: {early:?}");
    assert_eq!(next(&mut notifications).await.event.task_id(), "first");
    assert_eq!(tokio::time::timeout(TIMEOUT, second).await.expect("answered in time").unwrap(), 200);
    assert_eq!(next(&mut notifications).await.event.task_id(), "second");
    hook.abort();
}

#[tokio::test]
async fn deliveries_nobody_reads_are_answered_service_unavailable() {
    let (url, notifications, hook) = webhook(WebhookReceiver::new()).await;
    drop(notifications);
    assert_eq!(post(&url, &[], working("t-1")).await.0, 503);
    hook.abort();
}

#[tokio::test]
async fn a_signed_delivery_verifies_and_a_forged_replayed_or_expired_one_is_refused() {
    use agentwire_client::jose::{
        sign_notification, unix_now, Algorithm, NotificationVerifier, PublicKeys, SigningKey,
    };
    let pem = SigningKey::generate_pem(Algorithm::ES256).unwrap();
    let key = SigningKey::from_pem(&pem).unwrap();
    let published = agentwire_client::jose::JwkSet { keys: vec![key.public_key().to_jwk()] };
    let http = agentwire_server::HttpOptions { signing_keys: Some(published), ..Default::default() };
    let server = TestServer::start_with(
        conformance().signing_key(SigningKey::from_pem(&pem).unwrap()),
        http,
        Default::default(),
    )
    .await;

    // The receiver trusts the keys the agent publishes, for its own URL.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let jwks = reqwest::get(format!("{}/.well-known/jwks.json", server.base)).await.unwrap().bytes().await.unwrap();
    let keys = PublicKeys::from_jwks(&jwks).unwrap();
    let verifier = NotificationVerifier::new(keys, &server.base, &url);
    let (router, mut notifications) = WebhookReceiver::new().verify_signatures(verifier).into_router();
    let hook = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });

    let verified = agentwire_client::CardVerifier::trusting_jku(format!("{}/", server.base));
    let client =
        Client::builder(&server.base).timeout(TIMEOUT).verify_card(verified).connect().await.expect("a signed card");
    let reply = client.send_message(SendMessageRequest::new(Message::user("m-1", "tck-multi-turn"))).await.unwrap();
    let SendMessageResponse::Task(task) = reply else { panic!("expected a task, got {reply:?}") };
    let config = TaskPushNotificationConfig { task_id: task.id.clone(), url: url.clone(), ..Default::default() };
    client.create_push_config(config).await.expect("CreateTaskPushNotificationConfig");
    let done = Message { task_id: task.id.clone(), ..Message::user("m-2", "done") };
    client.send_message(SendMessageRequest::new(done)).await.expect("the follow-up");
    loop {
        let notification = next(&mut notifications).await;
        if notification.event.task_state() == Some(TaskState::Completed) {
            break;
        }
    }

    let body = working(&task.id);
    let header = agentwire_client::jose::NOTIFICATION_SIGNATURE_HEADER;
    let token = sign_notification(&key, &server.base, None, &url, &task.id, body.as_bytes());
    assert_eq!(post(&url, &[(header, &token)], body.clone()).await.0, 200, "a token of the agent's key");
    assert_eq!(post(&url, &[(header, &token)], body.clone()).await.0, 401, "the same token again");
    let forger = SigningKey::generate(Algorithm::ES256).unwrap().with_kid(key.kid());
    let forged = sign_notification(&forger, &server.base, None, &url, &task.id, body.as_bytes());
    assert_eq!(post(&url, &[(header, &forged)], body.clone()).await.0, 401, "another key under the agent's kid");
    let other_body = sign_notification(&key, &server.base, None, &url, &task.id, b"{}");
    assert_eq!(post(&url, &[(header, &other_body)], body.clone()).await.0, 401, "a token for another body");
    let (_, mut claims) = agentwire_client::jose::inspect(&token).unwrap();
    claims.insert("iat".into(), json!(unix_now() - 3600));
    claims.insert("exp".into(), json!(unix_now() - 3300));
    claims.insert("jti".into(), json!("fresh-id"));
    let (status, reason) = post(&url, &[(header, &key.sign_jwt(&claims))], body.clone()).await;
    assert_eq!((status, reason.contains("expired")), (401, true), "an hour-old token: {reason}");
    assert_eq!(post(&url, &[], body).await.0, 401, "no token");
    hook.abort();
}

#[tokio::test]
async fn a_card_not_signed_by_a_trusted_key_is_refused() {
    use agentwire_client::jose::{Algorithm, PublicKeys, SigningKey};
    use agentwire_client::{CardVerifier, Error};
    let unsigned = TestServer::start(conformance()).await;
    let verifier = CardVerifier::trusting_jku(format!("{}/", unsigned.base));
    let refused = Client::builder(&unsigned.base).verify_card(verifier).connect().await.err().unwrap();
    assert!(matches!(&refused, Error::UntrustedCard { reason, .. } if reason.contains("not signed")), "{refused}");

    let key = SigningKey::generate(Algorithm::EdDSA).unwrap();
    let signed = TestServer::start(conformance().signing_key(key)).await;
    let stranger = PublicKeys::from_keys([SigningKey::generate(Algorithm::EdDSA).unwrap().public_key()]);
    let refused =
        Client::builder(&signed.base).verify_card(CardVerifier::with_keys(stranger)).connect().await.err().unwrap();
    assert!(matches!(refused, Error::UntrustedCard { .. }), "{refused}");
    // A jku outside the trusted prefix is not fetched: the keys it names are nobody's word.
    let elsewhere = CardVerifier::trusting_jku("https://keys.example/");
    assert!(Client::builder(&signed.base).verify_card(elsewhere).connect().await.is_err());
}
