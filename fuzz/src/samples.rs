//! Canonical values that the seed corpora are written from: a request of every operation and an
//! answer of every kind, with every part kind, state and optional member the protocol has, and the
//! message ids and first words the TCK and the interop clients send to the conformance agent
//! (docs/PROTOCOL.md, "The conformance agent").

use agentwire_types::{
    AgentCard, Artifact, AuthenticationInfo, CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse, ListTasksRequest,
    ListTasksResponse, Message, Part, Role, SendMessageConfiguration, SendMessageRequest, SendMessageResponse,
    StreamResponse, SubscribeToTaskRequest, Task, TaskArtifactUpdateEvent, TaskPushNotificationConfig,
    TaskPushNotificationConfigRef, TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp,
};
use serde_json::{json, Map, Value};

pub(crate) const TASK_ID: &str = "0192f6a4-7b1e-7c3d-9f00-1a2b3c4d5e6f";
pub(crate) const CONTEXT_ID: &str = "ctx-7";
pub(crate) const CONFIG_ID: &str = "hook-1";

fn metadata() -> Option<Map<String, Value>> {
    json!({"trace": "abc", "weights": [1, 2.5, null], "nested": {"ok": true}}).as_object().cloned()
}

/// A message with a part of every kind.
pub(crate) fn message(message_id: &str, text: &str) -> Message {
    let mut message = Message::user(message_id, text);
    message.parts.extend([
        Part::data(json!({"key": "value", "count": 42})),
        Part::raw(b"hello\n".to_vec(), "output.txt", "text/plain"),
        Part::url("https://example.com/output.txt", "output.txt", "text/plain"),
    ]);
    message.metadata = metadata();
    message.extensions = vec!["https://example.com/ext/v1".to_owned()];
    message.reference_task_ids = vec!["t-0".to_owned()];
    message
}

/// The messages a TCK run and the interop clients send, by the conformance agent's prefixes.
pub(crate) fn tck_messages() -> Vec<Message> {
    let mut messages: Vec<Message> = [
        ("tck-complete-task-1", "hi"),
        ("tck-input-required-1", "hi"),
        ("tck-message-response-1", "x"),
        ("tck-artifact-file-1", "x"),
        ("tck-stream-artifact-chunked-1", "x"),
        ("m-1", "tck-long-running please"),
        ("m-2", "tck-multi-turn"),
        ("test-resubscribe-message-id", "resubscribe"),
    ]
    .into_iter()
    .map(|(id, text)| Message::user(id, text))
    .collect();
    let mut follow_up = Message::user("tck-complete-task-2", "done");
    (follow_up.task_id, follow_up.context_id) = (TASK_ID.to_owned(), CONTEXT_ID.to_owned());
    messages.push(follow_up);
    messages.push(message("m-3", "every part"));
    messages
}

pub(crate) fn send_request(message: Message) -> SendMessageRequest {
    SendMessageRequest {
        tenant: String::new(),
        message,
        configuration: Some(SendMessageConfiguration {
            if_generation_match: None,
            accepted_output_modes: vec!["text/plain".to_owned(), "application/json".to_owned()],
            task_push_notification_config: Some(push_config()),
            history_length: Some(5),
            return_immediately: true,
        }),
        metadata: metadata(),
    }
}

pub(crate) fn push_config() -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        tenant: String::new(),
        id: CONFIG_ID.to_owned(),
        task_id: TASK_ID.to_owned(),
        url: "https://client.example/hook".to_owned(),
        token: "secret-token".to_owned(),
        authentication: Some(AuthenticationInfo { scheme: "Bearer".to_owned(), credentials: "abc".to_owned() }),
    }
}

pub(crate) fn config_ref() -> TaskPushNotificationConfigRef {
    TaskPushNotificationConfigRef { tenant: String::new(), task_id: TASK_ID.to_owned(), id: CONFIG_ID.to_owned() }
}

/// The other requests: GetTask, ListTasks, CancelTask, SubscribeToTask, ListPushConfigs and
/// GetExtendedAgentCard.
pub(crate) fn get_task() -> GetTaskRequest {
    GetTaskRequest { id: TASK_ID.to_owned(), history_length: Some(10), ..GetTaskRequest::default() }
}

pub(crate) fn list_tasks() -> ListTasksRequest {
    ListTasksRequest {
        context_id: CONTEXT_ID.to_owned(),
        status: Some(TaskState::Working),
        page_size: Some(50),
        page_token: "cursor-1".to_owned(),
        history_length: Some(0),
        status_timestamp_after: Timestamp::from_millis(1_760_000_000_123),
        include_artifacts: Some(false),
        ..ListTasksRequest::default()
    }
}

pub(crate) fn cancel_task() -> CancelTaskRequest {
    CancelTaskRequest { id: TASK_ID.to_owned(), metadata: metadata(), ..CancelTaskRequest::default() }
}

pub(crate) fn subscribe() -> SubscribeToTaskRequest {
    SubscribeToTaskRequest { id: TASK_ID.to_owned(), ..SubscribeToTaskRequest::default() }
}

pub(crate) fn list_push_configs() -> ListTaskPushNotificationConfigsRequest {
    ListTaskPushNotificationConfigsRequest {
        task_id: TASK_ID.to_owned(),
        page_size: Some(10),
        page_token: "next".to_owned(),
        ..ListTaskPushNotificationConfigsRequest::default()
    }
}

pub(crate) fn extended_card() -> GetExtendedAgentCardRequest {
    GetExtendedAgentCardRequest { tenant: "acme".to_owned() }
}

/// A task in `state`, with history, artifacts and a status message.
pub(crate) fn task(state: TaskState) -> Task {
    let status = TaskStatus {
        state,
        message: Some(Box::new(Message::agent("reply-1", "Hello from TCK"))),
        timestamp: Timestamp::from_millis(1_760_000_000_123),
    };
    Task {
        generation: None,
        id: TASK_ID.to_owned(),
        context_id: CONTEXT_ID.to_owned(),
        status,
        artifacts: vec![Artifact::new("a-1", "output", message("x", "Generated text content").parts)],
        history: vec![message("m-1", "hi"), Message::agent("reply-1", "Hello from TCK")],
        metadata: metadata(),
    }
}

/// Every state a task can be in.
pub(crate) const STATES: [TaskState; 8] = [
    TaskState::Submitted,
    TaskState::Working,
    TaskState::InputRequired,
    TaskState::AuthRequired,
    TaskState::Completed,
    TaskState::Canceled,
    TaskState::Failed,
    TaskState::Rejected,
];

/// A stream of every kind of event: the task, its updates, an artifact in two chunks, the end.
pub(crate) fn events() -> Vec<StreamResponse> {
    let update = |state| {
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            generation: None,
            task_id: TASK_ID.to_owned(),
            context_id: CONTEXT_ID.to_owned(),
            status: TaskStatus { timestamp: Timestamp::from_millis(1_760_000_000_456), ..TaskStatus::new(state) },
            metadata: None,
        })
    };
    let chunk = |append, last_chunk| {
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            generation: None,
            task_id: TASK_ID.to_owned(),
            context_id: CONTEXT_ID.to_owned(),
            artifact: Artifact::new("a-1", "output", vec![Part::text("chunk")]),
            append,
            last_chunk,
            metadata: metadata(),
        })
    };
    vec![
        StreamResponse::Task(task(TaskState::Submitted)),
        update(TaskState::Working),
        chunk(false, false),
        chunk(true, true),
        update(TaskState::Completed),
        StreamResponse::Message(Message { role: Role::Agent, ..message("reply-2", "Direct message response") }),
    ]
}

pub(crate) fn send_responses() -> [SendMessageResponse; 2] {
    [
        SendMessageResponse::Task(task(TaskState::Completed)),
        SendMessageResponse::Message(Message::agent("reply-2", "Direct message response")),
    ]
}

pub(crate) fn task_page() -> ListTasksResponse {
    let tasks = vec![task(TaskState::Completed), task(TaskState::InputRequired)];
    ListTasksResponse { tasks, next_page_token: "cursor-2".to_owned(), page_size: 2, total_size: 3 }
}

pub(crate) fn config_page() -> ListTaskPushNotificationConfigsResponse {
    ListTaskPushNotificationConfigsResponse { configs: vec![push_config()], next_page_token: String::new() }
}

/// A v1.0 agent card with every member: interfaces of every binding and version, skills,
/// extensions, and a security scheme of every kind.
pub(crate) fn card() -> AgentCard {
    let card = json!({
        "name": "Conformance agent",
        "description": "Implements the TCK's behaviours",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": "http://127.0.0.1:8080", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "http://127.0.0.1:8080", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0", "tenant": "acme"},
            {"url": "http://127.0.0.1:8080", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            {"url": "http://127.0.0.1:8080", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
        ],
        "provider": {"organization": "Example", "url": "https://example.com"},
        "documentationUrl": "https://example.com/docs",
        "iconUrl": "https://example.com/icon.png",
        "capabilities": {
            "streaming": true, "pushNotifications": true, "extendedAgentCard": true,
            "extensions": [{"uri": "https://example.com/ext/v1", "description": "x", "required": true, "params": {"a": 1}}]
        },
        "securitySchemes": {
            "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
            "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}},
            "oauth": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {"tokenUrl": "https://example.com/token", "scopes": {"read": "r"}}}}},
            "oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://example.com/.well-known/openid-configuration"}},
            "mtls": {"mtlsSecurityScheme": {"description": "client certificates"}}
        },
        "securityRequirements": [{"schemes": {"bearer": {"list": ["read"]}}}],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["tck"], "examples": ["hi"],
                    "inputModes": ["text/plain"], "outputModes": ["text/plain"]}],
        "signatures": [{"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "c2ln", "header": {"kid": "1"}}]
    });
    serde_json::from_value(card).expect("the sample card is a v1.0 card")
}
