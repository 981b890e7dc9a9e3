//! `agentwire serve --grpc ADDR`: gRPC on a port of its own, advertised by the card.

use crate::common::{Server, TempDir};
use agentwire_proto::lf_a2a_v1 as pb;
use agentwire_proto::lf_a2a_v1::a2a_service_client::A2aServiceClient;
use serde_json::Value;

#[tokio::test]
async fn the_card_names_the_grpc_port_and_it_serves() {
    let dir = TempDir::new("grpc-port");
    // Port 0: the server binds a free port itself, and the card names it.
    let server = Server::start(&dir.0, &["--store", "memory", "--grpc", "127.0.0.1:0"]).await;

    let card: Value =
        reqwest::get(format!("{}/.well-known/agent-card.json", server.base)).await.unwrap().json().await.unwrap();
    let interfaces = card["supportedInterfaces"].as_array().unwrap();
    let advertised = interfaces.iter().find(|i| i["protocolBinding"] == "GRPC").expect("a GRPC interface");
    let grpc = advertised["url"].as_str().unwrap().to_owned();
    let (host, port) = grpc.rsplit_once(':').unwrap();
    assert_eq!(host, "http://127.0.0.1", "the gRPC interface is a URL, as every other");
    assert_ne!(port, "0", "the card names the port bound");
    assert_ne!(grpc, server.base, "gRPC has a port of its own");

    let mut client = A2aServiceClient::connect(grpc).await.expect("the gRPC port answers");
    let message = pb::Message {
        message_id: "m-1".into(),
        role: pb::Role::User as i32,
        parts: vec![pb::Part { content: Some(pb::part::Content::Text("over gRPC".into())), ..Default::default() }],
        ..Default::default()
    };
    let request = pb::SendMessageRequest { message: Some(message), ..Default::default() };
    let reply = client.send_message(request).await.unwrap().into_inner();
    let Some(pb::send_message_response::Payload::Task(task)) = reply.payload else { panic!("a task: {reply:?}") };
    assert_eq!(task.status.unwrap().state, pb::TaskState::Completed as i32);
    let echoed = &task.artifacts[0].parts[0].content;
    assert_eq!(echoed, &Some(pb::part::Content::Text("over gRPC".into())));
}

/// Google ADK refuses a card by URL unless every interface is an `http(s)` URL of the card's own
/// origin; `--card-grpc-form target` writes the bare channel target instead, for clients that
/// hand the URL to a gRPC channel unchanged.
#[tokio::test]
async fn the_card_names_grpc_by_url_unless_told_to_write_a_channel_target() {
    let dir = TempDir::new("grpc-card-form");
    let grpc_urls = |card: Value| -> Vec<String> {
        let interfaces = card["supportedInterfaces"].as_array().unwrap().clone();
        interfaces
            .iter()
            .filter(|i| i["protocolBinding"] == "GRPC")
            .map(|i| i["url"].as_str().unwrap().into())
            .collect()
    };
    let by_url = Server::start(&dir.0, &["--store", "memory"]).await;
    let card: Value =
        reqwest::get(format!("{}/.well-known/agent-card.json", by_url.base)).await.unwrap().json().await.unwrap();
    let every_url: Vec<&str> =
        card["supportedInterfaces"].as_array().unwrap().iter().map(|i| i["url"].as_str().unwrap()).collect();
    assert!(every_url.iter().all(|url| *url == by_url.base), "every interface at the card's origin: {every_url:?}");
    assert_eq!(grpc_urls(card).len(), 2, "v1.0's and v0.3's");

    let dir = TempDir::new("grpc-card-target");
    let by_target = Server::start(&dir.0, &["--store", "memory", "--card-grpc-form", "target"]).await;
    let card: Value =
        reqwest::get(format!("{}/.well-known/agent-card.json", by_target.base)).await.unwrap().json().await.unwrap();
    let authority = by_target.base.strip_prefix("http://").unwrap();
    assert_eq!(grpc_urls(card), [authority, authority]);
}
