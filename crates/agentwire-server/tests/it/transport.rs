//! The listener and the HTTP stack: HTTP/2 in the clear, TLS with HTTP/1.1 and HTTP/2 by ALPN,
//! and gRPC requests answered with gRPC statuses by the same layers as every binding.

use agentwire_server::auth::StaticAuth;
use agentwire_server::App;
use agentwire_server::{HttpOptions, ServeOptions};
use agentwire_test::{conformance, user_message, Pki, TestServer, TIMEOUT};
use reqwest::{Client, Version};
use serde_json::{json, Value};

fn send_message() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": user_message("tck-complete-task", "hi")}})
}

/// A SendMessage and a streamed one over `client`, on `version`.
async fn exchange(client: &Client, base: &str, version: Version) {
    let response = client.post(format!("{base}/")).header("A2A-Version", "1.0").json(&send_message()).send().await;
    let response = response.expect("SendMessage");
    assert_eq!(response.version(), version);
    let reply: Value = response.json().await.unwrap();
    assert_eq!(reply["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{reply}");

    let stream = json!({"jsonrpc": "2.0", "id": 2, "method": "SendStreamingMessage",
        "params": {"message": user_message("tck-stream-001", "s")}});
    let response = client.post(format!("{base}/")).header("A2A-Version", "1.0").json(&stream).send().await.unwrap();
    assert_eq!(response.version(), version);
    let events = agentwire_test::read_sse(response, usize::MAX).await;
    let last = &events.last().expect("events")["result"]["statusUpdate"]["status"]["state"];
    assert_eq!(last, "TASK_STATE_COMPLETED", "{events:?}");
}

#[tokio::test]
async fn http2_with_prior_knowledge_serves_calls_and_streams() {
    let server = TestServer::start(conformance()).await;
    let h2c = Client::builder().http2_prior_knowledge().timeout(TIMEOUT).build().unwrap();
    exchange(&h2c, &server.base, Version::HTTP_2).await;
    exchange(&server.http, &server.base, Version::HTTP_11).await;
}

#[tokio::test]
async fn tls_serves_http1_and_http2_by_alpn() {
    let pki = Pki::new("servers");
    let options = ServeOptions { tls: Some(pki.server()), ..ServeOptions::default() };
    let server = TestServer::start_with(conformance(), HttpOptions::default(), options).await;
    assert!(server.base.starts_with("https://"));
    let trusting = || {
        let root = reqwest::Certificate::from_pem(pki.ca_pem().as_bytes()).unwrap();
        Client::builder().add_root_certificate(root).timeout(TIMEOUT)
    };
    exchange(&trusting().http1_only().build().unwrap(), &server.base, Version::HTTP_11).await;
    exchange(&trusting().build().unwrap(), &server.base, Version::HTTP_2).await;

    let card: Value = trusting()
        .build()
        .unwrap()
        .get(format!("{}/agentCard", server.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(card["supportedInterfaces"][0]["url"].as_str().unwrap().starts_with("https://"), "{card}");
    let plain = server.http.get(format!("{}/agentCard", server.base.replace("https", "http"))).send().await;
    assert!(plain.is_err() || !plain.unwrap().status().is_success(), "plain HTTP is not served on a TLS port");
}

/// A gRPC call as a client sends it: HTTP/2, `application/grpc`, one empty message.
async fn grpc_status(server: &TestServer, token: Option<&str>) -> (u16, String) {
    grpc_status_of(server, "/lf.a2a.v1.A2AService/SendMessage", token).await
}

async fn grpc_status_of(server: &TestServer, path: &str, token: Option<&str>) -> (u16, String) {
    let h2c = Client::builder().http2_prior_knowledge().timeout(TIMEOUT).build().unwrap();
    let mut request = h2c
        .post(format!("{}{path}", server.base))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(vec![0u8, 0, 0, 0, 0]);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.headers().get("grpc-status").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    assert_eq!(response.headers()["content-type"], "application/grpc");
    (response.status().as_u16(), status)
}

#[tokio::test]
async fn grpc_requests_get_grpc_statuses_never_json() {
    let server = TestServer::start(conformance()).await;
    assert_eq!(grpc_status(&server, None).await, (200, "3".to_owned()), "INVALID_ARGUMENT: no message");
    let unknown = grpc_status_of(&server, "/lf.a2a.v1.A2AService/NoSuchMethod", None).await;
    assert_eq!(unknown, (200, "12".to_owned()), "UNIMPLEMENTED");
    let unknown = grpc_status_of(&server, "/no.such.Service/SendMessage", None).await;
    assert_eq!(unknown, (200, "12".to_owned()), "UNIMPLEMENTED");
}

#[tokio::test]
async fn one_auth_layer_refuses_each_binding_in_its_own_format() {
    let auth = StaticAuth::default().with_spec("bearer:secret").unwrap();
    let server = TestServer::start_app(conformance(), App::new().authenticator(auth)).await;
    let get_task = |token| grpc_status_of(&server, "/lf.a2a.v1.A2AService/GetTask", token);
    assert_eq!(get_task(None).await, (200, "16".to_owned()), "UNAUTHENTICATED");
    assert_eq!(get_task(Some("wrong")).await, (200, "16".to_owned()));
    assert_eq!(get_task(Some("secret")).await, (200, "5".to_owned()), "let in: NOT_FOUND");

    let jsonrpc = server.http.post(format!("{}/", server.base)).json(&send_message()).send().await.unwrap();
    assert_eq!(jsonrpc.status(), 401);
    let reply: Value = jsonrpc.json().await.unwrap();
    assert_eq!((reply["id"].as_i64(), reply["error"]["code"].as_i64()), (Some(1), Some(-32010)), "{reply}");

    let rest = server.http.get(format!("{}/tasks", server.base)).send().await.unwrap();
    assert_eq!(rest.status(), 401);
    let body: Value = rest.json().await.unwrap();
    assert_eq!(body["error"]["status"], "UNAUTHENTICATED");
}
