//! Which web pages may use an agent from the local user's browser: with no authentication (the
//! default), none but those `--cors-origin` names; with authentication, any (a page cannot read
//! the user's credentials).

use crate::common::{Server, TempDir};

/// The `Access-Control-Allow-Origin` a preflight from `origin` for a JSON-RPC POST gets.
async fn preflight(server: &Server, origin: &str) -> Option<String> {
    let response = reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, format!("{}/", server.base))
        .header("origin", origin)
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type,a2a-version")
        .send()
        .await
        .unwrap();
    response.headers().get("access-control-allow-origin").map(|v| v.to_str().unwrap().to_owned())
}

/// The probe's page at evil.example that listed, read, sent and canceled on a local agent.
#[tokio::test]
async fn without_authentication_no_other_site_may_call_the_agent() {
    let dir = TempDir::new("cors");
    let open = Server::start(&dir.0, &["--store", "memory", "--agent", "echo"]).await;
    assert_eq!(preflight(&open, "https://evil.example").await, None);
    let listed = reqwest::Client::new()
        .get(format!("{}/tasks", open.base))
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert!(listed.headers().get("access-control-allow-origin").is_none(), "a page may not read the answer");

    let named = ["--store", "memory", "--agent", "echo", "--cors-origin", "https://app.example"];
    let named = Server::start(&dir.0, &named).await;
    assert_eq!(preflight(&named, "https://app.example").await.as_deref(), Some("https://app.example"));
    assert_eq!(preflight(&named, "https://evil.example").await, None);

    let anyone = Server::start(&dir.0, &["--store", "memory", "--agent", "echo", "--cors-origin", "*"]).await;
    assert_eq!(preflight(&anyone, "https://evil.example").await.as_deref(), Some("*"));

    let authenticated = Server::start(&dir.0, &["--store", "memory", "--agent", "echo", "--auth", "bearer:t"]).await;
    assert_eq!(preflight(&authenticated, "https://evil.example").await.as_deref(), Some("*"));
}
