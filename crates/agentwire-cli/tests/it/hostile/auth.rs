//! A caller guessing credentials from the address of others (one proxy, NAT or gateway in front
//! of many clients): its failures slow its own guesses, not the clients whose credentials verify.
//! A token endpoint that answers a gateway's exchange without end.

use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;

use crate::common::{Server, TempDir};

async fn list_tasks(client: &reqwest::Client, base: &str, token: &str) -> u16 {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}});
    let request = client.post(format!("{base}/")).bearer_auth(token).json(&body);
    request.send().await.expect("the server answers").status().as_u16()
}

/// The probe's W-a: 2,000 wrong tokens from 127.0.0.1 locked alice's valid token out (429) too.
#[tokio::test]
async fn wrong_tokens_from_an_address_do_not_lock_out_a_valid_one() {
    let dir = TempDir::new("hostile-auth-lockout");
    let server = Server::start(&dir.0, &["--store", "memory", "--auth", "bearer:alice=alice-secret"]).await;
    let client = reqwest::Client::new();
    assert_eq!(list_tasks(&client, &server.base, "alice-secret").await, 200);
    // Guesses until the address is refused before its guesses are checked.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut guesses = 0;
    while list_tasks(&client, &server.base, &format!("guess-{guesses}")).await != 429 {
        guesses += 1;
        assert!(Instant::now() < deadline, "{guesses} guesses were never limited");
    }
    // Guessing stays limited: the bucket refills at 5 a second, so most further guesses wait.
    let mut limited = 0;
    for guess in 0..20 {
        limited += usize::from(list_tasks(&client, &server.base, &format!("again-{guess}")).await == 429);
    }
    assert!(limited >= 10, "only {limited} of 20 further guesses were limited");
    for _ in 0..20 {
        assert_eq!(list_tasks(&client, &server.base, "alice-secret").await, 200, "after {guesses} wrong guesses");
    }
}

/// A token endpoint that answers `--upstream-auth exchange` with an endless body: the gateway
/// reads 64 KiB of it at most, answers the caller with the exchange's failure at once, holds no
/// more memory for it, and sends the agent nothing.
#[tokio::test]
async fn an_endless_token_response_fails_the_exchange_without_growing_the_gateway() {
    use futures_util::StreamExt as _;
    let dir = TempDir::new("hostile-auth-exchange");
    let idp = crate::common::Idp::new(&dir.0).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let token_url = format!("http://{}/token", listener.local_addr().unwrap());
    let endless = axum::Router::new().route(
        "/token",
        axum::routing::post(|| async {
            let chunk = axum::body::Bytes::from(vec![b'a'; 64 * 1024]);
            let chunks = futures_util::stream::repeat(chunk).map(Ok::<_, std::convert::Infallible>);
            axum::body::Body::from_stream(chunks)
        }),
    );
    tokio::spawn(async move { axum::serve(listener, endless).await });
    let auth = idp.auth_args();
    let agent_args =
        [&["--store", "memory", "--audience", "agent"][..], &auth.iter().map(String::as_str).collect::<Vec<_>>()]
            .concat();
    let agent = Server::start(&dir.0, &agent_args).await;
    let upstream = format!("a={}", agent.base);
    let mut args = vec!["--upstream", &upstream, "--audience", "gw", "--upstream-auth", "exchange"];
    args.extend([
        "--upstream-audience",
        "a=agent",
        "--token-exchange-url",
        &token_url,
        "--token-exchange-client",
        "gw",
    ]);
    args.extend(auth.iter().map(String::as_str));
    let gateway = Server::start_gateway_with_env(&dir.0, &args, &[("AGENTWIRE_TOKEN_EXCHANGE_SECRET", "s")]).await;
    let before = gateway.rss_kib();

    let token = idp.token("alice", &["gw"], None).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}});
    let started = Instant::now();
    let request = reqwest::Client::new().post(format!("{}/agents/a/", gateway.base)).bearer_auth(&token).json(&body);
    let answer: serde_json::Value = request.send().await.unwrap().json().await.unwrap();
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("the exchange failed") && message.contains("larger than 65536 bytes"), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(5), "the failure took {:?}", started.elapsed());
    assert!(gateway.rss_kib() < before + 16 * 1024, "the gateway grew from {before} to {} KiB", gateway.rss_kib());
    let at_agent = idp.token("alice", &["agent"], None).await;
    let listed = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}});
    let request = reqwest::Client::new().post(format!("{}/", agent.base)).bearer_auth(&at_agent).json(&listed);
    let listed: serde_json::Value = request.send().await.unwrap().json().await.unwrap();
    assert_eq!(listed["result"]["tasks"], json!([]), "the agent was called: {listed}");
}
