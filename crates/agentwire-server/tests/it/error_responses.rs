//! Every error a client can provoke, in each binding's format.

use agentwire_server::agent::{AgentExecutor, EventStream, ExecutionContext};
use agentwire_server::{CardConfig, HttpOptions, RequestHandler, ServeOptions};
use agentwire_test::{conformance, user_message, TestServer};
use reqwest::Method;
use serde_json::{json, Value};

async fn raw_rpc(server: &TestServer, content_type: &str, body: &str) -> (u16, Value) {
    let response = server
        .http
        .post(format!("{}/", server.base))
        .header("content-type", content_type)
        .header("A2A-Version", "1.0")
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

fn error_info_reason(error: &Value) -> &str {
    error["data"][0]["reason"].as_str().unwrap_or("")
}

#[tokio::test]
async fn requests_a_reader_could_take_two_ways_are_refused_with_their_id() {
    let server = TestServer::start(conformance()).await;
    // Which method is meant depends on whether a reader keeps the first member or the last.
    let twice = r#"{"jsonrpc":"2.0","id":7,"method":"SendMessage","method":"GetTask","params":{"id":"x"}}"#;
    let (_, reply) = raw_rpc(&server, "application/json", twice).await;
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    // A number no double holds: valid JSON, invalid params, and the id is still known.
    let huge = r#"{"jsonrpc":"2.0","id":42,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]},"metadata":{"x":1e400}}}"#;
    let (_, reply) = raw_rpc(&server, "application/json", huge).await;
    assert_eq!((reply["id"].as_i64(), reply["error"]["code"].as_i64()), (Some(42), Some(-32602)), "{reply}");
}

#[tokio::test]
async fn envelope_errors() {
    let server = TestServer::start(conformance()).await;
    let (status, bad_json) = raw_rpc(&server, "application/json", "{not json").await;
    assert_eq!((status, bad_json["error"]["code"].as_i64()), (200, Some(-32700)));
    assert_eq!(bad_json["id"], Value::Null);

    let (_, wrong_type) = raw_rpc(&server, "text/plain", "{'jsonrpc': '2.0'}").await;
    assert_eq!(wrong_type["error"]["code"], -32005);
    assert_eq!(error_info_reason(&wrong_type["error"]), "CONTENT_TYPE_NOT_SUPPORTED");

    let (_, batch) = raw_rpc(&server, "application/json", r#"[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]"#).await;
    assert_eq!(batch["error"]["code"], -32600);

    let (_, no_version) = raw_rpc(&server, "application/json", r#"{"jsonrpc":"1.0","id":5,"method":"GetTask"}"#).await;
    assert_eq!((no_version["error"]["code"].as_i64(), no_version["id"].as_i64()), (Some(-32600), Some(5)));

    let unknown = server.rpc("NoSuchMethod", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601);

    let missing = server.rpc("SendMessage", json!({})).await;
    assert_eq!(missing["error"]["code"], -32602);
    assert!(missing["error"]["message"].as_str().unwrap().contains("message"), "names the field: {missing}");

    let no_parts =
        server.rpc("SendMessage", json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}})).await;
    assert_eq!(no_parts["error"]["code"], -32602);
    assert!(no_parts["error"]["message"].as_str().unwrap().contains("parts"));
}

#[tokio::test]
async fn a2a_errors_carry_error_info() {
    let server = TestServer::start(conformance()).await;
    let not_found = server.rpc("GetTask", json!({"id": "nope"})).await["error"].clone();
    assert_eq!(not_found["code"], -32001);
    assert_eq!(not_found["data"][0]["@type"], "type.googleapis.com/google.rpc.ErrorInfo");
    assert_eq!(not_found["data"][0]["domain"], "a2a-protocol.org");
    assert_eq!(not_found["data"][0]["metadata"]["taskId"], "nope");
    let mut keys: Vec<&String> = not_found.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["code", "data", "message"]);

    let done = server.rpc_ok("SendMessage", json!({"message": user_message("tck-complete-task", "x")})).await;
    let id = done["task"]["id"].clone();
    let mut again = user_message("m2", "x");
    again["taskId"] = id.clone();
    assert_eq!(server.rpc_error_code("SendMessage", json!({"message": again})).await, -32004);
    let waiting = server.rpc_ok("SendMessage", json!({"message": user_message("tck-input-required", "x")})).await;
    let mut mismatch = user_message("m3", "x");
    mismatch["taskId"] = waiting["task"]["id"].clone();
    mismatch["contextId"] = json!("other");
    assert_eq!(server.rpc_error_code("SendMessage", json!({"message": mismatch})).await, -32602);
    let mut unknown_task = user_message("m4", "x");
    unknown_task["taskId"] = json!("missing");
    assert_eq!(server.rpc_error_code("SendMessage", json!({"message": unknown_task})).await, -32001);
    assert_eq!(server.rpc_error_code("CancelTask", json!({"id": id})).await, -32002);
    assert_eq!(server.rpc_error_code("SubscribeToTask", json!({"id": id})).await, -32004);
    assert_eq!(server.rpc_error_code("GetTask", json!({"id": id, "historyLength": -1})).await, -32602);
    assert_eq!(server.rpc_error_code("ListTasks", json!({"pageSize": 101})).await, -32602);
    assert_eq!(server.rpc_error_code("ListTasks", json!({"pageToken": "garbage!"})).await, -32602);
}

#[tokio::test]
async fn version_negotiation() {
    let server = TestServer::start(conformance()).await;
    for (version, code) in [("99.0", -32009), ("1.0.3", -32001), ("0.3", -32001), ("", -32001)] {
        let response = server.rpc_with_headers("GetTask", json!({"id": "x"}), &[("A2A-Version", version)]).await;
        assert_eq!(response["error"]["code"], code, "version {version:?}: {response}");
    }
    let rest = server.http.get(format!("{}/tasks/x", server.base)).header("OPVS-Version", "2.1").send().await.unwrap();
    assert_eq!(rest.status(), 400);
    let body: Value = rest.json().await.unwrap();
    assert_eq!(body["error"]["details"][0]["reason"], "VERSION_NOT_SUPPORTED");
    let query = server.http.get(format!("{}/tasks/x?A2A-Version=7.0", server.base)).send().await.unwrap();
    assert_eq!(query.status(), 400);
}

#[tokio::test]
async fn rest_error_statuses() {
    let server = TestServer::start(conformance()).await;
    let (status, body) = server.rest(Method::GET, "/tasks/nope", None).await;
    assert_eq!(status, 404);
    assert_eq!(body["error"]["code"], 404);
    assert_eq!(body["error"]["status"], "NOT_FOUND");
    assert_eq!(body["error"]["details"][0]["reason"], "TASK_NOT_FOUND");
    assert_eq!(server.rest(Method::POST, "/message:send", Some(json!({}))).await.0, 400);
    assert_eq!(server.rest(Method::GET, "/no/such/route/here", None).await.0, 404);
    let text = server
        .http
        .post(format!("{}/message:send", server.base))
        .header("content-type", "text/plain")
        .body(json!({"message": user_message("m", "x")}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(text.status(), 415);
    let bad_json = server
        .http
        .post(format!("{}/message:send", server.base))
        .header("content-type", "application/json")
        .body("{")
        .send()
        .await
        .unwrap();
    assert_eq!(bad_json.status(), 400);
}

#[tokio::test]
async fn oversized_bodies_are_refused() {
    let http = HttpOptions { max_body_bytes: 1024, ..HttpOptions::default() };
    let server = TestServer::start_with(conformance(), http, ServeOptions::default()).await;
    let big = json!({"message": user_message("m", &"x".repeat(4096))});
    let (status, body) = server.rest(Method::POST, "/message:send", Some(big.clone())).await;
    assert_eq!((status, body["error"]["status"].as_str()), (413, Some("RESOURCE_EXHAUSTED")));
    let (status, body) = raw_rpc(
        &server,
        "application/json",
        &json!({"jsonrpc":"2.0","id":1,"method":"SendMessage","params":big}).to_string(),
    )
    .await;
    assert_eq!((status, body["error"]["code"].as_i64()), (413, Some(-32600)));
}

#[tokio::test]
async fn reduced_agent_refuses_optional_features() {
    let config = CardConfig {
        card: agentwire_server::agent::ConformanceAgent::card(),
        streaming: false,
        push_notifications: false,
        ..CardConfig::default()
    };
    let server =
        TestServer::start(RequestHandler::builder(agentwire_server::agent::ConformanceAgent::new()).card(config)).await;
    let stream = server.rpc("SendStreamingMessage", json!({"message": user_message("m", "x")})).await;
    assert_eq!(stream["error"]["code"], -32004, "a plain JSON error, not a stream: {stream}");
    let push = json!({"taskId": "t", "url": "https://example.com"});
    assert_eq!(server.rpc_error_code("CreateTaskPushNotificationConfig", push).await, -32003);
    assert_eq!(server.rpc_error_code("GetExtendedAgentCard", json!({})).await, -32004);
    let (status, _) =
        server.rest(Method::POST, "/message:stream", Some(json!({"message": user_message("m", "x")}))).await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn extension_and_card_configuration_errors() {
    let config = CardConfig {
        card: agentwire_server::agent::ConformanceAgent::card(),
        required_extensions: vec!["urn:example:ext".into()],
        extended_card_enabled: true,
        extended_card: None,
        ..CardConfig::default()
    };
    let server =
        TestServer::start(RequestHandler::builder(agentwire_server::agent::ConformanceAgent::new()).card(config)).await;
    assert_eq!(server.rpc_error_code("SendMessage", json!({"message": user_message("m", "x")})).await, -32008);
    let headers = [("A2A-Version", "1.0"), ("A2A-Extensions", "urn:other, urn:example:ext")];
    let declared = server.rpc_with_headers("SendMessage", json!({"message": user_message("m", "x")}), &headers).await;
    assert!(declared.get("result").is_some(), "{declared}");
    // Enabled, but without authentication the card does not offer it.
    assert_eq!(server.rpc_error_code("GetExtendedAgentCard", json!({})).await, -32004);
}

/// A card that offers the extended card without one configured: ExtendedAgentCardNotConfigured,
/// and only then.
#[tokio::test]
async fn an_offered_extended_card_that_is_not_configured_is_not_configured() {
    let config = CardConfig { extended_card_enabled: true, extended_card: None, ..CardConfig::default() };
    let auth = agentwire_server::auth::StaticAuth::default().with_spec("bearer:t").unwrap();
    let handler = RequestHandler::builder(agentwire_server::agent::EchoAgent).card(config);
    let server = TestServer::start_app(handler, agentwire_server::App::new().authenticator(auth)).await;
    let headers = [("A2A-Version", "1.0"), ("Authorization", "Bearer t")];
    let refused = server.rpc_with_headers("GetExtendedAgentCard", json!({}), &headers).await;
    assert_eq!(refused["error"]["code"], -32007, "{refused}");
}

/// An agent that ends without saying anything.
struct Silent;

impl AgentExecutor for Silent {
    fn execute(&self, _ctx: ExecutionContext) -> EventStream {
        Box::pin(futures_util::stream::empty())
    }
}

#[tokio::test]
async fn silent_agents_are_invalid_responses() {
    let server = TestServer::start(RequestHandler::builder(Silent)).await;
    assert_eq!(server.rpc_error_code("SendMessage", json!({"message": user_message("m", "x")})).await, -32006);
    let (status, _) =
        server.rest(Method::POST, "/message:send", Some(json!({"message": user_message("m", "x")}))).await;
    assert_eq!(status, 502);
}

#[tokio::test]
async fn unsupported_media_types_are_refused() {
    let server = TestServer::start(
        RequestHandler::builder(agentwire_server::agent::EchoAgent)
            .card(CardConfig { card: agentwire_server::agent::EchoAgent::card(), ..CardConfig::default() }),
    )
    .await;
    let message = json!({"messageId": "m", "role": "ROLE_USER", "parts": [{"raw": "dGNr", "mediaType": "image/png"}]});
    assert_eq!(server.rpc_error_code("SendMessage", json!({"message": message})).await, -32005);
}
