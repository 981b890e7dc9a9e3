//! `agentwire gateway`'s registry: agents registered while it runs (over its REST API and with
//! `agentwire registry`), kept in its store across restarts and instances, searched by text and
//! filters, checked on schedule, and shown to each caller only as far as it may see them.

use std::process::Command;
use std::time::Duration;

use agentwire_proto::lf_a2a_v1 as pb;
use agentwire_proto::lf_a2a_v1::a2a_service_client::A2aServiceClient;
use agentwire_test::{SdkOptions, SdkServer};
use serde_json::{json, Value};
use tokio::time::Instant;

use crate::common::{eventually, fresh_database, keygen, rpc, Server, TempDir};

fn send(text: &str) -> Value {
    json!({"message": {"messageId": format!("m-{text}-{}", uuid::Uuid::new_v4()), "role": "ROLE_USER", "parts": [{"text": text}]}})
}

/// An agent card file: `name`, described, with one skill of `id`, named `skill`, tagged `tags`.
fn card_file(dir: &std::path::Path, name: &str, description: &str, skill: (&str, &str, &[&str])) -> String {
    let (id, skill_name, tags) = skill;
    let card = json!({
        "name": name, "description": description, "version": "1",
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "capabilities": {"streaming": true},
        "skills": [{"id": id, "name": skill_name, "description": format!("{skill_name} on request"), "tags": tags,
                    "examples": [format!("please {id}")], "inputModes": ["text/plain", "application/pdf"]}],
    });
    let path = dir.join(format!("{name}.json").replace(' ', "-"));
    std::fs::write(&path, card.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

async fn get(client: &reqwest::Client, url: &str, token: Option<&str>) -> (u16, Value) {
    let mut request = client.get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn register(client: &reqwest::Client, gateway: &str, token: Option<&str>, body: Value) -> (u16, Value) {
    let mut request = client.post(format!("{gateway}/agents")).json(&body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// The names a search of `gateway` finds, in order.
async fn search(client: &reqwest::Client, gateway: &str, query: &str, token: Option<&str>) -> Vec<String> {
    let (status, found) = get(client, &format!("{gateway}/agents?{query}"), token).await;
    assert_eq!(status, 200, "{query}: {found}");
    let agents = found["agents"].as_array().cloned().unwrap_or_default();
    agents.iter().map(|agent| agent["name"].as_str().unwrap_or_default().to_owned()).collect()
}

/// `agentwire registry ARGS`: its exit status and what it printed.
fn registry_command(args: &[&str], token: Option<&str>) -> (i32, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentwire"));
    command.arg("registry").args(args).env_remove("AGENTWIRE_TOKEN");
    if let Some(token) = token {
        command.env("AGENTWIRE_TOKEN", token);
    }
    let output = command.output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.code().unwrap_or(-1), text)
}

/// Three agents registered at run time (an `agentwire serve`, the official Python SDK's agent,
/// and one that is down) are found by text, ranked, by each filter and page by page, over REST,
/// JSON-RPC and the command line; they are served at once, and again after a restart.
#[tokio::test]
async fn registered_agents_are_searched_served_and_kept() {
    let dir = TempDir::new("registry-search");
    let fx_card = card_file(
        &dir.0,
        "Currency desk",
        "Exchange rates and currency conversion",
        ("convert", "Conversion", &["finance"]),
    );
    let fx = Server::start(&dir.0, &["--store", "memory", "--card", &fx_card]).await;
    let Some(python) = SdkServer::start(SdkOptions::default()).await else { return };
    let down = format!("http://127.0.0.1:{}", agentwire_test::free_port());
    let store = format!("sqlite:{}", dir.0.join("gateway.db").display());
    let gateway_args = ["--store", store.as_str(), "--console"];
    let mut gateway = Server::start_gateway(&dir.0, &gateway_args).await;
    let base = gateway.base.clone();
    let client = reqwest::Client::new();

    // From the command line (no --auth: from the gateway's own host), and over REST.
    let (code, printed) = registry_command(&["add", &base, &fx.base, "--name", "fx"], None);
    assert_eq!(code, 0, "{printed}");
    assert!(printed.contains("registered fx") && printed.contains("healthy"), "{printed}");
    let (status, entry) = register(&client, &base, None, json!({"url": python.base})).await;
    assert_eq!(status, 201, "{entry}");
    assert_eq!(entry["name"], "agentwire-interop-agent-python-sdk", "named after its card: {entry}");
    let python_name = entry["name"].as_str().unwrap().to_owned();
    let (status, refused) = register(&client, &base, None, json!({"url": down})).await;
    assert_eq!(status, 400, "a down agent has no card to name it: {refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("needs a name") && message.contains("--name"), "{refused}");
    let (status, entry) = register(&client, &base, None, json!({"url": down, "name": "down"})).await;
    assert_eq!(status, 201, "a down agent is registered all the same: {entry}");
    assert_eq!(entry["healthy"], false, "{entry}");

    // Served at once, in every binding the gateway speaks.
    let answered = rpc(&client, &format!("{base}/agents/fx"), "SendMessage", send("hi")).await.unwrap();
    assert_eq!(answered["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{answered}");
    let task_id = answered["result"]["task"]["id"].as_str().unwrap();
    let task =
        client.get(format!("{base}/agents/fx/tasks/{task_id}")).header("A2A-Version", "1.0").send().await.unwrap();
    assert_eq!(task.status(), 200, "a route with a path parameter, under the agent's path");
    let page = client.get(format!("{base}/agents/fx/console/tasks/{task_id}")).send().await.unwrap();
    assert_eq!(page.status(), 200, "the agent's console, under its path");
    let answered = rpc(&client, &format!("{base}/agents/{python_name}"), "SendMessage", send("hello")).await.unwrap();
    assert!(answered["result"]["task"].is_object() || answered["result"]["message"].is_object(), "{answered}");

    // Text: any word, the card's name weighing most; every field of the skills.
    assert_eq!(search(&client, &base, "q=currency", None).await, ["fx"]);
    assert_eq!(search(&client, &base, "q=interop", None).await, [python_name.as_str()]);
    assert_eq!(search(&client, &base, "q=scenarios", None).await, [python_name.as_str()], "a skill's name");
    assert_eq!(search(&client, &base, "q=please+convert", None).await, ["fx"], "a skill's example");
    let ranked = search(&client, &base, "q=exchange+agent", None).await;
    assert_eq!(ranked.len(), 2, "{ranked:?}");
    assert!(search(&client, &base, "q=zebra", None).await.is_empty());
    // Filters.
    assert_eq!(search(&client, &base, "tag=finance", None).await, ["fx"]);
    assert_eq!(search(&client, &base, "tag=echo", None).await, [python_name.as_str()]);
    assert_eq!(search(&client, &base, "skill=convert", None).await, ["fx"]);
    assert_eq!(search(&client, &base, "inputMode=application/pdf", None).await, ["fx"]);
    let text_out = search(&client, &base, "outputMode=text/plain", None).await;
    assert!(text_out.contains(&"fx".to_owned()), "{text_out:?}");
    let jsonrpc = search(&client, &base, "binding=JSONRPC", None).await;
    assert!(jsonrpc.contains(&"fx".to_owned()) && jsonrpc.contains(&python_name), "{jsonrpc:?}");
    assert_eq!(search(&client, &base, "version=0.3&skill=convert", None).await, ["fx"]);
    assert_eq!(search(&client, &base, "healthy=false", None).await, ["down"]);
    assert_eq!(search(&client, &base, "healthy=true", None).await.len(), 2);
    assert!(search(&client, &base, "signed=true", None).await.is_empty());
    assert_eq!(search(&client, &base, "q=currency&tag=finance&healthy=true", None).await, ["fx"]);
    let (status, refused) = get(&client, &format!("{base}/agents?pageSize=1000"), None).await;
    assert_eq!(status, 400, "{refused}");

    // Pages, and the card each agent is served with.
    let (_, first) = get(&client, &format!("{base}/agents?pageSize=2"), None).await;
    assert_eq!(first["totalSize"], 3, "{first}");
    let token = first["nextPageToken"].as_str().expect("a next page");
    let (_, second) = get(&client, &format!("{base}/agents?pageSize=2&pageToken={token}"), None).await;
    assert_eq!(second["agents"].as_array().unwrap().len(), 1);
    assert!(second.get("nextPageToken").is_none(), "{second}");
    // By name: the Python SDK's agent, the one down, then fx.
    let fx_entry = &second["agents"][0];
    assert_eq!(fx_entry["url"], format!("{base}/agents/fx"));
    assert_eq!(fx_entry["card"]["supportedInterfaces"][0]["url"], format!("{base}/agents/fx"), "{fx_entry}");
    assert!(first["agents"][1]["unreachable"].is_string(), "the down agent says why: {first}");

    // The same search as JSON-RPC, and from the command line.
    let body =
        json!({"jsonrpc": "2.0", "id": 7, "method": "ListAgents", "params": {"query": "currency", "tag": "finance"}});
    let answer: Value = client.post(format!("{base}/agents")).json(&body).send().await.unwrap().json().await.unwrap();
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["result"]["agents"][0]["name"], "fx", "{answer}");
    let (code, printed) = registry_command(&["search", &base, "currency"], None);
    assert_eq!(code, 0, "{printed}");
    assert!(printed.starts_with("fx  healthy  unsigned  Currency desk"), "{printed}");
    let (code, printed) = registry_command(&["list", &base, "--healthy", "false"], None);
    assert!(code == 0 && printed.starts_with("down  unhealthy"), "{printed}");

    // The console lists them, with their health, and searches them.
    let page = client.get(format!("{base}/console?q=currency")).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("Currency desk") && page.contains("healthy") && !page.contains("interop agent"), "{page}");

    // A restart keeps the registrations, and serves them again.
    let (status, _) = gateway.terminate().await;
    assert!(status.success());
    let gateway = Server::start_gateway(&dir.0, &gateway_args).await;
    let base = gateway.base.clone();
    assert_eq!(search(&client, &base, "", None).await.len(), 3, "the registrations are back after a restart");
    eventually(Duration::from_secs(10), "the agents are served again after a restart", || async {
        let answered = rpc(&client, &format!("{base}/agents/fx"), "SendMessage", send("again")).await.unwrap();
        answered["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    })
    .await;

    // Removed: gone from the search and from its path.
    let (code, printed) = registry_command(&["remove", &base, "fx"], None);
    assert_eq!(code, 0, "{printed}");
    assert!(search(&client, &base, "q=currency", None).await.is_empty());
    let gone = client.get(format!("{base}/agents/fx/.well-known/agent-card.json")).send().await.unwrap();
    assert_eq!(gone.status(), 404);
    let (code, printed) = registry_command(&["remove", &base, "fx"], None);
    assert_eq!(code, 8, "{printed}");
}

/// Only an admin changes the registry (401 without credentials, 403 without the right); an agent
/// registered for one principal is, to every other caller, no agent at all: not listed, not
/// found, no card, and no operation over JSON-RPC, HTTP+JSON or gRPC.
#[tokio::test]
async fn admins_register_and_visibility_hides_agents_from_other_callers() {
    let dir = TempDir::new("registry-visibility");
    let agent = Server::start(&dir.0, &["--store", "memory"]).await;
    let auth = "bearer:admin=admin-token,alice=alice-token,bob=bob-token,ops=ops-token";
    let args = ["--store", "memory", "--auth", auth, "--registry-admin", "admin", "--grpc", "127.0.0.1:0", "--console"];
    let gateway = Server::start_gateway(&dir.0, &args).await;
    let base = gateway.base.clone();
    let client = reqwest::Client::new();

    let registration = json!({"url": agent.base, "name": "secret", "visibility": {"principals": ["alice"]}});
    let (status, _) = register(&client, &base, None, registration.clone()).await;
    assert_eq!(status, 401, "no credentials");
    let (status, refused) = register(&client, &base, Some("bob-token"), registration.clone()).await;
    assert_eq!(status, 403, "{refused}");
    let (code, printed) = registry_command(&["add", &base, &agent.base, "--name", "secret"], Some("bob-token"));
    assert_eq!(code, 8, "{printed}");
    assert!(printed.contains("403"), "{printed}");
    let (status, entry) = register(&client, &base, Some("admin-token"), registration).await;
    assert_eq!(status, 201, "{entry}");
    let public = json!({"url": agent.base, "name": "open"});
    assert_eq!(register(&client, &base, Some("admin-token"), public).await.0, 201);

    // Alice sees it, and calls it on every binding.
    assert_eq!(search(&client, &base, "", Some("alice-token")).await, ["open", "secret"]);
    let card_url = format!("{base}/agents/secret/.well-known/agent-card.json");
    let (status, card) = get(&client, &card_url, Some("alice-token")).await;
    assert_eq!(status, 200, "{card}");
    let grpc = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|interface| interface["protocolBinding"] == "GRPC")
        .and_then(|interface| interface["url"].as_str())
        .unwrap()
        .to_owned();
    let jsonrpc = |token: &'static str| {
        let client = client.clone();
        let url = format!("{base}/agents/secret/");
        async move {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": send("psst")});
            let response = client.post(url).bearer_auth(token).json(&body).send().await.unwrap();
            (response.status().as_u16(), response.json::<Value>().await.unwrap_or(Value::Null))
        }
    };
    let rest = |token: &'static str| {
        let client = client.clone();
        let url = format!("{base}/agents/secret/tasks");
        async move {
            let response = client.get(url).header("A2A-Version", "1.0").bearer_auth(token).send().await.unwrap();
            response.status().as_u16()
        }
    };
    let over_grpc = |token: &'static str| {
        let grpc = grpc.clone();
        async move {
            let mut client = A2aServiceClient::connect(grpc).await.unwrap();
            let message = pb::Message {
                message_id: uuid::Uuid::new_v4().to_string(),
                role: pb::Role::User as i32,
                parts: vec![pb::Part { content: Some(pb::part::Content::Text("psst".into())), ..Default::default() }],
                ..Default::default()
            };
            let send = pb::SendMessageRequest { message: Some(message), tenant: "secret".into(), ..Default::default() };
            let mut request = tonic::Request::new(send);
            request.metadata_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
            client.send_message(request).await
        }
    };
    let (status, answered) = jsonrpc("alice-token").await;
    assert_eq!((status, &answered["result"]["task"]["status"]["state"]), (200, &json!("TASK_STATE_COMPLETED")));
    assert_eq!(rest("alice-token").await, 200);
    assert!(over_grpc("alice-token").await.is_ok());

    // Bob does not: not listed, not found, not served, on any binding; the same as no agent.
    assert_eq!(search(&client, &base, "", Some("bob-token")).await, ["open"]);
    assert_eq!(search(&client, &base, "", None).await, ["open"], "anonymous callers see public agents only");
    assert!(search(&client, &base, "q=echo", Some("bob-token")).await.iter().all(|name| name != "secret"));
    let (status, hidden) = get(&client, &card_url, Some("bob-token")).await;
    let (_, unknown) = get(&client, &format!("{base}/agents/nothing/.well-known/agent-card.json"), None).await;
    assert_eq!(status, 404, "{hidden}");
    assert_eq!(hidden.to_string().replace("secret", "nothing"), unknown.to_string(), "as if there were no such agent");
    assert_eq!(get(&client, &card_url, None).await.0, 404);
    assert_eq!(jsonrpc("bob-token").await.0, 404);
    assert_eq!(rest("bob-token").await, 404);
    let refused = over_grpc("bob-token").await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");
    assert!(refused.message().contains("no agent named \"secret\""), "{refused:?}");
    let page =
        client.get(format!("{base}/console")).bearer_auth("bob-token").send().await.unwrap().text().await.unwrap();
    assert!(page.contains("open") && !page.contains("secret"), "the console hides it too: {page}");
    let page =
        client.get(format!("{base}/console")).bearer_auth("alice-token").send().await.unwrap().text().await.unwrap();
    assert!(page.contains("secret"), "{page}");
    // Searching without credentials is no failed authentication: past the 50 an address may
    // fail, its authenticated calls still go through.
    for _ in 0..60 {
        assert_eq!(search(&client, &base, "", None).await, ["open"]);
    }
    assert_eq!(jsonrpc("alice-token").await.0, 200, "anonymous searches did not spend the address's failures");

    // Nor may bob remove it; an admin may.
    let removal = client.delete(format!("{base}/agents/secret")).bearer_auth("bob-token").send().await.unwrap();
    assert_eq!(removal.status(), 403);
    let removal = client.delete(format!("{base}/agents/secret")).bearer_auth("admin-token").send().await.unwrap();
    assert_eq!(removal.status(), 204);
}

/// A card that changes upstream is re-indexed and found by its new skill; an agent that stops
/// answering is marked unhealthy (and still listed with its last card), and healthy once it
/// answers again.
#[tokio::test]
async fn cards_are_checked_reindexed_and_health_follows_the_agent() {
    let dir = TempDir::new("registry-refresh");
    let address = format!("127.0.0.1:{}", agentwire_test::port_to_serve_later());
    let tides = card_file(&dir.0, "Harbour", "Harbour master", ("tides", "Tide tables", &["sea"]));
    let volcanoes = card_file(&dir.0, "Harbour2", "Harbour master", ("volcanoes", "Volcano watch", &["land"]));
    let mut agent = Server::start(&dir.0, &["--http", &address, "--store", "memory", "--card", &tides]).await;
    let args = ["--store", "memory", "--registry-refresh", "1", "--registry-unhealthy-after", "1"];
    let gateway = Server::start_gateway(&dir.0, &args).await;
    let base = gateway.base.clone();
    let client = reqwest::Client::new();
    let (status, _) =
        register(&client, &base, None, json!({"url": format!("http://{address}"), "name": "harbour"})).await;
    assert_eq!(status, 201);
    assert_eq!(search(&client, &base, "q=tide", None).await, ["harbour"]);

    agent.terminate().await;
    eventually(Duration::from_secs(10), "the agent is marked unhealthy", || async {
        search(&client, &base, "healthy=false", None).await == ["harbour"]
    })
    .await;
    assert_eq!(search(&client, &base, "q=tide", None).await, ["harbour"], "found by its last card while down");

    let _agent = Server::start(&dir.0, &["--http", &address, "--store", "memory", "--card", &volcanoes]).await;
    eventually(Duration::from_secs(10), "the new card is indexed", || async {
        search(&client, &base, "q=volcano", None).await == ["harbour"]
    })
    .await;
    assert!(search(&client, &base, "q=tide", None).await.is_empty(), "no longer found by what it said");
    assert_eq!(search(&client, &base, "healthy=true&skill=volcanoes", None).await, ["harbour"]);
    let log = std::fs::read_to_string(&gateway.log).unwrap();
    assert!(log.contains("registered agent marked unhealthy"), "{log}");
}

/// Two gateway instances on one PostgreSQL database serve one registry: an agent registered on
/// one is found and served through the other within two seconds, and removed from both.
#[tokio::test]
async fn gateways_on_one_postgres_share_the_registry() {
    let Some(database) = fresh_database("registry").await else { return };
    let dir = TempDir::new("registry-postgres");
    let agent = Server::start(&dir.0, &["--store", "memory"]).await;
    let args = ["--store", database.as_str()];
    let first = Server::start_gateway(&dir.0, &args).await;
    let second = Server::start_gateway(&dir.0, &args).await;
    let client = reqwest::Client::new();
    let (status, entry) = register(&client, &first.base, None, json!({"url": agent.base, "name": "shared"})).await;
    assert_eq!(status, 201, "{entry}");
    let registered = Instant::now();
    eventually(Duration::from_secs(2), "the second instance finds it", || async {
        search(&client, &second.base, "q=echo", None).await == ["shared"]
    })
    .await;
    eventually(
        Duration::from_secs(2).saturating_sub(registered.elapsed()),
        "the second instance serves it",
        || async {
            let answer = rpc(&client, &format!("{}/agents/shared", second.base), "SendMessage", send("hi")).await;
            answer.is_ok_and(|answer| answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED")
        },
    )
    .await;
    let removal = client.delete(format!("{}/agents/shared", second.base)).send().await.unwrap();
    assert_eq!(removal.status(), 204);
    eventually(Duration::from_secs(2), "the first instance drops it", || async {
        let card = client.get(format!("{}/agents/shared/.well-known/agent-card.json", first.base)).send().await;
        card.is_ok_and(|card| card.status() == 404)
    })
    .await;
}

/// With `--registry-keys`, a card signed by a trusted key is `verified` (and found by
/// `signed=true`), one signed by another key `invalid`, one without a signature `unsigned`.
#[tokio::test]
async fn card_signatures_are_checked_with_the_trusted_keys() {
    let dir = TempDir::new("registry-signatures");
    let key = |name: &str| keygen(&dir.0, name);
    let (trusted_key, other_key) = (key("trusted.pem"), key("other.pem"));
    let trusted = Server::start(&dir.0, &["--store", "memory", "--signing-key", &trusted_key]).await;
    let other = Server::start(&dir.0, &["--store", "memory", "--signing-key", &other_key]).await;
    let unsigned = Server::start(&dir.0, &["--store", "memory"]).await;
    let client = reqwest::Client::new();
    let keys =
        client.get(format!("{}/.well-known/jwks.json", trusted.base)).send().await.unwrap().text().await.unwrap();
    let keys_file = dir.0.join("trusted.json");
    std::fs::write(&keys_file, keys).unwrap();
    let gateway =
        Server::start_gateway(&dir.0, &["--store", "memory", "--registry-keys", keys_file.to_str().unwrap()]).await;
    let base = gateway.base.clone();
    for (name, agent) in [("trusted", &trusted), ("other", &other), ("unsigned", &unsigned)] {
        let (status, entry) = register(&client, &base, None, json!({"url": agent.base, "name": name})).await;
        assert_eq!(status, 201, "{entry}");
    }
    let (_, listed) = get(&client, &format!("{base}/agents"), None).await;
    let states: Vec<(&str, &str)> = listed["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|agent| (agent["name"].as_str().unwrap(), agent["signature"].as_str().unwrap()))
        .collect();
    assert_eq!(states, [("other", "invalid"), ("trusted", "verified"), ("unsigned", "unsigned")], "{listed}");
    assert_eq!(search(&client, &base, "signed=true", None).await, ["trusted"]);
    assert_eq!(search(&client, &base, "signed=false", None).await, ["other", "unsigned"]);
}

/// A gateway of one agent at its root serves that agent's console at `/console`, and its
/// registry beside it: an agent registered later has its console under its own path.
#[tokio::test]
async fn a_gateway_of_one_agent_at_its_root_keeps_its_console() {
    let dir = TempDir::new("registry-root-console");
    let agent = Server::start(&dir.0, &["--store", "memory"]).await;
    let other = Server::start(&dir.0, &["--store", "memory", "--agent", "conformance"]).await;
    let gateway = Server::start_gateway(&dir.0, &["--store", "memory", "--console", "--upstream", &agent.base]).await;
    let client = reqwest::Client::new();
    let page = client.get(format!("{}/console", gateway.base)).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("Echo") && page.contains("Tasks"), "the root agent's own console: {page}");
    let (status, _) = register(&client, &gateway.base, None, json!({"url": other.base, "name": "other"})).await;
    assert_eq!(status, 201);
    let page = client.get(format!("{}/agents/other/console", gateway.base)).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("conformance"), "{page}");
    let answered = rpc(&client, &gateway.base, "SendMessage", send("root")).await.unwrap();
    assert_eq!(answered["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{answered}");
}

/// Registry calls are served in the gateway's order like its operations: counted in its
/// metrics by name, and charged to the caller's rate.
#[tokio::test]
async fn registry_calls_are_metered_and_rate_limited() {
    let dir = TempDir::new("registry-metered");
    let agent = Server::start(&dir.0, &["--store", "memory"]).await;
    let args = ["--store", "memory", "--metrics", "--rate-limit", "5", "--rate-burst", "5"];
    let gateway = Server::start_gateway(&dir.0, &args).await;
    let client = reqwest::Client::new();
    let (status, entry) = register(&client, &gateway.base, None, json!({"url": agent.base, "name": "echo"})).await;
    assert_eq!(status, 201, "{entry}");
    let mut statuses = Vec::new();
    for _ in 0..20 {
        let answer = client.get(format!("{}/agents?q=echo", gateway.base)).send().await.unwrap();
        statuses.push((answer.status().as_u16(), answer.headers().contains_key("retry-after")));
    }
    let limited = statuses.iter().filter(|(status, retry)| *status == 429 && *retry).count();
    assert!(limited >= 10, "past the rate, searches are refused with when to retry: {statuses:?}");
    let metrics = client.get(format!("{}/metrics", gateway.base)).send().await.unwrap().text().await.unwrap();
    let counted = |operation: &str, outcome: &str| {
        metrics.lines().any(|line| {
            line.starts_with("a2a_server_requests_total")
                && line.contains(&format!("operation=\"{operation}\""))
                && line.contains(&format!("outcome=\"{outcome}\""))
        })
    };
    assert!(
        counted("RegisterAgent", "ok") && counted("ListAgents", "ok") && counted("ListAgents", "error"),
        "{metrics}"
    );
}
