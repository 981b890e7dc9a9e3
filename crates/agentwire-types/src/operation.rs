//! The canonical operations: one request type with a variant per A2A operation, and one answer
//! type, whatever the binding or generation they arrived in. Server bindings decode into
//! [`A2aRequest`] and write [`A2aResponse`]; the client writes an `A2aRequest` on its wire and
//! reads the `A2aResponse`.

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;

use futures_core::Stream;

use crate::{
    A2AError, AgentCard, CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse, ListTasksRequest,
    ListTasksResponse, Result, SendMessageRequest, SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task,
    TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};

/// One A2A operation with its request.
///
/// Matches on it are exhaustive on purpose: a new operation is a compile error in every binding
/// and codec that has yet to handle it.
///
/// ```
/// use agentwire_types::Operation;
/// use agentwire_types::{A2aRequest, GetTaskRequest};
///
/// let request = A2aRequest::GetTask(GetTaskRequest { id: "t-1".into(), ..GetTaskRequest::default() });
/// assert_eq!(request.operation(), Operation::GetTask);
/// assert_eq!(request.with_tenant("acme").tenant(), "acme");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum A2aRequest {
    /// SendMessage.
    SendMessage(SendMessageRequest),
    /// SendStreamingMessage.
    SendStreamingMessage(SendMessageRequest),
    /// GetTask.
    GetTask(GetTaskRequest),
    /// ListTasks.
    ListTasks(ListTasksRequest),
    /// CancelTask.
    CancelTask(CancelTaskRequest),
    /// SubscribeToTask.
    SubscribeToTask(SubscribeToTaskRequest),
    /// CreateTaskPushNotificationConfig.
    CreatePushConfig(TaskPushNotificationConfig),
    /// GetTaskPushNotificationConfig.
    GetPushConfig(TaskPushNotificationConfigRef),
    /// ListTaskPushNotificationConfigs.
    ListPushConfigs(ListTaskPushNotificationConfigsRequest),
    /// DeleteTaskPushNotificationConfig.
    DeletePushConfig(TaskPushNotificationConfigRef),
    /// GetExtendedAgentCard.
    GetExtendedAgentCard(GetExtendedAgentCardRequest),
    /// The public agent card, as the well-known URL serves it.
    GetAgentCard,
}

impl A2aRequest {
    /// Which operation this is.
    pub fn operation(&self) -> Operation {
        match self {
            Self::SendMessage(_) => Operation::SendMessage,
            Self::SendStreamingMessage(_) => Operation::SendStreamingMessage,
            Self::GetTask(_) => Operation::GetTask,
            Self::ListTasks(_) => Operation::ListTasks,
            Self::CancelTask(_) => Operation::CancelTask,
            Self::SubscribeToTask(_) => Operation::SubscribeToTask,
            Self::CreatePushConfig(_) => Operation::CreatePushConfig,
            Self::GetPushConfig(_) => Operation::GetPushConfig,
            Self::ListPushConfigs(_) => Operation::ListPushConfigs,
            Self::DeletePushConfig(_) => Operation::DeletePushConfig,
            Self::GetExtendedAgentCard(_) => Operation::GetExtendedAgentCard,
            Self::GetAgentCard => Operation::GetAgentCard,
        }
    }

    /// The tenant the request names; empty for none.
    pub fn tenant(&self) -> &str {
        match self {
            Self::SendMessage(r) | Self::SendStreamingMessage(r) => &r.tenant,
            Self::GetTask(r) => &r.tenant,
            Self::ListTasks(r) => &r.tenant,
            Self::CancelTask(r) => &r.tenant,
            Self::SubscribeToTask(r) => &r.tenant,
            Self::CreatePushConfig(r) => &r.tenant,
            Self::GetPushConfig(r) | Self::DeletePushConfig(r) => &r.tenant,
            Self::ListPushConfigs(r) => &r.tenant,
            Self::GetExtendedAgentCard(r) => &r.tenant,
            Self::GetAgentCard => "",
        }
    }

    /// The same request, naming `tenant` where it named none.
    pub fn with_tenant(mut self, tenant: &str) -> Self {
        if let Some(slot) = self.tenant_mut().filter(|slot| slot.is_empty()) {
            tenant.clone_into(slot);
        }
        self
    }

    /// The same request, naming no tenant: what a router that chose where it goes by its tenant
    /// passes on, as if the request had been sent there directly.
    ///
    /// ```
    /// use agentwire_types::{A2aRequest, GetTaskRequest};
    ///
    /// let request = A2aRequest::GetTask(GetTaskRequest { id: "t1".into(), tenant: "weather".into(), ..Default::default() });
    /// assert_eq!(request.without_tenant().tenant(), "");
    /// ```
    pub fn without_tenant(mut self) -> Self {
        if let Some(slot) = self.tenant_mut() {
            slot.clear();
        }
        self
    }

    fn tenant_mut(&mut self) -> Option<&mut String> {
        Some(match self {
            Self::SendMessage(r) | Self::SendStreamingMessage(r) => &mut r.tenant,
            Self::GetTask(r) => &mut r.tenant,
            Self::ListTasks(r) => &mut r.tenant,
            Self::CancelTask(r) => &mut r.tenant,
            Self::SubscribeToTask(r) => &mut r.tenant,
            Self::CreatePushConfig(r) => &mut r.tenant,
            Self::GetPushConfig(r) | Self::DeletePushConfig(r) => &mut r.tenant,
            Self::ListPushConfigs(r) => &mut r.tenant,
            Self::GetExtendedAgentCard(r) => &mut r.tenant,
            Self::GetAgentCard => return None,
        })
    }
}

/// One item of a task's event stream, with its sequence number in the task's event log
/// (0 for a direct message reply, which belongs to no task).
#[derive(Debug, Clone)]
pub struct StreamItem {
    /// Position in the task's event log; usable as an SSE event id.
    pub seq: u64,
    /// The event.
    pub response: Arc<StreamResponse>,
}

/// The events of SendStreamingMessage or SubscribeToTask: the task first, then its updates, ending
/// after a terminal or input-required state.
pub type TaskEventStream = Pin<Box<dyn Stream<Item = Result<StreamItem>> + Send>>;

/// The answer to an [`A2aRequest`].
pub enum A2aResponse {
    /// SendMessage's task or message.
    Send(SendMessageResponse),
    /// GetTask's and CancelTask's task.
    Task(Task),
    /// ListTasks' page.
    Tasks(ListTasksResponse),
    /// A push config, created or read.
    PushConfig(TaskPushNotificationConfig),
    /// A task's push configs.
    PushConfigs(ListTaskPushNotificationConfigsResponse),
    /// An agent card, public or extended.
    Card(Box<AgentCard>),
    /// The push config is gone.
    Deleted,
    /// The events of SendStreamingMessage or SubscribeToTask.
    Stream(TaskEventStream),
}

impl A2aResponse {
    /// The variant's name, for messages.
    fn name(&self) -> &'static str {
        match self {
            Self::Send(_) => "a send result",
            Self::Task(_) => "a task",
            Self::Tasks(_) => "a task list",
            Self::PushConfig(_) => "a push config",
            Self::PushConfigs(_) => "a push config list",
            Self::Card(_) => "an agent card",
            Self::Deleted => "a deletion",
            Self::Stream(_) => "an event stream",
        }
    }
}

impl fmt::Debug for A2aResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Send(r) => f.debug_tuple("Send").field(r).finish(),
            Self::Task(r) => f.debug_tuple("Task").field(r).finish(),
            Self::Tasks(r) => f.debug_tuple("Tasks").field(r).finish(),
            Self::PushConfig(r) => f.debug_tuple("PushConfig").field(r).finish(),
            Self::PushConfigs(r) => f.debug_tuple("PushConfigs").field(r).finish(),
            Self::Card(r) => f.debug_tuple("Card").field(r).finish(),
            Self::Deleted => f.write_str("Deleted"),
            Self::Stream(_) => f.write_str("Stream(..)"),
        }
    }
}

/// An answer of the wrong kind: a service answered an operation with another operation's result.
fn mismatch(expected: &str, got: &A2aResponse) -> A2AError {
    A2AError::internal(format!("expected {expected} as the answer, got {}", got.name()))
}

/// Each answer's payload, taken out of the [`A2aResponse`] its operation gives.
macro_rules! payload {
    ($($variant:ident($inner:ident) => $ty:ty: $what:literal),* $(,)?) => {$(
        impl TryFrom<A2aResponse> for $ty {
            type Error = A2AError;

            fn try_from(response: A2aResponse) -> Result<Self> {
                match response {
                    A2aResponse::$variant($inner) => Ok($inner.into()),
                    other => Err(mismatch($what, &other)),
                }
            }
        }
    )*};
}

payload! {
    Send(r) => SendMessageResponse: "a send result",
    Task(r) => Task: "a task",
    Tasks(r) => ListTasksResponse: "a task list",
    PushConfig(r) => TaskPushNotificationConfig: "a push config",
    PushConfigs(r) => ListTaskPushNotificationConfigsResponse: "a push config list",
    Stream(r) => TaskEventStream: "an event stream",
}

impl TryFrom<A2aResponse> for AgentCard {
    type Error = A2AError;

    fn try_from(response: A2aResponse) -> Result<Self> {
        match response {
            A2aResponse::Card(card) => Ok(*card),
            other => Err(mismatch("an agent card", &other)),
        }
    }
}

impl TryFrom<A2aResponse> for () {
    type Error = A2AError;

    fn try_from(response: A2aResponse) -> Result<Self> {
        match response {
            A2aResponse::Deleted => Ok(()),
            other => Err(mismatch("a deletion", &other)),
        }
    }
}

/// The A2A operations, whatever a generation calls them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// SendMessage.
    SendMessage,
    /// SendStreamingMessage.
    SendStreamingMessage,
    /// GetTask.
    GetTask,
    /// ListTasks.
    ListTasks,
    /// CancelTask.
    CancelTask,
    /// SubscribeToTask.
    SubscribeToTask,
    /// CreateTaskPushNotificationConfig.
    CreatePushConfig,
    /// GetTaskPushNotificationConfig.
    GetPushConfig,
    /// ListTaskPushNotificationConfigs.
    ListPushConfigs,
    /// DeleteTaskPushNotificationConfig.
    DeletePushConfig,
    /// GetExtendedAgentCard.
    GetExtendedAgentCard,
    /// The public agent card, which every generation serves at a well-known URL rather than as
    /// a JSON-RPC method.
    GetAgentCard,
}

impl Operation {
    /// The operation's v1.0 name, whatever generation it arrived in: the name of its v1.0 method,
    /// and `GetAgentCard` for the public card, which has none. Telemetry names operations so.
    ///
    /// ```
    /// use agentwire_types::jsonrpc::method;
    /// use agentwire_types::Operation;
    ///
    /// let (_, operation) = method("tasks/sendSubscribe").unwrap();
    /// assert_eq!(operation.name(), "SendStreamingMessage");
    /// assert_eq!(Operation::GetAgentCard.name(), "GetAgentCard");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Self::SendMessage => "SendMessage",
            Self::SendStreamingMessage => "SendStreamingMessage",
            Self::GetTask => "GetTask",
            Self::ListTasks => "ListTasks",
            Self::CancelTask => "CancelTask",
            Self::SubscribeToTask => "SubscribeToTask",
            Self::CreatePushConfig => "CreateTaskPushNotificationConfig",
            Self::GetPushConfig => "GetTaskPushNotificationConfig",
            Self::ListPushConfigs => "ListTaskPushNotificationConfigs",
            Self::DeletePushConfig => "DeleteTaskPushNotificationConfig",
            Self::GetExtendedAgentCard => "GetExtendedAgentCard",
            Self::GetAgentCard => "GetAgentCard",
        }
    }

    /// Whether the answer is a stream of events (held open, counted against a caller's open
    /// streams).
    ///
    /// ```
    /// use agentwire_types::Operation;
    ///
    /// assert!(Operation::SubscribeToTask.opens_stream());
    /// assert!(!Operation::GetTask.opens_stream());
    /// ```
    pub fn opens_stream(self) -> bool {
        match self {
            Self::SendStreamingMessage | Self::SubscribeToTask => true,
            Self::SendMessage
            | Self::GetTask
            | Self::ListTasks
            | Self::CancelTask
            | Self::CreatePushConfig
            | Self::GetPushConfig
            | Self::ListPushConfigs
            | Self::DeletePushConfig
            | Self::GetExtendedAgentCard
            | Self::GetAgentCard => false,
        }
    }

    /// Whether anyone may call it, authenticated or not, without counting against a quota: the
    /// public card.
    pub fn is_public(self) -> bool {
        match self {
            Self::GetAgentCard => true,
            Self::SendMessage
            | Self::SendStreamingMessage
            | Self::GetTask
            | Self::ListTasks
            | Self::CancelTask
            | Self::SubscribeToTask
            | Self::CreatePushConfig
            | Self::GetPushConfig
            | Self::ListPushConfigs
            | Self::DeletePushConfig
            | Self::GetExtendedAgentCard => false,
        }
    }

    /// Whether it changes what the server holds (a task, its push configs), rather than only
    /// reading: a token needs the write scope for it.
    ///
    /// ```
    /// use agentwire_types::Operation;
    ///
    /// assert!(Operation::CancelTask.changes_state());
    /// assert!(!Operation::ListTasks.changes_state());
    /// ```
    pub fn changes_state(self) -> bool {
        match self {
            Self::SendMessage
            | Self::SendStreamingMessage
            | Self::CancelTask
            | Self::CreatePushConfig
            | Self::DeletePushConfig => true,
            Self::GetTask
            | Self::ListTasks
            | Self::SubscribeToTask
            | Self::GetPushConfig
            | Self::ListPushConfigs
            | Self::GetExtendedAgentCard
            | Self::GetAgentCard => false,
        }
    }

    /// Every operation.
    pub const ALL: [Operation; 12] = [
        Self::SendMessage,
        Self::SendStreamingMessage,
        Self::GetTask,
        Self::ListTasks,
        Self::CancelTask,
        Self::SubscribeToTask,
        Self::CreatePushConfig,
        Self::GetPushConfig,
        Self::ListPushConfigs,
        Self::DeletePushConfig,
        Self::GetExtendedAgentCard,
        Self::GetAgentCard,
    ];
}
