//! `serve --agent openai`: a chat model served as an A2A agent, tested against LiteLLM's proxy (an
//! OpenAI-compatible server from PyPI, `AGENTWIRE_LITELLM`) serving the scripted model of
//! interop/model, and the official MCP Python SDK's example server (`AGENTWIRE_MCP_PYTHON`) for
//! tools. Without them the tests are skipped, except under CI (`scripts/test` installs both).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::time::Instant;

use crate::common::{eventually, rpc, Server, TempDir};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// LiteLLM's proxy serving the scripted model, killed when dropped.
pub(crate) struct Model {
    child: Child,
    pub(crate) url: String,
    /// Every request the model got, one JSON line each, and `{"cancelled": true}` when a client
    /// went away from a slow answer.
    record: PathBuf,
}

impl Model {
    /// `None` when the proxy is not installed (never under CI).
    pub(crate) fn start(dir: &Path) -> Option<Self> {
        let Some(litellm) = std::env::var_os("AGENTWIRE_LITELLM") else {
            assert!(std::env::var_os("CI").is_none(), "CI runs need AGENTWIRE_LITELLM (scripts/test sets it)");
            eprintln!("skipped: AGENTWIRE_LITELLM is not set");
            return None;
        };
        let port = agentwire_test::port_to_serve_later();
        let record = dir.join("requests.jsonl");
        let mut child = Command::new("python3")
            .arg(format!("{ROOT}/interop/model/serve.py"))
            .arg("--litellm")
            .arg(litellm)
            .args(["--port", &port.to_string(), "--record"])
            .arg(&record)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(dir.join("litellm.log")).unwrap())
            .spawn()
            .expect("python3 starts");
        // serve.py prints `ready` once the proxy answers, or exits (within its own 60 s bound).
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ready", "the proxy did not start; see {}", dir.join("litellm.log").display());
        Some(Self { child, url: format!("http://127.0.0.1:{port}/v1"), record })
    }

    fn requests(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.record).unwrap_or_default();
        text.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg(self.child.id().to_string()).status();
        let _ = self.child.wait();
    }
}

pub(crate) fn mcp_server() -> Option<String> {
    let Some(python) = std::env::var_os("AGENTWIRE_MCP_PYTHON") else {
        assert!(std::env::var_os("CI").is_none(), "CI runs need AGENTWIRE_MCP_PYTHON (scripts/test sets it)");
        eprintln!("skipped: AGENTWIRE_MCP_PYTHON is not set");
        return None;
    };
    Some(format!("{} {ROOT}/interop/mcp-python/server.py stdio", python.to_string_lossy()))
}

/// `agentwire serve --agent openai` in front of `model`, with `args` added.
async fn serve(dir: &TempDir, model: &Model, args: &[&str]) -> Server {
    let mut all = vec!["--agent", "openai", "--base-url", &model.url, "--model", "scripted", "--store", "memory"];
    all.extend_from_slice(args);
    Server::start_with_env(&dir.0, &all, &[("OPENAI_API_KEY", "sk-scripted")]).await
}

/// A JSON-RPC call's result (or the whole answer, if it is an error).
async fn call(base: &str, method: &str, params: Value) -> Value {
    let answer = rpc(&reqwest::Client::new(), base, method, params).await.unwrap();
    answer.get("result").cloned().unwrap_or(answer)
}

/// Sends `text` (on `task` or in `context` when given) and waits for the task to stop.
async fn send(base: &str, text: &str, context: Option<&str>, task: Option<&str>) -> Value {
    let mut message =
        json!({"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER", "parts": [{"text": text}]});
    if let Some(context) = context {
        message["contextId"] = json!(context);
    }
    if let Some(task) = task {
        message["taskId"] = json!(task);
    }
    call(base, "SendMessage", json!({"message": message})).await["task"].clone()
}

pub(crate) fn state(task: &Value) -> &str {
    task["status"]["state"].as_str().unwrap_or_default()
}

pub(crate) fn answer(task: &Value) -> String {
    let artifact = task["artifacts"].as_array().into_iter().flatten().find(|a| a["artifactId"] == "answer");
    let parts = artifact.and_then(|a| a["parts"].as_array()).cloned().unwrap_or_default();
    parts.iter().filter_map(|part| part["text"].as_str()).collect()
}

/// The records (`toolCalls`, `toolResult`, `approval`) of the task's history, in order.
fn records(task: &Value) -> Vec<Value> {
    let messages = task["history"].as_array().cloned().unwrap_or_default();
    let data = messages
        .iter()
        .filter(|m| m["role"] == "ROLE_AGENT")
        .flat_map(|m| m["parts"].as_array().cloned().unwrap_or_default());
    data.filter_map(|part| part.get("data").cloned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_answers_streams_and_remembers_its_context() {
    let dir = TempDir::new("model-conversation");
    let Some(model) = Model::start(&dir.0) else { return };
    let server = serve(&dir, &model, &[]).await;

    // A plain question completes with the model's answer.
    let first = send(&server.base, "hello", None, None).await;
    assert_eq!(state(&first), "TASK_STATE_COMPLETED", "{first}");
    assert_eq!(answer(&first), "You said 'hello'; this conversation has 1 user message(s) and 0 answer(s).");

    // A second task in the same context sees the first one's turn: its question and answer.
    let context = first["contextId"].as_str().unwrap();
    let second = send(&server.base, "and then?", Some(context), None).await;
    assert_eq!(answer(&second), "You said 'and then?'; this conversation has 2 user message(s) and 1 answer(s).");
    let asked = model.requests().last().cloned().unwrap();
    assert_eq!(asked["messages"][1]["content"], answer(&first), "{asked}");

    // `agentwire send --stream` gets the answer a piece at a time: the first piece makes the
    // artifact, the others append, and the last chunk replaces them with the whole text.
    let sentence = "You said 'stream this to me please'; this conversation has 1 user message(s) and 0 answer(s).";
    let output = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["send", &server.base, "stream this to me please", "--stream", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let events: Vec<Value> =
        String::from_utf8(output.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let chunks: Vec<&Value> = events.iter().filter_map(|event| event.get("artifactUpdate")).collect();
    let text = |chunk: &Value| chunk["artifact"]["parts"][0]["text"].as_str().unwrap_or_default().to_owned();
    let (last, pieces) = chunks.split_last().expect("artifact chunks");
    assert!(pieces.len() >= 5, "a piece a word: {events:?}");
    assert_eq!(pieces[0].get("append"), None, "{:?}", pieces[0]);
    assert!(pieces[1..].iter().all(|chunk| chunk["append"] == true && chunk.get("lastChunk").is_none()), "{pieces:?}");
    assert_eq!(pieces.iter().map(|chunk| text(chunk)).collect::<String>(), sentence);
    assert_eq!((last.get("append"), &last["lastChunk"]), (None, &json!(true)), "{last}");
    assert_eq!(text(last), sentence);
    let last_status = events.iter().rev().find_map(|event| event.get("statusUpdate")).unwrap();
    assert_eq!(last_status["status"]["state"], "TASK_STATE_COMPLETED");
    // The stored answer is one part; the command's own output shows it once, on one line.
    let id = events[0]["task"]["id"].as_str().unwrap();
    let stored = call(&server.base, "GetTask", json!({"id": id})).await;
    assert_eq!(stored["artifacts"][0]["parts"].as_array().map(Vec::len), Some(1), "{stored}");
    let shown = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["send", &server.base, "once", "--stream"])
        .output()
        .unwrap();
    let shown = String::from_utf8(shown.stdout).unwrap();
    let lines: Vec<&str> = shown.lines().filter(|line| line.contains("You said")).collect();
    assert_eq!(
        lines,
        ["  answer: You said 'once'; this conversation has 1 user message(s) and 0 answer(s)."],
        "{shown}"
    );

    // An upstream error fails the task with the server's message.
    let failed = send(&server.base, "please fail", None, None).await;
    assert_eq!(state(&failed), "TASK_STATE_FAILED", "{failed}");
    let reason = failed["status"]["message"]["parts"][0]["text"].as_str().unwrap();
    assert!(reason.contains("the scripted model failed on purpose"), "{reason}");

    // A file of text reaches the model as text; a file it cannot read is refused.
    let file = json!({"raw": "YSxiCjEsMg==", "filename": "data.csv", "mediaType": "text/csv"});
    let message = json!({"messageId": "m-file", "role": "ROLE_USER", "parts": [{"text": "Sum it"}, file]});
    let read = call(&server.base, "SendMessage", json!({"message": message})).await;
    assert_eq!(state(&read["task"]), "TASK_STATE_COMPLETED", "{read}");
    let asked = model.requests().last().cloned().unwrap();
    assert_eq!(asked["messages"][0]["content"], "Sum it\n\nFile data.csv:\na,b\n1,2", "{asked}");
    let image = json!({"raw": "iVBORw0KGgo=", "filename": "a.png", "mediaType": "image/png"});
    let message = json!({"messageId": "m-image", "role": "ROLE_USER", "parts": [image]});
    let refused = call(&server.base, "SendMessage", json!({"message": message})).await;
    assert_eq!(refused["error"]["code"], -32005, "ContentTypeNotSupportedError: {refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn canceling_a_task_aborts_the_model_request() {
    let dir = TempDir::new("model-cancel");
    let Some(model) = Model::start(&dir.0) else { return };
    let server = serve(&dir, &model, &[]).await;
    let message = json!({"messageId": "m-slow", "role": "ROLE_USER", "parts": [{"text": "answer slowly"}]});
    let params = json!({"message": message, "configuration": {"returnImmediately": true}});
    let task = call(&server.base, "SendMessage", params).await["task"].clone();
    let id = task["id"].as_str().unwrap().to_owned();
    // The model has the request once it is recorded; then the task is canceled.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !model.requests().iter().any(|r| r["messages"][0]["content"] == "answer slowly") {
        assert!(Instant::now() < deadline, "the model never got the request");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let canceled = call(&server.base, "CancelTask", json!({"id": id})).await;
    assert_eq!(state(&canceled), "TASK_STATE_CANCELED", "{canceled}");
    // The proxy sees its client go away: the scripted model records the cancellation.
    while !model.requests().iter().any(|r| r["cancelled"] == true) {
        assert!(Instant::now() < deadline, "the model request was not aborted: {:?}", model.requests());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_calls_mcp_tools_and_asks_before_the_gated_ones() {
    let dir = TempDir::new("model-tools");
    let Some(model) = Model::start(&dir.0) else { return };
    let Some(tools) = mcp_server() else { return };

    // A tool call is made on the MCP server, recorded in the task, and its result reaches the answer.
    let free = serve(&dir, &model, &["--mcp-server", &tools]).await;
    // The card has one skill, the chat, which names the tools: a caller that maps skills to tools
    // (agentwire's MCP server) must not offer `add` as a tool that would chat with the model.
    let card: Value =
        reqwest::get(format!("{}/.well-known/agent-card.json", free.base)).await.unwrap().json().await.unwrap();
    let skills = card["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 1, "{skills:?}");
    assert!(skills[0]["description"].as_str().unwrap().contains("add (Add two numbers"), "{skills:?}");
    let task = send(&free.base, "add 2 and 3", None, None).await;
    assert_eq!(state(&task), "TASK_STATE_COMPLETED", "{task}");
    assert!(answer(&task).starts_with("The tool said 5.0"), "{task}");
    let recorded = records(&task);
    assert_eq!(recorded[0]["toolCalls"]["calls"][0]["name"], "add", "{recorded:?}");
    assert_eq!(recorded[1]["toolResult"]["content"], "5.0", "{recorded:?}");

    // With --approve add, the call waits for the user: a "no" refuses it, a "yes" makes it.
    let gated = serve(&dir, &model, &["--mcp-server", &tools, "--approve", "add"]).await;
    let asking = send(&gated.base, "add 2 and 3", None, None).await;
    assert_eq!(state(&asking), "TASK_STATE_INPUT_REQUIRED", "{asking}");
    let question = &asking["status"]["message"];
    assert!(question["parts"][0]["text"].as_str().unwrap().contains("wants to call add"), "{question}");
    assert_eq!(question["parts"][1]["data"]["approval"]["calls"][0]["arguments"], "{\"a\": 2, \"b\": 3}");
    let id = asking["id"].as_str().unwrap();
    let approved = send(&gated.base, "yes", None, Some(id)).await;
    assert_eq!(state(&approved), "TASK_STATE_COMPLETED", "{approved}");
    assert!(answer(&approved).starts_with("The tool said 5.0"), "{approved}");

    let asking = send(&gated.base, "add 2 and 3", None, None).await;
    let id = asking["id"].as_str().unwrap();
    let refused = send(&gated.base, "no, do not", None, Some(id)).await;
    assert_eq!(state(&refused), "TASK_STATE_COMPLETED", "{refused}");
    assert_eq!(
        answer(&refused),
        "The tool said Error: The user did not approve this call; they said: no, do not",
        "{refused}"
    );
    let results: Vec<Value> = records(&refused).into_iter().filter_map(|r| r.get("toolResult").cloned()).collect();
    assert_eq!(results.len(), 1, "the refused call was not made: {results:?}");
    assert_eq!(results[0]["isError"], true);
}

/// What would show only at the first task is said in the log at start: a wrong model name, a key
/// the server refuses, a server that does not answer. The agent is served either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_server_is_checked_at_start() {
    let dir = TempDir::new("model-check");
    let logged = |server: &Server, text: &'static str| {
        let log = server.log.clone();
        eventually(Duration::from_secs(15), text, move || {
            let log = log.clone();
            async move { std::fs::read_to_string(&log).unwrap_or_default().contains(text) }
        })
    };
    let nobody = {
        let socket = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", socket.local_addr().unwrap())
    };
    let args = ["--agent", "openai", "--base-url", &nobody, "--model", "m", "--store", "memory"];
    let down = Server::start(&dir.0, &args).await;
    logged(&down, "the model's server does not answer").await;
    assert!(reqwest::get(format!("{}/.well-known/agent-card.json", down.base)).await.unwrap().status().is_success());

    let Some(model) = Model::start(&dir.0) else { return };
    let with =
        |name: &'static str| ["--agent", "openai", "--base-url", &model.url, "--model", name, "--store", "memory"];
    let right_key = [("OPENAI_API_KEY", "sk-scripted")];
    let wrong_model = Server::start_with_env(&dir.0, &with("no-such-model"), &right_key).await;
    logged(&wrong_model, "does not list this model").await;
    let wrong_key = Server::start_with_env(&dir.0, &with("scripted"), &[("OPENAI_API_KEY", "sk-wrong")]).await;
    // LiteLLM's proxy answers a key it does not know with 400 (it has no database to look it up).
    logged(&wrong_key, "the model's server refuses to list its models").await;
    let right = serve(&dir, &model, &[]).await;
    logged(&right, "serving a model").await;
    let log = std::fs::read_to_string(&right.log).unwrap();
    assert!(!log.contains("the model's server"), "nothing to say about a server that answers: {log}");
}
