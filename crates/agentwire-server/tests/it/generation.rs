//! The dev-1.1 draft's task generation, for callers sending `A2A-Version: 1.1` to a handler that
//! serves the draft: every task and update carries the task's generation, one more per change
//! (a client message advances it without being streamed); GetTask long-polls with
//! `currentGeneration`; a send with a stale `ifGenerationMatch` is refused on every binding.
//! Callers asking for 1.0 see none of it.

use std::time::Duration;

use agentwire_proto::lf_a2a_v1 as pb;
use agentwire_proto::lf_a2a_v1::a2a_service_client::A2aServiceClient;
use agentwire_server::agent::{AgentExecutor, EventStream, ExecutionContext};
use agentwire_server::{CardConfig, Limits, RequestHandler};
use agentwire_test::{read_sse, user_message, SseReader, TestServer, TIMEOUT};
use agentwire_types::{Artifact, Part};
use serde_json::{json, Value};
use tonic::transport::Channel;
use tonic::{Code, Request};

/// Asks for more after its first turn (working, a draft artifact, then a question); completes
/// with a final artifact when told "done".
struct Interview;

impl AgentExecutor for Interview {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        ctx.run(|ctx, up| async move {
            let artifact = |id: &str, text: &str| Artifact::new(id, id, vec![Part::text(text)]);
            if ctx.message.text() == "done" {
                up.add_artifact(artifact("final", "the answer")).await?;
                up.complete().await
            } else {
                up.working().await?;
                up.add_artifact(artifact("draft", "a draft")).await?;
                up.input_required("anything else?").await
            }
        })
    }
}

fn draft_card() -> CardConfig {
    CardConfig { protocol_draft_1_1: true, ..CardConfig::default() }
}

async fn start_draft() -> TestServer {
    TestServer::start(RequestHandler::builder(Interview).card(draft_card())).await
}

async fn draft_rpc(server: &TestServer, method: &str, params: Value) -> Value {
    server.rpc_with_headers(method, params, &[("A2A-Version", "1.1")]).await
}

async fn open_stream(server: &TestServer, version: &str, method: &str, params: Value) -> reqwest::Response {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let request = server.http.post(format!("{}/", server.base)).header("A2A-Version", version).json(&body);
    request.send().await.unwrap()
}

async fn draft_stream(server: &TestServer, method: &str, params: Value) -> Vec<Value> {
    read_sse(open_stream(server, "1.1", method, params).await, usize::MAX).await
}

fn follow_up(task_id: &str, message_id: &str, text: &str) -> Value {
    let mut message = user_message(message_id, text);
    message["taskId"] = json!(task_id);
    message
}

/// A task's or an update's generation; ProtoJSON writes an `int64` as a string.
fn generation_of(member: &Value) -> i64 {
    let text = member["generation"].as_str().unwrap_or_else(|| panic!("no generation as a string: {member}"));
    text.parse().unwrap()
}

/// A stream event's generation, whichever member it is.
fn generation(result: &Value) -> i64 {
    let member = ["task", "statusUpdate", "artifactUpdate"].iter().find_map(|name| result.get(*name));
    generation_of(member.unwrap_or_else(|| panic!("not a task or an update: {result}")))
}

fn generations(events: &[Value]) -> Vec<i64> {
    events.iter().map(|event| generation(&event["result"])).collect()
}

fn state(result: &Value) -> &str {
    let task_state = &result["task"]["status"]["state"];
    task_state.as_str().or(result["statusUpdate"]["status"]["state"].as_str()).unwrap_or_default()
}

#[tokio::test]
async fn every_event_of_a_multi_turn_task_carries_the_next_generation() {
    let server = start_draft().await;
    let first = draft_stream(&server, "SendStreamingMessage", json!({"message": user_message("m1", "start")})).await;
    let first_turn = generations(&first);
    let asked = *first_turn.last().unwrap();
    assert_eq!(first_turn, (1..=asked).collect::<Vec<_>>(), "from 1, one more per event: {first:?}");
    assert!(asked >= 4, "the task, working, the draft and the question: {first:?}");
    assert_eq!(state(&first.last().unwrap()["result"]), "TASK_STATE_INPUT_REQUIRED");
    let task_id = first[0]["result"]["task"]["id"].as_str().unwrap().to_owned();

    // A subscriber that follows the next turn from where the task waits.
    let watching = open_stream(&server, "1.1", "SubscribeToTask", json!({"id": task_id})).await;
    let mut watching = SseReader::new(watching);
    let opened = watching.next_event().await.expect("the task first");
    assert_eq!(generation(&opened.data["result"]), asked, "{:?}", opened.data);

    let params = json!({"message": follow_up(&task_id, "m2", "done")});
    let second = draft_stream(&server, "SendStreamingMessage", params).await;
    let second_turn = generations(&second);
    // The turn opens with the task holding the message, which was a change of its own.
    let snapshot = &second[0]["result"]["task"];
    assert_eq!(snapshot["history"].as_array().unwrap().last().unwrap()["messageId"], "m2", "{snapshot}");
    let done = *second_turn.last().unwrap();
    assert_eq!(second_turn, (asked + 1..=done).collect::<Vec<_>>(), "{second:?}");
    assert_eq!(state(&second.last().unwrap()["result"]), "TASK_STATE_COMPLETED");

    // The subscriber saw every update but the client's message: one gap, where it was.
    let mut seen = Vec::new();
    while let Some(event) = watching.next_event().await {
        assert!(event.data["result"].get("message").is_none(), "a client message is not streamed: {:?}", event.data);
        seen.push(generation(&event.data["result"]));
    }
    assert_eq!(seen, (asked + 2..=done).collect::<Vec<_>>());

    let got = draft_rpc(&server, "GetTask", json!({"id": task_id})).await;
    assert_eq!(generation_of(&got["result"]), done, "{got}");
}

/// A task left waiting for input by its first turn, and its generation.
async fn waiting_task(server: &TestServer) -> (String, i64) {
    let started = draft_rpc(server, "SendMessage", json!({"message": user_message("m1", "start")})).await;
    let task = &started["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{started}");
    (task["id"].as_str().unwrap().to_owned(), generation_of(task))
}

async fn long_poll(server: &TestServer, task_id: &str, current: i64) -> (u16, Value) {
    let url = format!("{}/tasks/{task_id}?currentGeneration={current}", server.base);
    let response = server.http.get(url).header("A2A-Version", "1.1").send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

#[tokio::test]
async fn a_long_polled_get_task_answers_when_the_task_moves_past_the_generation() {
    let server = start_draft().await;
    let (task_id, waiting) = waiting_task(&server).await;
    // Past it already: at once.
    let (status, task) = long_poll(&server, &task_id, waiting - 1).await;
    assert_eq!((status, generation_of(&task)), (200, waiting), "{task}");

    let mut poll = Box::pin(long_poll(&server, &task_id, waiting));
    let early = tokio::time::timeout(Duration::from_millis(300), &mut poll).await;
    assert!(early.is_err(), "the poll answered before the task changed: {early:?}");
    let answered = draft_rpc(&server, "SendMessage", json!({"message": follow_up(&task_id, "m2", "done")})).await;
    let done = generation_of(&answered["result"]["task"]);
    let (status, task) = tokio::time::timeout(TIMEOUT, poll).await.expect("the poll answers once the task moves");
    assert_eq!(status, 200, "{task}");
    let moved = generation_of(&task);
    assert!(waiting < moved && moved <= done, "{waiting} < {moved} <= {done}: {task}");
    assert_eq!(task["history"].as_array().unwrap().last().unwrap()["messageId"], "m2", "{task}");

    // An ended task changes no more: a poll on it answers at once.
    let (_, ended) = tokio::time::timeout(TIMEOUT, long_poll(&server, &task_id, done)).await.unwrap();
    assert_eq!(generation_of(&ended), done, "{ended}");
}

#[tokio::test]
async fn a_long_poll_gives_up_after_its_timeout_with_the_task_as_it_is() {
    let limits = Limits { long_poll_timeout: Duration::from_millis(200), ..Limits::default() };
    let server = TestServer::start(RequestHandler::builder(Interview).card(draft_card()).limits(limits)).await;
    let (task_id, waiting) = waiting_task(&server).await;
    let started = tokio::time::Instant::now();
    let (status, task) = long_poll(&server, &task_id, waiting).await;
    assert!(started.elapsed() >= Duration::from_millis(200), "answered after {:?}", started.elapsed());
    assert_eq!((status, generation_of(&task)), (200, waiting), "{task}");
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
}

#[tokio::test]
async fn a_stale_if_generation_match_is_refused_on_every_binding() {
    let server = start_draft().await;
    let (task_id, waiting) = waiting_task(&server).await;
    let stale = waiting - 1;
    let expected = format!("Task generation mismatch: expected {stale} but current generation is {waiting}");
    let send = |message_id: &str, text: &str, generation: i64| json!({"message": follow_up(&task_id, message_id, text), "configuration": {"ifGenerationMatch": generation.to_string()}});

    let refused = draft_rpc(&server, "SendMessage", send("m2", "done", stale)).await;
    assert_eq!(refused["error"]["code"], -32010, "{refused}");
    assert_eq!(refused["error"]["message"], expected.as_str());
    let info = &refused["error"]["data"][0];
    assert_eq!(info["reason"], "TASK_GENERATION_MISMATCH", "{refused}");
    assert_eq!(info["metadata"]["currentGeneration"], waiting.to_string().as_str(), "{refused}");

    let rest = server.http.post(format!("{}/message:send", server.base)).header("A2A-Version", "1.1");
    let response = rest.json(&send("m3", "done", stale)).send().await.unwrap();
    assert_eq!(response.status(), 409);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["status"], "ABORTED", "{body}");
    assert_eq!(body["error"]["details"][0]["reason"], "TASK_GENERATION_MISMATCH", "{body}");

    let channel = Channel::from_shared(server.base.clone()).unwrap().timeout(TIMEOUT).connect().await.unwrap();
    let mut grpc = A2aServiceClient::new(channel);
    let refused = grpc.send_message(grpc_send(&task_id, "m4", stale)).await.expect_err("a stale generation");
    assert_eq!(refused.code(), Code::Aborted, "{refused:?}");
    assert_eq!(refused.message(), expected);

    // Nothing was written; a 1.0 caller's precondition is not read at all.
    let task = draft_rpc(&server, "GetTask", json!({"id": task_id})).await;
    assert_eq!(generation_of(&task["result"]), waiting, "{task}");
    let unchecked = server.rpc_ok("SendMessage", send("m5", "more", stale)).await;
    assert_eq!(unchecked["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{unchecked}");
    assert!(unchecked["task"].get("generation").is_none(), "{unchecked}");

    // The generation the task is at lets the send through.
    let current = generation_of(&draft_rpc(&server, "GetTask", json!({"id": task_id})).await["result"]);
    let reply = grpc.send_message(grpc_send(&task_id, "m6", current)).await.unwrap().into_inner();
    let Some(pb::send_message_response::Payload::Task(task)) = reply.payload else { panic!("{reply:?}") };
    assert_eq!(task.status.unwrap().state, pb::TaskState::Completed as i32);
    assert!(task.generation > current, "{} > {current}", task.generation);
}

fn grpc_send(task_id: &str, message_id: &str, generation: i64) -> Request<pb::SendMessageRequest> {
    let text = pb::Part { content: Some(pb::part::Content::Text("done".into())), ..Default::default() };
    let message = pb::Message {
        message_id: message_id.into(),
        task_id: task_id.into(),
        role: pb::Role::User as i32,
        parts: vec![text],
        ..Default::default()
    };
    let configuration = pb::SendMessageConfiguration { if_generation_match: Some(generation), ..Default::default() };
    let send =
        pb::SendMessageRequest { message: Some(message), configuration: Some(configuration), ..Default::default() };
    let mut request = Request::new(send);
    request.metadata_mut().insert("a2a-version", "1.1".parse().unwrap());
    request
}

#[tokio::test]
async fn callers_asking_for_1_0_see_no_generation() {
    let server = start_draft().await;
    let stream = open_stream(&server, "1.0", "SendStreamingMessage", json!({"message": user_message("m1", "start")}));
    let events = read_sse(stream.await, usize::MAX).await;
    assert!(events.len() >= 4, "{events:?}");
    let task_id = events[0]["result"]["task"]["id"].as_str().unwrap().to_owned();
    let task = server.rpc_ok("GetTask", json!({"id": task_id, "currentGeneration": "1"})).await;
    for value in events.iter().chain([&task]) {
        assert!(!value.to_string().contains("generation"), "{value}");
    }
    // A 1.0 GetTask does not long-poll: the task moved past nothing and is answered at once.
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{task}");
}

#[tokio::test]
async fn the_draft_is_served_only_where_enabled() {
    let off = TestServer::start(RequestHandler::builder(Interview)).await;
    let refused = draft_rpc(&off, "SendMessage", json!({"message": user_message("m1", "start")})).await;
    assert_eq!(refused["error"]["code"], -32009, "VersionNotSupported: {refused}");
    let (_, card) = off.rest(reqwest::Method::GET, "/.well-known/agent-card.json", None).await;
    let versions = |card: &Value| -> Vec<String> {
        let interfaces = card["supportedInterfaces"].as_array().unwrap();
        interfaces.iter().map(|i| format!("{} {}", i["protocolVersion"], i["protocolBinding"])).collect()
    };
    assert!(!versions(&card).iter().any(|v| v.starts_with("\"1.1\"")), "{card}");

    let on = start_draft().await;
    let (_, card) = on.rest(reqwest::Method::GET, "/.well-known/agent-card.json", None).await;
    let listed = versions(&card);
    for binding in ["JSONRPC", "HTTP+JSON", "GRPC"] {
        assert!(listed.contains(&format!("\"1.1\" \"{binding}\"")), "{binding}: {listed:?}");
        assert!(listed.contains(&format!("\"1.0\" \"{binding}\"")), "{binding}: {listed:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_sends_racing_with_one_generation_one_goes_through() {
    let server = std::sync::Arc::new(start_draft().await);
    let (task_id, waiting) = waiting_task(&server).await;
    let sends: Vec<_> = (0..4)
        .map(|i| {
            let (server, task_id) = (std::sync::Arc::clone(&server), task_id.clone());
            tokio::spawn(async move {
                let configuration = json!({"ifGenerationMatch": waiting.to_string()});
                let params =
                    json!({"message": follow_up(&task_id, &format!("r{i}"), "more"), "configuration": configuration});
                draft_rpc(&server, "SendMessage", params).await
            })
        })
        .collect();
    let mut answers = Vec::new();
    for send in sends {
        answers.push(send.await.unwrap());
    }
    let through = answers.iter().filter(|answer| answer.get("result").is_some()).count();
    let refused = answers.iter().filter(|answer| answer["error"]["code"] == -32010).count();
    assert_eq!((through, refused), (1, 3), "{answers:?}");
}
