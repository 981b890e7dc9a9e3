//! The scenarios the client is tested with, against every agent that plays them: agentwire's
//! conformance agent and the Python SDK's test agent (`interop/python-server`). Both act on the
//! first word of a task's first message (`tck-complete-task`, `tck-cancel`, …), so one scenario
//! serves both; where the agents differ, [`Agent`] says how.

#![allow(dead_code)]

use agentwire_client::{Binding, Client, Error, EventStream, Version};
use agentwire_test::TIMEOUT;
use agentwire_types::{
    CancelTaskRequest, ErrorKind, GetTaskRequest, ListTaskPushNotificationConfigsRequest, ListTasksRequest, Message,
    SendMessageConfiguration, SendMessageRequest, SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task,
    TaskPushNotificationConfig, TaskPushNotificationConfigRef, TaskState,
};
use futures_util::StreamExt;

/// The bearer token every agent under test accepts.
pub(crate) const TOKEN: &str = "secret";

/// Every binding and protocol version the client speaks.
pub(crate) const INTERFACES: [(Binding, Version); 6] = [
    (Binding::JsonRpc, Version::V1),
    (Binding::HttpJson, Version::V1),
    (Binding::Grpc, Version::V1),
    (Binding::JsonRpc, Version::V03),
    (Binding::HttpJson, Version::V03),
    (Binding::Grpc, Version::V03),
];

/// An agent under test, and what it does differently.
pub(crate) struct Agent {
    /// Its base URL.
    pub(crate) base: String,
    /// Whether it lists tasks (a gateway cannot, in front of an agent without ListTasks).
    pub lists_tasks: bool,
    /// Whether it lists tasks in v0.3 (which has no such operation; agentwire offers it anyway).
    pub lists_tasks_in_v03: bool,
    /// Whether its v0.3 HTTP+JSON interface deletes push configs.
    pub deletes_configs_over_v03_rest: bool,
}

/// A client of `agent` that uses only the interface of `binding` and `version`.
pub(crate) async fn client(agent: &Agent, binding: Binding, version: Version) -> Client {
    let connect =
        Client::builder(&agent.base).bearer_token(TOKEN).only(binding).only_version(version).timeout(TIMEOUT).connect();
    let client = tokio::time::timeout(TIMEOUT, connect).await.expect("connects in time").expect("connects");
    assert_eq!((client.endpoint().binding, client.endpoint().version), (binding, version));
    client
}

/// A user message with a fresh id.
pub(crate) fn message(text: &str) -> Message {
    Message::user(fresh_id("m"), text)
}

pub(crate) fn fresh_id(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("{prefix}-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

pub(crate) fn non_blocking(message: Message) -> SendMessageRequest {
    let configuration = SendMessageConfiguration { return_immediately: true, ..Default::default() };
    SendMessageRequest { configuration: Some(configuration), ..SendMessageRequest::new(message) }
}

pub(crate) async fn send(client: &Client, request: SendMessageRequest) -> Task {
    match client.send_message(request).await.expect("SendMessage") {
        SendMessageResponse::Task(task) => task,
        other => panic!("expected a task, got {other:?}"),
    }
}

pub(crate) async fn collect(mut events: EventStream) -> Vec<StreamResponse> {
    let mut all = Vec::new();
    while let Some(event) = tokio::time::timeout(TIMEOUT, events.next()).await.expect("an event in time") {
        all.push(event.expect("an event"));
    }
    all
}

pub(crate) fn states(events: &[StreamResponse]) -> Vec<TaskState> {
    events.iter().filter_map(StreamResponse::task_state).collect()
}

fn get(id: &str) -> GetTaskRequest {
    GetTaskRequest { id: id.to_owned(), ..Default::default() }
}

/// Send (blocking and not), the message reply, get, cancel, multi-turn, failed and rejected tasks,
/// list, and the protocol errors, at one interface.
pub(crate) async fn task_operations(agent: &Agent, binding: Binding, version: Version) {
    let at = format!("{binding:?} {version:?}");
    let client = client(agent, binding, version).await;

    let done = send(&client, SendMessageRequest::new(message("tck-complete-task please"))).await;
    assert_eq!(done.status.state, TaskState::Completed, "{at}");
    let fetched = client.get_task(get(&done.id)).await.expect("GetTask");
    assert_eq!((fetched.id.as_str(), fetched.status.state), (done.id.as_str(), TaskState::Completed), "{at}");
    let short = GetTaskRequest { history_length: Some(1), ..get(&done.id) };
    assert!(client.get_task(short).await.expect("GetTask").history.len() <= 1, "{at}: historyLength 1");

    let reply = client.send_message(SendMessageRequest::new(message("tck-message-response hi"))).await;
    assert!(
        matches!(&reply, Ok(SendMessageResponse::Message(m)) if m.role == agentwire_types::Role::Agent),
        "{at}: a message reply, got {reply:?}"
    );

    let running = send(&client, non_blocking(message("tck-cancel me"))).await;
    assert!(!running.status.state.is_terminal(), "{at}: {:?}", running.status.state);
    let canceled = client.cancel_task(CancelTaskRequest { id: running.id.clone(), ..Default::default() }).await;
    assert_eq!(canceled.expect("CancelTask").status.state, TaskState::Canceled, "{at}");
    assert_eq!(client.get_task(get(&running.id)).await.expect("GetTask").status.state, TaskState::Canceled, "{at}");
    let again = client.cancel_task(CancelTaskRequest { id: running.id, ..Default::default() }).await;
    assert_eq!(again.unwrap_err().kind(), Some(ErrorKind::TaskNotCancelable), "{at}");

    let first = send(&client, SendMessageRequest::new(message("tck-multi-turn start"))).await;
    assert_eq!(first.status.state, TaskState::InputRequired, "{at}");
    let mut follow_up = message("done now");
    (follow_up.task_id, follow_up.context_id) = (first.id.clone(), first.context_id.clone());
    let finished = send(&client, SendMessageRequest::new(follow_up)).await;
    assert_eq!((finished.id.as_str(), finished.status.state), (first.id.as_str(), TaskState::Completed), "{at}");

    let failed = send(&client, SendMessageRequest::new(message("tck-task-failure now"))).await;
    assert_eq!(failed.status.state, TaskState::Failed, "{at}");
    let reject = Message::user(fresh_id("tck-reject-task"), "tck-reject-task now");
    assert_eq!(send(&client, SendMessageRequest::new(reject)).await.status.state, TaskState::Rejected, "{at}");

    if agent.lists_tasks && (version == Version::V1 || (agent.lists_tasks_in_v03 && binding != Binding::Grpc)) {
        let mut second = message("tck-complete-task again");
        second.context_id = first.context_id.clone();
        send(&client, SendMessageRequest::new(second)).await;
        let by_context = |page_token: String| ListTasksRequest {
            context_id: first.context_id.clone(),
            page_size: Some(1),
            page_token,
            ..Default::default()
        };
        let page = client.list_tasks(by_context(String::new())).await.expect("ListTasks");
        assert_eq!(page.tasks.len(), 1, "{at}");
        assert!(!page.next_page_token.is_empty(), "{at}: a second page");
        let rest = client.list_tasks(by_context(page.next_page_token)).await.expect("ListTasks");
        assert_eq!(rest.tasks.len(), 1, "{at}");
        assert_ne!(rest.tasks[0].id, page.tasks[0].id, "{at}");
    }

    let missing = client.get_task(get("no-such-task")).await;
    let Err(Error::Protocol(error)) = missing else { panic!("{at}: {missing:?}") };
    assert_eq!(error.kind(), ErrorKind::TaskNotFound, "{at}");
}

/// A streamed send, a streamed message reply, and a subscription to a running task.
pub(crate) async fn streams(agent: &Agent, binding: Binding, version: Version) {
    let at = format!("{binding:?} {version:?}");
    let client = client(agent, binding, version).await;

    let events = client.send_streaming_message(SendMessageRequest::new(message("tck-stream-basic hello"))).await;
    let events = collect(events.expect("SendStreamingMessage")).await;
    assert_eq!(states(&events).last(), Some(&TaskState::Completed), "{at}: {events:?}");
    assert!(events.iter().any(|e| matches!(e, StreamResponse::ArtifactUpdate(_))), "{at}: an artifact");

    let events = client.send_streaming_message(SendMessageRequest::new(message("tck-message-response hi"))).await;
    let events = collect(events.expect("SendStreamingMessage")).await;
    assert!(matches!(events.as_slice(), [StreamResponse::Message(_)]), "{at}: {events:?}");

    let running = send(&client, non_blocking(message("tck-long-running subscribe"))).await;
    let subscription = client.subscribe(SubscribeToTaskRequest { id: running.id.clone(), ..Default::default() });
    let events = collect(subscription.await.expect("SubscribeToTask")).await;
    assert!(matches!(events.first(), Some(StreamResponse::Task(t)) if t.id == running.id), "{at}: {events:?}");
    assert_eq!(states(&events).last(), Some(&TaskState::Completed), "{at}: {events:?}");

    // A subscription to a task waiting for input carries on past the task as it stands, to what
    // the next turn brings.
    let waiting = send(&client, SendMessageRequest::new(message("tck-multi-turn subscribe"))).await;
    assert_eq!(waiting.status.state, TaskState::InputRequired, "{at}");
    let subscription = client.subscribe(SubscribeToTaskRequest { id: waiting.id.clone(), ..Default::default() });
    let subscription = subscription.await.expect("SubscribeToTask");
    let follow_up = Message { task_id: waiting.id.clone(), context_id: waiting.context_id.clone(), ..message("done") };
    let finished = send(&client, SendMessageRequest::new(follow_up)).await;
    assert_eq!(finished.status.state, TaskState::Completed, "{at}");
    let events = collect(subscription).await;
    assert_eq!(states(&events).first(), Some(&TaskState::InputRequired), "{at}: {events:?}");
    assert_eq!(states(&events).last(), Some(&TaskState::Completed), "{at}: {events:?}");

    // A streamed follow-up reads the agent's answer to it, not the question it answers: the
    // next question, then the end.
    let waiting = send(&client, SendMessageRequest::new(message("tck-multi-turn stream"))).await;
    let turn = |text: &str| {
        let follow_up =
            Message { task_id: waiting.id.clone(), context_id: waiting.context_id.clone(), ..message(text) };
        client.send_streaming_message(SendMessageRequest::new(follow_up))
    };
    let asked = collect(turn("more").await.expect("a streamed follow-up")).await;
    assert_eq!(states(&asked).last(), Some(&TaskState::InputRequired), "{at}: {asked:?}");
    let question = |events: &[StreamResponse]| match events.last() {
        Some(StreamResponse::StatusUpdate(update)) => update.status.message.as_ref().map(|m| m.message_id.clone()),
        Some(StreamResponse::Task(task)) => task.status.message.as_ref().map(|m| m.message_id.clone()),
        _ => None,
    };
    let first_question = waiting.status.message.as_ref().map(|m| m.message_id.clone());
    assert_ne!(question(&asked), first_question, "{at}: the stream ended on the question it answered: {asked:?}");
    let done = collect(turn("done").await.expect("a streamed follow-up")).await;
    assert_eq!(states(&done).last(), Some(&TaskState::Completed), "{at}: {done:?}");
}

/// Create, get, list and delete a push config.
pub(crate) async fn push_configs(agent: &Agent, binding: Binding, version: Version) {
    let at = format!("{binding:?} {version:?}");
    let client = client(agent, binding, version).await;
    let task = send(&client, SendMessageRequest::new(message("tck-multi-turn push"))).await;
    let wanted = TaskPushNotificationConfig {
        task_id: task.id.clone(),
        id: "cfg-1".into(),
        url: "http://127.0.0.1:9/hook".into(),
        token: "tok".into(),
        ..Default::default()
    };
    let created = client.create_push_config(wanted.clone()).await.expect("CreateTaskPushNotificationConfig");
    assert_eq!((created.task_id.as_str(), created.id.as_str()), (task.id.as_str(), "cfg-1"), "{at}");
    let reference =
        TaskPushNotificationConfigRef { task_id: task.id.clone(), id: "cfg-1".into(), ..Default::default() };
    let fetched = client.get_push_config(reference.clone()).await.expect("GetTaskPushNotificationConfig");
    assert_eq!((fetched.url.as_str(), fetched.token.as_str()), (wanted.url.as_str(), "tok"), "{at}");
    let list = ListTaskPushNotificationConfigsRequest { task_id: task.id.clone(), ..Default::default() };
    let listed = client.list_push_configs(list.clone()).await.expect("ListTaskPushNotificationConfigs");
    assert_eq!(listed.configs.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["cfg-1"], "{at}");
    if version == Version::V03 && binding == Binding::HttpJson && !agent.deletes_configs_over_v03_rest {
        return;
    }
    client.delete_push_config(reference.clone()).await.expect("DeleteTaskPushNotificationConfig");
    let listed = client.list_push_configs(list).await.expect("ListTaskPushNotificationConfigs");
    assert!(listed.configs.is_empty(), "{at}: {listed:?}");
}

/// The extended card: fetched on connecting with credentials, refused without them.
pub(crate) async fn extended_card(agent: &Agent, binding: Binding, version: Version) {
    let at = format!("{binding:?} {version:?}");
    let client = client(agent, binding, version).await;
    assert!(client.has_extended_card(), "{at}: the client fetched the extended card");
    let anonymous = Client::builder(&agent.base).only(binding).only_version(version).connect().await.unwrap();
    assert!(!anonymous.has_extended_card(), "{at}");
    assert!(client.card().skills.len() > anonymous.card().skills.len(), "{at}: the extended card has more skills");
    let refused = anonymous.extended_card().await.unwrap_err();
    assert_eq!(refused.kind(), Some(ErrorKind::Unauthenticated), "{at}: {refused}");
}

/// What a reader of a task's stream saw while its connection was cut once.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    /// The artifact chunks, as the events delivered them.
    pub(crate) delivered: Vec<String>,
    /// The artifact as a reader rebuilds it: chunks appended, and replaced by the artifact of any
    /// task snapshot (which sums up what a subscription without event ids missed).
    pub(crate) rebuilt: Vec<String>,
    /// The last state reported.
    pub(crate) last_state: Option<TaskState>,
    /// The task snapshots received: one a subscription starts with, and one per resumption that
    /// could not ask for the events it missed.
    pub(crate) snapshots: usize,
}

/// Reads `events` to the end, calling `cut` once after the chunk numbered `cut_after` arrived.
pub(crate) async fn read_with_a_cut(mut events: EventStream, cut_after: usize, cut: impl Fn()) -> Seen {
    let mut seen = Seen::default();
    let texts = |parts: &[agentwire_types::Part]| -> Vec<String> {
        parts.iter().filter_map(|p| p.as_text().map(str::to_owned)).collect()
    };
    while let Some(event) = tokio::time::timeout(TIMEOUT, events.next()).await.expect("an event in time") {
        match event.expect("no error reaches the reader") {
            StreamResponse::ArtifactUpdate(update) => {
                let chunk = texts(&update.artifact.parts);
                seen.delivered.extend(chunk.iter().cloned());
                if !update.append {
                    seen.rebuilt.clear();
                }
                seen.rebuilt.extend(chunk);
                if seen.delivered.len() == cut_after {
                    cut();
                }
            }
            StreamResponse::Task(task) => {
                seen.snapshots += 1;
                if let Some(artifact) = task.artifacts.first() {
                    seen.rebuilt = texts(&artifact.parts);
                }
                seen.last_state = Some(task.status.state);
            }
            other => seen.last_state = other.task_state().or(seen.last_state),
        }
    }
    seen
}

/// "0", "1", … up to `count`.
pub(crate) fn numbers(count: usize) -> Vec<String> {
    (0..count).map(|i| i.to_string()).collect()
}
