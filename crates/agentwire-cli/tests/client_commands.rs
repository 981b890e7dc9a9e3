//! The client commands (`card`, `send`, `get`, `list`, `cancel`, `subscribe`, `push`) against
//! `agentwire serve --agent conformance`, over both JSON bindings: what they print and the exit
//! status they end with.

mod common;

use std::process::Command;

use common::{Server, TempDir};
use serde_json::Value;

const TOKEN: &str = "cli-token";
const TRANSPORTS: [&str; 2] = ["jsonrpc", "http+json"];

/// Runs `agentwire ARGS… --token TOKEN`; returns the exit status and stdout.
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

/// [`agentwire`] with `--transport TRANSPORT`.
fn over(transport: &str, args: &[&str]) -> (i32, String) {
    agentwire(&[args, &["--transport", transport]].concat())
}

/// The JSON objects a `--json` command printed, one per line.
fn objects(stdout: &str) -> Vec<Value> {
    stdout.lines().filter(|l| l.starts_with('{')).map(|l| serde_json::from_str(l).expect("JSON")).collect()
}

async fn server(dir: &TempDir) -> Server {
    let auth = format!("bearer:{TOKEN}");
    Server::start(&dir.0, &["--store", "memory", "--agent", "conformance", "--allow-private-webhooks", "--auth", &auth])
        .await
}

#[tokio::test]
async fn send_get_list_cancel_and_their_exit_statuses() {
    let dir = TempDir::new("cli-client");
    let server = server(&dir).await;
    let url = server.base.as_str();
    for transport in TRANSPORTS {
        let (code, out) = over(transport, &["send", url, "hello", "--json"]);
        assert_eq!(code, 0, "{transport}: {out}");
        let task = &objects(&out)[0]["task"];
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{out}");
        let id = task["id"].as_str().unwrap();

        let (code, out) = over(transport, &["get", url, id]);
        assert_eq!(code, 0, "{out}");
        assert!(out.contains(&format!("task {id} completed")), "{transport}: {out}");

        let (code, out) = over(transport, &["send", url, "tck-multi-turn start", "--json"]);
        assert_eq!(code, 6, "input-required: {out}");
        let asking = objects(&out)[0]["task"].clone();
        let (task_id, context_id) = (asking["id"].as_str().unwrap(), asking["contextId"].as_str().unwrap());
        let (code, out) = over(transport, &["send", url, "done", "--task", task_id, "--context", context_id]);
        assert_eq!(code, 0, "the follow-up completes the task: {out}");

        let (code, out) = over(transport, &["list", url, "--context", context_id, "--json"]);
        assert_eq!(code, 0, "{out}");
        assert_eq!(objects(&out)[0]["tasks"][0]["id"], task_id, "{out}");

        let (code, out) = over(transport, &["send", url, "tck-cancel me", "--no-wait", "--json"]);
        assert_eq!(code, 0, "a running task: {out}");
        let running = objects(&out)[0]["task"]["id"].as_str().unwrap().to_owned();
        let (code, out) = over(transport, &["cancel", url, &running]);
        assert_eq!(code, 4, "canceled: {out}");

        assert_eq!(over(transport, &["send", url, "tck-task-failure"]).0, 3, "failed");
        assert_eq!(over(transport, &["send", url, "tck-auth-required"]).0, 7, "auth-required");

        let (code, out) = over(transport, &["get", url, "no-such-task"]);
        assert_eq!(code, 8, "the agent's error: {out}");
        assert!(out.contains("task not found"), "{out}");
    }
    let (code, out) = agentwire(&["get", "http://127.0.0.1:9", "x"]);
    assert_eq!(code, 9, "unreachable: {out}");
}

#[tokio::test]
async fn streams_show_the_events_as_they_come() {
    let dir = TempDir::new("cli-stream");
    let server = server(&dir).await;
    let url = server.base.as_str();
    for transport in TRANSPORTS {
        let (code, out) = over(transport, &["send", url, "tck-stream-basic go", "--stream"]);
        assert_eq!(code, 0, "{transport}: {out}");
        assert!(out.contains("● working") && out.contains("● completed"), "{transport}: {out}");
        assert!(out.contains("Stream hello from TCK"), "the artifact's text: {out}");

        let (_, out) = over(transport, &["send", url, "tck-long-running subscribe", "--no-wait", "--json"]);
        let id = objects(&out)[0]["task"]["id"].as_str().unwrap().to_owned();
        let (code, out) = over(transport, &["subscribe", url, &id, "--json"]);
        assert_eq!(code, 0, "{out}");
        let events = objects(&out);
        assert_eq!(events[0]["task"]["id"], id.as_str(), "{out}");
        let last = events.last().unwrap();
        assert_eq!(last["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED", "{out}");
    }
}

#[tokio::test]
async fn card_and_push_configs() {
    let dir = TempDir::new("cli-push");
    let server = server(&dir).await;
    let url = server.base.as_str();

    let (code, out) = agentwire(&["card", url]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("JSONRPC 1.0") && out.contains("streaming yes"), "{out}");
    let (_, out) = agentwire(&["card", url, "--json"]);
    let skills = objects(&out)[0]["skills"].as_array().unwrap().len();
    let public = reqwest::get(format!("{url}/.well-known/agent-card.json")).await.unwrap().json::<Value>().await;
    assert!(skills > public.unwrap()["skills"].as_array().unwrap().len(), "with a token, the extended card");

    for transport in TRANSPORTS {
        let (_, out) = over(transport, &["send", url, "tck-multi-turn push", "--json"]);
        let task = objects(&out)[0]["task"]["id"].as_str().unwrap().to_owned();
        let hook = "http://127.0.0.1:9/hook";
        let (code, out) = over(transport, &["push", "set", url, &task, hook, "--notification-token", "n", "--json"]);
        assert_eq!(code, 0, "{transport}: {out}");
        let id = objects(&out)[0]["id"].as_str().unwrap().to_owned();
        let (_, out) = over(transport, &["push", "get", url, &task, &id, "--json"]);
        assert_eq!((objects(&out)[0]["url"].as_str(), objects(&out)[0]["token"].as_str()), (Some(hook), Some("n")));
        let (_, out) = over(transport, &["push", "list", url, &task]);
        assert!(out.contains(&id), "{out}");
        let (code, _) = over(transport, &["push", "delete", url, &task, &id]);
        assert_eq!(code, 0);
        let (_, out) = over(transport, &["push", "list", url, &task]);
        assert!(out.contains("no push configs"), "{transport}: {out}");
    }
}
