//! The v0.3 gRPC binding, `a2a.v1.A2AService`, over the wire: resource names, v0.3's blocking
//! default, `final` on the last status update, push configs by name, files as the official v0.3
//! SDKs write them, and the v0.3 card.

use agentwire_proto::a2a_v1 as pb;
use agentwire_proto::a2a_v1::a2a_service_client::A2aServiceClient;
use agentwire_test::{conformance, TestServer, TIMEOUT};
use pb::stream_response::Payload;
use tonic::transport::Channel;
use tonic::Code;

async fn client(server: &TestServer) -> A2aServiceClient<Channel> {
    let channel = Channel::from_shared(server.base.clone()).unwrap().timeout(TIMEOUT).connect().await.unwrap();
    A2aServiceClient::new(channel)
}

fn send(message_id: &str, text: &str, blocking: bool) -> pb::SendMessageRequest {
    let message = pb::Message {
        message_id: message_id.into(),
        role: pb::Role::User as i32,
        content: vec![pb::Part { part: Some(pb::part::Part::Text(text.into())) }],
        ..Default::default()
    };
    let configuration = pb::SendMessageConfiguration { blocking, ..Default::default() };
    pb::SendMessageRequest { request: Some(message), configuration: Some(configuration), ..Default::default() }
}

fn task_of(reply: pb::SendMessageResponse) -> pb::Task {
    match reply.payload {
        Some(pb::send_message_response::Payload::Task(task)) => task,
        other => panic!("expected a task, got {other:?}"),
    }
}

fn state(task: &pb::Task) -> i32 {
    task.status.as_ref().expect("a status").state
}

#[tokio::test]
async fn a_blocking_send_completes_and_the_task_is_found_by_name() {
    let server = TestServer::start(conformance()).await;
    let mut a2a = client(&server).await;
    let task = task_of(a2a.send_message(send("tck-complete-task-v03", "hi", true)).await.unwrap().into_inner());
    assert_eq!(state(&task), pb::TaskState::Completed as i32);

    let name = format!("tasks/{}", task.id);
    let got = a2a.get_task(pb::GetTaskRequest { name, history_length: 0 }).await.unwrap().into_inner();
    assert_eq!((got.id, state(&task)), (task.id, pb::TaskState::Completed as i32));

    let malformed = a2a.get_task(pb::GetTaskRequest { name: "task/x".into(), history_length: 0 }).await;
    let malformed = malformed.expect_err("not a task name");
    assert_eq!(malformed.code(), Code::InvalidArgument);
    assert!(malformed.message().contains("tasks/"), "{}", malformed.message());
}

#[tokio::test]
async fn a_non_blocking_send_returns_at_once_and_a_subscription_sees_the_cancel() {
    let server = TestServer::start(conformance()).await;
    let mut a2a = client(&server).await;
    let task = task_of(a2a.send_message(send("g03-cancel", "tck-cancel", false)).await.unwrap().into_inner());
    assert!(
        [pb::TaskState::Submitted as i32, pb::TaskState::Working as i32].contains(&state(&task)),
        "v0.3 waits only when asked to: {task:?}"
    );

    let name = format!("tasks/{}", task.id);
    let mut events =
        a2a.task_subscription(pb::TaskSubscriptionRequest { name: name.clone() }).await.unwrap().into_inner();
    let first = events.message().await.unwrap().and_then(|e| e.payload);
    assert!(matches!(first, Some(Payload::Task(ref t)) if t.id == task.id), "{first:?}");

    let canceled = a2a.cancel_task(pb::CancelTaskRequest { name }).await.unwrap().into_inner();
    assert_eq!(state(&canceled), pb::TaskState::Cancelled as i32);
    let mut last = None;
    while let Some(event) = events.message().await.expect("an event") {
        last = event.payload;
    }
    let Some(Payload::StatusUpdate(update)) = last else { panic!("ends with a status update: {last:?}") };
    assert_eq!(update.status.unwrap().state, pb::TaskState::Cancelled as i32);
    assert!(update.r#final, "the last status update is final");
}

#[tokio::test]
async fn push_configs_are_named_resources() {
    let server = TestServer::start(conformance()).await;
    let mut a2a = client(&server).await;
    let task = task_of(a2a.send_message(send("tck-complete-task-v03p", "hi", true)).await.unwrap().into_inner());
    let parent = format!("tasks/{}", task.id);
    let name = format!("{parent}/pushNotificationConfigs/cfg-1");

    let config = pb::PushNotificationConfig {
        id: "cfg-1".into(),
        url: "https://example.com/hook".into(),
        token: "tok".into(),
        ..Default::default()
    };
    let wrapped = pb::TaskPushNotificationConfig { name: name.clone(), push_notification_config: Some(config) };
    let create = pb::CreateTaskPushNotificationConfigRequest {
        parent: parent.clone(),
        config_id: "cfg-1".into(),
        config: Some(wrapped),
    };
    let created = a2a.create_task_push_notification_config(create).await.unwrap().into_inner();
    assert_eq!(created.name, name);
    assert_eq!(created.push_notification_config.unwrap().url, "https://example.com/hook");

    let got = a2a.get_task_push_notification_config(pb::GetTaskPushNotificationConfigRequest { name: name.clone() });
    assert_eq!(got.await.unwrap().into_inner().push_notification_config.unwrap().token, "tok");
    let list = pb::ListTaskPushNotificationConfigRequest { parent, ..Default::default() };
    let listed = a2a.list_task_push_notification_config(list.clone()).await.unwrap().into_inner();
    assert_eq!(listed.configs.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), [name.as_str()]);
    a2a.delete_task_push_notification_config(pb::DeleteTaskPushNotificationConfigRequest { name }).await.unwrap();
    assert!(a2a.list_task_push_notification_config(list).await.unwrap().into_inner().configs.is_empty());
}

#[tokio::test]
async fn the_card_is_the_v03_card_with_grpc_among_its_interfaces() {
    let server = TestServer::start(conformance()).await;
    let card = client(&server).await.get_agent_card(pb::GetAgentCardRequest {}).await.unwrap().into_inner();
    assert_eq!(card.protocol_version, "0.3.0");
    assert_eq!((card.url.as_str(), card.preferred_transport.as_str()), (server.base.as_str(), "JSONRPC"));
    let grpc = card.additional_interfaces.iter().find(|i| i.transport == "GRPC").expect("a GRPC interface");
    assert_eq!(grpc.url, server.base, "a v0.3 interface is a URL");
}

#[tokio::test]
async fn a_send_without_configuration_waits_for_the_task() {
    let server = TestServer::start(conformance()).await;
    let mut a2a = client(&server).await;
    let request = pb::SendMessageRequest { configuration: None, ..send("g03-wait", "tck-long-running", true) };
    let task = task_of(a2a.send_message(request).await.unwrap().into_inner());
    assert_eq!(state(&task), pb::TaskState::Completed as i32, "v0.3 waits unless told not to: {task:?}");
}

fn file_part(file: pb::file_part::File, name: &str) -> pb::Part {
    let file = pb::FilePart { file: Some(file), mime_type: "text/plain".into(), name: name.into() };
    pb::Part { part: Some(pb::part::Part::File(file)) }
}

#[tokio::test]
async fn files_travel_with_their_name_as_the_official_sdks_write_them() {
    use pb::file_part::File;
    let server = TestServer::start(conformance()).await;
    let mut a2a = client(&server).await;
    // `hello`, as a2a-sdk 0.3 sends it: the bytes field holds its base64 text.
    let hello = file_part(File::FileWithBytes(b"aGVsbG8=".to_vec()), "hello.txt");
    let mut request = send("tck-complete-task-g03-file", "", true);
    request.request.as_mut().unwrap().content = vec![hello.clone()];
    let task = task_of(a2a.send_message(request).await.unwrap().into_inner());
    assert_eq!(task.history[0].content, [hello]);

    // A v1.0 client reads the file itself.
    let v1 = server.rpc_ok("GetTask", serde_json::json!({"id": task.id})).await;
    let part = &v1["history"][0]["parts"][0];
    assert_eq!((part["raw"].as_str(), part["filename"].as_str()), (Some("aGVsbG8="), Some("hello.txt")), "{v1}");

    let task = task_of(a2a.send_message(send("tck-artifact-file-g03", "a file", true)).await.unwrap().into_inner());
    let content = b"Generated file content";
    let text = agentwire_types::dialect::v03::proto::file_with_bytes(content);
    assert_eq!(task.artifacts[0].parts, [file_part(File::FileWithBytes(text), "output.txt")]);

    // The JavaScript v0.3 SDK puts the file itself in the bytes field.
    let mut raw = send("tck-complete-task-g03-raw", "", true);
    raw.request.as_mut().unwrap().content = vec![file_part(File::FileWithBytes(b"hello".to_vec()), "")];
    let task = task_of(a2a.send_message(raw).await.unwrap().into_inner());
    let v1 = server.rpc_ok("GetTask", serde_json::json!({"id": task.id})).await;
    assert_eq!(v1["history"][0]["parts"][0]["raw"], "aGVsbG8=", "{v1}");
}
