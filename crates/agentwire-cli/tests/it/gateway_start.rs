//! `agentwire gateway` in front of agents that are down, come up late, or read their cards
//! loosely: it serves the agents that answer, says which one failed and why, and takes an agent
//! back once it answers.

use std::time::Duration;

use crate::common::{rpc, Server, TempDir};
use serde_json::{json, Value};
use tokio::time::Instant;

fn send(text: &str) -> Value {
    json!({"message": {"messageId": format!("m-{text}"), "role": "ROLE_USER", "parts": [{"text": text}]}})
}

/// An agent down at start: the gateway serves the others, answers the agent's callers with its
/// name and the cause, logs it, and serves it once it answers.
#[tokio::test]
async fn a_gateway_serves_its_agents_with_one_of_them_down() {
    let dir = TempDir::new("gateway-down");
    let live = Server::start(&dir.0, &["--store", "memory", "--agent", "echo"]).await;
    let port = agentwire_test::port_to_serve_later();
    let late_url = format!("http://127.0.0.1:{port}");
    let upstreams = [format!("live={}", live.base), format!("late={late_url}")];
    let args = ["--upstream", &upstreams[0], "--upstream", &upstreams[1], "--console"];
    let gateway = Server::start_gateway(&dir.0, &args).await;
    let client = reqwest::Client::new();
    let directory =
        || async { client.get(format!("{}/console", gateway.base)).send().await.unwrap().text().await.unwrap() };
    assert!(directory().await.contains("cannot be reached"), "the console says the agent is down");

    // `rpc` posts to the URL it is given with a trailing slash: `/agents/live/`.
    let answered = rpc(&client, &format!("{}/agents/live", gateway.base), "SendMessage", send("hi")).await.unwrap();
    assert_eq!(answered["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "a trailing slash: {answered}");
    let refused = rpc(&client, &format!("{}/agents/late", gateway.base), "SendMessage", send("hi")).await.unwrap();
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("\"late\"") && message.contains(&late_url), "names the agent: {refused}");
    assert!(message.to_lowercase().contains("refused"), "says why: {refused}");
    let listing: Value = client.get(format!("{}/agents", gateway.base)).send().await.unwrap().json().await.unwrap();
    assert!(
        listing["agents"][0]["unreachable"].is_string() || listing["agents"][1]["unreachable"].is_string(),
        "{listing}"
    );
    let log = std::fs::read_to_string(&gateway.log).unwrap();
    assert!(log.contains("upstream agent out of reach") && log.contains(&late_url), "{log}");

    // The agent comes up: the gateway takes it on, without a restart.
    let late_address = format!("127.0.0.1:{port}");
    let _late = Server::start(&dir.0, &["--http", &late_address, "--store", "memory", "--agent", "echo"]).await;
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let answer = rpc(&client, &format!("{}/agents/late", gateway.base), "SendMessage", send("now")).await.unwrap();
        if answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED" {
            break;
        }
        assert!(Instant::now() < deadline, "the gateway never took the agent on: {answer}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let listed = directory().await;
    assert!(!listed.contains("cannot be reached"), "the console lists the agent reached since: {listed}");
}

/// An agent whose card says its input is `text` (as the Python SDK's samples write it): the
/// gateway relays text to it, with and without a store of its own.
#[tokio::test]
async fn a_text_mode_agent_gets_text_through_the_gateway() {
    let dir = TempDir::new("gateway-text");
    let card = json!({"name": "Plain", "description": "text in", "version": "1", "defaultInputModes": ["text"],
                      "defaultOutputModes": ["text"], "capabilities": {}, "skills": []});
    let card_file = dir.0.join("card.json");
    std::fs::write(&card_file, card.to_string()).unwrap();
    let agent =
        Server::start(&dir.0, &["--store", "memory", "--agent", "echo", "--card", card_file.to_str().unwrap()]).await;
    let client = reqwest::Client::new();
    for extra in [vec![], vec!["--store", "memory"]] {
        let mut args = vec!["--upstream", &agent.base];
        args.extend(extra.iter().copied());
        let gateway = Server::start_gateway(&dir.0, &args).await;
        let answered = rpc(&client, &gateway.base, "SendMessage", send("hello")).await.unwrap();
        assert_eq!(answered["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{extra:?}: {answered}");
    }
}

/// `--rate-limit` on a gateway without a store of its own: the gateway's callers are limited as
/// a server's are, answered 429 with when to retry once past the rate and burst.
#[tokio::test]
async fn a_gateway_without_a_store_limits_its_callers_rate() {
    let dir = TempDir::new("gateway-rate");
    let agent = Server::start(&dir.0, &["--store", "memory", "--agent", "echo"]).await;
    let args = ["--upstream", &agent.base, "--rate-limit", "5", "--rate-burst", "5"];
    let gateway = Server::start_gateway(&dir.0, &args).await;
    let client = reqwest::Client::new();
    let mut statuses = Vec::new();
    for _ in 0..20 {
        let answer = client.get(format!("{}/tasks", gateway.base)).header("A2A-Version", "1.0").send().await.unwrap();
        statuses.push((answer.status().as_u16(), answer.headers().contains_key("retry-after")));
    }
    let limited = statuses.iter().filter(|(status, retry)| *status == 429 && *retry).count();
    // Five at once, then five a second: of twenty calls made at once, most wait.
    assert!(statuses[..5].iter().all(|(status, _)| *status == 200), "{statuses:?}");
    assert!(limited >= 10, "{statuses:?}");
}

/// The first listing a gateway answers, as soon as it serves, names the agents it was started
/// with, also when it keeps them in a store of its own (recorded there as it starts): a caller
/// that waits for the gateway's address and then lists finds them.
#[tokio::test]
async fn a_gateway_lists_its_agents_from_its_first_answer() {
    let dir = TempDir::new("gateway-first-listing");
    let agent = Server::start(&dir.0, &["--store", "memory", "--agent", "echo"]).await;
    let client = reqwest::Client::new();
    for attempt in 0..5 {
        let (upstream, store) = (format!("echo={}", agent.base), format!("sqlite:gateway-{attempt}.db"));
        let gateway = Server::start_gateway(&dir.0, &["--upstream", &upstream, "--store", &store]).await;
        let listing: Value = client.get(format!("{}/agents", gateway.base)).send().await.unwrap().json().await.unwrap();
        let names: Vec<&str> =
            listing["agents"].as_array().unwrap().iter().filter_map(|a| a["name"].as_str()).collect();
        assert_eq!(names, ["echo"], "start {attempt}: {listing}");
    }
}
