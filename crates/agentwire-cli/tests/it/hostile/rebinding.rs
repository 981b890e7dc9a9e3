//! A web page whose name an attacker points at a server without `--auth` (DNS rebinding): the
//! browser sends the page's own name in `Host`, and every route of the server refuses it (421),
//! the A2A API, the gateway's directory and registry, and MCP alike; its own names are served.

use serde_json::json;

use crate::common::{Server, TempDir};

/// What the server answers a request for `path` under the host name `host`.
async fn status_under(base: &str, method: reqwest::Method, path: &str, host: &str) -> u16 {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}});
    let request = reqwest::Client::new().request(method, format!("{base}{path}")).header("host", host);
    let request =
        request.header("content-type", "application/json").header("accept", "application/json, text/event-stream");
    request.body(body.to_string()).send().await.expect("the server answers").status().as_u16()
}

fn port_of(base: &str) -> &str {
    base.rsplit_once(':').expect("a port").1
}

#[tokio::test]
async fn a_server_without_auth_answers_its_own_names_only() {
    let dir = TempDir::new("hostile-rebinding");
    let args = ["--store", "memory", "--mcp", "--public-url", "http://agents.test:9999", "--allow-host", "extra.test"];
    let server = Server::start(&dir.0, &args).await;
    let port = port_of(&server.base);
    let evil = format!("evil.example:{port}");
    for (method, path) in [
        (reqwest::Method::POST, "/"),
        (reqwest::Method::GET, "/tasks"),
        (reqwest::Method::GET, "/.well-known/agent-card.json"),
        (reqwest::Method::POST, "/mcp"),
        (reqwest::Method::GET, "/no-such-route"),
    ] {
        assert_eq!(status_under(&server.base, method.clone(), path, &evil).await, 421, "{method} {path}");
        let lookalike = format!("localhost.evil.example:{port}");
        assert_eq!(status_under(&server.base, method.clone(), path, &lookalike).await, 421, "{method} {path}");
    }
    for host in
        [format!("127.0.0.1:{port}"), format!("localhost:{port}"), "agents.test:9999".into(), "extra.test".into()]
    {
        assert_eq!(status_under(&server.base, reqwest::Method::POST, "/", &host).await, 200, "{host}");
        // MCP's own host check agrees: a request that is no MCP message is refused by MCP.
        let mcp = status_under(&server.base, reqwest::Method::POST, "/mcp", &host).await;
        assert!(mcp != 421 && mcp != 403, "{host}: MCP answered {mcp}");
    }
}

#[tokio::test]
async fn a_gateway_without_auth_keeps_its_directory_and_registry_from_other_names() {
    let dir = TempDir::new("hostile-rebinding-gateway");
    let agent = Server::start(&dir.0, &["--store", "memory"]).await;
    let upstream = format!("echo={}", agent.base);
    let gateway = Server::start_gateway(&dir.0, &["--upstream", &upstream]).await;
    let evil = format!("evil.example:{}", port_of(&gateway.base));
    for (method, path) in [
        (reqwest::Method::GET, "/agents"),
        (reqwest::Method::POST, "/agents"),
        (reqwest::Method::DELETE, "/agents/echo"),
        (reqwest::Method::POST, "/agents/echo"),
    ] {
        assert_eq!(status_under(&gateway.base, method.clone(), path, &evil).await, 421, "{method} {path}");
    }
    let own = format!("127.0.0.1:{}", port_of(&gateway.base));
    assert_eq!(status_under(&gateway.base, reqwest::Method::GET, "/agents", &own).await, 200);
}

/// With `--auth`, a request's credentials are what protects the server: any name is served.
#[tokio::test]
async fn a_server_with_auth_serves_any_name() {
    let dir = TempDir::new("hostile-rebinding-auth");
    let server = Server::start(&dir.0, &["--store", "memory", "--auth", "bearer:alice=TA"]).await;
    let evil = format!("evil.example:{}", port_of(&server.base));
    assert_eq!(status_under(&server.base, reqwest::Method::POST, "/", &evil).await, 401);
}
