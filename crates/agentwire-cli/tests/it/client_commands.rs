//! The client commands (`card`, `send`, `get`, `list`, `cancel`, `subscribe`, `push`) at every
//! interface (JSON-RPC, HTTP+JSON and gRPC, in protocol v1.0 and v0.3) of two agents:
//! `agentwire serve --agent conformance`, and the agent of `interop/python-server` on the official
//! Python SDK (skipped without its interpreter, except under CI). What the commands print, and the
//! exit status they end with.

use std::process::Command;

use crate::common::{keygen, Server, TempDir};
use agentwire_test::{SdkOptions, SdkServer};
use serde_json::Value;

const TOKEN: &str = "cli-token";
const INTERFACES: [(&str, &str); 6] = [
    ("jsonrpc", "1.0"),
    ("http+json", "1.0"),
    ("grpc", "1.0"),
    ("jsonrpc", "0.3"),
    ("http+json", "0.3"),
    ("grpc", "0.3"),
];

/// An agent under test, and what it does differently.
struct Agent {
    url: String,
    /// Whether it lists tasks in v0.3 over JSON-RPC and HTTP+JSON (v0.3 defines no ListTasks).
    lists_tasks_in_v03: bool,
    /// Whether its v0.3 HTTP+JSON interface deletes push configs.
    deletes_configs_over_v03_rest: bool,
    /// The text of the artifact `tck-stream-basic go` streams.
    streamed_text: &'static str,
}

/// Runs `agentwire ARGS… --token TOKEN`; returns the exit status and what it printed.
fn agentwire(args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(args)
        .args(["--token", TOKEN])
        .env("NO_COLOR", "1")
        .output()
        .expect("agentwire runs");
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    let stderr = String::from_utf8_lossy(&output.stderr);
    (output.status.code().expect("an exit status"), format!("{stdout}{stderr}"))
}

/// The JSON objects a `--json` command printed, one per line.
fn objects(stdout: &str) -> Vec<Value> {
    stdout.lines().filter(|l| l.starts_with('{')).map(|l| serde_json::from_str(l).expect("JSON")).collect()
}

async fn agentwire_server(dir: &TempDir) -> (Server, Agent) {
    let auth = format!("bearer:{TOKEN}");
    let args = ["--store", "memory", "--agent", "conformance", "--allow-private-webhooks", "--auth", &auth];
    let server = Server::start(&dir.0, &args).await;
    let agent = Agent {
        url: server.base.clone(),
        lists_tasks_in_v03: true,
        deletes_configs_over_v03_rest: true,
        streamed_text: "Stream hello from TCK",
    };
    (server, agent)
}

async fn python_sdk_server() -> Option<(SdkServer, Agent)> {
    let server = SdkServer::start(SdkOptions { token: Some(TOKEN.into()), ..SdkOptions::default() }).await?;
    let agent = Agent {
        url: server.base.clone(),
        lists_tasks_in_v03: false,
        deletes_configs_over_v03_rest: false,
        streamed_text: "tck-stream-basic go",
    };
    Some((server, agent))
}

/// Runs `agentwire ARGS…` at one interface of an agent.
struct At<'a> {
    agent: &'a Agent,
    transport: &'a str,
    protocol: &'a str,
}

impl At<'_> {
    fn run(&self, args: &[&str]) -> (i32, String) {
        agentwire(&[args, &["--transport", self.transport, "--protocol", self.protocol]].concat())
    }

    fn label(&self) -> String {
        format!("{} {} {}", self.agent.url, self.transport, self.protocol)
    }
}

fn send_get_list_cancel(at: &At<'_>) {
    let (url, label) = (at.agent.url.as_str(), at.label());
    let (code, out) = at.run(&["send", url, "tck-complete-task", "--json"]);
    assert_eq!(code, 0, "{label}: {out}");
    let task = &objects(&out)[0]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{label}: {out}");
    let id = task["id"].as_str().unwrap();

    let (code, out) = at.run(&["get", url, id]);
    assert_eq!(code, 0, "{label}: {out}");
    assert!(out.contains(&format!("task {id} completed")), "{label}: {out}");

    let (code, out) = at.run(&["send", url, "tck-message-response hi"]);
    assert_eq!(code, 0, "{label}: a message reply: {out}");

    let (code, out) = at.run(&["send", url, "tck-multi-turn start", "--json"]);
    assert_eq!(code, 6, "{label}: input-required: {out}");
    let asking = objects(&out)[0]["task"].clone();
    let (task_id, context_id) = (asking["id"].as_str().unwrap(), asking["contextId"].as_str().unwrap());
    let (code, out) = at.run(&["send", url, "done", "--task", task_id, "--context", context_id]);
    assert_eq!(code, 0, "{label}: the follow-up completes the task: {out}");

    let lists = at.protocol == "1.0" || (at.agent.lists_tasks_in_v03 && at.transport != "grpc");
    if lists {
        let (code, out) = at.run(&["list", url, "--context", context_id, "--json"]);
        assert_eq!(code, 0, "{label}: {out}");
        assert_eq!(objects(&out)[0]["tasks"][0]["id"], task_id, "{label}: {out}");
    }

    let (code, out) = at.run(&["send", url, "tck-cancel me", "--no-wait", "--json"]);
    assert_eq!(code, 0, "{label}: a running task: {out}");
    let running = objects(&out)[0]["task"]["id"].as_str().unwrap().to_owned();
    let (code, out) = at.run(&["cancel", url, &running]);
    assert_eq!(code, 0, "{label}: a cancel that canceled succeeded: {out}");
    assert!(out.contains("canceled"), "{label}: {out}");

    assert_eq!(at.run(&["send", url, "tck-task-failure"]).0, 3, "{label}: failed");
    assert_eq!(at.run(&["send", url, "tck-auth-required"]).0, 7, "{label}: auth-required");

    let (code, out) = at.run(&["get", url, "no-such-task"]);
    assert_eq!(code, 8, "{label}: the agent's error: {out}");
    assert!(out.to_lowercase().contains("not found"), "{label}: {out}");
}

fn streams(at: &At<'_>) {
    let (url, label) = (at.agent.url.as_str(), at.label());
    let (code, out) = at.run(&["send", url, "tck-stream-basic go", "--stream"]);
    assert_eq!(code, 0, "{label}: {out}");
    assert!(out.contains("● working") && out.contains("● completed"), "{label}: {out}");
    assert!(out.contains(at.agent.streamed_text), "{label}: the artifact's text: {out}");

    // A streamed follow-up shows the agent's answer and ends with the task, not with the
    // question it answers.
    let (_, out) = at.run(&["send", url, "tck-multi-turn stream", "--json"]);
    let asking = objects(&out)[0]["task"].clone();
    let (task_id, context_id) = (asking["id"].as_str().unwrap(), asking["contextId"].as_str().unwrap());
    let (code, out) = at.run(&["send", url, "done", "--task", task_id, "--context", context_id, "--stream"]);
    assert_eq!(code, 0, "{label}: the streamed follow-up completes the task: {out}");
    assert!(out.contains("● completed"), "{label}: {out}");

    let (_, out) = at.run(&["send", url, "tck-long-running subscribe", "--no-wait", "--json"]);
    let id = objects(&out)[0]["task"]["id"].as_str().unwrap().to_owned();
    let (code, out) = at.run(&["subscribe", url, &id, "--json"]);
    assert_eq!(code, 0, "{label}: {out}");
    let events = objects(&out);
    assert_eq!(events[0]["task"]["id"], id.as_str(), "{label}: {out}");
    let last = events.last().unwrap();
    assert_eq!(last["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED", "{label}: {out}");
}

fn push_configs(at: &At<'_>) {
    let (url, label) = (at.agent.url.as_str(), at.label());
    let (_, out) = at.run(&["send", url, "tck-multi-turn push", "--json"]);
    let task = objects(&out)[0]["task"]["id"].as_str().unwrap().to_owned();
    let hook = "http://127.0.0.1:9/hook";
    let (code, out) = at.run(&["push", "set", url, &task, hook, "--notification-token", "n", "--id", "c1", "--json"]);
    assert_eq!(code, 0, "{label}: {out}");
    assert_eq!(objects(&out)[0]["id"], "c1", "{label}: {out}");
    let (_, out) = at.run(&["push", "get", url, &task, "c1", "--json"]);
    assert_eq!((objects(&out)[0]["url"].as_str(), objects(&out)[0]["token"].as_str()), (Some(hook), Some("n")));
    let (_, out) = at.run(&["push", "list", url, &task]);
    assert!(out.contains("c1"), "{label}: {out}");
    if at.protocol == "0.3" && at.transport == "http+json" && !at.agent.deletes_configs_over_v03_rest {
        return;
    }
    let (code, out) = at.run(&["push", "delete", url, &task, "c1"]);
    assert_eq!(code, 0, "{label}: {out}");
    let (_, out) = at.run(&["push", "list", url, &task]);
    assert!(out.contains("no push configs"), "{label}: {out}");
}

fn card(agent: &Agent) {
    let url = agent.url.as_str();
    let (code, out) = agentwire(&["card", url]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("JSONRPC 1.0") && out.contains("GRPC 0.3") && out.contains("streaming yes"), "{out}");
    let (_, out) = agentwire(&["card", url, "--json"]);
    let skills = objects(&out)[0]["skills"].as_array().unwrap().len();
    let public = Command::new(env!("CARGO_BIN_EXE_agentwire")).args(["card", url, "--json"]).output().unwrap();
    let public = objects(&String::from_utf8(public.stdout).unwrap())[0]["skills"].as_array().unwrap().len();
    assert!(skills > public, "{url}: with a token, the extended card");
}

/// Every command at every interface of `agent`.
fn every_command(agent: &Agent) {
    card(agent);
    for (transport, protocol) in INTERFACES {
        let at = At { agent, transport, protocol };
        send_get_list_cancel(&at);
        streams(&at);
        push_configs(&at);
    }
}

#[tokio::test]
async fn every_command_at_every_interface_of_agentwire() {
    let dir = TempDir::new("cli-client");
    let (_server, agent) = agentwire_server(&dir).await;
    tokio::task::spawn_blocking(move || every_command(&agent)).await.unwrap();
}

#[tokio::test]
async fn every_command_at_every_interface_of_the_python_sdk() {
    let Some((_server, agent)) = python_sdk_server().await else { return };
    tokio::task::spawn_blocking(move || every_command(&agent)).await.unwrap();
}

#[test]
fn an_unreachable_agent_exits_9() {
    let (code, out) = agentwire(&["get", "http://127.0.0.1:9", "x"]);
    assert_eq!(code, 9, "unreachable: {out}");
}

/// The probe's spoofed card verification: `--verify-card-jku http://127.0.0.1:A` trusted any
/// `jku` that began with that text, such as `http://127.0.0.1:A@127.0.0.1:C/…`, which is host C.
/// It is compared as a URL now; a card signed by the key A publishes is verified, and `card`
/// says so.
#[tokio::test]
async fn a_card_is_verified_by_keys_under_the_trusted_url_only() {
    let dir = TempDir::new("jku");
    let key = |name: &str| keygen(&dir.0, name);
    let (trusted_key, other_key) = (key("trusted.pem"), key("other.pem"));
    let serve = |key: &str| ["--store", "memory", "--agent", "echo", "--signing-key", key].map(str::to_owned);
    let trusted = Server::start(&dir.0, &serve(&trusted_key).each_ref().map(String::as_str)).await;
    // The other key's set, published by another server.
    let publisher = Server::start(&dir.0, &serve(&other_key).each_ref().map(String::as_str)).await;
    let host = |server: &Server| server.base.trim_start_matches("http://").to_owned();
    let spoof = format!("http://{}@{}", host(&trusted), host(&publisher));
    let mut args = serve(&other_key).to_vec();
    args.extend(["--public-url".to_owned(), spoof]);
    let spoofing = Server::start(&dir.0, &args.iter().map(String::as_str).collect::<Vec<_>>()).await;

    let (code, out) = agentwire(&["card", &spoofing.base, "--verify-card-jku", &trusted.base]);
    assert_ne!(code, 0, "a key set on another host is nobody's word: {out}");
    assert!(out.contains("not signed by a trusted key") || out.contains("signature"), "{out}");
    let (code, out) = agentwire(&["card", &trusted.base, "--verify-card-jku", &trusted.base]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("signature verified: ES256")
            && out.contains(&format!("of {}/.well-known/jwks.json", trusted.base)),
        "{out}"
    );
    let (code, out) = agentwire(&["card", &trusted.base]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("signed, not verified"), "{out}");
}

/// `agentwire send --idempotency-key` run twice makes one task: the second run is answered with
/// the first's; the key on another message is refused.
#[tokio::test]
async fn send_with_an_idempotency_key_twice_makes_one_task() {
    let dir = TempDir::new("send-key");
    let (server, agent) = agentwire_server(&dir).await;
    let url = agent.url.as_str();
    let run = |text: &str| agentwire(&["send", url, text, "--json", "--idempotency-key", "invoice-7"]);
    let (code, first) = run("tck-complete-task");
    assert_eq!(code, 0, "{first}");
    let (code, again) = run("tck-complete-task");
    assert_eq!(code, 0, "{again}");
    assert_eq!(objects(&again)[0]["task"]["id"], objects(&first)[0]["task"]["id"], "{first}\n{again}");
    let (code, other) = run("tck-multi-turn start");
    assert_ne!(code, 0, "{other}");
    assert!(other.contains("another request"), "{other}");
    drop(server);
}
