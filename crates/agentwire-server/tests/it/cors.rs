//! CORS: browser calls get CORS headers, from any origin by default or from the configured ones,
//! other clients none, and preflights are answered before authentication.

use agentwire_server::auth::StaticAuth;
use agentwire_server::App;
use agentwire_server::{CorsOrigins, HttpOptions, ServeOptions};
use agentwire_test::{conformance, user_message, TestServer};
use reqwest::Method;
use serde_json::{json, Value};

const APP: &str = "https://app.example";

#[tokio::test]
async fn browsers_may_read_the_card_and_its_caching_headers() {
    let server = TestServer::start(conformance()).await;
    let card = format!("{}/.well-known/agent-card.json", server.base);
    let browser = server.http.get(&card).header("Origin", APP).send().await.unwrap();
    assert_eq!(browser.status(), 200);
    assert_eq!(browser.headers()["access-control-allow-origin"], "*");
    let exposed = browser.headers()["access-control-expose-headers"].to_str().unwrap();
    assert!(exposed.contains("etag"), "{exposed}");
}

#[tokio::test]
async fn json_rpc_calls_from_browsers_get_cors_headers_and_the_same_answer() {
    let server = TestServer::start(conformance()).await;
    let send = |origin: Option<&str>| {
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": "SendMessage",
            "params": {"message": user_message("m1", "hello")}});
        let request = server.http.post(format!("{}/", server.base)).header("A2A-Version", "1.0").json(&body);
        match origin {
            Some(origin) => request.header("Origin", origin),
            None => request,
        }
        .send()
    };
    let plain = send(None).await.unwrap();
    assert!(plain.headers().get("access-control-allow-origin").is_none(), "no CORS headers without Origin");
    let plain: Value = plain.json().await.unwrap();
    let browser = send(Some(APP)).await.unwrap();
    assert_eq!(browser.headers()["access-control-allow-origin"], "*");
    let browser: Value = browser.json().await.unwrap();
    for answer in [&plain, &browser] {
        assert_eq!(answer["id"], 7, "{answer}");
        assert_eq!(answer["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{answer}");
    }
}

#[tokio::test]
async fn preflights_are_answered_before_authentication() {
    let auth = StaticAuth::default().with_spec("bearer:secret").unwrap();
    let server = TestServer::start_app(conformance(), App::new().authenticator(auth)).await;
    let preflight = server
        .http
        .request(Method::OPTIONS, format!("{}/message:send", server.base))
        .header("Origin", APP)
        .header("Access-Control-Request-Method", "POST")
        .header("Access-Control-Request-Headers", "authorization, content-type")
        .send()
        .await
        .unwrap();
    assert!(preflight.status().is_success(), "{}", preflight.status());
    let headers = preflight.headers();
    assert_eq!(headers["access-control-allow-origin"], "*");
    assert!(headers["access-control-allow-methods"].to_str().unwrap().contains("POST"));
    assert_eq!(headers["access-control-allow-headers"], "authorization, content-type");

    // The real request still needs credentials, and its refusal is readable by the page.
    let refused = server
        .http
        .post(format!("{}/message:send", server.base))
        .header("Origin", APP)
        .json(&json!({"message": agentwire_test::user_message("m1", "hi")}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    assert_eq!(refused.headers()["access-control-allow-origin"], "*");
}

#[tokio::test]
async fn only_configured_origins_are_allowed_when_some_are() {
    let http = HttpOptions { cors: CorsOrigins::List(vec![APP.parse().unwrap()]), ..HttpOptions::default() };
    let server = TestServer::start_with(conformance(), http, ServeOptions::default()).await;
    let card = format!("{}/.well-known/agent-card.json", server.base);
    let allowed = server.http.get(&card).header("Origin", APP).send().await.unwrap();
    assert_eq!(allowed.headers()["access-control-allow-origin"], APP);
    let other = server.http.get(&card).header("Origin", "https://evil.example").send().await.unwrap();
    assert_eq!(other.status(), 200, "the card is still served; the browser withholds it from the page");
    assert!(other.headers().get("access-control-allow-origin").is_none());
}
