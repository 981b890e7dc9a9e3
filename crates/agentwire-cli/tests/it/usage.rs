//! The usage extension (docs/extensions/usage-v1.md): what a task of `serve --agent openai` spent,
//! in its metadata in every generation and binding, and a gateway's sums of it per caller, agent
//! and model, in its metrics and in its MCP results. The model is LiteLLM's proxy serving the
//! scripted model of interop/model, which reports a token per word of the request and of the
//! answer; a model server that reports nothing is a stub written here.

use agentwire_types::USAGE_EXTENSION;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

use crate::common::{rpc, run_agentwire, Server, TempDir};
use crate::hostile::model::read_request;
use crate::mcp::Session;
use crate::model::{answer, mcp_server, state, Model};

/// `serve --agent openai` of the scripted model, with `args` added (on the memory store unless
/// they name another).
pub(crate) async fn model_agent(dir: &TempDir, url: &str, args: &[&str]) -> Server {
    let mut all = vec!["--agent", "openai", "--base-url", url, "--model", "scripted"];
    if !args.contains(&"--store") {
        all.extend(["--store", "memory"]);
    }
    all.extend_from_slice(args);
    Server::start_with_env(&dir.0, &all, &[("OPENAI_API_KEY", "sk-scripted")]).await
}

/// A JSON-RPC call made with `token` (none when empty), and its result or whole answer.
pub(crate) async fn call_as(base: &str, token: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut request = reqwest::Client::new().post(format!("{base}/")).json(&body);
    if !token.is_empty() {
        request = request.bearer_auth(token);
    }
    let answer: Value = request.send().await.unwrap().json().await.unwrap();
    answer.get("result").cloned().unwrap_or(answer)
}

/// Sends `text` (on `task` when given) as the caller of `token`; the task, once it stopped.
pub(crate) async fn send_as(base: &str, token: &str, text: &str, task: Option<&str>) -> Value {
    let mut message =
        json!({"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER", "parts": [{"text": text}]});
    if let Some(task) = task {
        message["taskId"] = json!(task);
    }
    call_as(base, token, "SendMessage", json!({"message": message})).await["task"].clone()
}

/// The usage the object `holder` (a task, a status event) carries in its metadata.
fn usage(holder: &Value) -> &Value {
    &holder["metadata"][USAGE_EXTENSION]
}

/// The counts of `usage` (totals, or a turn's): input and output tokens, model calls, tool rounds.
fn counts(usage: &Value) -> [u64; 4] {
    ["inputTokens", "outputTokens", "modelCalls", "toolRounds"].map(|name| usage[name].as_u64().unwrap_or(u64::MAX))
}

/// The value of the metric sample `name{labels}` in the text format, 0 without one.
fn sample(metrics: &str, name: &str, labels: &str) -> f64 {
    let series = format!("{name}{{{labels}}} ");
    metrics.lines().find_map(|line| line.strip_prefix(&series)).map_or(0.0, |value| value.parse().unwrap())
}

async fn metrics(base: &str) -> String {
    reqwest::get(format!("{base}/metrics")).await.unwrap().text().await.unwrap()
}

/// "hello" answered by the scripted model: "You said 'hello'; this conversation has 1 user
/// message(s) and 0 answer(s)." is 12 words, the request 1.
const HELLO: [u64; 4] = [1, 12, 1, 0];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_task_reports_what_it_spent_in_every_generation_and_binding() {
    let dir = TempDir::new("usage-model");
    let Some(model) = Model::start(&dir.0) else { return };
    let Some(tools) = mcp_server() else { return };
    let agent = model_agent(&dir, &model.url, &["--mcp-server", &tools, "--approve", "add"]).await;
    let base = agent.base.as_str();

    let card: Value = reqwest::get(format!("{base}/.well-known/agent-card.json")).await.unwrap().json().await.unwrap();
    let declared = card["capabilities"]["extensions"].as_array().cloned().unwrap_or_default();
    assert!(declared.iter().any(|e| e["uri"] == USAGE_EXTENSION && e["required"] != true), "{card}");

    // The model's own figures, not an estimate; the turn is the whole task.
    let task = send_as(base, "", "hello", None).await;
    assert_eq!(state(&task), "TASK_STATE_COMPLETED", "{task}");
    let reported = usage(&task).clone();
    assert_eq!(counts(&reported), HELLO, "{task}");
    assert_eq!(counts(&reported["turn"]), HELLO, "{task}");
    assert_eq!((&reported["model"], reported.get("estimated")), (&json!("scripted"), None), "{reported}");
    assert!(reported["wallTimeMs"].is_u64(), "{reported}");
    let id = task["id"].as_str().unwrap();

    // Read back over HTTP+JSON, gRPC, and in v0.3's JSON-RPC: the same figures.
    let rest = reqwest::Client::new().get(format!("{base}/tasks/{id}")).header("A2A-Version", "1.0").send();
    let rest: Value = rest.await.unwrap().json().await.unwrap();
    assert_eq!(usage(&rest), &reported, "HTTP+JSON: {rest}");
    let (code, out, err) = run_agentwire(&["get", base, id, "--json", "--transport", "grpc"]).await;
    assert_eq!(code, 0, "{err}");
    let grpc: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(usage(&grpc), &reported, "gRPC: {grpc}");
    // `agentwire get` says it in a line.
    let (code, out, err) = run_agentwire(&["get", base, id]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("  spent 13 tokens (1 in, 12 out) in 1 model call and 0 tool rounds, on scripted\n"), "{out}");
    let v03 = rpc(&reqwest::Client::new(), base, "tasks/get", json!({"id": id})).await.unwrap();
    assert_eq!((&v03["result"]["kind"], usage(&v03["result"])), (&json!("task"), &reported), "v0.3: {v03}");

    // The legacy `tasks/send` family gets them with its task.
    let legacy = json!({"id": "legacy-1", "message": {"role": "user", "parts": [{"type": "text", "text": "hello"}]}});
    let legacy = call_as(base, "", "tasks/send", legacy).await;
    assert_eq!(legacy["status"]["state"], "completed", "{legacy}");
    assert_eq!(counts(usage(&legacy)), HELLO, "legacy: {legacy}");

    // A stream's last status carries them.
    let (code, out, err) = run_agentwire(&["send", base, "hello", "--stream", "--json"]).await;
    assert_eq!(code, 0, "{err}");
    let events: Vec<Value> = out.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let last = events.iter().rev().find_map(|event| event.get("statusUpdate")).unwrap();
    assert_eq!(last["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(counts(usage(last)), HELLO, "{events:?}");

    // A task paused for approval says what it spent so far; its next turn adds to it. The call
    // request is "add 2 and 3" (4 words) answered with 4 words of arguments; the next request
    // adds the tool's "5.0", answered with "The tool said 5.0".
    let asking = send_as(base, "", "add 2 and 3", None).await;
    assert_eq!(state(&asking), "TASK_STATE_INPUT_REQUIRED", "{asking}");
    assert_eq!(counts(usage(&asking)), [4, 4, 1, 1], "{asking}");
    let approved = send_as(base, "", "yes", asking["id"].as_str()).await;
    assert_eq!(state(&approved), "TASK_STATE_COMPLETED", "{approved}");
    assert!(answer(&approved).starts_with("The tool said 5.0"), "{approved}");
    assert_eq!(counts(usage(&approved)), [9, 8, 2, 1], "{approved}");
    assert_eq!(counts(&usage(&approved)["turn"]), [5, 4, 1, 0], "{approved}");
}

/// A model server that streams "four words right here" and never reports usage, whatever it
/// is asked: an OpenAI-compatible server of the simplest kind.
pub(crate) async fn silent_model() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                // The request is read to its end, then answered.
                if read_request(&mut stream).await.is_err() {
                    return;
                }
                let chunk = json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                                   "choices": [{"index": 0, "delta": {"content": "four words right here"},
                                                "finish_reason": "stop"}]});
                let body = format!("data: {chunk}\n\ndata: [DONE]\n\n");
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                let _ = stream.write_all(format!("{head}{body}").as_bytes()).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_server_that_reports_no_usage_gets_an_estimate_marked_so() {
    let dir = TempDir::new("usage-estimated");
    let url = silent_model().await;
    let agent = model_agent(&dir, &url, &[]).await;
    let task = send_as(&agent.base, "", "hello", None).await;
    assert_eq!(state(&task), "TASK_STATE_COMPLETED", "{task}");
    let reported = usage(&task);
    assert_eq!(reported["estimated"], true, "{task}");
    // 21 bytes of answer at 4 bytes a token; the request is larger than its one word.
    assert_eq!(reported["outputTokens"], 6, "{task}");
    assert!(reported["inputTokens"].as_u64().unwrap() > 10, "{task}");
    assert_eq!(reported["modelCalls"], 1, "{task}");
}

/// A gateway in front of the model agent, relaying (`--store` none) or keeping every task
/// (`--store memory`), counts what each caller spent on each agent and model, once per turn
/// however often the turn is read, and gives an MCP caller the figures in its result's `_meta`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_counts_what_each_caller_spent_per_agent_and_model() {
    let dir = TempDir::new("usage-gateway");
    let Some(model) = Model::start(&dir.0) else { return };
    let agent = model_agent(&dir, &model.url, &[]).await;
    let upstream = format!("writer={}", agent.base);
    let auth = "bearer:alice=alice-token,bob=bob-token";
    for store in [None, Some("memory")] {
        let mut args = vec!["--upstream", &upstream, "--auth", auth, "--metrics", "--mcp", "--console"];
        if let Some(store) = store {
            args.extend(["--store", store]);
        }
        let gateway = Server::start_gateway(&dir.0, &args).await;
        let writer = format!("{}/agents/writer", gateway.base);

        let alices = send_as(&writer, "alice-token", "hello", None).await;
        assert_eq!(counts(usage(&alices)), HELLO, "{store:?}: {alices}");
        // Read again, as a task and as a subscription would: counted once.
        let id = alices["id"].as_str().unwrap();
        let read = call_as(&writer, "alice-token", "GetTask", json!({"id": id})).await;
        assert_eq!(counts(usage(&read)), HELLO, "{store:?}: {read}");
        let bobs = send_as(&writer, "bob-token", "hello", None).await;
        assert_eq!(state(&bobs), "TASK_STATE_COMPLETED", "{store:?}: {bobs}");

        // Through MCP, the figures are in the result's `_meta`; alice's sum takes them in.
        let mut session = Session::open(&gateway.base, "alice-token").await;
        let result = session.call_tool("send_message", json!({"agent": "writer", "message": "hello"})).await.unwrap();
        let meta = &result["_meta"][agentwire_mcp::USAGE_META_KEY];
        assert_eq!(counts(meta), HELLO, "{store:?}: {result}");

        let text = metrics(&gateway.base).await;
        let series = |who: &str| format!("principal=\"{who}\",agent=\"writer\",model=\"scripted\"");
        for (who, turns) in [("alice", 2.0), ("bob", 1.0)] {
            let labels = series(who);
            let found = [
                sample(&text, "agentwire_usage_reports_total", &labels),
                sample(&text, "agentwire_usage_input_tokens_total", &labels),
                sample(&text, "agentwire_usage_output_tokens_total", &labels),
                sample(&text, "agentwire_usage_model_calls_total", &labels),
            ];
            assert_eq!(found, [turns, turns, 12.0 * turns, turns], "{store:?}, {who}:\n{text}");
        }

        // The console's usage page, at the gateway's root and at the agent's: alice sees her own
        // sums (two turns: 2 input and 24 output tokens, 2 calls, no tool round), not bob's.
        for page in ["/console/usage", "/agents/writer/console/usage"] {
            let request = reqwest::Client::new().get(format!("{}{page}", gateway.base)).bearer_auth("alice-token");
            let html = request.send().await.unwrap().text().await.unwrap();
            let row = "<td>alice</td><td>2</td><td>24</td><td>2</td><td>0</td><td>2</td>";
            assert!(html.contains(row), "{store:?} {page}: {html}");
            assert!(html.contains("<td>writer</td>") && !html.contains("<td>bob</td>"), "{store:?} {page}: {html}");
        }
    }
}
