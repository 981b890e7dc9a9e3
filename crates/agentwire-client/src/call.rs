//! A call and its answer, in canonical types, before a binding writes them on its wire.

use agentwire_types::dialect::{FromWire, WireForm};
use agentwire_types::jsonrpc::Operation;
use agentwire_types::{
    AgentCard, CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse, SendMessageRequest,
    SendMessageResponse, SubscribeToTaskRequest, Task, TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};
use serde_json::Value;

use crate::error::Error;

/// One operation with its request.
#[derive(Debug, Clone)]
pub(crate) enum Call {
    SendMessage(SendMessageRequest),
    SendStreamingMessage(SendMessageRequest),
    GetTask(GetTaskRequest),
    ListTasks(ListTasksRequest),
    CancelTask(CancelTaskRequest),
    SubscribeToTask(SubscribeToTaskRequest),
    CreatePushConfig(TaskPushNotificationConfig),
    GetPushConfig(TaskPushNotificationConfigRef),
    ListPushConfigs(ListTaskPushNotificationConfigsRequest),
    DeletePushConfig(TaskPushNotificationConfigRef),
    GetExtendedAgentCard(GetExtendedAgentCardRequest),
}

impl Call {
    pub(crate) fn operation(&self) -> Operation {
        match self {
            Call::SendMessage(_) => Operation::SendMessage,
            Call::SendStreamingMessage(_) => Operation::SendStreamingMessage,
            Call::GetTask(_) => Operation::GetTask,
            Call::ListTasks(_) => Operation::ListTasks,
            Call::CancelTask(_) => Operation::CancelTask,
            Call::SubscribeToTask(_) => Operation::SubscribeToTask,
            Call::CreatePushConfig(_) => Operation::CreatePushConfig,
            Call::GetPushConfig(_) => Operation::GetPushConfig,
            Call::ListPushConfigs(_) => Operation::ListPushConfigs,
            Call::DeletePushConfig(_) => Operation::DeletePushConfig,
            Call::GetExtendedAgentCard(_) => Operation::GetExtendedAgentCard,
        }
    }

    /// The request's tenant, set to `tenant` where the caller left it empty.
    pub(crate) fn with_tenant(mut self, tenant: &str) -> Self {
        let slot = self.tenant_mut();
        if slot.is_empty() {
            tenant.clone_into(slot);
        }
        self
    }

    /// The request's tenant; empty for none.
    pub(crate) fn tenant(&self) -> &str {
        match self {
            Call::SendMessage(r) | Call::SendStreamingMessage(r) => &r.tenant,
            Call::GetTask(r) => &r.tenant,
            Call::ListTasks(r) => &r.tenant,
            Call::CancelTask(r) => &r.tenant,
            Call::SubscribeToTask(r) => &r.tenant,
            Call::CreatePushConfig(r) => &r.tenant,
            Call::GetPushConfig(r) | Call::DeletePushConfig(r) => &r.tenant,
            Call::ListPushConfigs(r) => &r.tenant,
            Call::GetExtendedAgentCard(r) => &r.tenant,
        }
    }

    fn tenant_mut(&mut self) -> &mut String {
        match self {
            Call::SendMessage(r) | Call::SendStreamingMessage(r) => &mut r.tenant,
            Call::GetTask(r) => &mut r.tenant,
            Call::ListTasks(r) => &mut r.tenant,
            Call::CancelTask(r) => &mut r.tenant,
            Call::SubscribeToTask(r) => &mut r.tenant,
            Call::CreatePushConfig(r) => &mut r.tenant,
            Call::GetPushConfig(r) | Call::DeletePushConfig(r) => &mut r.tenant,
            Call::ListPushConfigs(r) => &mut r.tenant,
            Call::GetExtendedAgentCard(r) => &mut r.tenant,
        }
    }
}

/// The answer to a unary call.
#[derive(Debug, Clone)]
pub(crate) enum Reply {
    Send(SendMessageResponse),
    Task(Task),
    Tasks(ListTasksResponse),
    PushConfig(TaskPushNotificationConfig),
    PushConfigs(ListTaskPushNotificationConfigsResponse),
    Card(Box<AgentCard>),
    Done,
}

impl Reply {
    /// The answer to `operation`, read from the JSON an endpoint wrote in `form`.
    pub(crate) fn read(operation: Operation, form: WireForm, value: Value) -> serde_json::Result<Self> {
        Ok(match operation {
            Operation::SendMessage => Reply::Send(FromWire::from_wire(form, value)?),
            Operation::GetTask | Operation::CancelTask => Reply::Task(FromWire::from_wire(form, value)?),
            Operation::ListTasks => Reply::Tasks(FromWire::from_wire(form, value)?),
            Operation::CreatePushConfig | Operation::GetPushConfig => {
                Reply::PushConfig(FromWire::from_wire(form, value)?)
            }
            Operation::ListPushConfigs => Reply::PushConfigs(FromWire::from_wire(form, value)?),
            Operation::DeletePushConfig => Reply::Done,
            Operation::GetExtendedAgentCard => Reply::Card(Box::new(FromWire::from_wire(form, value)?)),
            Operation::SendStreamingMessage | Operation::SubscribeToTask => {
                return Err(serde::de::Error::custom("a stream has no single answer"))
            }
        })
    }
}

/// Each answer type, taken out of the [`Reply`] its operation gives.
macro_rules! from_reply {
    ($($variant:ident => $ty:ty),* $(,)?) => {$(
        impl TryFrom<Reply> for $ty {
            type Error = Error;

            fn try_from(reply: Reply) -> Result<Self, Error> {
                match reply {
                    Reply::$variant(value) => Ok(value),
                    other => Err(Error::Decode {
                        url: String::new(),
                        detail: format!("expected {}, got {other:?}", stringify!($ty)),
                    }),
                }
            }
        }
    )*};
}

from_reply! {
    Send => SendMessageResponse,
    Task => Task,
    Tasks => ListTasksResponse,
    PushConfig => TaskPushNotificationConfig,
    PushConfigs => ListTaskPushNotificationConfigsResponse,
}

impl TryFrom<Reply> for AgentCard {
    type Error = Error;

    fn try_from(reply: Reply) -> Result<Self, Error> {
        match reply {
            Reply::Card(card) => Ok(*card),
            other => Err(Error::Decode { url: String::new(), detail: format!("expected a card, got {other:?}") }),
        }
    }
}

impl TryFrom<Reply> for () {
    type Error = Error;

    fn try_from(_: Reply) -> Result<Self, Error> {
        Ok(())
    }
}
