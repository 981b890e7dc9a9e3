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
    let grpc = advertised["url"].as_str().unwrap();
    let (host, port) = grpc.rsplit_once(':').unwrap();
    assert_eq!(host, "127.0.0.1");
    assert_ne!(port, "0", "the card names the port bound");
    assert_ne!(format!("http://{grpc}"), server.base, "gRPC has a port of its own");

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
