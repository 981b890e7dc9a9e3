//! The gRPC binding over the wire, with a client generated from the same `.proto`: every
//! operation, streams, errors as statuses with `ErrorInfo`, metadata for version and
//! authentication, seed 000's service name, the health service, and one port serving every binding.

use agentwire_proto::lf_a2a_v1 as pb;
use agentwire_proto::lf_a2a_v1::a2a_service_client::A2aServiceClient;
use agentwire_server::auth::StaticAuth;
use agentwire_server::App;
use agentwire_server::{HttpOptions, ServeOptions};
use agentwire_test::{conformance, user_message, Pki, TestServer, TIMEOUT};
use pb::part::Content;
use pb::stream_response::Payload;
use prost::Message as _;
use serde_json::{json, Value};
use tonic::transport::{Certificate, Channel, ClientTlsConfig};
use tonic::{Code, Request, Status};
use tonic_types::StatusExt;

async fn channel(server: &TestServer) -> Channel {
    Channel::from_shared(server.base.clone()).unwrap().timeout(TIMEOUT).connect().await.expect("connect")
}

async fn client(server: &TestServer) -> A2aServiceClient<Channel> {
    A2aServiceClient::new(channel(server).await)
}

fn text(text: &str) -> pb::Part {
    pb::Part { content: Some(Content::Text(text.into())), ..Default::default() }
}

fn send(message_id: &str, words: &str) -> pb::SendMessageRequest {
    let message = pb::Message {
        message_id: message_id.into(),
        role: pb::Role::User as i32,
        parts: vec![text(words)],
        ..Default::default()
    };
    pb::SendMessageRequest { message: Some(message), ..Default::default() }
}

fn task_of(reply: pb::SendMessageResponse) -> pb::Task {
    match reply.payload {
        Some(pb::send_message_response::Payload::Task(task)) => task,
        other => panic!("expected a task, got {other:?}"),
    }
}

fn state(task: &pb::Task) -> pb::TaskState {
    pb::TaskState::try_from(task.status.as_ref().expect("a status").state).expect("a known state")
}

/// The reason of the status's `google.rpc.ErrorInfo`, which must be in A2A's domain.
fn reason(status: &Status) -> String {
    let info = status.get_details_error_info().unwrap_or_else(|| panic!("no ErrorInfo in {status:?}"));
    assert_eq!(info.domain, "a2a-protocol.org");
    info.reason
}

#[tokio::test]
async fn every_unary_operation_is_served() {
    let server = TestServer::start(conformance()).await;
    let mut a2a = client(&server).await;

    let task = task_of(a2a.send_message(send("tck-complete-task-g1", "hi")).await.unwrap().into_inner());
    assert_eq!(state(&task), pb::TaskState::Completed);
    assert!(!task.id.is_empty() && !task.context_id.is_empty());

    let got = a2a.get_task(pb::GetTaskRequest { id: task.id.clone(), ..Default::default() }).await.unwrap();
    assert_eq!(got.into_inner().id, task.id);

    let listed = a2a.list_tasks(pb::ListTasksRequest { page_size: Some(50), ..Default::default() }).await.unwrap();
    assert!(listed.into_inner().tasks.iter().any(|t| t.id == task.id));

    let cancel = pb::CancelTaskRequest { id: task.id.clone(), ..Default::default() };
    let refused = a2a.cancel_task(cancel).await.expect_err("a completed task cannot be canceled");
    assert_eq!(refused.code(), Code::FailedPrecondition);
    assert_eq!(reason(&refused), "TASK_NOT_CANCELABLE");

    let config = pb::TaskPushNotificationConfig {
        task_id: task.id.clone(),
        id: "cfg-1".into(),
        url: "https://example.com/hook".into(),
        token: "tok".into(),
        ..Default::default()
    };
    let created = a2a.create_task_push_notification_config(config).await.unwrap().into_inner();
    assert_eq!((created.id.as_str(), created.url.as_str()), ("cfg-1", "https://example.com/hook"));
    let key =
        pb::GetTaskPushNotificationConfigRequest { task_id: task.id.clone(), id: "cfg-1".into(), ..Default::default() };
    assert_eq!(a2a.get_task_push_notification_config(key.clone()).await.unwrap().into_inner().token, "tok");
    let list = pb::ListTaskPushNotificationConfigsRequest { task_id: task.id.clone(), ..Default::default() };
    assert_eq!(a2a.list_task_push_notification_configs(list).await.unwrap().into_inner().configs.len(), 1);
    let delete = pb::DeleteTaskPushNotificationConfigRequest {
        task_id: task.id.clone(),
        id: "cfg-1".into(),
        ..Default::default()
    };
    a2a.delete_task_push_notification_config(delete).await.unwrap();
    let gone = a2a.get_task_push_notification_config(key).await.expect_err("deleted");
    assert_eq!(gone.code(), Code::NotFound);

    // The extended card is for authenticated callers; this server authenticates none.
    let card = a2a.get_extended_agent_card(pb::GetExtendedAgentCardRequest::default()).await;
    let refused = card.expect_err("no extended card without authentication");
    assert_eq!((refused.code(), reason(&refused).as_str()), (Code::Unimplemented, "UNSUPPORTED_OPERATION"));
}

#[tokio::test]
async fn a_streamed_send_delivers_every_event_then_ends() {
    let server = TestServer::start(conformance()).await;
    let mut a2a = client(&server).await;
    let mut stream = a2a.send_streaming_message(send("tck-stream-001-g", "s")).await.unwrap().into_inner();
    let mut events = Vec::new();
    while let Some(event) = stream.message().await.expect("an event") {
        events.push(event.payload.expect("a payload"));
    }
    assert!(matches!(events.first(), Some(Payload::Task(_))), "{events:?}");
    assert!(events.iter().any(|e| matches!(e, Payload::ArtifactUpdate(_))), "{events:?}");
    let Some(Payload::StatusUpdate(last)) = events.last() else { panic!("ends with a status update: {events:?}") };
    assert_eq!(last.status.as_ref().unwrap().state, pb::TaskState::Completed as i32);
}

#[tokio::test]
async fn a_subscription_sees_a_cancel_from_another_call() {
    let server = TestServer::start(conformance()).await;
    let mut a2a = client(&server).await;
    let mut request = send("g-cancel-1", "tck-cancel");
    request.configuration = Some(pb::SendMessageConfiguration { return_immediately: true, ..Default::default() });
    let task = task_of(a2a.send_message(request).await.unwrap().into_inner());

    let subscribe = pb::SubscribeToTaskRequest { id: task.id.clone(), ..Default::default() };
    let mut events = a2a.subscribe_to_task(subscribe).await.unwrap().into_inner();
    let first = events.message().await.unwrap().and_then(|e| e.payload);
    assert!(matches!(first, Some(Payload::Task(ref t)) if t.id == task.id), "{first:?}");

    let canceled = a2a.cancel_task(pb::CancelTaskRequest { id: task.id.clone(), ..Default::default() }).await;
    assert_eq!(state(&canceled.unwrap().into_inner()), pb::TaskState::Canceled);
    let mut last = None;
    while let Some(event) = events.message().await.expect("an event") {
        last = event.payload;
    }
    let Some(Payload::StatusUpdate(update)) = last else { panic!("ends with a status update: {last:?}") };
    assert_eq!(update.status.unwrap().state, pb::TaskState::Canceled as i32);
}

#[tokio::test]
async fn errors_are_statuses_with_error_info() {
    let server = TestServer::start(conformance()).await;
    let mut a2a = client(&server).await;

    let missing = a2a.get_task(pb::GetTaskRequest { id: "no-such-task".into(), ..Default::default() }).await;
    let missing = missing.expect_err("no such task");
    assert_eq!(missing.code(), Code::NotFound);
    assert_eq!(reason(&missing), "TASK_NOT_FOUND");

    let empty = a2a.send_message(pb::SendMessageRequest::default()).await.expect_err("no message");
    assert_eq!(empty.code(), Code::InvalidArgument);
    assert!(empty.message().contains("message"), "{}", empty.message());

    let mut no_content = send("g-bad-part", "x");
    no_content.message.as_mut().unwrap().parts = vec![pb::Part::default()];
    let refused = a2a.send_message(no_content).await.expect_err("a part without content");
    assert_eq!(refused.code(), Code::InvalidArgument);

    let mut future = Request::new(send("tck-complete-task-g2", "hi"));
    future.metadata_mut().insert("a2a-version", "2.0".parse().unwrap());
    let unsupported = a2a.send_message(future).await.expect_err("version 2.0");
    assert_eq!(unsupported.code(), Code::Unimplemented);
    assert_eq!(reason(&unsupported), "VERSION_NOT_SUPPORTED");

    let mut current = Request::new(send("tck-complete-task-g3", "hi"));
    current.metadata_mut().insert("a2a-version", "1.0".parse().unwrap());
    assert!(a2a.send_message(current).await.is_ok());
}

#[tokio::test]
async fn credentials_travel_in_metadata() {
    let auth = StaticAuth::default().with_spec("bearer:secret").unwrap();
    let server = TestServer::start_app(conformance(), App::new().authenticator(auth)).await;
    let mut a2a = client(&server).await;
    let anonymous = a2a.send_message(send("tck-complete-task-a1", "hi")).await.expect_err("no credentials");
    assert_eq!(anonymous.code(), Code::Unauthenticated);

    let mut wrong = Request::new(send("tck-complete-task-a2", "hi"));
    wrong.metadata_mut().insert("authorization", "Bearer wrong".parse().unwrap());
    assert_eq!(a2a.send_message(wrong).await.unwrap_err().code(), Code::Unauthenticated);

    let mut right = Request::new(send("tck-complete-task-a3", "hi"));
    right.metadata_mut().insert("authorization", "Bearer secret".parse().unwrap());
    assert_eq!(state(&task_of(a2a.send_message(right).await.unwrap().into_inner())), pb::TaskState::Completed);

    let mut card = Request::new(pb::GetExtendedAgentCardRequest::default());
    card.metadata_mut().insert("authorization", "Bearer secret".parse().unwrap());
    let card = a2a.get_extended_agent_card(card).await.unwrap().into_inner();
    assert!(card.skills.iter().any(|s| s.id == "extended"), "{:?}", card.skills);
    assert!(card.supported_interfaces.iter().any(|i| i.protocol_binding == "GRPC"), "{:?}", card.supported_interfaces);
}

#[tokio::test]
async fn seed_000s_service_name_reaches_the_same_rpcs() {
    let server = TestServer::start(conformance()).await;
    let mut grpc = tonic::client::Grpc::new(channel(&server).await);
    grpc.ready().await.unwrap();
    let path = http::uri::PathAndQuery::from_static("/lf.a2a.v1.OPVSService/SendMessage");
    let codec = tonic_prost::ProstCodec::<pb::SendMessageRequest, pb::SendMessageResponse>::default();
    let reply = grpc.unary(Request::new(send("tck-complete-task-o1", "hi")), path, codec).await.unwrap();
    assert_eq!(state(&task_of(reply.into_inner())), pb::TaskState::Completed);
}

#[tokio::test]
async fn the_health_service_reports_serving() {
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::health_client::HealthClient;
    use tonic_health::pb::HealthCheckRequest;

    let server = TestServer::start(conformance()).await;
    let mut health = HealthClient::new(channel(&server).await);
    for service in ["", "lf.a2a.v1.A2AService", "a2a.v1.A2AService"] {
        let checked = health.check(HealthCheckRequest { service: service.into() }).await.unwrap().into_inner();
        assert_eq!(checked.status, ServingStatus::Serving as i32, "{service:?}");
    }
    let unknown = health.check(HealthCheckRequest { service: "no.such.Service".into() }).await;
    assert_eq!(unknown.unwrap_err().code(), Code::NotFound);
}

#[tokio::test]
async fn reflection_lists_the_services_and_describes_them_whole() {
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
    use tonic_reflection::pb::v1::ServerReflectionRequest;

    let server = TestServer::start(conformance()).await;
    let mut reflection = ServerReflectionClient::new(channel(&server).await);
    let ask = |request| ServerReflectionRequest { host: String::new(), message_request: Some(request) };
    let mut reflect = async |request| {
        let answers = reflection.server_reflection_info(tonic::codegen::tokio_stream::iter([ask(request)])).await;
        answers.unwrap().into_inner().message().await.unwrap().and_then(|a| a.message_response)
    };

    let listed = reflect(MessageRequest::ListServices(String::new())).await;
    let Some(MessageResponse::ListServicesResponse(listed)) = listed else { panic!("a service list: {listed:?}") };
    let names: Vec<_> = listed.service.iter().map(|s| s.name.as_str()).collect();
    for service in ["lf.a2a.v1.A2AService", "a2a.v1.A2AService", "grpc.health.v1.Health"] {
        assert!(names.contains(&service), "{service} in {names:?}");
    }
    // The service's file, then every file it imports (the well-known types), as grpcurl asks.
    let files = reflect(MessageRequest::FileContainingSymbol("lf.a2a.v1.A2AService".into())).await;
    let Some(MessageResponse::FileDescriptorResponse(files)) = files else { panic!("descriptors: {files:?}") };
    let file = prost_types::FileDescriptorProto::decode(files.file_descriptor_proto[0].as_slice()).unwrap();
    assert!(file.service.iter().any(|s| s.name() == "A2AService"));
    assert!(file.dependency.iter().any(|d| d == "google/protobuf/struct.proto"), "{:?}", file.dependency);
    for dependency in file.dependency {
        let found = reflect(MessageRequest::FileByFilename(dependency.clone())).await;
        assert!(matches!(found, Some(MessageResponse::FileDescriptorResponse(_))), "{dependency}: {found:?}");
    }
}

/// JSON-RPC, REST and gRPC, one after the other on one port.
async fn every_binding_answers(server: &TestServer, http: &reqwest::Client, grpc: Channel) {
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": user_message("tck-complete-task-p1", "hi")}});
    let reply: Value = http.post(format!("{}/", server.base)).json(&call).send().await.unwrap().json().await.unwrap();
    assert_eq!(reply["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{reply}");

    let body = json!({"message": user_message("tck-complete-task-p2", "hi")});
    let rest = http.post(format!("{}/message:send", server.base)).json(&body).send().await.unwrap();
    let reply: Value = rest.json().await.unwrap();
    assert_eq!(reply["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{reply}");

    let reply = A2aServiceClient::new(grpc).send_message(send("tck-complete-task-p3", "hi")).await.unwrap();
    assert_eq!(state(&task_of(reply.into_inner())), pb::TaskState::Completed);
}

#[tokio::test]
async fn one_port_serves_every_binding_in_the_clear() {
    let server = TestServer::start(conformance()).await;
    every_binding_answers(&server, &server.http, channel(&server).await).await;
}

#[tokio::test]
async fn one_port_serves_every_binding_over_tls() {
    let pki = Pki::new("servers");
    let options = ServeOptions { tls: Some(pki.server()), ..ServeOptions::default() };
    let server = TestServer::start_with(conformance(), HttpOptions::default(), options).await;
    let root = reqwest::Certificate::from_pem(pki.ca_pem().as_bytes()).unwrap();
    let http = reqwest::Client::builder().add_root_certificate(root).timeout(TIMEOUT).build().unwrap();
    let trust = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(pki.ca_pem()));
    let endpoint = Channel::from_shared(server.base.clone()).unwrap().tls_config(trust).unwrap().timeout(TIMEOUT);
    every_binding_answers(&server, &http, endpoint.connect().await.expect("TLS connect")).await;
}

/// A tenant name the other bindings refuse is refused over gRPC too.
#[tokio::test]
async fn an_unbounded_tenant_name_is_refused() {
    let server = TestServer::start(conformance()).await;
    let mut client = client(&server).await;
    for tenant in ["t".repeat(64 * 1024), "..".to_owned()] {
        let request = pb::SendMessageRequest { tenant, ..send("m1", "tck-cancel") };
        let refused = client.send_message(request).await.expect_err("refused");
        assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    }
    let fits = pb::SendMessageRequest { tenant: "acme".into(), ..send("m2", "tck-complete-task") };
    assert_eq!(state(&task_of(client.send_message(fits).await.unwrap().into_inner())), pb::TaskState::Completed);
}
