//! Reading a unary call's answer, in canonical types, from the JSON a binding received.

use agentwire_types::dialect::{FromWire, WireForm};
use agentwire_types::jsonrpc::Operation;
use agentwire_types::A2aResponse;
use serde_json::Value;

/// The answer to a unary `operation`, read from the JSON an endpoint wrote in `form`.
pub(crate) fn read_response(operation: Operation, form: WireForm, value: Value) -> serde_json::Result<A2aResponse> {
    Ok(match operation {
        Operation::SendMessage => A2aResponse::Send(FromWire::from_wire(form, value)?),
        Operation::GetTask | Operation::CancelTask => A2aResponse::Task(FromWire::from_wire(form, value)?),
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
