//! `agentwire serve --grpc ADDR`: gRPC on a port of its own, advertised by the card.

mod common;

use agentwire_proto::lf_a2a_v1 as pb;
use agentwire_proto::lf_a2a_v1::a2a_service_client::A2aServiceClient;
use common::{Server, TempDir};
use serde_json::Value;

#[tokio::test]
async fn the_card_names_the_grpc_port_and_it_serves() {
    let dir = TempDir::new("grpc-port");
    let grpc = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let server = Server::start(&dir.0, &["--store", "memory", "--grpc", &grpc.to_string()]).await;

    let card: Value =
        reqwest::get(format!("{}/.well-known/agent-card.json", server.base)).await.unwrap().json().await.unwrap();
    let interfaces = card["supportedInterfaces"].as_array().unwrap();
    let advertised = interfaces.iter().find(|i| i["protocolBinding"] == "GRPC").expect("a GRPC interface");
    assert_eq!(advertised["url"], grpc.to_string());

    let mut client = A2aServiceClient::connect(format!("http://{grpc}")).await.expect("the gRPC port answers");
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
