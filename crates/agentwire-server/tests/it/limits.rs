//! What one client can make the server hold is bounded: message size, history, tasks in progress,
//! ListTasks pages and retention, each refused or trimmed the way its limit says.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use agentwire_server::agent::{AgentExecutor, EventStream, ExecutionContext};
use agentwire_server::RequestHandler;

use agentwire_server::auth::StaticAuth;
use agentwire_server::App;
use agentwire_server::Limits;
use agentwire_store::{MemoryStore, RetentionPolicy};
use agentwire_test::{conformance, user_message, TestServer};
use reqwest::Method;
use serde_json::{json, Value};

const KIB: usize = 1024;

fn with_limits(limits: Limits) -> agentwire_server::RequestHandlerBuilder {
    conformance().limits(limits)
}

#[tokio::test]
async fn a_message_too_large_to_hold_is_refused_on_every_binding() {
    let server = TestServer::start(with_limits(Limits { max_message_bytes: 64 * KIB, ..Limits::default() })).await;
    // About 110 KB of JSON, but ten thousand parts.
    let mut message = user_message("m1", "tck-complete-task");
    message["parts"] = Value::Array(vec![json!({"text": ""}); 10_000]);

    let envelope = server.rpc("SendMessage", json!({"message": message})).await;
    assert_eq!(envelope["error"]["code"], -32600, "{envelope}");
    assert_eq!(envelope["error"]["data"][0]["reason"], "PAYLOAD_TOO_LARGE", "{envelope}");
    let (status, body) = server.rest(Method::POST, "/message:send", Some(json!({"message": message}))).await;
    assert_eq!(status, 413, "{body}");

    let fits = json!({"message": user_message("m2", "tck-complete-task")});
    assert_eq!(server.rpc_ok("SendMessage", fits).await["task"]["status"]["state"], "TASK_STATE_COMPLETED");
}

#[tokio::test]
async fn a_task_keeps_only_its_most_recent_history() {
    let server = TestServer::start(with_limits(Limits { max_history_length: 4, ..Limits::default() })).await;
    let task = server.rpc_ok("SendMessage", json!({"message": user_message("m0", "tck-multi-turn")})).await;
    let task_id = task["task"]["id"].clone();
    for turn in 1..=5 {
        let mut message = user_message(&format!("m{turn}"), &format!("turn {turn}"));
        message["taskId"] = task_id.clone();
        let reply = server.rpc_ok("SendMessage", json!({"message": message})).await;
        assert_eq!(reply["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    }
    let task = server.rpc_ok("GetTask", json!({"id": task_id})).await;
    let history = task["history"].as_array().unwrap();
    assert_eq!(history.len(), 4, "{task}");
    // The message that started the task and the newest turns (the user's, then the agent's
    // question) are kept; the ones between are gone.
    assert_eq!(history[0]["messageId"], "m0", "{task}");
    assert_eq!(history[2]["messageId"], "m5", "{task}");
    assert!(history.iter().all(|m| m["messageId"] != "m1"), "{task}");
}

async fn send(server: &TestServer, token: &str, text: &str) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": user_message("m", text), "configuration": {"returnImmediately": true}}});
    let request = server.http.post(format!("{}/", server.base)).header("A2A-Version", "1.0").bearer_auth(token);
    request.json(&body).send().await.unwrap().json().await.unwrap()
}

#[tokio::test]
async fn a_principal_at_its_limit_of_tasks_in_progress_waits_until_one_ends() {
    let auth = StaticAuth::default().with_spec("bearer:alice=alice-token,bob=bob-token").unwrap();
    let limits = Limits { max_unfinished_tasks: 2, ..Limits::default() };
    let server = TestServer::start_app(with_limits(limits), App::new().authenticator(auth)).await;
    let first = send(&server, "alice-token", "tck-cancel").await;
    send(&server, "alice-token", "tck-cancel").await;

    let refused = send(&server, "alice-token", "tck-cancel").await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(refused["error"]["data"][0]["reason"], "RESOURCE_EXHAUSTED", "{refused}");
    let others = send(&server, "bob-token", "tck-cancel").await;
    assert!(others["result"]["task"]["id"].is_string(), "another principal is not affected: {others}");

    let cancel =
        json!({"jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": {"id": first["result"]["task"]["id"]}});
    let request = server.http.post(format!("{}/", server.base)).header("A2A-Version", "1.0").bearer_auth("alice-token");
    let canceled: Value = request.json(&cancel).send().await.unwrap().json().await.unwrap();
    assert_eq!(canceled["result"]["status"]["state"], "TASK_STATE_CANCELED", "{canceled}");
    let again = send(&server, "alice-token", "tck-cancel").await;
    assert!(again["result"]["task"]["id"].is_string(), "{again}");
}

#[tokio::test]
async fn rest_answers_429_at_the_limit_of_tasks_in_progress() {
    let server = TestServer::start(with_limits(Limits { max_unfinished_tasks: 1, ..Limits::default() })).await;
    let body = json!({"message": user_message("m", "tck-cancel"), "configuration": {"returnImmediately": true}});
    let (status, _) = server.rest(Method::POST, "/message:send", Some(body.clone())).await;
    assert_eq!(status, 200);
    let (status, refused) = server.rest(Method::POST, "/message:send", Some(body)).await;
    assert_eq!(status, 429, "{refused}");
    assert_eq!(refused["error"]["status"], "RESOURCE_EXHAUSTED", "{refused}");
}

/// Counts its executions, says it works, and waits to be canceled.
#[derive(Default)]
struct CountsAndWaits {
    executions: Arc<AtomicUsize>,
}

impl AgentExecutor for CountsAndWaits {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        self.executions.fetch_add(1, Ordering::SeqCst);
        ctx.run(|ctx, updater| async move {
            updater.working().await?;
            ctx.cancellation().cancelled().await;
            updater.canceled().await
        })
    }
}

/// Sends racing for the last places under the limit of tasks in progress never pass it, and a
/// send refused there never runs its agent: the limit is decided before the agent starts.
#[tokio::test]
async fn racing_sends_never_pass_the_limit_and_a_refused_one_never_runs() {
    let agent = CountsAndWaits::default();
    let executions = Arc::clone(&agent.executions);
    let limits = Limits { max_unfinished_tasks: 3, ..Limits::default() };
    let server = Arc::new(TestServer::start(RequestHandler::builder(agent).limits(limits)).await);
    let sends = (0..24).map(|i| {
        let server = Arc::clone(&server);
        let params =
            json!({"message": user_message(&format!("m{i}"), "hi"), "configuration": {"returnImmediately": true}});
        tokio::spawn(async move { server.rpc("SendMessage", params).await })
    });
    let mut admitted = 0;
    for send in sends.collect::<Vec<_>>() {
        let envelope = send.await.unwrap();
        if envelope["result"]["task"]["id"].is_string() {
            admitted += 1;
        } else {
            assert_eq!(envelope["error"]["data"][0]["reason"], "RESOURCE_EXHAUSTED", "{envelope}");
        }
    }
    assert_eq!(admitted, 3);
    assert_eq!(executions.load(Ordering::SeqCst), 3, "only admitted sends run their agent");
    let listed = server.rpc_ok("ListTasks", json!({})).await;
    assert_eq!(listed["tasks"].as_array().map(Vec::len), Some(3), "{listed}");
}

/// A direct message reply leaves no task behind, so it never counts against the limit of tasks in
/// progress, however many the scope gets.
#[tokio::test]
async fn direct_replies_do_not_count_as_tasks_in_progress() {
    let server = TestServer::start(with_limits(Limits { max_unfinished_tasks: 1, ..Limits::default() })).await;
    for id in ["tck-message-response-1", "tck-message-response-2", "tck-message-response-3"] {
        let reply = server.rpc_ok("SendMessage", json!({"message": user_message(id, "hello")})).await;
        assert_eq!(reply["message"]["role"], "ROLE_AGENT", "{reply}");
    }
    let task = server.rpc_ok("SendMessage", json!({"message": user_message("m", "tck-complete-task")})).await;
    assert_eq!(task["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
}

/// Completed tasks that each hold `bytes` of text.
async fn completed_tasks(server: &TestServer, count: usize, bytes: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..count {
        let text = format!("tck-complete-task {}", "x".repeat(bytes));
        let params = json!({"message": user_message(&format!("m{i}"), &text), "configuration": {"historyLength": 0}});
        ids.push(server.rpc_ok("SendMessage", params).await["task"]["id"].as_str().unwrap().to_owned());
    }
    ids
}

#[tokio::test]
async fn a_list_page_ends_early_rather_than_pass_the_response_budget() {
    let server = TestServer::start(with_limits(Limits { max_list_bytes: 256 * KIB, ..Limits::default() })).await;
    let ids = completed_tasks(&server, 5, 100 * KIB).await;

    let (mut seen, mut token, mut pages) = (Vec::new(), String::new(), 0);
    loop {
        let result = server.rpc_ok("ListTasks", json!({"pageSize": 100, "pageToken": token})).await;
        let tasks = result["tasks"].as_array().unwrap();
        assert!(!tasks.is_empty() && tasks.len() <= 2, "{} tasks on one page", tasks.len());
        assert_eq!(result["totalSize"], 5);
        seen.extend(tasks.iter().map(|t| t["id"].as_str().unwrap().to_owned()));
        pages += 1;
        token = result["nextPageToken"].as_str().unwrap_or_default().to_owned();
        if token.is_empty() {
            break;
        }
    }
    assert!(pages >= 3);
    assert_eq!(seen.iter().collect::<HashSet<_>>(), ids.iter().collect::<HashSet<_>>());
    assert_eq!(seen.len(), 5, "no task twice");

    // Without history, the same tasks fit one page.
    let result = server.rpc_ok("ListTasks", json!({"pageSize": 100, "historyLength": 0})).await;
    assert_eq!(result["tasks"].as_array().unwrap().len(), 5);
}

#[tokio::test]
async fn ended_tasks_beyond_the_retention_budget_are_forgotten_oldest_first() {
    let retention = RetentionPolicy { max_terminal_tasks: None, max_terminal_bytes: Some(1024 * KIB) };
    let server = TestServer::start(conformance().backend(MemoryStore::with_retention(retention).backend())).await;
    let ids = completed_tasks(&server, 8, 200 * KIB).await;
    assert_eq!(server.rpc_error_code("GetTask", json!({"id": ids[0]})).await, -32001);
    let last = server.rpc_ok("GetTask", json!({"id": ids[7], "historyLength": 0})).await;
    assert_eq!(last["status"]["state"], "TASK_STATE_COMPLETED");
}

#[tokio::test]
async fn a_push_config_larger_than_its_limit_is_refused() {
    let limits = Limits { max_push_config_bytes: 4 * KIB, ..Limits::default() };
    let server = TestServer::start(with_limits(limits)).await;
    let task = server.rpc_ok("SendMessage", json!({"message": user_message("m1", "tck-complete-task")})).await;
    let task_id = task["task"]["id"].clone();
    let config = |url: String, token: String| json!({"taskId": task_id, "url": url, "token": token});
    let long_url = format!("https://example.com/{}", "a".repeat(8 * KIB));
    let long_token = "t".repeat(8 * KIB);
    for refused in [config(long_url, "t".into()), config("https://example.com/hook".into(), long_token)] {
        let envelope = server.rpc("CreateTaskPushNotificationConfig", refused).await;
        assert_eq!(envelope["error"]["code"], -32602, "{envelope}");
        let message = envelope["error"]["message"].as_str().unwrap();
        assert!(message.contains("at most 4096 bytes"), "{message}");
    }
    // The same limit holds for a config given with a send.
    let inline = json!({"message": user_message("m2", "tck-complete-task"),
        "configuration": {"taskPushNotificationConfig": {"url": "https://example.com/hook", "token": "t".repeat(8 * KIB)}}});
    assert_eq!(server.rpc_error_code("SendMessage", inline).await, -32602);

    let fits = config("https://example.com/hook".into(), "t".repeat(KIB));
    assert_eq!(server.rpc_ok("CreateTaskPushNotificationConfig", fits).await["url"], "https://example.com/hook");
}

#[tokio::test]
async fn a_legacy_client_may_name_its_task_within_bounds() {
    let server = TestServer::start(with_limits(Limits { max_client_task_id_bytes: 64, ..Limits::default() })).await;
    let send = |id: String| {
        let message = json!({"role": "user", "parts": [{"type": "text", "text": "hi"}]});
        server.rpc_with_headers("tasks/send", json!({"id": id, "message": message}), &[])
    };
    let named = send("../a/b c".into()).await;
    assert_eq!(named["result"]["id"], "../a/b c", "an id is an opaque key: {named}");

    for (id, why) in
        [("x".repeat(65), "64 bytes"), ("a\u{0}b".into(), "control characters"), ("a\nb".into(), "control")]
    {
        let refused = send(id).await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert!(refused["error"]["message"].as_str().unwrap().contains(why), "{refused}");
    }
    let at_limit = send("y".repeat(64)).await;
    assert!(at_limit.get("result").is_some(), "{at_limit}");
}

/// The probe's tenant names of a megabyte, which no byte budget counted: a tenant name is at
/// most 128 bytes of letters, digits and `-._~`, on every binding, and never dots alone.
#[tokio::test]
async fn tenant_names_are_bounded_on_every_binding() {
    let server = TestServer::start(conformance()).await;
    let huge = "t".repeat(1024 * 1024);
    for tenant in [huge.as_str(), &"t".repeat(129), "..", "a/b", "ten ant"] {
        let params = json!({"message": user_message("m1", "tck-cancel"), "tenant": tenant});
        let refused = server.rpc("SendMessage", params).await;
        assert_eq!(refused["error"]["code"], -32602, "{}: {refused}", &tenant[..tenant.len().min(10)]);
        let listed = server.rpc("ListTasks", json!({"tenant": tenant})).await;
        assert_eq!(listed["error"]["code"], -32602, "ListTasks: {listed}");
    }
    let (status, body) = server.rest(Method::GET, &format!("/{}/tasks", "t".repeat(129)), None).await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = server.rest(Method::GET, "/.../tasks", None).await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = server
        .rest(Method::POST, "/ok/message:send", Some(json!({"message": user_message("m2", "tck-complete-task")})))
        .await;
    assert_eq!(status, 200, "a plain tenant is served: {body}");
    let sent =
        server.rpc_ok("SendMessage", json!({"message": user_message("m3", "hi"), "tenant": "t".repeat(128)})).await;
    assert_eq!(sent["task"]["status"]["state"], "TASK_STATE_COMPLETED");
}
