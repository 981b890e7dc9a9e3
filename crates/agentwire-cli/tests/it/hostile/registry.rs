//! A hostile registrant of `agentwire gateway`'s registry, and the agents it points at: a fake A2A
//! agent on loopback that serves a card under any base path (named as the test says, or
//! redirecting elsewhere) and records every request with its `Authorization`. The gateway must
//! not hand such an agent its `--upstream-token` (nor a caller's token not meant for it), let a web page register agents, let a card's
//! name replace an agent, loop through itself, or follow the card's redirect to another host.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt as _;
use serde_json::{json, Value};
use tokio::time::Instant;

use crate::common::{eventually, Idp, Server, TempDir};

/// One request a fake agent received.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    authorization: Option<String>,
}

/// What a fake agent's card says, changed while it runs.
#[derive(Default)]
struct Conf {
    /// The card's name (default: `Agent SEGMENT`, after the base path's last segment).
    name: Option<String>,
    /// Answer the card with a redirect to this URL.
    redirect: Option<String>,
}

#[derive(Default)]
struct Fake {
    base: String,
    seen: Mutex<Vec<Seen>>,
    conf: Mutex<Conf>,
}

/// A fake A2A agent (JSON-RPC, v1.0) on `ip`, port chosen by the system, served until the test
/// ends.
async fn fake_agent(ip: &str) -> Arc<Fake> {
    let listener = tokio::net::TcpListener::bind((ip, 0)).await.expect("a loopback port");
    let base = format!("http://{}", listener.local_addr().unwrap());
    let fake = Arc::new(Fake { base, ..Fake::default() });
    let app = axum::Router::new().fallback(answer).with_state(Arc::clone(&fake));
    tokio::spawn(async move { axum::serve(listener, app).await });
    fake
}

async fn answer(State(fake): State<Arc<Fake>>, request: Request) -> Response {
    let (method, path) = (request.method().to_string(), request.uri().path().to_owned());
    let authorization =
        request.headers().get("authorization").map(|value| value.to_str().unwrap_or("(not text)").to_owned());
    fake.seen.lock().unwrap().push(Seen { method: method.clone(), path: path.clone(), authorization });
    if let Some(base) = path.split("/.well-known/").next().filter(|_| path.contains("/.well-known/agent")) {
        let (name, redirect) = {
            let conf = fake.conf.lock().unwrap();
            (conf.name.clone(), conf.redirect.clone())
        };
        if let Some(to) = redirect {
            return (http::StatusCode::FOUND, [(http::header::LOCATION, to)]).into_response();
        }
        let segment = base.rsplit('/').next().filter(|s| !s.is_empty()).unwrap_or("root");
        let card = json!({
            "name": name.unwrap_or_else(|| format!("Agent {segment}")), "description": "a fake agent", "version": "1.0",
            "supportedInterfaces": [{"url": format!("{}{base}", fake.base), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {"streaming": false}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s1", "name": "skill", "description": "does things", "tags": ["t1"]}],
        });
        return axum::Json(card).into_response();
    }
    let body: Value = match axum::body::to_bytes(request.into_body(), 1 << 20).await {
        Ok(body) => serde_json::from_slice(&body).unwrap_or(Value::Null),
        Err(_) => Value::Null,
    };
    let id = body["id"].clone();
    if body["method"] != "SendMessage" {
        return axum::Json(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}}))
            .into_response();
    }
    let task = json!({
        "id": format!("t-{}", uuid::Uuid::new_v4()), "contextId": "c",
        "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-12-02T00:00:00Z"},
        "artifacts": [{"artifactId": "a1", "parts": [{"text": format!("answered by {}", fake.base)}]}],
    });
    axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": {"task": task}})).into_response()
}

impl Fake {
    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn posts(&self) -> usize {
        self.seen().iter().filter(|seen| seen.method == "POST").count()
    }
}

fn send_params(text: &str) -> Value {
    let id = format!("m-{}", uuid::Uuid::new_v4());
    json!({"message": {"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]}})
}

/// SendMessage to the agent at `url`, as JSON-RPC; its whole answer (a result or an error).
async fn send(client: &reqwest::Client, url: &str, text: &str) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": send_params(text)});
    let response = client.post(url).json(&body).send().await.expect("the gateway answers");
    response.json().await.unwrap_or(Value::Null)
}

/// `POST /agents` with `body` as JSON, and `headers`: the status and answer.
async fn register(gateway: &str, body: Value, headers: &[(&str, &str)]) -> (u16, Value) {
    let mut request = reqwest::Client::new().post(format!("{gateway}/agents")).json(&body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("the gateway answers");
    (response.status().as_u16(), response.json().await.unwrap_or(Value::Null))
}

/// The registry's entry for `name`, as an admin (loopback, no `--auth`) sees it.
async fn entry(gateway: &str, name: &str) -> Option<Value> {
    let found: Value = reqwest::get(format!("{gateway}/agents?pageSize=100")).await.ok()?.json().await.ok()?;
    found["agents"].as_array()?.iter().find(|agent| agent["name"] == name).cloned()
}

/// Waits until the registry serves `name` from `card_url`, its card read.
async fn served_from(gateway: &str, name: &str, card_url: &str) {
    eventually(Duration::from_secs(15), &format!("{name} served from {card_url}"), || async {
        entry(gateway, name).await.is_some_and(|entry| entry["cardUrl"] == card_url && entry.get("card").is_some())
    })
    .await;
}

/// The descriptors the process `pid` holds.
fn descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map(Iterator::count).unwrap_or(0)
}

/// R1: an agent registered without a token is called with none, its card fetch included; one
/// registered with a token gets that token; only the `--upstream` agents get the gateway's.
#[tokio::test]
async fn a_registered_agent_never_receives_the_upstream_token() {
    let dir = TempDir::new("hostile-registry-token");
    let (own, registrant) = (fake_agent("127.0.0.1").await, fake_agent("127.0.0.3").await);
    let upstream = format!("own={}", own.base);
    let args = ["--upstream", &upstream, "--upstream-token", "GW-SECRET-TOKEN", "--registry-refresh", "1"];
    let gateway = Server::start_gateway(&dir.0, &args).await;
    let client = reqwest::Client::new();

    let bare = format!("{}/x", registrant.base);
    let (status, answer) = register(&gateway.base, json!({"url": bare, "name": "x"}), &[]).await;
    assert_eq!(status, 201, "{answer}");
    let tokened = format!("{}/y", registrant.base);
    let (status, answer) = register(&gateway.base, json!({"url": tokened, "name": "y", "token": "Y-OWN"}), &[]).await;
    assert_eq!(status, 201, "{answer}");
    served_from(&gateway.base, "x", &bare).await;
    served_from(&gateway.base, "y", &tokened).await;
    for name in ["x", "y", "own"] {
        let answer = send(&client, &format!("{}/agents/{name}", gateway.base), "hello").await;
        assert!(answer["result"]["task"]["id"].is_string(), "{name}: {answer}");
    }

    let seen = registrant.seen();
    let of = |prefix: &str, method: &str| -> Vec<Seen> {
        seen.iter().filter(|s| s.path.starts_with(prefix) && s.method == method).cloned().collect()
    };
    assert!(!of("/x", "GET").is_empty() && !of("/x", "POST").is_empty(), "x's card and send: {seen:?}");
    assert!(of("/x", "GET").iter().chain(&of("/x", "POST")).all(|s| s.authorization.is_none()), "{seen:?}");
    let y_calls: Vec<Seen> = of("/y", "GET").into_iter().chain(of("/y", "POST")).collect();
    assert!(
        !y_calls.is_empty() && y_calls.iter().all(|s| s.authorization.as_deref() == Some("Bearer Y-OWN")),
        "{y_calls:?}"
    );
    let leaked = seen.iter().filter(|s| s.authorization.as_deref().is_some_and(|a| a.contains("GW-SECRET"))).count();
    assert_eq!(leaked, 0, "requests to the registered host carrying the upstream token: {seen:?}");
    // The operator's own agent keeps its token.
    let own_seen = own.seen();
    assert!(own_seen
        .iter()
        .any(|s| s.method == "POST" && s.authorization.as_deref() == Some("Bearer GW-SECRET-TOKEN")));
}

/// With `--upstream-auth passthrough`, a caller's token reaches the agent only when its audience
/// names the agent: a token meant for the gateway alone is refused there and never sent, the
/// gateway's own card fetch carries none, and a token meant for the agent goes with its call.
#[tokio::test]
async fn a_callers_token_reaches_only_the_agent_it_is_meant_for() {
    let dir = TempDir::new("hostile-caller-token");
    let idp = Idp::new(&dir.0).await;
    let agent = fake_agent("127.0.0.1").await;
    let upstream = format!("own={}", agent.base);
    let auth = idp.auth_args();
    let mut args = vec!["--upstream", &upstream, "--audience", "gw", "--upstream-auth", "passthrough"];
    args.extend(["--upstream-audience", "own=own-agent"]);
    args.extend(auth.iter().map(String::as_str));
    let gateway = Server::start_gateway(&dir.0, &args).await;
    let relay = |token: String| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": send_params("hi")});
        let request = reqwest::Client::new().post(format!("{}/agents/own/", gateway.base)).bearer_auth(token);
        async move { request.json(&body).send().await.expect("the gateway answers").json::<Value>().await.unwrap() }
    };

    let mallory = idp.token("mallory", &["gw"], None).await;
    let refused = relay(mallory.clone()).await;
    assert!(refused["error"]["message"].as_str().is_some_and(|m| m.contains("not meant for it")), "{refused}");
    assert_eq!(agent.posts(), 0, "the refused call reached the agent: {:?}", agent.seen());
    let alice = idp.token("alice", &["gw", "own-agent"], None).await;
    let answer = relay(alice.clone()).await;
    assert!(answer["result"]["task"]["id"].is_string(), "{answer}");
    sent_only(&agent, &alice, &mallory);
}

/// The agent's calls carried `token`, its card fetches no token, and none carried `refused`.
fn sent_only(agent: &Fake, token: &str, refused: &str) {
    let seen = agent.seen();
    let posts: Vec<&Seen> = seen.iter().filter(|s| s.method == "POST").collect();
    assert!(!posts.is_empty() && posts.iter().all(|s| s.authorization == Some(format!("Bearer {token}"))), "{seen:?}");
    assert!(seen.iter().filter(|s| s.method == "GET").all(|s| s.authorization.is_none()), "{seen:?}");
    assert!(!seen.iter().any(|s| s.authorization.as_deref().is_some_and(|a| a.contains(refused))), "{seen:?}");
}

/// R1 for registrations: an agent registered to be called as its callers (`callerAuth`) gets a
/// caller's token only when its audience names the registered URL, which the registrant cannot
/// choose otherwise; a registration asks for no mode the gateway cannot honour.
#[tokio::test]
async fn a_registered_agent_called_as_its_callers_gets_only_the_tokens_meant_for_its_url() {
    let dir = TempDir::new("hostile-registered-caller-token");
    let idp = Idp::new(&dir.0).await;
    let agent = fake_agent("127.0.0.1").await;
    let auth = idp.auth_args();
    let mut args = vec!["--audience", "gw", "--registry-admin", "https://idp.test#ops"];
    args.extend(auth.iter().map(String::as_str));
    let gateway = Server::start_gateway(&dir.0, &args).await;
    let ops = format!("Bearer {}", idp.token("ops", &["gw"], None).await);
    let admin = [("authorization", ops.as_str())];
    let registration = |mode: &str| json!({"url": agent.base, "name": "reg", "callerAuth": mode});

    let (status, answer) = register(&gateway.base, registration("exchange"), &admin).await;
    assert_eq!(status, 400, "a gateway without a token exchange: {answer}");
    let mut both = registration("passthrough");
    both["token"] = json!("the-agents-own");
    let (status, answer) = register(&gateway.base, both, &admin).await;
    assert_eq!(status, 400, "a token of its own and its callers': {answer}");
    let (status, answer) = register(&gateway.base, registration("passthrough"), &admin).await;
    assert_eq!(status, 201, "{answer}");

    let relay = |token: String| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": send_params("hi")});
        let request = reqwest::Client::new().post(format!("{}/agents/reg/", gateway.base)).bearer_auth(token);
        async move { request.json(&body).send().await.expect("the gateway answers").json::<Value>().await.unwrap() }
    };
    let mallory = idp.token("mallory", &["gw", "https://other.example"], None).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let refused = relay(mallory.clone()).await;
        let message = refused["error"]["message"].as_str().unwrap_or_default();
        if message.contains("not meant for it") {
            break;
        }
        // Until the gateway has read the agent's card, the agent is not reached yet.
        assert!(message.contains("cannot be reached") && Instant::now() < deadline, "{refused}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(agent.posts(), 0, "the refused call reached the agent: {:?}", agent.seen());
    let alice = idp.token("alice", &["gw", &agent.base], None).await;
    let answer = relay(alice.clone()).await;
    assert!(answer["result"]["task"]["id"].is_string(), "{answer}");
    sent_only(&agent, &alice, &mallory);
}

/// R2: a web page's "simple" requests (a form, `text/plain`) and requests from another origin do
/// not change the registry of a gateway without `--auth`; JSON from its own host, the CLI and
/// its own origin do.
#[tokio::test]
async fn a_web_page_cannot_change_the_registry() {
    let dir = TempDir::new("hostile-registry-csrf");
    let agent = fake_agent("127.0.0.1").await;
    let gateway = Server::start_gateway(&dir.0, &[]).await;
    let client = reqwest::Client::new();
    let url = format!("{}/planted", agent.base);
    let body = json!({"url": url, "name": "planted"}).to_string();
    let page = [("origin", "https://evil.example"), ("sec-fetch-site", "cross-site")];

    for content_type in
        ["text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]
    {
        for headers in [&page[..], &[]] {
            let mut request = client.post(format!("{}/agents", gateway.base)).header("content-type", content_type);
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            let response = request.body(body.clone()).send().await.unwrap();
            let status = response.status().as_u16();
            let answer: Value = response.json().await.unwrap_or(Value::Null);
            assert_eq!(status, 415, "{content_type} {headers:?}: {answer}");
            assert!(answer.to_string().contains("application/json"), "{answer}");
        }
    }
    let (status, answer) = register(&gateway.base, json!({"url": url, "name": "planted"}), &page).await;
    assert_eq!(status, 403, "JSON from another origin: {answer}");
    let (status, answer) = register(&gateway.base, json!({"url": url, "name": "planted"}), &[("origin", "null")]).await;
    assert_eq!(status, 403, "JSON from an opaque origin: {answer}");
    assert!(entry(&gateway.base, "planted").await.is_none(), "nothing was registered");

    // The gateway's own page, and the CLI, register.
    let (status, answer) =
        register(&gateway.base, json!({"url": url, "name": "mine"}), &[("origin", &gateway.base)]).await;
    assert_eq!(status, 201, "JSON from the gateway's own origin: {answer}");
    let added = std::process::Command::new(crate::common::binary())
        .args(["registry", "add", &gateway.base, &format!("{}/cli", agent.base), "--name", "cli"])
        .output()
        .unwrap();
    assert!(added.status.success(), "agentwire registry add: {added:?}");
    assert!(entry(&gateway.base, "cli").await.is_some());

    // Nor is an agent removed from another origin.
    let removed = client.delete(format!("{}/agents/mine", gateway.base)).header("origin", "https://evil.example");
    assert_eq!(removed.send().await.unwrap().status().as_u16(), 403);
    assert!(entry(&gateway.base, "mine").await.is_some());
    let removed = client.delete(format!("{}/agents/mine", gateway.base)).send().await.unwrap();
    assert_eq!(removed.status().as_u16(), 204);
}

/// R3: a registration without a name takes its card's, which must not replace the agent of
/// that name.
#[tokio::test]
async fn a_name_taken_from_a_card_never_replaces_an_agent() {
    let dir = TempDir::new("hostile-registry-name");
    let (fx, impostor) = (fake_agent("127.0.0.1").await, fake_agent("127.0.0.3").await);
    impostor.conf.lock().unwrap().name = Some("FX".into());
    let gateway = Server::start_gateway(&dir.0, &[]).await;
    let fx_url = format!("{}/fx", fx.base);
    let (status, answer) = register(&gateway.base, json!({"url": fx_url, "name": "fx"}), &[]).await;
    assert_eq!(status, 201, "{answer}");

    let impostor_url = format!("{}/y", impostor.base);
    let (status, answer) = register(&gateway.base, json!({"url": impostor_url}), &[]).await;
    assert_eq!(status, 409, "a card named FX took fx's place: {answer}");
    assert!(answer.to_string().contains("\\\"name\\\""), "the refusal asks for a name: {answer}");
    served_from(&gateway.base, "fx", &fx_url).await;
    let answer = send(&reqwest::Client::new(), &format!("{}/agents/fx", gateway.base), "payment details").await;
    assert!(answer["result"]["task"]["id"].is_string(), "{answer}");
    assert_eq!(impostor.posts(), 0, "the impostor was sent fx's message");

    // Named explicitly, it is the admin's choice.
    let (status, answer) = register(&gateway.base, json!({"url": impostor_url, "name": "fx-copy"}), &[]).await;
    assert_eq!(status, 201, "{answer}");
}

/// R4: a registration at the gateway's own address is refused.
#[tokio::test]
async fn an_agent_cannot_be_registered_at_the_gateway_itself() {
    let dir = TempDir::new("hostile-registry-self");
    let gateway = Server::start_gateway(&dir.0, &["--public-url", "http://gw.test:9999"]).await;
    let port = gateway.base.rsplit_once(':').unwrap().1;
    for url in [
        format!("{}/agents/other", gateway.base),
        format!("http://localhost:{port}/agents/other"),
        "http://gw.test:9999/agents/other".to_owned(),
    ] {
        let (status, answer) = register(&gateway.base, json!({"url": url, "name": "loop"}), &[]).await;
        assert_eq!(status, 400, "{url}: {answer}");
        assert!(answer.to_string().contains("own address"), "{answer}");
    }
}

/// R4: two gateways whose registrations call each other round (x at A is B's y, y at B is A's
/// x): a send ends quickly with the hop limit's error, and the gateways hold few descriptors.
/// A mirrors its tasks (`--store`), B relays them as they are: both paths carry the count.
#[tokio::test]
async fn a_loop_through_two_gateways_ends_at_the_hop_limit() {
    let dir = TempDir::new("hostile-registry-loop");
    let agent = fake_agent("127.0.0.1").await;
    let timeouts = ["--upstream-timeout", "20", "--registry-refresh", "1"];
    let first = Server::start_gateway(&dir.0, &[&["--store", "memory"][..], &timeouts].concat()).await;
    let second = Server::start_gateway(&dir.0, &timeouts).await;

    let start = format!("{}/loop", agent.base);
    assert_eq!(register(&first.base, json!({"url": start, "name": "x"}), &[]).await.0, 201);
    served_from(&first.base, "x", &start).await;
    let x_at_first = format!("{}/agents/x", first.base);
    assert_eq!(register(&second.base, json!({"url": x_at_first, "name": "y"}), &[]).await.0, 201);
    served_from(&second.base, "y", &x_at_first).await;
    let y_at_second = format!("{}/agents/y", second.base);
    assert_eq!(register(&first.base, json!({"url": y_at_second, "name": "x"}), &[]).await.0, 201);
    served_from(&first.base, "x", &y_at_second).await;

    let before = (descriptors(first.pid()), descriptors(second.pid()));
    let client = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
    let started = Instant::now();
    let answer = send(&client, &x_at_first, "round and round").await;
    let took = started.elapsed();
    let text = answer.to_string().to_ascii_lowercase();
    assert!(text.contains("a2a-gateway-hops"), "the loop ends with the hop limit's error: {answer}");
    assert!(took < Duration::from_secs(15), "the loop ended after {took:?}");
    let after = (descriptors(first.pid()), descriptors(second.pid()));
    eprintln!("the loop ended after {took:?}; descriptors {before:?} -> {after:?}");
    assert!(after.0 < before.0 + 100 && after.1 < before.1 + 100, "descriptors {before:?} -> {after:?}");
    assert_eq!(agent.posts(), 0, "the agent behind the loop was never sent the message");
}

/// W-f: the card fetch follows no redirect: the host it points at is never asked, and the
/// agent's error names where it pointed.
#[tokio::test]
async fn the_card_fetch_follows_no_redirect() {
    let dir = TempDir::new("hostile-registry-redirect");
    let (redirecting, elsewhere) = (fake_agent("127.0.0.1").await, fake_agent("127.0.0.4").await);
    let target = format!("{}/r/.well-known/agent-card.json", elsewhere.base);
    redirecting.conf.lock().unwrap().redirect = Some(target.clone());
    let gateway = Server::start_gateway(&dir.0, &["--registry-refresh", "1"]).await;
    let url = format!("{}/redir", redirecting.base);
    let (status, answer) = register(&gateway.base, json!({"url": url, "name": "redir"}), &[]).await;
    assert_eq!(status, 201, "{answer}");
    eventually(Duration::from_secs(10), "the redirect named in the agent's error", || async {
        let entry = entry(&gateway.base, "redir").await.unwrap_or_default();
        let error = entry["error"].as_str().or(entry["unreachable"].as_str()).unwrap_or_default().to_owned();
        error.contains(&format!("redirected to {target}"))
    })
    .await;
    // Two checks later, still nothing.
    let fetched = || redirecting.seen().iter().filter(|s| s.path.contains("/.well-known/")).count();
    let first = fetched();
    eventually(Duration::from_secs(15), "two more checks", || std::future::ready(fetched() >= first + 2)).await;
    assert!(elsewhere.seen().is_empty(), "the redirect was followed: {:?}", elsewhere.seen());
    assert!(redirecting.seen().iter().any(|s| s.path.contains("/.well-known/")));
}

/// R5: many registrations cost little: the agents share one HTTP client (one pool, no idle
/// descriptor each), and an agent's routes are made only when it is first called over HTTP.
#[tokio::test]
async fn many_registrations_hold_little_memory_and_no_descriptor_each() {
    const AGENTS: usize = 300;
    let dir = TempDir::new("hostile-registry-many");
    let agent = fake_agent("127.0.0.1").await;
    let gateway = Server::start_gateway(&dir.0, &["--store", "memory"]).await;
    let before = (gateway.rss_kib(), descriptors(gateway.pid()));
    let base = gateway.base.clone();
    let registrations = futures_util::stream::iter(0..AGENTS).map(|i| {
        let (base, url) = (base.clone(), format!("{}/a{i}", agent.base));
        async move { register(&base, json!({"url": url, "name": format!("a{i}")}), &[]).await.0 }
    });
    let statuses: Vec<u16> = registrations.buffer_unordered(16).collect().await;
    assert!(statuses.iter().all(|status| *status == 201), "{statuses:?}");
    let after = (gateway.rss_kib(), descriptors(gateway.pid()));
    eprintln!("{AGENTS} registrations: RSS {} -> {} KiB, descriptors {} -> {}", before.0, after.0, before.1, after.1);
    // Before: about 450 KiB and one descriptor an agent (135 MB and 300 descriptors here).
    assert!(after.0 < before.0 + 60 * 1024, "RSS {} -> {} KiB", before.0, after.0);
    assert!(after.1 < before.1 + 50, "descriptors {} -> {}", before.1, after.1);
}
