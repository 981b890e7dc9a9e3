//! Reading a unary call's answer, in canonical types, from the JSON a binding received.

use agentwire_types::dialect::{FromWire, WireForm};
use agentwire_types::Operation;
use agentwire_types::{A2aResponse, SendMessageResponse, Task};
use serde_json::Value;

/// The answer to a unary `operation`, read from the JSON an endpoint wrote in `form`. A task or
/// message without its id is no answer: the readers take missing members as empty, and an agent
/// that answered something else (an error in the wrong place, `null`) would read as an empty task.
pub(crate) fn read_response(operation: Operation, form: WireForm, value: Value) -> serde_json::Result<A2aResponse> {
    Ok(match operation {
        Operation::SendMessage => A2aResponse::Send(match FromWire::from_wire(form, value)? {
            SendMessageResponse::Task(task) => SendMessageResponse::Task(identified(task)?),
            SendMessageResponse::Message(message) if message.message_id.is_empty() => {
                return Err(serde::de::Error::custom("the answer is not a message: it has no messageId"))
            }
            message => message,
        }),
        Operation::GetTask | Operation::CancelTask => A2aResponse::Task(identified(FromWire::from_wire(form, value)?)?),
        Operation::ListTasks => A2aResponse::Tasks(FromWire::from_wire(form, value)?),
        Operation::CreatePushConfig | Operation::GetPushConfig => {
            A2aResponse::PushConfig(FromWire::from_wire(form, value)?)
        }
        Operation::ListPushConfigs => A2aResponse::PushConfigs(FromWire::from_wire(form, value)?),
        Operation::DeletePushConfig => A2aResponse::Deleted,
        Operation::GetExtendedAgentCard | Operation::GetAgentCard => {
            A2aResponse::Card(Box::new(FromWire::from_wire(form, value)?))
        }
        Operation::SendStreamingMessage | Operation::SubscribeToTask => {
            return Err(serde::de::Error::custom("a stream has no single answer"))
        }
    })
}

/// `task`, if it has an id.
fn identified(task: Task) -> serde_json::Result<Task> {
    if task.id.is_empty() {
        return Err(serde::de::Error::custom("the answer is not a task: it has no id"));
    }
    Ok(task)
}
