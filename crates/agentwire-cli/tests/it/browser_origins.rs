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

/// The console's own pages post over HTTP/2 as over HTTP/1.1 (browsers speak HTTP/2 over TLS),
/// where the host is named by `:authority`, not `Host`; other sites' posts are refused on both.
#[tokio::test]
async fn the_console_takes_its_own_posts_over_http2() {
    let dir = TempDir::new("console-h2");
    let server = Server::start(&dir.0, &["--store", "memory", "--agent", "echo", "--console"]).await;
    let cancel = format!("{}/console/tasks/no-such-task/cancel", server.base);
    let http1 = reqwest::Client::builder().http1_only().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let h2c =
        reqwest::Client::builder().http2_prior_knowledge().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    for (client, version) in [(&http1, reqwest::Version::HTTP_11), (&h2c, reqwest::Version::HTTP_2)] {
        let own = client.post(&cancel).header("origin", &server.base).send().await.unwrap();
        assert_eq!(own.version(), version);
        assert_ne!(own.status(), 403, "{version:?}: the console's own post is taken");
        let foreign = client.post(&cancel).header("origin", "http://evil.example").send().await.unwrap();
        assert_eq!(foreign.status(), 403, "{version:?}: another site's post is refused");
    }
}
