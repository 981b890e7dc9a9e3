//! Every v1.0 operation over HTTP+JSON, unprefixed and under a tenant.

use agentwire_test::{conformance, user_message, TestServer};
use reqwest::Method;
use serde_json::{json, Value};

async fn send(server: &TestServer, prefix: &str, message_id: &str) -> Value {
    let (status, body) = server
        .rest(Method::POST, &format!("{prefix}/message:send"), Some(json!({"message": user_message(message_id, "hi")})))
        .await;
    assert_eq!(status, 200, "{body}");
    body
}

#[tokio::test]
async fn send_get_list_cancel() {
    let server = TestServer::start(conformance()).await;
    let done = send(&server, "", "tck-complete-task-1").await["task"].clone();
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
    let id = done["id"].as_str().unwrap();

    let (status, task) = server.rest(Method::GET, &format!("/tasks/{id}?historyLength=1"), None).await;
    assert_eq!(status, 200);
    assert_eq!(task["history"].as_array().unwrap().len(), 1);

    let (status, page) =
        server.rest(Method::GET, "/tasks?pageSize=10&includeArtifacts=false&status=completed", None).await;
    assert_eq!(status, 200);
    assert_eq!(page["tasks"][0]["id"], id);
    assert_eq!(page["nextPageToken"], "");

    let waiting = send(&server, "", "tck-input-required-1").await["task"].clone();
    let wid = waiting["id"].as_str().unwrap();
    let (status, canceled) = server.rest(Method::POST, &format!("/tasks/{wid}:cancel"), None).await;
    assert_eq!(status, 200, "{canceled}");
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
    let (status, error) = server.rest(Method::POST, &format!("/tasks/{wid}:cancel"), None).await;
    assert_eq!(status, 409);
    assert_eq!(error["error"]["details"][0]["reason"], "TASK_NOT_CANCELABLE");
}

#[tokio::test]
async fn tenants_are_separate() {
    let server = TestServer::start(conformance()).await;
    let task = send(&server, "/acme", "tck-complete-task-1").await["task"].clone();
    let id = task["id"].as_str().unwrap();
    assert_eq!(server.rest(Method::GET, &format!("/acme/tasks/{id}"), None).await.0, 200);
    assert_eq!(server.rest(Method::GET, &format!("/tasks/{id}"), None).await.0, 404);
    assert_eq!(server.rest(Method::GET, &format!("/globex/tasks/{id}"), None).await.0, 404);
    let (_, acme) = server.rest(Method::GET, "/acme/tasks", None).await;
    assert_eq!(acme["totalSize"], 1);
    let (_, root) = server.rest(Method::GET, "/tasks", None).await;
    assert_eq!(root["totalSize"], 0);
}

#[tokio::test]
async fn stream_and_subscribe() {
    let server = TestServer::start(conformance()).await;
    let request = server
        .http
        .post(format!("{}/message:stream", server.base))
        .json(&json!({"message": user_message("tck-stream-003", "s")}));
    let events = server.sse(request).await;
    assert!(events[0].get("task").is_some(), "bare StreamResponse, task first: {events:?}");
    assert_eq!(events.last().unwrap()["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED");

    let waiting = send(&server, "", "tck-input-required-1").await["task"].clone();
    let id = waiting["id"].as_str().unwrap().to_owned();
    for method in [Method::POST, Method::GET] {
        let response = server
            .http
            .request(method, format!("{}/tasks/{id}:subscribe", server.base))
            .header("A2A-Version", "1.0")
            .send()
            .await
            .unwrap();
        let first = agentwire_test::read_sse(response, 1).await;
        assert_eq!(first[0]["task"]["id"], id.as_str());
    }
}

#[tokio::test]
async fn push_config_crud_and_extended_card() {
    let server = TestServer::start(conformance()).await;
    let task = send(&server, "", "tck-complete-task-1").await["task"].clone();
    let id = task["id"].as_str().unwrap();
    let path = format!("/tasks/{id}/pushNotificationConfigs");
    let (status, created) =
        server.rest(Method::POST, &path, Some(json!({"id": "c1", "url": "https://example.com/hook"}))).await;
    assert_eq!(status, 200, "{created}");
    assert_eq!(created["taskId"], id);
    assert_eq!(server.rest(Method::GET, &format!("{path}/c1"), None).await.0, 200);
    let (_, listed) = server.rest(Method::GET, &path, None).await;
    assert_eq!(listed["configs"][0]["id"], "c1");
    assert_eq!(server.rest(Method::DELETE, &format!("{path}/c1"), None).await.0, 200);
    assert_eq!(server.rest(Method::DELETE, &format!("{path}/c1"), None).await.0, 200);
    assert_eq!(server.rest(Method::GET, &format!("{path}/c1"), None).await.0, 404);

    // No extended card where the card does not offer one.
    let (status, card) = server.rest(Method::GET, "/extendedAgentCard", None).await;
    assert_eq!((status, card["error"]["details"][0]["reason"].as_str()), (400, Some("UNSUPPORTED_OPERATION")));
}

#[tokio::test]
async fn responses_echo_the_a2a_media_type() {
    let server = TestServer::start(conformance()).await;
    let response = server
        .http
        .post(format!("{}/message:send", server.base))
        .header("content-type", "application/a2a+json")
        .body(json!({"message": user_message("m", "hi")}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/a2a+json");
}

#[tokio::test]
async fn v1_is_the_v03_dialect_never_a_tenant() {
    let server = TestServer::start(conformance()).await;
    let v03_message = json!({"messageId": "m", "role": "ROLE_USER", "content": [{"text": "tck-complete-task"}]});
    let body = json!({"message": v03_message, "configuration": {"blocking": true}});
    let (status, body) = server.rest(Method::POST, "/v1/message:send", Some(body)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{body}");
    assert_eq!(
        body["task"]["history"][0]["content"],
        json!([{"text": "tck-complete-task"}]),
        "v0.3 names the parts content"
    );
    let (status, body) = server.rest(Method::GET, "/v1/no/such/route", None).await;
    assert_eq!((status, &body["code"]), (404, &json!(-32601)), "a v0.3 error: {body}");
    let (_, tasks) = server.rest(Method::GET, "/tasks", None).await;
    assert_eq!(tasks["totalSize"], 1, "the task is the caller's own, not a tenant's named v1");
}

#[tokio::test]
async fn a_tenant_in_the_request_may_repeat_the_path_but_not_contradict_it() {
    let server = TestServer::start(conformance()).await;
    let send = |tenant: &str| json!({"tenant": tenant, "message": user_message("tck-complete-task", "hi")});
    let (status, _) = server.rest(Method::POST, "/acme/message:send", Some(send("acme"))).await;
    assert_eq!(status, 200);
    let (status, body) = server.rest(Method::POST, "/acme/message:send", Some(send("globex"))).await;
    assert_eq!((status, body["error"]["status"].as_str()), (400, Some("INVALID_ARGUMENT")), "{body}");
    let (status, body) = server.rest(Method::GET, "/acme/tasks?tenant=globex", None).await;
    assert_eq!(status, 400, "{body}");
    let (_, acme) = server.rest(Method::GET, "/acme/tasks?tenant=acme", None).await;
    assert_eq!(acme["totalSize"], 1);
}

#[tokio::test]
async fn unknown_routes_and_methods_get_error_bodies() {
    let server = TestServer::start(conformance()).await;
    let (status, body) = server.rest(Method::GET, "/no/such/route/here", None).await;
    assert_eq!((status, body["error"]["status"].as_str()), (404, Some("NOT_FOUND")), "{body}");
    let (status, body) = server.rest(Method::PUT, "/tasks", None).await;
    assert_eq!(status, 405, "{body}");
    assert_eq!((body["error"]["code"].as_u64(), body["error"]["status"].as_str()), (Some(405), Some("UNIMPLEMENTED")));
    let (status, _) = server.rest(Method::GET, "/tasks/t1:cancel", None).await;
    assert_eq!(status, 404, "cancel is a POST");
    let (status, body) = server.rest(Method::GET, "/tasks/urn:task:7", None).await;
    assert_eq!(status, 404);
    assert_eq!(body["error"]["details"][0]["metadata"]["taskId"], "urn:task:7", "an id may hold ':'");
    let (status, body) = server.rest(Method::GET, "/tasks/t%201", None).await;
    assert_eq!(body["error"]["details"][0]["metadata"]["taskId"], "t 1", "{status} {body}");
}
