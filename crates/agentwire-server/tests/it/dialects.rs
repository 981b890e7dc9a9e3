//! Every client generation on one server: v0.3 (`message/send`, `kind`-tagged shapes, `/v1/…`
//! REST in ProtoJSON of `a2a.v1`) and the legacy `tasks/send` family (seed 004, with seed 002's
//! shapes), beside v1.0, with the rules that differ between them.

use agentwire_test::{conformance, read_sse, TestServer};
use reqwest::Method;
use serde_json::{json, Value};

/// A JSON-RPC call with no version header, as older clients make it.
async fn call(server: &TestServer, method: &str, params: Value) -> Value {
    server.rpc_with_headers(method, params, &[]).await
}

/// A JSON-RPC streaming call with no version header, read to its end.
async fn stream(server: &TestServer, method: &str, params: Value) -> Vec<Value> {
    let body = json!({"jsonrpc": "2.0", "id": "s", "method": method, "params": params});
    let response = server.http.post(format!("{}/", server.base)).json(&body).send().await.unwrap();
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    read_sse(response, usize::MAX).await
}

fn v03_message(message_id: &str, text: &str) -> Value {
    json!({"kind": "message", "messageId": message_id, "role": "user", "parts": [{"kind": "text", "text": text}]})
}

fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    keys
}

/// Seed 004's request example, verbatim, gets the response shape seed 004 shows.
#[tokio::test]
async fn the_legacy_request_example_gets_the_legacy_response_shape() {
    let server = TestServer::start(conformance()).await;
    let request = r#"{
      "jsonrpc": "2.0",
      "id": "abc-123",
      "method": "tasks/send",
      "params": {
        "message": {
          "messageId": "msg-1",
          "role": "user",
          "parts": [{ "text": "hello", "kind": "text" }]
        }
      }
    }"#;
    let response = server.http.post(format!("{}/", server.base)).header("content-type", "application/json");
    let response: Value = response.body(request).send().await.unwrap().json().await.unwrap();
    assert_eq!((&response["jsonrpc"], &response["id"]), (&json!("2.0"), &json!("abc-123")));
    let task = &response["result"];
    assert_eq!(task["status"]["state"], "completed", "{response}");
    assert!(task["status"]["timestamp"].as_str().unwrap().ends_with('Z'));
    for member in ["id", "contextId"] {
        assert!(task[member].as_str().is_some_and(|v| !v.is_empty()), "{member}: {response}");
    }
    assert!(task.get("kind").is_none(), "no v0.3 discriminator: {response}");
}

/// Seed 004's streaming example: update events with `type` and `final`, the last one final.
#[tokio::test]
async fn the_legacy_stream_sends_typed_update_events_and_ends_with_a_final_one() {
    let server = TestServer::start(conformance()).await;
    let params = json!({"message": {"messageId": "m1", "role": "user", "parts": [{"text": "tck-stream-chunked", "kind": "text"}]}});
    let events = stream(&server, "tasks/sendSubscribe", params).await;
    let types: Vec<&str> = events.iter().map(|e| e["result"]["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "TaskStatusUpdateEvent",
            "TaskStatusUpdateEvent",
            "TaskArtifactUpdateEvent",
            "TaskArtifactUpdateEvent",
            "TaskStatusUpdateEvent"
        ]
    );
    let finals: Vec<bool> = events.iter().map(|e| e["result"]["final"].as_bool().unwrap()).collect();
    assert_eq!(finals, [false, false, false, false, true]);
    let last = &events[4]["result"];
    assert_eq!((last["status"]["state"].as_str(), last["taskId"].as_str()), (Some("completed"), last["id"].as_str()));
    assert_eq!(events[3]["result"]["artifact"]["lastChunk"], true, "v0.1 carries lastChunk in the artifact");
}

/// Seed 002: the client names the task (`id`) and the session; later sends continue it.
#[tokio::test]
async fn a_legacy_client_names_its_task_and_session_and_continues_it() {
    let server = TestServer::start(conformance()).await;
    let send = |text: &str| json!({"id": "task-abc-123", "sessionId": "session-1", "message": {"role": "user", "parts": [{"type": "text", "text": text}]}});
    let first = call(&server, "tasks/send", send("tck-multi-turn book a flight")).await;
    let task = &first["result"];
    assert_eq!((task["id"].as_str(), task["sessionId"].as_str()), (Some("task-abc-123"), Some("session-1")), "{first}");
    assert_eq!(task["status"]["state"], "input-required");
    assert_eq!(task["status"]["message"]["parts"][0]["type"], "text", "v0.1 parts carry `type`");

    let second = call(&server, "tasks/send", send("done, to Paris")).await;
    assert_eq!(second["result"]["status"]["state"], "completed", "{second}");
    assert_eq!(second["result"]["history"].as_array().unwrap().len(), 4);

    // A v1.0 client sees the same task.
    let got = server.rpc_ok("GetTask", json!({"id": "task-abc-123"})).await;
    assert_eq!(got["contextId"], "session-1");
    // The task ended: one more message is refused, as in every generation.
    let again = call(&server, "tasks/send", send("more")).await;
    assert_eq!(again["error"]["code"], -32004, "{again}");
}

/// Seed 002's remaining examples, in its shapes: a question answered at once and read again by
/// `tasks/get` with `{"id"}`, a send with a `pushNotification` acknowledged with the task, an
/// uploaded file (`type: file`, `bytes`), and a text part whose `metadata` hints at the output.
/// `tasks/get`, a name v0.3 shares, answers in v0.3's shapes (COMPATIBILITY.md): the session is
/// the `contextId`, parts carry `kind`.
#[tokio::test]
async fn seed_002_examples_get_their_documented_answers() {
    let server = TestServer::start(conformance()).await;
    let text = |text: &str| json!({"type": "text", "text": text});
    let send =
        |id: &str, parts: Value| json!({"id": id, "sessionId": "s-002", "message": {"role": "user", "parts": parts}});

    let asked = call(&server, "tasks/send", send("task-abc-123", json!([text("tell me a joke")]))).await;
    assert_eq!(asked["result"]["status"]["state"], "completed", "{asked}");
    let got = call(&server, "tasks/get", json!({"id": "task-abc-123"})).await;
    assert_eq!(
        (got["result"]["id"].as_str(), got["result"]["contextId"].as_str()),
        (Some("task-abc-123"), Some("s-002")),
        "{got}"
    );

    let mut report = send("task-report-aaa", json!([text("tck-multi-turn generate the Q1 report")]));
    let hook = json!({"url": "https://client.example.com/webhook/a2a-notifications", "token": "secure-client-token-for-task-aaa",
        "authentication": {"schemes": ["Bearer"]}});
    report["pushNotification"] = hook;
    let acknowledged = call(&server, "tasks/send", report).await;
    assert_eq!(acknowledged["result"]["id"], "task-report-aaa", "{acknowledged}");
    assert_eq!(acknowledged["result"]["status"]["state"], "input-required", "{acknowledged}");
    let config = call(&server, "tasks/pushNotification/get", json!({"id": "task-report-aaa"})).await;
    assert_eq!(config["result"]["pushNotificationConfig"]["token"], "secure-client-token-for-task-aaa", "{config}");

    let image =
        json!({"type": "file", "file": {"name": "input_image.png", "mimeType": "image/png", "bytes": "iVBORw0KGgo="}});
    let uploaded = call(&server, "tasks/send", send("task-image-1", json!([text("analyse this"), image]))).await;
    assert_eq!(uploaded["result"]["status"]["state"], "completed", "{uploaded}");
    let got = call(&server, "tasks/get", json!({"id": "task-image-1"})).await;
    let file = &got["result"]["history"][0]["parts"][1];
    assert_eq!((file["kind"].as_str(), &file["file"]), (Some("file"), &image["file"]), "{got}");

    let schema = json!({"mimeType": "application/json", "schema": {"type": "array"}});
    let hinted = json!([{"type": "text", "text": "list open tickets", "metadata": schema}]);
    let listed = call(&server, "tasks/send", send("task-tickets-1", hinted)).await;
    assert_eq!(listed["result"]["status"]["state"], "completed", "{listed}");
    let got = call(&server, "tasks/get", json!({"id": "task-tickets-1"})).await;
    assert_eq!(got["result"]["history"][0]["parts"][0]["metadata"], schema, "{got}");
}

/// The legacy family answers every send with a task: an agent's direct reply completes one.
#[tokio::test]
async fn a_legacy_send_answered_by_a_message_gets_a_completed_task() {
    let server = TestServer::start(conformance()).await;
    let params = json!({"message": {"messageId": "m1", "role": "user", "parts": [{"text": "tck-message-response"}]}});
    let task = call(&server, "tasks/send", params).await["result"].clone();
    assert_eq!(task["status"]["state"], "completed", "{task}");
    assert_eq!(task["status"]["message"]["parts"][0]["text"], "Direct message response");
    let roles: Vec<&str> = task["history"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "agent"]);
    // The same request in v0.3 gets the message itself.
    let params = json!({"message": v03_message("m2", "tck-message-response"), "configuration": {"blocking": true}});
    let reply = call(&server, "message/send", params).await["result"].clone();
    assert_eq!((reply["kind"].as_str(), reply["role"].as_str()), (Some("message"), Some("agent")), "{reply}");
}

/// v0.3 waits for the result unless told not to (`blocking: false`), as the official v0.3
/// servers do; v1.0 waits unless `returnImmediately`.
#[tokio::test]
async fn v03_sends_wait_unless_told_not_to() {
    let server = TestServer::start(conformance()).await;
    let unasked = call(&server, "message/send", json!({"message": v03_message("m1", "tck-long-running")})).await;
    assert_eq!(unasked["result"]["kind"], "task");
    assert_eq!(unasked["result"]["status"]["state"], "completed", "{unasked}");
    let not_blocking = json!({"message": v03_message("m2", "tck-long-running"), "configuration": {"blocking": false}});
    let running = call(&server, "message/send", not_blocking).await;
    let state = running["result"]["status"]["state"].as_str().unwrap();
    assert!(state == "submitted" || state == "working", "{running}");
    let v1 =
        server.rpc_ok("SendMessage", json!({"message": agentwire_test::user_message("m3", "tck-long-running")})).await;
    assert_eq!(v1["task"]["status"]["state"], "TASK_STATE_COMPLETED");

    // HTTP+JSON, where ProtoJSON writes `blocking: false` as a configuration without it: only a
    // request without a configuration waits by default.
    let message = |id: &str| json!({"messageId": id, "role": "ROLE_USER", "content": [{"text": "tck-long-running"}]});
    let (_, reply) = server.rest(Method::POST, "/v1/message:send", Some(json!({"message": message("m4")}))).await;
    assert_eq!(reply["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{reply}");
    let body = json!({"message": message("m5"), "configuration": {"historyLength": 1}});
    let (_, reply) = server.rest(Method::POST, "/v1/message:send", Some(body)).await;
    let state = reply["task"]["status"]["state"].as_str().unwrap();
    assert!(state == "TASK_STATE_SUBMITTED" || state == "TASK_STATE_WORKING", "{reply}");
}

/// v0.3's stream: `kind` on every event, `final` on the closing status update.
#[tokio::test]
async fn v03_streams_tag_every_event_and_mark_the_final_one() {
    let server = TestServer::start(conformance()).await;
    let events = stream(&server, "message/stream", json!({"message": v03_message("m1", "tck-stream-basic")})).await;
    let kinds: Vec<&str> = events.iter().map(|e| e["result"]["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["task", "status-update", "artifact-update", "status-update"]);
    assert_eq!(events[3]["result"]["final"], true);
    assert_eq!(events[1]["result"]["final"], false);
    assert_eq!(events[2]["result"]["artifact"]["parts"][0], json!({"kind": "text", "text": "Stream hello from TCK"}));
}

/// Subscribing to an ended task: v0.3 and legacy get the task, then the stream closes; v1.0 is
/// refused.
#[tokio::test]
async fn subscribing_to_an_ended_task_depends_on_the_generation() {
    let server = TestServer::start(conformance()).await;
    let params = json!({"message": v03_message("m1", "tck-complete-task"), "configuration": {"blocking": true}});
    let task_id = call(&server, "message/send", params).await["result"]["id"].as_str().unwrap().to_owned();

    let events = stream(&server, "tasks/resubscribe", json!({"id": task_id})).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(
        (events[0]["result"]["kind"].as_str(), events[0]["result"]["status"]["state"].as_str()),
        (Some("task"), Some("completed"))
    );

    let refused = server.rpc("SubscribeToTask", json!({"id": task_id})).await;
    assert_eq!(refused["error"]["code"], -32004, "{refused}");

    let url = format!("{}/v1/tasks/{task_id}:subscribe", server.base);
    let events = read_sse(server.http.get(url).send().await.unwrap(), usize::MAX).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["task"]["status"]["state"], "TASK_STATE_COMPLETED");
}

/// Push configs in v0.3's and the legacy family's shapes: set, get (with or without the config's
/// id), list (the list itself), delete (`null`).
#[tokio::test]
async fn push_configs_in_the_older_shapes() {
    let server = TestServer::start(conformance()).await;
    let params = json!({"message": v03_message("m1", "tck-input-required")});
    let task_id = call(&server, "message/send", params).await["result"]["id"].as_str().unwrap().to_owned();
    let config = json!({"url": "https://client.example/hook", "token": "tok", "authentication": {"schemes": ["Bearer"], "credentials": "c"}});

    let set =
        call(&server, "tasks/pushNotificationConfig/set", json!({"taskId": task_id, "pushNotificationConfig": config}))
            .await;
    let created = &set["result"];
    assert_eq!(keys(created), ["pushNotificationConfig", "taskId"], "{set}");
    assert_eq!(created["pushNotificationConfig"]["authentication"]["schemes"], json!(["Bearer"]));
    let config_id = created["pushNotificationConfig"]["id"].as_str().unwrap().to_owned();

    let by_id = json!({"id": task_id, "pushNotificationConfigId": config_id});
    assert_eq!(&call(&server, "tasks/pushNotificationConfig/get", by_id.clone()).await["result"], created);
    assert_eq!(&call(&server, "tasks/pushNotificationConfig/get", json!({"id": task_id})).await["result"], created);
    let list = call(&server, "tasks/pushNotificationConfig/list", json!({"id": task_id})).await;
    assert_eq!(list["result"], json!([created]));

    let legacy = call(&server, "tasks/pushNotification/get", json!({"id": task_id})).await;
    assert_eq!(
        (legacy["result"]["id"].as_str(), legacy["result"]["taskId"].as_str()),
        (Some(&*task_id), Some(&*task_id))
    );

    let deleted = call(&server, "tasks/pushNotificationConfig/delete", by_id.clone()).await;
    assert_eq!((deleted.get("result"), deleted.get("error")), (Some(&Value::Null), None), "{deleted}");
    let gone = call(&server, "tasks/pushNotificationConfig/get", by_id).await;
    assert_eq!(gone["error"]["code"], -32001);
}

/// Seed 004's clients name the task twice when they set a push config, `id` and `taskId`: the
/// same task is accepted, two different ones are refused as invalid parameters.
#[tokio::test]
async fn push_config_set_takes_the_task_as_id_and_task_id() {
    let server = TestServer::start(conformance()).await;
    let params = json!({"message": v03_message("m1", "tck-input-required")});
    let task_id = call(&server, "message/send", params).await["result"]["id"].as_str().unwrap().to_owned();
    let config = json!({"url": "https://client.example/hook", "token": "tok"});

    for method in ["tasks/pushNotification/set", "tasks/pushNotificationConfig/set"] {
        let both = json!({"id": task_id, "taskId": task_id, "pushNotificationConfig": config});
        let set = call(&server, method, both).await;
        assert!(set.get("error").is_none(), "{method}: {set}");

        let differ = json!({"id": task_id, "taskId": "another-task", "pushNotificationConfig": config});
        let refused = call(&server, method, differ).await;
        assert_eq!(refused["error"]["code"], -32602, "{method}: {refused}");
        let reason = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(reason.contains("`id`") && reason.contains("`taskId`"), "{method}: {reason}");
    }
}

/// The version header: absent means the method's own generation; a supported version that
/// names another generation is served in the method's; anything else is that generation's
/// VersionNotSupported.
#[tokio::test]
async fn version_negotiation_follows_the_method() {
    let server = TestServer::start(conformance()).await;
    let legacy = json!({"message": {"messageId": "m1", "role": "user", "parts": [{"text": "hi"}]}});
    let v03 = json!({"message": v03_message("m2", "tck-complete-task"), "configuration": {"blocking": true}});
    let v1 = json!({"message": agentwire_test::user_message("m3", "hi")});
    let code = |envelope: Value| envelope["error"]["code"].as_i64();

    for version in ["2.0", "0.2", "1"] {
        let header = [("A2A-Version", version)];
        assert_eq!(code(server.rpc_with_headers("tasks/send", legacy.clone(), &header).await), Some(-32008));
        assert_eq!(code(server.rpc_with_headers("message/send", v03.clone(), &header).await), Some(-32009));
        assert_eq!(code(server.rpc_with_headers("SendMessage", v1.clone(), &header).await), Some(-32009));
    }
    for version in ["1.0", "0.3", "1.0.4", ""] {
        let header = [("A2A-Version", version)];
        let old = server.rpc_with_headers("tasks/send", legacy.clone(), &header).await;
        assert_eq!(old["result"]["status"]["state"], "completed", "{version}: {old}");
        let mid = server.rpc_with_headers("message/send", v03.clone(), &header).await;
        assert_eq!(mid["result"]["kind"], "task", "{version}: {mid}");
        let new = server.rpc_with_headers("SendMessage", v1.clone(), &header).await;
        assert_eq!(new["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{version}: {new}");
    }
    let query = format!("{}/?OPVS-Version=9.9", server.base);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": v03});
    let refused: Value = server.http.post(query).json(&body).send().await.unwrap().json().await.unwrap();
    assert_eq!(code(refused), Some(-32009));

    // Streaming methods of generations whose clients read every answer as events answer the
    // refusal as the stream's one event.
    for (method, params, expected) in [("message/stream", &v03, -32009), ("tasks/sendSubscribe", &legacy, -32008)] {
        let body = json!({"jsonrpc": "2.0", "id": "s", "method": method, "params": params});
        let response = server.http.post(format!("{}/", server.base)).header("A2A-Version", "9.9").json(&body);
        let response = response.send().await.unwrap();
        assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"), "{method}");
        let events = read_sse(response, usize::MAX).await;
        assert_eq!(events.len(), 1, "{method}: {events:?}");
        assert_eq!((code(events[0].clone()), &events[0]["id"]), (Some(expected), &json!("s")), "{method}");
    }

    let response = server.http.get(format!("{}/v1/tasks/x", server.base)).header("A2A-Version", "7.1").send().await;
    let response = response.unwrap();
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], -32009, "v0.3 REST errors are JSON-RPC error objects: {body}");
}

/// v0.3's HTTP+JSON binding, as the official v0.3 clients call it.
#[tokio::test]
async fn v03_rest_speaks_protojson_of_a2a_v1() {
    let server = TestServer::start(conformance()).await;
    let message = |id: &str, text: &str| json!({"messageId": id, "role": "ROLE_USER", "content": [{"text": text}]});
    let send = json!({"message": message("m1", "tck-artifact-data"), "configuration": {"blocking": true}});
    let (status, body) = server.rest(Method::POST, "/v1/message:send", Some(send)).await;
    assert_eq!(status, 200, "{body}");
    let task = &body["task"];
    assert_eq!(task["artifacts"][0]["parts"][0], json!({"data": {"data": {"key": "value", "count": 42}}}));
    let id = task["id"].as_str().unwrap();

    let (_, got) = server.rest(Method::GET, &format!("/v1/tasks/{id}?historyLength=1"), None).await;
    assert_eq!(got["history"].as_array().unwrap().len(), 1);
    assert_eq!(got["status"]["state"], "TASK_STATE_COMPLETED");

    let cancel = json!({"message": message("m2", "tck-cancel"), "configuration": {"blocking": false}});
    let (_, running) = server.rest(Method::POST, "/v1/message:send", Some(cancel)).await;
    let running_id = running["task"]["id"].as_str().unwrap();
    let (status, canceled) = server.rest(Method::POST, &format!("/v1/tasks/{running_id}:cancel"), None).await;
    assert_eq!((status, canceled["status"]["state"].as_str()), (200, Some("TASK_STATE_CANCELLED")), "{canceled}");
    let (status, refused) = server.rest(Method::POST, &format!("/v1/tasks/{id}:cancel"), None).await;
    assert_eq!((status, refused["code"].as_i64()), (409, Some(-32002)), "{refused}");

    let config = json!({"pushNotificationConfig": {"id": "p1", "url": "https://client.example/hook", "token": "t"}});
    let path = format!("/v1/tasks/{running_id}/pushNotificationConfigs");
    let (status, created) = server.rest(Method::POST, &path, Some(config)).await;
    assert_eq!(status, 200, "{created}");
    assert_eq!(created["name"], format!("tasks/{running_id}/pushNotificationConfigs/p1"));
    let (_, listed) = server.rest(Method::GET, &path, None).await;
    assert_eq!(listed["configs"], json!([created]));
    let (_, fetched) = server.rest(Method::GET, &format!("{path}/p1"), None).await;
    assert_eq!(fetched, created);
    let (status, _) = server.rest(Method::DELETE, &format!("{path}/p1"), None).await;
    assert_eq!(status, 200);

    let body = json!({"message": message("m3", "tck-stream-basic")});
    let events = server.sse(server.http.post(format!("{}/v1/message:stream", server.base)).json(&body)).await;
    let members: Vec<&str> = events.iter().map(|e| e.as_object().unwrap().keys().next().unwrap().as_str()).collect();
    assert_eq!(members, ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]);
    assert_eq!(events[3]["statusUpdate"]["final"], true);

    let (status, card) = server.rest(Method::GET, "/v1/card", None).await;
    assert_eq!((status, card["protocolVersion"].as_str()), (200, Some("0.3.0")), "{card}");
}

/// A file over v0.3's HTTP+JSON: `fileWithBytes` holds the file's base64 text (so ProtoJSON
/// writes it base64 twice), as the official Python, Go and Java v0.3 SDKs fill it, both ways; a
/// v1.0 client reads the same file.
#[tokio::test]
async fn v03_rest_files_travel_as_the_official_sdks_write_them() {
    let server = TestServer::start(conformance()).await;
    // `hello`, named, as a2a-sdk 0.3's REST client sends it.
    let file = json!({"file": {"fileWithBytes": "YUdWc2JHOD0=", "mimeType": "text/plain", "name": "hello.txt"}});
    let message = json!({"messageId": "tck-complete-task-f1", "role": "ROLE_USER", "content": [file]});
    let blocking = json!({"blocking": true});
    let send = json!({"message": message, "configuration": blocking});
    let (status, sent) = server.rest(Method::POST, "/v1/message:send", Some(send)).await;
    assert_eq!(status, 200, "{sent}");
    let id = sent["task"]["id"].as_str().unwrap();

    let v1 = server.rpc_ok("GetTask", json!({"id": id})).await;
    assert_eq!(
        v1["history"][0]["parts"][0],
        json!({"raw": "aGVsbG8=", "filename": "hello.txt", "mediaType": "text/plain"})
    );
    let (_, v03) = server.rest(Method::GET, &format!("/v1/tasks/{id}"), None).await;
    assert_eq!(v03["history"][0]["content"][0], file);

    let message = json!({"messageId": "tck-artifact-file-f2", "role": "ROLE_USER", "content": [{"text": "a file"}]});
    let send = json!({"message": message, "configuration": blocking});
    let (_, sent) = server.rest(Method::POST, "/v1/message:send", Some(send)).await;
    let part = &sent["task"]["artifacts"][0]["parts"][0]["file"];
    // The base64 text of "Generated file content", written as base64.
    assert_eq!(part["fileWithBytes"], "UjJWdVpYSmhkR1ZrSUdacGJHVWdZMjl1ZEdWdWRBPT0=", "{sent}");
    assert_eq!(part["name"], "output.txt");

    // The JavaScript v0.3 SDK puts the file itself in the bytes field.
    let file = json!({"file": {"fileWithBytes": "aGVsbG8="}});
    let raw = json!({"messageId": "tck-complete-task-f3", "role": "ROLE_USER", "content": [file]});
    let (_, sent) =
        server.rest(Method::POST, "/v1/message:send", Some(json!({"message": raw, "configuration": blocking}))).await;
    let v1 = server.rpc_ok("GetTask", json!({"id": sent["task"]["id"]})).await;
    assert_eq!(v1["history"][0]["parts"][0], json!({"raw": "aGVsbG8="}));
}

/// One server answers a v1.0 client and a v0.3 client at the same time, each in its own shapes.
#[tokio::test]
async fn a_v1_client_and_a_v03_client_are_served_at_once() {
    let server = TestServer::start(conformance()).await;
    let v1 = async {
        let params = json!({"message": agentwire_test::user_message("a", "tck-long-running")});
        server.rpc_ok("SendMessage", params).await
    };
    let v03 = async {
        let params = json!({"message": v03_message("b", "tck-long-running"), "configuration": {"blocking": true}});
        call(&server, "message/send", params).await
    };
    let (v1, v03) = tokio::join!(v1, v03);
    assert_eq!(v1["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        (v03["result"]["kind"].as_str(), v03["result"]["status"]["state"].as_str()),
        (Some("task"), Some("completed"))
    );
}

/// The conformance agent's v0.3 contract (docs/PROTOCOL.md, "The conformance agent"): a message without a scenario starts a task
/// that works, then asks for input with "Hello world!", and stays open for follow-ups and cancel.
#[tokio::test]
async fn a_v03_task_without_a_scenario_works_then_asks_for_input_and_stays_open() {
    let server = TestServer::start(conformance()).await;
    let not_blocking = json!({"blocking": false});
    let params = json!({"message": v03_message("text-message-id-1", "Hello from TCK!"), "configuration": not_blocking});
    let sent = call(&server, "message/send", params).await;
    let state = sent["result"]["status"]["state"].as_str().unwrap().to_owned();
    assert!(state == "submitted" || state == "working", "{sent}");
    let id = sent["result"]["id"].clone();

    let mut follow_up = v03_message("continuation-message-id-1", "Follow-up message for the existing task");
    follow_up["taskId"] = id.clone();
    let continued = call(&server, "message/send", json!({"message": follow_up, "configuration": not_blocking})).await;
    assert_eq!(continued["result"]["id"], id, "{continued}");

    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    let asked = loop {
        let task = call(&server, "tasks/get", json!({"id": id})).await["result"].clone();
        if task["status"]["state"] == "input-required" {
            break task;
        }
        assert!(tokio::time::Instant::now() < deadline, "still {}", task["status"]["state"]);
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(asked["status"]["message"]["parts"][0]["text"], "Hello world!");
    let canceled = call(&server, "tasks/cancel", json!({"id": id})).await;
    assert_eq!(canceled["result"]["status"]["state"], "canceled", "{canceled}");
}

/// An error before a v0.3 stream starts is the stream's one event; v1.0 answers it plainly.
#[tokio::test]
async fn older_generations_get_streaming_errors_as_events() {
    let server = TestServer::start(conformance()).await;
    let events = stream(&server, "tasks/resubscribe", json!({"id": "no-such-task"})).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!((events[0]["id"].as_str(), events[0]["error"]["code"].as_i64()), (Some("s"), Some(-32001)));
    assert!(events[0]["error"]["message"].as_str().unwrap().contains("not found"));
    let v1 = server.rpc("SubscribeToTask", json!({"id": "no-such-task"})).await;
    assert_eq!(v1["error"]["code"], -32001, "{v1}");
}

/// `tasks/list` (which v0.3 shares with the legacy family) and `GET /v1/tasks` list in v0.3's shapes.
#[tokio::test]
async fn tasks_are_listed_in_v03_shapes() {
    let server = TestServer::start(conformance()).await;
    let params = json!({"message": v03_message("m1", "tck-complete-task"), "configuration": {"blocking": true}});
    let id = call(&server, "message/send", params).await["result"]["id"].clone();
    let page = call(&server, "tasks/list", json!({"pageSize": 10})).await["result"].clone();
    assert_eq!((page["tasks"][0]["kind"].as_str(), &page["tasks"][0]["id"]), (Some("task"), &id), "{page}");
    assert_eq!((page["totalSize"].as_i64(), page["nextPageToken"].as_str()), (Some(1), Some("")));
    let (status, listed) = server.rest(Method::GET, "/v1/tasks?pageSize=10", None).await;
    assert_eq!((status, &listed["tasks"][0]["id"]), (200, &id), "{listed}");
    assert_eq!(listed["tasks"][0]["status"]["state"], "TASK_STATE_COMPLETED");
}
