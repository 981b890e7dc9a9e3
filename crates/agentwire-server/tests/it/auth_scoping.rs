//! Authentication and per-principal task scoping, over the wire.

use std::collections::BTreeMap;

use agentwire_server::auth::{async_trait, Authenticator, StaticAuth};
use agentwire_server::App;
use agentwire_server::{Principal, RequestContext};
use agentwire_test::{conformance, user_message, TestServer};
use agentwire_types::Access;
use agentwire_types::{A2AError, SecurityScheme};
use serde_json::{json, Value};

async fn call(server: &TestServer, token: Option<&str>, method: &str, params: Value) -> (u16, Value) {
    let mut request = server
        .http
        .post(format!("{}/", server.base))
        .header("A2A-Version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

#[tokio::test]
async fn tasks_are_visible_only_to_their_owner() {
    let auth = StaticAuth::default().with_spec("bearer:alice-token,bob-token").unwrap();
    let server = TestServer::start_app(conformance(), App::new().authenticator(auth)).await;

    let (status, created) =
        call(&server, Some("alice-token"), "SendMessage", json!({"message": user_message("tck-input-required", "x")}))
            .await;
    assert_eq!(status, 200, "{created}");
    let id = created["result"]["task"]["id"].clone();

    let (_, alice) = call(&server, Some("alice-token"), "GetTask", json!({"id": id})).await;
    assert_eq!(alice["result"]["id"], id);
    for (method, params) in [
        ("GetTask", json!({"id": id})),
        ("CancelTask", json!({"id": id})),
        ("SubscribeToTask", json!({"id": id})),
        ("ListTaskPushNotificationConfigs", json!({"taskId": id})),
    ] {
        let (_, bob) = call(&server, Some("bob-token"), method, params).await;
        assert_eq!(bob["error"]["code"], -32001, "{method} must not reveal alice's task: {bob}");
    }
    let mut follow_up = user_message("tck-complete-task", "x");
    follow_up["taskId"] = id.clone();
    let (_, bob) = call(&server, Some("bob-token"), "SendMessage", json!({"message": follow_up})).await;
    assert_eq!(bob["error"]["code"], -32001);
    let (_, bob_list) = call(&server, Some("bob-token"), "ListTasks", json!({})).await;
    assert_eq!(bob_list["result"]["totalSize"], 0);
    let (_, alice_list) = call(&server, Some("alice-token"), "ListTasks", json!({})).await;
    assert_eq!(alice_list["result"]["totalSize"], 1);
}

#[tokio::test]
async fn missing_or_wrong_credentials_get_401_with_a_challenge() {
    let auth = StaticAuth::default().with_spec("bearer:secret").unwrap();
    let server = TestServer::start_app(conformance(), App::new().authenticator(auth)).await;
    for token in [None, Some("wrong")] {
        let (status, body) = call(&server, token, "GetTask", json!({"id": "x"})).await;
        assert_eq!(status, 401);
        assert_eq!(body["error"]["code"], -32010);
        assert_eq!(body["id"], 1, "the refusal answers the request it refuses: {body}");
    }
    let get = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}});
    let jsonrpc = server.http.post(format!("{}/", server.base)).json(&get).send().await.unwrap();
    assert!(jsonrpc.headers()["www-authenticate"].to_str().unwrap().starts_with("Bearer"));
    let rest = server.http.get(format!("{}/tasks", server.base)).send().await.unwrap();
    assert_eq!(rest.status(), 401);
    assert!(rest.headers()["www-authenticate"].to_str().unwrap().starts_with("Bearer"));

    let card = server.http.get(format!("{}/.well-known/agent-card.json", server.base)).send().await.unwrap();
    assert_eq!(card.status(), 200, "the public card stays open");
    let card: Value = card.json().await.unwrap();
    assert_eq!(card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"], "Bearer");
    assert!(card["securityRequirements"][0]["schemes"].get("bearer").is_some());
}

#[tokio::test]
async fn api_keys_authenticate() {
    let auth = StaticAuth::default().with_spec("apikey:X-API-Key:k1").unwrap();
    let server = TestServer::start_app(conformance(), App::new().authenticator(auth)).await;
    let ok = server.http.get(format!("{}/tasks", server.base)).header("X-API-Key", "k1").send().await.unwrap();
    assert_eq!(ok.status(), 200);
    let bad = server.http.get(format!("{}/tasks", server.base)).header("X-API-Key", "k2").send().await.unwrap();
    assert_eq!(bad.status(), 401);
}

/// Knows "reader", but lets it do nothing.
struct NoRights;

#[async_trait]
impl Authenticator for NoRights {
    async fn authenticate(&self, ctx: &RequestContext, _: Access) -> Result<Principal, A2AError> {
        match ctx.metadata.get("authorization").and_then(|v| v.to_str().ok()) {
            Some("Bearer reader") => Err(A2AError::permission_denied("reader may not use this agent")),
            _ => Err(A2AError::unauthenticated("who are you?")),
        }
    }

    fn security_schemes(&self) -> BTreeMap<String, SecurityScheme> {
        BTreeMap::new()
    }
}

#[tokio::test]
async fn known_principal_without_rights_gets_403() {
    let server = TestServer::start_app(conformance(), App::new().authenticator(NoRights)).await;
    let (status, body) = call(&server, Some("reader"), "GetTask", json!({"id": "x"})).await;
    assert_eq!(status, 403);
    assert_eq!(body["error"]["code"], -32011);
    let rest = server.http.get(format!("{}/tasks", server.base)).bearer_auth("reader").send().await.unwrap();
    assert_eq!(rest.status(), 403);
    assert!(rest.headers().get("www-authenticate").is_none());
}

#[tokio::test]
async fn credentials_with_one_name_are_one_principal() {
    let auth = StaticAuth::default().with_spec("bearer:alice=old-token,alice=new-token,bob=bob-token").unwrap();
    let server = TestServer::start_app(conformance(), App::new().authenticator(auth)).await;
    let (_, created) =
        call(&server, Some("old-token"), "SendMessage", json!({"message": user_message("tck-input-required", "x")}))
            .await;
    let id = created["result"]["task"]["id"].clone();

    let (_, rotated) = call(&server, Some("new-token"), "GetTask", json!({"id": id})).await;
    assert_eq!(rotated["result"]["id"], id, "{rotated}");
    let (_, other) = call(&server, Some("bob-token"), "GetTask", json!({"id": id})).await;
    assert_eq!(other["error"]["code"], -32001, "{other}");
}

/// Answers with the first text of each earlier task of the context it can read.
struct Recall;

impl agentwire_server::agent::AgentExecutor for Recall {
    fn execute(&self, ctx: agentwire_server::agent::ExecutionContext) -> agentwire_server::agent::EventStream {
        ctx.run(|ctx, updater| async move {
            let earlier = ctx.earlier_tasks(64 * 1024).await?;
            let texts: Vec<String> = earlier.iter().map(|task| task.history[0].text()).collect();
            updater.add_text_artifact("recall", texts.join(",")).await?;
            updater.complete().await
        })
    }
}

#[tokio::test]
async fn an_agent_reads_only_its_callers_earlier_tasks_of_a_context() {
    let auth = StaticAuth::default().with_spec("bearer:alice=alice-token,bob=bob-token").unwrap();
    let server =
        TestServer::start_app(agentwire_server::RequestHandler::builder(Recall), App::new().authenticator(auth)).await;
    let send = |token: &'static str, text: &'static str| {
        let mut message = user_message(text, text);
        message["contextId"] = json!("shared-context");
        let server = &server;
        async move {
            let (status, answer) = call(server, Some(token), "SendMessage", json!({"message": message})).await;
            assert_eq!(status, 200, "{answer}");
            answer["result"]["task"]["artifacts"][0]["parts"][0]["text"].as_str().unwrap().to_owned()
        }
    };
    assert_eq!(send("alice-token", "a1").await, "");
    assert_eq!(send("bob-token", "b1").await, "", "bob's context is his own, whatever its id");
    assert_eq!(send("alice-token", "a2").await, "a1");
    assert_eq!(send("alice-token", "a3").await, "a1,a2", "oldest first");
    assert_eq!(send("bob-token", "b2").await, "b1");
}
