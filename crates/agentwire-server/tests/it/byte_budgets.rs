//! What one principal can make the server keep is bounded in bytes as well as in tasks: its tasks
//! in progress, counted in every tenant it names, and each task's history and artifacts.

use agentwire_server::agent::{AgentExecutor, EventStream, ExecutionContext};
use agentwire_server::auth::StaticAuth;
use agentwire_server::App;
use agentwire_server::{Limits, RequestHandler};
use agentwire_test::{conformance, user_message, TestServer};
use agentwire_types::{Artifact, Part};
use reqwest::Method;
use serde_json::{json, Value};

const KIB: usize = 1024;

/// A send that starts a task left running (`tck-cancel`), `bytes` of text long.
fn running_task(bytes: usize) -> Value {
    let text = format!("tck-cancel {}", "x".repeat(bytes));
    json!({"message": user_message("m", &text), "configuration": {"returnImmediately": true}})
}

/// The probe's tenant bypass: a client that names a new tenant for every send still has one limit
/// of tasks in progress, on every binding that takes a tenant.
#[tokio::test]
async fn tasks_in_progress_are_counted_across_the_tenants_a_principal_names() {
    let limits = Limits { max_unfinished_tasks: 3, ..Limits::default() };
    let server = TestServer::start(conformance().limits(limits)).await;
    for tenant in ["t1", "t2", "t3"] {
        let (status, body) =
            server.rest(Method::POST, &format!("/{tenant}/message:send"), Some(running_task(10))).await;
        assert_eq!(status, 200, "{body}");
    }
    let (status, refused) = server.rest(Method::POST, "/t4/message:send", Some(running_task(10))).await;
    assert_eq!(status, 429, "{refused}");
    assert_eq!(refused["error"]["status"], "RESOURCE_EXHAUSTED", "{refused}");
    let mut params = running_task(10);
    params["tenant"] = json!("t5");
    let envelope = server.rpc("SendMessage", params).await;
    assert_eq!(envelope["error"]["data"][0]["reason"], "RESOURCE_EXHAUSTED", "{envelope}");
}

async fn send_as(server: &TestServer, token: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params});
    let request = server.http.post(format!("{}/", server.base)).header("A2A-Version", "1.0").bearer_auth(token);
    request.json(&body).send().await.unwrap().json().await.unwrap()
}

/// Large tasks left running fill a principal's byte budget long before its count: the next send
/// is refused with ResourceExhausted while another principal is served, and a canceled task makes
/// room again.
#[tokio::test]
async fn a_principal_whose_tasks_in_progress_fill_its_bytes_is_refused_until_one_ends() {
    let auth = StaticAuth::default().with_spec("bearer:alice=alice-token,bob=bob-token").unwrap();
    let limits = Limits { max_unfinished_bytes: 1024 * KIB, ..Limits::default() };
    let server = TestServer::start_app(conformance().limits(limits), App::new().authenticator(auth)).await;
    let mut started = Vec::new();
    let refused = loop {
        let envelope = send_as(&server, "alice-token", running_task(300 * KIB)).await;
        match envelope["result"]["task"]["id"].as_str() {
            Some(id) => started.push(id.to_owned()),
            None => break envelope,
        }
        assert!(started.len() <= 4, "{} tasks of 300 KiB fit in 1 MiB", started.len());
    };
    assert_eq!(started.len(), 3, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(refused["error"]["data"][0]["reason"], "RESOURCE_EXHAUSTED", "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("bytes"), "{refused}");
    let others = send_as(&server, "bob-token", running_task(300 * KIB)).await;
    assert!(others["result"]["task"]["id"].is_string(), "another principal is served: {others}");

    let cancel = json!({"jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": {"id": started[0]}});
    let request = server.http.post(format!("{}/", server.base)).header("A2A-Version", "1.0").bearer_auth("alice-token");
    let canceled: Value = request.json(&cancel).send().await.unwrap().json().await.unwrap();
    assert_eq!(canceled["result"]["status"]["state"], "TASK_STATE_CANCELED", "{canceled}");
    let again = send_as(&server, "alice-token", running_task(300 * KIB)).await;
    assert!(again["result"]["task"]["id"].is_string(), "room once a task ended: {again}");
}

/// The probe's long conversation of large turns: once a task holds its budget, the next turn is
/// refused with PayloadTooLarge (413 over HTTP+JSON) and the task is left as it was.
#[tokio::test]
async fn a_turn_that_would_take_its_task_past_its_bytes_is_refused() {
    let limits = Limits { max_task_bytes: 1024 * KIB, ..Limits::default() };
    let server = TestServer::start(conformance().limits(limits)).await;
    let task = server.rpc_ok("SendMessage", json!({"message": user_message("m0", "tck-multi-turn")})).await;
    let task_id = task["task"]["id"].as_str().unwrap().to_owned();
    let turn = |n: usize| {
        let mut message = user_message(&format!("m{n}"), &"y".repeat(300 * KIB));
        message["taskId"] = json!(task_id);
        json!({"message": message})
    };
    let mut turns = 0;
    let refused = loop {
        let envelope = server.rpc("SendMessage", turn(turns + 1)).await;
        if envelope.get("error").is_some() {
            break envelope;
        }
        turns += 1;
        assert!(turns <= 4, "{turns} turns of 300 KiB fit in 1 MiB");
    };
    assert_eq!(turns, 3, "{refused}");
    assert_eq!(refused["error"]["data"][0]["reason"], "PAYLOAD_TOO_LARGE", "{refused}");
    assert_eq!(refused["error"]["data"][0]["metadata"]["taskId"], task_id, "{refused}");
    let (status, body) = server.rest(Method::POST, "/message:send", Some(turn(9))).await;
    assert_eq!(status, 413, "{body}");

    let stored = server.rpc_ok("GetTask", json!({"id": task_id})).await;
    assert_eq!(stored["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "the task is left waiting");
    let ids: Vec<&str> = stored["history"].as_array().unwrap().iter().filter_map(|m| m["messageId"].as_str()).collect();
    assert!(ids.contains(&"m3") && !ids.contains(&"m4"), "{ids:?}");
}

/// Streams 200 KiB chunks of one artifact, without end.
struct Unending;

impl AgentExecutor for Unending {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        ctx.run(|_, updater| async move {
            updater.working().await?;
            for n in 0.. {
                let artifact = Artifact::new("a", "endless", vec![Part::text("z".repeat(200 * KIB))]);
                updater.artifact_chunk(artifact, n > 0, false).await?;
            }
            updater.complete().await
        })
    }
}

/// An agent whose output would take its task past its budget fails the task, saying why, rather
/// than grow it without end.
#[tokio::test]
async fn an_agent_that_outgrows_its_task_fails_it() {
    let limits = Limits { max_task_bytes: 1024 * KIB, ..Limits::default() };
    let server = TestServer::start(RequestHandler::builder(Unending).limits(limits)).await;
    let task = server.rpc_ok("SendMessage", json!({"message": user_message("m", "write forever")})).await;
    assert_eq!(task["task"]["status"]["state"], "TASK_STATE_FAILED", "{task}");
    let reason = task["task"]["status"]["message"]["parts"][0]["text"].as_str().unwrap();
    assert!(reason.contains("outgrew"), "{reason}");
    let parts = task["task"]["artifacts"][0]["parts"].as_array().unwrap();
    assert!(parts.len() <= 5, "{} chunks of 200 KiB kept", parts.len());
}
