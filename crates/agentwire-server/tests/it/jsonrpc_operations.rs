//! Every v1.0 operation over JSON-RPC, against the conformance agent on a loopback port.

use agentwire_server::App;
use agentwire_test::{conformance, user_message, TestServer};
use serde_json::{json, Value};

async fn completed_task(server: &TestServer) -> Value {
    let result = server.rpc_ok("SendMessage", json!({"message": user_message("tck-complete-task-1", "hi")})).await;
    assert_eq!(result["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{result}");
    result["task"].clone()
}

async fn input_required_task(server: &TestServer) -> Value {
    let result = server.rpc_ok("SendMessage", json!({"message": user_message("tck-input-required-1", "hi")})).await;
    assert_eq!(result["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{result}");
    result["task"].clone()
}

#[tokio::test]
async fn send_message_blocks_until_the_task_completes() {
    let server = TestServer::start(conformance()).await;
    let task = completed_task(&server).await;
    assert!(!task["id"].as_str().unwrap().is_empty());
    assert!(!task["contextId"].as_str().unwrap().is_empty());
    assert_eq!(task["status"]["message"]["parts"][0]["text"], "Hello from TCK");
    assert!(task["status"]["timestamp"].as_str().unwrap().ends_with('Z'));
}

#[tokio::test]
async fn send_message_can_return_immediately() {
    let server = TestServer::start(conformance()).await;
    let params = json!({
        "message": user_message("m", "tck-long-running please"),
        "configuration": {"returnImmediately": true}
    });
    let task = server.rpc_ok("SendMessage", params).await["task"].clone();
    assert!(matches!(task["status"]["state"].as_str(), Some("TASK_STATE_SUBMITTED" | "TASK_STATE_WORKING")), "{task}");
    let later = server.rpc_ok("GetTask", json!({"id": task["id"]})).await;
    assert_eq!(later["id"], task["id"]);
}

#[tokio::test]
async fn message_response_has_no_task() {
    let server = TestServer::start(conformance()).await;
    let result = server.rpc_ok("SendMessage", json!({"message": user_message("tck-message-response-1", "x")})).await;
    assert_eq!(result["message"]["parts"][0]["text"], "Direct message response");
    assert_eq!(result["message"]["role"], "ROLE_AGENT");
    assert!(result.get("task").is_none());
}

#[tokio::test]
async fn artifacts_of_each_part_kind() {
    let server = TestServer::start(conformance()).await;
    let send = |id: &'static str| server.rpc_ok("SendMessage", json!({"message": user_message(id, "x")}));
    let text = send("tck-artifact-text-1").await;
    assert_eq!(text["task"]["artifacts"][0]["parts"][0]["text"], "Generated text content");
    let file = send("tck-artifact-file-1").await;
    let part = &file["task"]["artifacts"][0]["parts"][0];
    assert_eq!((part["filename"].as_str(), part["mediaType"].as_str()), (Some("output.txt"), Some("text/plain")));
    assert!(part["raw"].as_str().is_some_and(|r| !r.is_empty()));
    let url = send("tck-artifact-file-url-1").await;
    assert_eq!(url["task"]["artifacts"][0]["parts"][0]["url"], "https://example.com/output.txt");
    let data = send("tck-artifact-data-1").await;
    assert_eq!(data["task"]["artifacts"][0]["parts"][0]["data"], json!({"key": "value", "count": 42}));
}

#[tokio::test]
async fn multi_turn_keeps_context_and_history() {
    let server = TestServer::start(conformance()).await;
    let task = input_required_task(&server).await;
    let follow_up = json!({"messageId": "tck-complete-task-2", "role": "ROLE_USER", "parts": [{"text": "done"}], "taskId": task["id"]});
    let done = server.rpc_ok("SendMessage", json!({"message": follow_up})).await["task"].clone();
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(done["contextId"], task["contextId"], "contextId is inferred from the task");
    let history = server.rpc_ok("GetTask", json!({"id": task["id"], "historyLength": 10})).await["history"].clone();
    let user_turns = history.as_array().unwrap().iter().filter(|m| m["role"] == "ROLE_USER").count();
    assert_eq!(user_turns, 2, "{history}");
}

#[tokio::test]
async fn get_task_honours_history_length_in_both_spellings() {
    let server = TestServer::start(conformance()).await;
    let task = completed_task(&server).await;
    let all = server.rpc_ok("GetTask", json!({"id": task["id"]})).await;
    assert_eq!(all["history"].as_array().unwrap().len(), 2, "user message and status message");
    let one = server.rpc_ok("GetTask", json!({"id": task["id"], "history_length": 1})).await;
    assert_eq!(one["history"].as_array().unwrap().len(), 1);
    assert_eq!(one["history"][0]["role"], "ROLE_AGENT", "the most recent message is kept");
    let none = server.rpc_ok("GetTask", json!({"id": task["id"], "historyLength": 0})).await;
    assert!(none.get("history").is_none());
}

#[tokio::test]
async fn list_tasks_pages_newest_first_and_filters() {
    let server = TestServer::start(conformance()).await;
    let context = "ctx-list";
    let mut ids = Vec::new();
    for i in 0..5 {
        let mut message = user_message(&format!("tck-artifact-text-{i}"), "x");
        message["contextId"] = json!(context);
        ids.push(server.rpc_ok("SendMessage", json!({"message": message})).await["task"]["id"].clone());
    }
    completed_task(&server).await; // another context
    let mut seen = Vec::new();
    let mut token = String::new();
    loop {
        let page = server
            .rpc_ok(
                "ListTasks",
                json!({"contextId": context, "pageSize": 2, "pageToken": token, "includeArtifacts": true}),
            )
            .await;
        assert_eq!(page["totalSize"], 5);
        for task in page["tasks"].as_array().unwrap() {
            assert!(task.get("artifacts").is_some(), "includeArtifacts=true keeps artifacts");
            seen.push(task["id"].clone());
        }
        token = page["nextPageToken"].as_str().unwrap().to_owned();
        if token.is_empty() {
            break;
        }
    }
    ids.reverse();
    assert_eq!(seen, ids, "newest first, every task once");
    let page = server.rpc_ok("ListTasks", json!({"context_id": context, "status": "TASK_STATE_COMPLETED"})).await;
    assert_eq!(page["tasks"].as_array().unwrap().len(), 5);
    assert!(page["tasks"][0].get("artifacts").is_none(), "artifacts are omitted by default");
    assert_eq!(page["nextPageToken"], "");
}

#[tokio::test]
async fn cancel_stops_a_running_task() {
    let server = TestServer::start(conformance()).await;
    let params = json!({"message": user_message("m", "tck-cancel"), "configuration": {"returnImmediately": true}});
    let task = server.rpc_ok("SendMessage", params).await["task"].clone();
    let canceled = server.rpc_ok("CancelTask", json!({"id": task["id"]})).await;
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
    let again = server.rpc_error_code("CancelTask", json!({"id": task["id"]})).await;
    assert_eq!(again, -32002);
}

#[tokio::test]
async fn cancel_of_an_interrupted_task() {
    let server = TestServer::start(conformance()).await;
    let task = input_required_task(&server).await;
    let canceled = server.rpc_ok("CancelTask", json!({"id": task["id"]})).await;
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
}

#[tokio::test]
async fn streaming_message_sends_task_then_updates_then_closes() {
    let server = TestServer::start(conformance()).await;
    let events =
        server.rpc_stream("SendStreamingMessage", json!({"message": user_message("tck-stream-001-x", "s")})).await;
    let results: Vec<&Value> = events.iter().map(|e| &e["result"]).collect();
    assert!(events.iter().all(|e| e["jsonrpc"] == "2.0" && e["id"] == 7), "{events:?}");
    assert_eq!(results[0]["task"]["status"]["state"], "TASK_STATE_SUBMITTED");
    assert_eq!(results[1]["statusUpdate"]["status"]["state"], "TASK_STATE_WORKING");
    assert_eq!(results[2]["artifactUpdate"]["artifact"]["parts"][0]["text"], "Stream hello from TCK");
    assert_eq!(results.last().unwrap()["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(results.iter().all(|r| r.get("statusUpdate").is_none_or(|s| s.get("final").is_none())));
}

#[tokio::test]
async fn chunked_artifacts_stream_in_order() {
    let server = TestServer::start(conformance()).await;
    let events = server
        .rpc_stream("SendStreamingMessage", json!({"message": user_message("tck-stream-artifact-chunked", "s")}))
        .await;
    let chunks: Vec<&Value> = events.iter().filter_map(|e| e["result"].get("artifactUpdate")).collect();
    assert_eq!(chunks.len(), 2);
    assert_eq!(chunks[1]["append"], true);
    assert_eq!(chunks[1]["lastChunk"], true);
    let task_id = events[0]["result"]["task"]["id"].clone();
    let task = server.rpc_ok("GetTask", json!({"id": task_id})).await;
    let texts: Vec<&str> =
        task["artifacts"][0]["parts"].as_array().unwrap().iter().filter_map(|p| p["text"].as_str()).collect();
    assert_eq!(texts, ["chunk-1 ", "chunk-2"]);
}

#[tokio::test]
async fn subscription_starts_with_the_task_and_follows_a_later_turn() {
    let server = TestServer::start(conformance()).await;
    let task = input_required_task(&server).await;
    let mut stream = server.open_rpc_stream("SubscribeToTask", json!({"id": task["id"]})).await;
    let snapshot = stream.next_event().await.expect("the task first");
    assert_eq!(snapshot.data["result"]["task"]["id"], task["id"]);
    assert_eq!(snapshot.data["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let follow_up = json!({"messageId": "tck-complete-task-9", "role": "ROLE_USER", "parts": [{"text": "go"}], "taskId": task["id"]});
    server.rpc_ok("SendMessage", json!({"message": follow_up})).await;
    let mut last = None;
    while let Some(event) = stream.next_event().await {
        last = Some(event.data);
    }
    let last = last.expect("events after the snapshot");
    assert_eq!(last["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED");
}

/// A turn that returns immediately answers with the task holding its message, whatever the agent
/// does next.
#[tokio::test]
async fn a_turn_that_returns_immediately_gets_the_task_with_its_message() {
    let server = TestServer::start(conformance()).await;
    let task = input_required_task(&server).await;
    let follow_up = json!({"messageId": "tck-complete-task-9", "role": "ROLE_USER", "parts": [{"text": "go"}], "taskId": task["id"]});
    let params = json!({"message": follow_up, "configuration": {"returnImmediately": true}});
    let answer = server.rpc_ok("SendMessage", params).await;
    let history = answer["task"]["history"].as_array().expect("a task with its history");
    assert_eq!(history.last().map(|m| &m["messageId"]), Some(&json!("tck-complete-task-9")), "{answer}");
    let stored = server.rpc_ok("GetTask", json!({"id": task["id"]})).await;
    let history = stored["history"].as_array().expect("a task with its history");
    assert!(history.iter().any(|m| m["messageId"] == "tck-complete-task-9"), "{stored}");
}

#[tokio::test]
async fn list_tasks_filters_by_status_time() {
    let server = TestServer::start(conformance()).await;
    let mut stamps = Vec::new();
    for i in 0..3 {
        let task = server
            .rpc_ok("SendMessage", json!({"message": user_message(&format!("tck-complete-task-{i}"), "x")}))
            .await;
        let stamp = task["task"]["status"]["timestamp"].as_str().unwrap().to_owned();
        stamps.push((stamp, task["task"]["id"].clone()));
    }
    let newest = stamps.iter().map(|(stamp, _)| stamp.clone()).max().unwrap();
    let page = server.rpc_ok("ListTasks", json!({"statusTimestampAfter": newest})).await;
    let mut listed: Vec<Value> = page["tasks"].as_array().unwrap().iter().map(|t| t["id"].clone()).collect();
    // Timestamps are RFC 3339 in UTC with milliseconds, so they sort as text.
    let mut expected: Vec<Value> =
        stamps.iter().filter(|(stamp, _)| *stamp >= newest).map(|(_, id)| id.clone()).collect();
    listed.sort_by_key(|id| id.to_string());
    expected.sort_by_key(|id| id.to_string());
    assert_eq!(listed, expected, "tasks whose status changed at or after {newest}");
    let future = server.rpc_ok("ListTasks", json!({"statusTimestampAfter": "2999-01-01T00:00:00.000Z"})).await;
    assert_eq!(future["totalSize"], 0);
    let past = server.rpc_ok("ListTasks", json!({"status_timestamp_after": "2000-01-01T00:00:00Z"})).await;
    assert_eq!(past["totalSize"], 3);
}

#[tokio::test]
async fn push_config_crud() {
    let server = TestServer::start(conformance()).await;
    let task = completed_task(&server).await;
    let config = json!({"taskId": task["id"], "id": "cfg-1", "url": "https://example.com/hook", "token": "tok"});
    let created = server.rpc_ok("CreateTaskPushNotificationConfig", config).await;
    assert_eq!(created["id"], "cfg-1");
    let got = server.rpc_ok("GetTaskPushNotificationConfig", json!({"task_id": task["id"], "id": "cfg-1"})).await;
    assert_eq!(got["url"], "https://example.com/hook");
    let listed = server.rpc_ok("ListTaskPushNotificationConfigs", json!({"taskId": task["id"]})).await;
    assert_eq!(listed["configs"].as_array().unwrap().len(), 1);
    let key = json!({"taskId": task["id"], "id": "cfg-1"});
    server.rpc_ok("DeleteTaskPushNotificationConfig", key.clone()).await;
    server.rpc_ok("DeleteTaskPushNotificationConfig", key.clone()).await; // idempotent
    assert_eq!(server.rpc_error_code("GetTaskPushNotificationConfig", key).await, -32001);
}

#[tokio::test]
async fn the_extended_card_is_for_authenticated_callers() {
    let open = TestServer::start(conformance()).await;
    let (_, public) = open.rest(reqwest::Method::GET, "/.well-known/agent-card.json", None).await;
    assert_eq!(public["capabilities"]["extendedAgentCard"], false, "not advertised without authentication");
    // v1.0, "Extended Agent Card": a card that does not offer it makes the call
    // UnsupportedOperation, in every generation and binding.
    let refused = open.rpc("GetExtendedAgentCard", json!({})).await;
    assert_eq!(refused["error"]["code"], -32004, "UnsupportedOperation: {refused}");
    let v03 = open.rpc_with_headers("agent/getAuthenticatedExtendedCard", json!({}), &[]).await;
    assert_eq!(v03["error"]["code"], -32004, "v0.3's UnsupportedOperation: {v03}");
    let (status, body) = open.rest(reqwest::Method::GET, "/extendedAgentCard", None).await;
    assert_eq!(body["error"]["details"][0]["reason"], "UNSUPPORTED_OPERATION", "HTTP {status}: {body}");

    let auth = agentwire_server::auth::StaticAuth::default().with_spec("bearer:secret").unwrap();
    let guarded = TestServer::start_app(conformance(), App::new().authenticator(auth)).await;
    let (_, public) = guarded.rest(reqwest::Method::GET, "/.well-known/agent-card.json", None).await;
    assert_eq!(public["capabilities"]["extendedAgentCard"], true);
    assert!(!public["skills"].as_array().unwrap().iter().any(|s| s["id"] == "extended"));
    let bearer = [("A2A-Version", "1.0"), ("Authorization", "Bearer secret")];
    let card = guarded.rpc_with_headers("GetExtendedAgentCard", json!({}), &bearer).await;
    assert!(card["result"]["skills"].as_array().unwrap().iter().any(|s| s["id"] == "extended"), "{card}");
}

#[tokio::test]
async fn data_keeps_the_member_order_its_author_wrote() {
    let server = TestServer::start(conformance()).await;
    let message = json!({"messageId": "tck-complete-task", "role": "ROLE_USER", "parts": [{"data": {"zeta": 1, "alpha": {"y": 2, "b": 3}}}]});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}});
    let response = server.http.post(format!("{}/", server.base)).json(&body).send().await.unwrap();
    let text = response.text().await.unwrap();
    assert!(text.contains(r#"{"data":{"zeta":1,"alpha":{"y":2,"b":3}}}"#), "{text}");
}

#[tokio::test]
async fn a_status_filter_the_client_could_not_name_means_no_filter() {
    let server = TestServer::start(conformance()).await;
    server.rpc_ok("SendMessage", json!({"message": user_message("m1", "tck-complete-task")})).await;
    // What the official JavaScript SDK sends when no status is given.
    let listed = server.rpc_ok("ListTasks", json!({"status": "UNRECOGNIZED"})).await;
    assert_eq!(listed["totalSize"], 1, "{listed}");
    let (status, listed) = server.rest(reqwest::Method::GET, "/tasks?status=UNRECOGNIZED", None).await;
    assert_eq!((status, &listed["totalSize"]), (200, &json!(1)), "{listed}");
    // A state that does not exist is still an error.
    assert_eq!(server.rpc_error_code("ListTasks", json!({"status": "INVALID_STATUS"})).await, -32602);
}
