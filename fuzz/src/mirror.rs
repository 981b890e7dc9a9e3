//! An operation service that answers every request with what the request holds: the binding
//! that decoded a request then writes the decoded values back in its own form, so one input
//! exercises a decoder and an encoder.

use std::future::{ready, Ready};
use std::sync::Arc;
use std::task::{Context, Poll};

use agentwire_server::{A2aRequest, A2aResponse, RequestContext, StreamItem};
use agentwire_types::{
    A2AError, AgentCard, AgentInterface, Artifact, ListTaskPushNotificationConfigsResponse, ListTasksResponse, Message,
    Role, SendMessageRequest, SendMessageResponse, StreamResponse, Task, TaskArtifactUpdateEvent,
    TaskPushNotificationConfig, TaskPushNotificationConfigRef, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use tower::Service;

/// The mirroring operation service.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mirror;

impl Service<(RequestContext, A2aRequest)> for Mirror {
    type Response = A2aResponse;
    type Error = A2AError;
    type Future = Ready<Result<A2aResponse, A2AError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), A2AError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, (_, request): (RequestContext, A2aRequest)) -> Self::Future {
        ready(refusal(&request).map_or_else(|| Ok(answer(request)), Err))
    }
}

/// What the request handler refuses before it runs a send (its input checks): a message without
/// a role, which no older generation can write back.
fn refusal(request: &A2aRequest) -> Option<A2AError> {
    let (A2aRequest::SendMessage(send) | A2aRequest::SendStreamingMessage(send)) = request else { return None };
    (send.message.role == Role::Unspecified).then(|| A2AError::invalid_params("message.role is required"))
}

fn answer(request: A2aRequest) -> A2aResponse {
    match request {
        A2aRequest::SendMessage(send) => A2aResponse::Send(SendMessageResponse::Task(task_of(send))),
        A2aRequest::SendStreamingMessage(send) => stream(task_of(send)),
        A2aRequest::GetTask(get) => A2aResponse::Task(task(get.id, TaskState::Working)),
        A2aRequest::ListTasks(list) => {
            let mut found = task(list.page_token.clone(), list.status.unwrap_or(TaskState::Completed));
            found.context_id = list.context_id;
            found.status.timestamp = list.status_timestamp_after;
            let page_size = list.page_size.unwrap_or_default();
            A2aResponse::Tasks(ListTasksResponse {
                tasks: vec![found],
                next_page_token: list.page_token,
                page_size,
                total_size: 1,
            })
        }
        A2aRequest::CancelTask(cancel) => {
            let mut canceled = task(cancel.id, TaskState::Canceled);
            canceled.metadata = cancel.metadata;
            A2aResponse::Task(canceled)
        }
        A2aRequest::SubscribeToTask(subscribe) => stream(task(subscribe.id, TaskState::Working)),
        A2aRequest::CreatePushConfig(config) => A2aResponse::PushConfig(config),
        A2aRequest::GetPushConfig(config) => A2aResponse::PushConfig(config_of(config)),
        A2aRequest::ListPushConfigs(list) => {
            let config = config_of(TaskPushNotificationConfigRef {
                tenant: list.tenant,
                task_id: list.task_id,
                id: list.page_token.clone(),
            });
            A2aResponse::PushConfigs(ListTaskPushNotificationConfigsResponse {
                configs: vec![config],
                next_page_token: list.page_token,
            })
        }
        A2aRequest::DeletePushConfig(_) => A2aResponse::Deleted,
        A2aRequest::GetExtendedAgentCard(get) => A2aResponse::Card(Box::new(card(get.tenant))),
        A2aRequest::GetAgentCard => A2aResponse::Card(Box::new(card(String::new()))),
    }
}

fn task(id: String, state: TaskState) -> Task {
    Task { id, context_id: "ctx".to_owned(), status: TaskStatus::new(state), ..Task::default() }
}

/// The task a send makes: the message in its history, echoed as the agent's reply and as an
/// artifact.
fn task_of(send: SendMessageRequest) -> Task {
    let SendMessageRequest { message, metadata, .. } = send;
    let mut made = task(message.task_id.clone(), TaskState::Completed);
    made.metadata = metadata;
    let reply = Message { role: Role::Agent, ..message.clone() };
    made.status.message = Some(Box::new(reply));
    made.artifacts = vec![Artifact::new("echo", "echo", message.parts.clone())];
    made.history = vec![message];
    made
}

/// A stream of the task, a status update and an artifact chunk of it, and its end.
fn stream(task: Task) -> A2aResponse {
    let update = |state: TaskState| {
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            generation: None,
            task_id: task.id.clone(),
            context_id: task.context_id.clone(),
            status: TaskStatus::new(state),
            metadata: task.metadata.clone(),
        })
    };
    let chunk = task.artifacts.first().map(|artifact| {
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            generation: None,
            task_id: task.id.clone(),
            context_id: task.context_id.clone(),
            artifact: artifact.clone(),
            append: true,
            last_chunk: true,
            metadata: None,
        })
    });
    let events = [Some(update(TaskState::Working)), chunk, Some(update(TaskState::Completed))];
    let items = std::iter::once(StreamResponse::Task(task)).chain(events.into_iter().flatten());
    let items: Vec<_> = items.zip(1..).map(|(event, seq)| Ok(StreamItem { seq, response: Arc::new(event) })).collect();
    A2aResponse::Stream(Box::pin(futures_util::stream::iter(items)))
}

fn config_of(named: TaskPushNotificationConfigRef) -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        tenant: named.tenant,
        id: named.id,
        task_id: named.task_id,
        url: "https://client.example/hook".to_owned(),
        ..TaskPushNotificationConfig::default()
    }
}

fn card(tenant: String) -> AgentCard {
    AgentCard {
        name: "mirror".to_owned(),
        description: "answers every request with what it holds".to_owned(),
        version: "1.0.0".to_owned(),
        supported_interfaces: vec![AgentInterface {
            url: "http://127.0.0.1:8080".to_owned(),
            protocol_binding: "JSONRPC".to_owned(),
            tenant,
            protocol_version: "1.0".to_owned(),
        }],
        ..AgentCard::default()
    }
}
