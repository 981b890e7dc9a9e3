//! Idempotent sends: a send repeated with its `Idempotency-Key` is answered with the task the
//! first made, on every binding, while the first still runs and after it ended; the same key on
//! another request is refused; the agent runs once.

use agentwire_proto::lf_a2a_v1 as pb;
use agentwire_proto::lf_a2a_v1::a2a_service_client::A2aServiceClient;
use agentwire_server::RequestHandler;
use agentwire_test::{user_message, Counted, TestServer, TIMEOUT};
use serde_json::{json, Value};
use tonic::transport::Channel;
use tonic::{Code, Request};

fn send_params(message_id: &str, text: &str) -> Value {
    json!({"message": user_message(message_id, text), "configuration": {"returnImmediately": true}})
}

async fn keyed_rpc(server: &TestServer, key: &str, params: Value) -> Value {
    server.rpc_with_headers("SendMessage", params, &[("A2A-Version", "1.0"), ("Idempotency-Key", key)]).await
}

#[tokio::test]
async fn a_repeated_json_rpc_send_answers_the_first_task_while_it_runs_and_after_it_ended() {
    let agent = Counted::default();
    let server = TestServer::start(RequestHandler::builder(agent.clone())).await;
    let first = keyed_rpc(&server, "order-1", send_params("m1", "pay 10")).await;
    let task_id = first["result"]["task"]["id"].as_str().unwrap_or_else(|| panic!("{first}")).to_owned();
    // While the first still runs.
    let repeat = keyed_rpc(&server, "order-1", send_params("m1", "pay 10")).await;
    assert_eq!(repeat["result"]["task"]["id"], task_id.as_str(), "{repeat}");
    agent.gate.open();
    let done = json!({"id": task_id, "historyLength": 0});
    let mut ended = server.rpc_ok("GetTask", done.clone()).await;
    while ended["status"]["state"] != "TASK_STATE_COMPLETED" {
        tokio::task::yield_now().await;
        ended = server.rpc_ok("GetTask", done.clone()).await;
    }
    // After it ended: the task as it is now, with its artifact.
    let blocking = json!({"message": user_message("m1", "pay 10")});
    let after = keyed_rpc(&server, "order-1", blocking).await;
    assert_eq!(after["result"]["task"]["id"], task_id.as_str(), "{after}");
    assert_eq!(after["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{after}");
    assert_eq!(agent.executions(), 1, "the agent ran once");
    let listed = server.rpc_ok("ListTasks", json!({})).await;
    assert_eq!(listed["tasks"].as_array().map(Vec::len), Some(1), "{listed}");
    // Without a key, the same request is another send.
    let unkeyed = server.rpc_ok("SendMessage", send_params("m1", "pay 10")).await;
    assert_ne!(unkeyed["task"]["id"], task_id.as_str());
}

#[tokio::test]
async fn the_same_key_on_another_request_is_refused_on_every_binding() {
    let agent = Counted::default();
    agent.gate.open();
    let server = TestServer::start(RequestHandler::builder(agent.clone())).await;
    let first = keyed_rpc(&server, "k-1", send_params("m1", "pay 10")).await;
    let task_id = first["result"]["task"]["id"].as_str().unwrap_or_else(|| panic!("{first}")).to_owned();

    let changed = keyed_rpc(&server, "k-1", send_params("m1", "pay 1000")).await;
    assert_eq!(changed["error"]["code"], -32602, "InvalidParams: {changed}");
    let message = changed["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("another request"), "{message}");

    let response = server
        .http
        .post(format!("{}/message:send", server.base))
        .header("A2A-Version", "1.0")
        .header("Idempotency-Key", "k-1")
        .json(&send_params("m2", "pay 10"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 409, "REST answers a reused key with 409");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["status"], "INVALID_ARGUMENT", "{body}");

    let mut grpc = grpc_client(&server).await;
    let refused = grpc.send_message(keyed_grpc("k-1", "m3", "pay 10")).await.expect_err("a reused key is refused");
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    assert!(refused.message().contains(&task_id), "{refused:?}");
    assert_eq!(agent.executions(), 1);
}

#[tokio::test]
async fn rest_and_grpc_repeats_answer_the_first_task() {
    let agent = Counted::default();
    let server = TestServer::start(RequestHandler::builder(agent.clone())).await;
    let rest = || {
        server
            .http
            .post(format!("{}/message:send", server.base))
            .header("A2A-Version", "1.0")
            .header("Idempotency-Key", "rest-key")
            .json(&send_params("m1", "work"))
    };
    let first: Value = rest().send().await.unwrap().json().await.unwrap();
    let again: Value = rest().send().await.unwrap().json().await.unwrap();
    assert_eq!(first["task"]["id"], again["task"]["id"], "{first} {again}");
    assert!(first["task"]["id"].is_string(), "{first}");

    let mut grpc = grpc_client(&server).await;
    let one = grpc.send_message(keyed_grpc("grpc-key", "g1", "work")).await.unwrap().into_inner();
    let two = grpc.send_message(keyed_grpc("grpc-key", "g1", "work")).await.unwrap().into_inner();
    assert_eq!(task_id(one), task_id(two));
    // One execution per key, the REST and the gRPC one; the repeats started none.
    assert_eq!(agent.executions(), 2);
    agent.gate.open();
}

#[tokio::test]
async fn a_repeated_stream_follows_the_first_task() {
    let agent = Counted::default();
    let server = TestServer::start(RequestHandler::builder(agent.clone()).card(streaming_card())).await;
    let first = keyed_rpc(&server, "s-1", send_params("m1", "stream me")).await;
    let task_id = first["result"]["task"]["id"].as_str().unwrap_or_else(|| panic!("{first}")).to_owned();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
        "params": {"message": user_message("m1", "stream me")}});
    let request = server.http.post(format!("{}/", server.base)).header("Idempotency-Key", "s-1").json(&body);
    let response = request.header("A2A-Version", "1.0").send().await.unwrap();
    agent.gate.open();
    let events = agentwire_test::read_sse(response, usize::MAX).await;
    assert!(!events.is_empty());
    let ids: Vec<&Value> = events
        .iter()
        .map(|e| {
            let result = &e["result"];
            if result["task"].is_object() {
                &result["task"]["id"]
            } else {
                &result["statusUpdate"]["taskId"]
            }
        })
        .collect();
    assert!(ids.iter().all(|id| *id == task_id.as_str()), "every event is the first task's: {events:?}");
    let last = &events.last().unwrap()["result"];
    assert_eq!(last["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED", "{events:?}");
    assert_eq!(agent.executions(), 1);
}

#[tokio::test]
async fn keys_are_bounded_and_plain() {
    let server = TestServer::start(RequestHandler::builder(Counted::default())).await;
    let long = "k".repeat(257);
    let refused = keyed_rpc(&server, &long, send_params("m1", "x")).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap_or_default().contains("at most 256"), "{refused}");
    let spaced = keyed_rpc(&server, "two words", send_params("m1", "x")).await;
    assert_eq!(spaced["error"]["code"], -32602, "{spaced}");
}

fn streaming_card() -> agentwire_server::CardConfig {
    let mut config = agentwire_server::CardConfig::default();
    config.card.capabilities.streaming = Some(true);
    config
}

async fn grpc_client(server: &TestServer) -> A2aServiceClient<Channel> {
    let channel = Channel::from_shared(server.base.clone()).unwrap().timeout(TIMEOUT).connect().await.unwrap();
    A2aServiceClient::new(channel)
}

fn keyed_grpc(key: &str, message_id: &str, words: &str) -> Request<pb::SendMessageRequest> {
    let text = pb::Part { content: Some(pb::part::Content::Text(words.into())), ..Default::default() };
    let message = pb::Message {
        message_id: message_id.into(),
        role: pb::Role::User as i32,
        parts: vec![text],
        ..Default::default()
    };
    let configuration = pb::SendMessageConfiguration { return_immediately: true, ..Default::default() };
    let send =
        pb::SendMessageRequest { message: Some(message), configuration: Some(configuration), ..Default::default() };
    let mut request = Request::new(send);
    request.metadata_mut().insert("idempotency-key", key.parse().unwrap());
    request.metadata_mut().insert("a2a-version", "1.0".parse().unwrap());
    request
}

fn task_id(reply: pb::SendMessageResponse) -> String {
    match reply.payload {
        Some(pb::send_message_response::Payload::Task(task)) => task.id,
        other => panic!("expected a task, got {other:?}"),
    }
}
