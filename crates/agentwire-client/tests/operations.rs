//! Every operation, over JSON-RPC and over HTTP+JSON, against an agentwire server on loopback.

use agentwire_client::{Binding, Client, Error};
use agentwire_server::auth::StaticAuth;
use agentwire_test::{conformance, TestServer, TIMEOUT};
use agentwire_types::{
    CancelTaskRequest, ErrorKind, GetTaskRequest, ListTaskPushNotificationConfigsRequest, ListTasksRequest, Message,
    SendMessageConfiguration, SendMessageRequest, SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task,
    TaskPushNotificationConfig, TaskPushNotificationConfigRef, TaskState,
};
use futures_util::StreamExt;

const BINDINGS: [Binding; 2] = [Binding::JsonRpc, Binding::HttpJson];

async fn server() -> TestServer {
    let auth = StaticAuth::default().with_spec("bearer:secret").unwrap();
    TestServer::start(conformance().authenticator(auth)).await
}

async fn client(server: &TestServer, binding: Binding) -> Client {
    let connect = Client::builder(&server.base).bearer_token("secret").only(binding).timeout(TIMEOUT).connect();
    let client = tokio::time::timeout(TIMEOUT, connect).await.unwrap().expect("connects");
    assert_eq!(client.endpoint().binding, binding);
    client
}

fn message(id_prefix: &str, text: &str) -> Message {
    Message::user(format!("{id_prefix}{}", uuid()), text)
}

fn uuid() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

async fn send(client: &Client, request: SendMessageRequest) -> Task {
    match client.send_message(request).await.expect("SendMessage") {
        SendMessageResponse::Task(task) => task,
        other => panic!("expected a task, got {other:?}"),
    }
}

fn non_blocking(message: Message) -> SendMessageRequest {
    let configuration = SendMessageConfiguration { return_immediately: true, ..Default::default() };
    SendMessageRequest { configuration: Some(configuration), ..SendMessageRequest::new(message) }
}

async fn collect(mut events: agentwire_client::EventStream) -> Vec<StreamResponse> {
    let mut all = Vec::new();
    while let Some(event) = tokio::time::timeout(TIMEOUT, events.next()).await.expect("an event in time") {
        all.push(event.expect("an event"));
    }
    all
}

fn states(events: &[StreamResponse]) -> Vec<TaskState> {
    events.iter().filter_map(StreamResponse::task_state).collect()
}

#[tokio::test]
async fn unary_operations_over_both_bindings() {
    let server = server().await;
    for binding in BINDINGS {
        let client = client(&server, binding).await;
        assert!(!client.card().name.is_empty());

        let done = send(&client, SendMessageRequest::new(message("tck-complete-task", "hello"))).await;
        assert_eq!(done.status.state, TaskState::Completed, "{binding:?}");
        let fetched = client.get_task(GetTaskRequest { id: done.id.clone(), ..Default::default() }).await.unwrap();
        assert_eq!((fetched.id.as_str(), fetched.status.state), (done.id.as_str(), TaskState::Completed));

        let running = send(&client, non_blocking(message("m", "tck-cancel me"))).await;
        assert!(!running.status.state.is_terminal(), "{binding:?}: {:?}", running.status.state);
        let canceled = client.cancel_task(CancelTaskRequest { id: running.id.clone(), ..Default::default() }).await;
        assert_eq!(canceled.unwrap().status.state, TaskState::Canceled, "{binding:?}");

        let first = send(&client, SendMessageRequest::new(message("m", "tck-multi-turn start"))).await;
        let mut follow_up = message("m", "not yet");
        (follow_up.task_id, follow_up.context_id) = (first.id.clone(), first.context_id.clone());
        send(&client, SendMessageRequest::new(follow_up)).await;
        let mut other = message("m", "tck-multi-turn other");
        other.context_id = first.context_id.clone();
        send(&client, SendMessageRequest::new(other)).await;
        let page = ListTasksRequest { context_id: first.context_id.clone(), page_size: Some(1), ..Default::default() };
        let page = client.list_tasks(page).await.unwrap();
        assert_eq!(page.tasks.len(), 1, "{binding:?}");
        assert!(!page.next_page_token.is_empty(), "{binding:?}: a second page");
        let rest = ListTasksRequest {
            context_id: first.context_id.clone(),
            page_token: page.next_page_token,
            ..Default::default()
        };
        assert_eq!(client.list_tasks(rest).await.unwrap().tasks.len(), 1, "{binding:?}");

        let extended = client.extended_card().await.expect("the extended card with credentials");
        assert!(extended.skills.len() > client.card().skills.len(), "{binding:?}");
    }
}

#[tokio::test]
async fn errors_keep_their_a2a_kind_and_details() {
    let server = server().await;
    for binding in BINDINGS {
        let client = client(&server, binding).await;
        let missing = client.get_task(GetTaskRequest { id: "no-such-task".into(), ..Default::default() }).await;
        let Err(Error::Protocol(error)) = missing else { panic!("{binding:?}: {missing:?}") };
        assert_eq!(error.kind(), ErrorKind::TaskNotFound, "{binding:?}");
        assert_eq!(error.metadata()["taskId"], "no-such-task", "{binding:?}");

        let done = send(&client, SendMessageRequest::new(message("tck-complete-task", "hello"))).await;
        let refused = client.cancel_task(CancelTaskRequest { id: done.id, ..Default::default() }).await;
        assert_eq!(refused.unwrap_err().kind(), Some(ErrorKind::TaskNotCancelable), "{binding:?}");

        let anonymous = Client::builder(&server.base).only(binding).connect().await.unwrap();
        let refused = anonymous.extended_card().await.unwrap_err();
        assert_eq!(refused.kind(), Some(ErrorKind::Unauthenticated), "{binding:?}: {refused}");
    }
}

#[tokio::test]
async fn streams_and_subscriptions_over_both_bindings() {
    let server = server().await;
    for binding in BINDINGS {
        let client = client(&server, binding).await;
        let events = client.send_streaming_message(SendMessageRequest::new(message("tck-stream-001", "s"))).await;
        let events = collect(events.unwrap()).await;
        assert_eq!(states(&events).last(), Some(&TaskState::Completed), "{binding:?}: {events:?}");
        assert!(events.iter().any(|e| matches!(e, StreamResponse::ArtifactUpdate(_))), "{binding:?}");

        let running = send(&client, non_blocking(message("m", "tck-long-running subscribe"))).await;
        let subscription = client.subscribe(SubscribeToTaskRequest { id: running.id.clone(), ..Default::default() });
        let events = collect(subscription.await.unwrap()).await;
        assert!(matches!(events.first(), Some(StreamResponse::Task(t)) if t.id == running.id), "{binding:?}");
        assert_eq!(states(&events).last(), Some(&TaskState::Completed), "{binding:?}: {events:?}");
    }
}

#[tokio::test]
async fn push_config_operations_over_both_bindings() {
    let server = server().await;
    for binding in BINDINGS {
        let client = client(&server, binding).await;
        let task = send(&client, SendMessageRequest::new(message("m", "tck-multi-turn push"))).await;
        let wanted = TaskPushNotificationConfig {
            task_id: task.id.clone(),
            url: "http://127.0.0.1:9/hook".into(),
            token: "tok".into(),
            ..Default::default()
        };
        let created = client.create_push_config(wanted).await.expect("created");
        assert!(!created.id.is_empty(), "{binding:?}: the server names the config");
        let reference =
            TaskPushNotificationConfigRef { task_id: task.id.clone(), id: created.id.clone(), ..Default::default() };
        let fetched = client.get_push_config(reference.clone()).await.unwrap();
        assert_eq!((fetched.url.as_str(), fetched.token.as_str()), ("http://127.0.0.1:9/hook", "tok"));
        let list = ListTaskPushNotificationConfigsRequest { task_id: task.id.clone(), ..Default::default() };
        assert_eq!(client.list_push_configs(list.clone()).await.unwrap().configs, [created], "{binding:?}");
        client.delete_push_config(reference.clone()).await.expect("deleted");
        assert!(client.list_push_configs(list).await.unwrap().configs.is_empty(), "{binding:?}");
        let gone = client.get_push_config(reference).await.unwrap_err();
        assert!(matches!(gone, Error::Protocol(_)), "{binding:?}: {gone:?}");
    }
}
