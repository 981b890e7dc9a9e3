//! `a2a.v1.A2AService`, v0.3's: every operation it has (no ListTasks), each request converted
//! from its canonical type.

use agentwire_proto::a2a_v1 as pb;
use pb::a2a_service_client::A2aServiceClient;
use tonic::transport::Channel;

use super::Rpc;
use crate::call::{Call, Reply};
use crate::error::Result;
use crate::stream::Events;

pub(super) async fn unary(channel: Channel, rpc: Rpc<'_>, call: &Call) -> Result<Reply> {
    let mut client = A2aServiceClient::new(channel);
    Ok(match call.clone() {
        Call::SendMessage(r) => {
            Reply::Send(rpc.answer(client.send_message(rpc.request(pb::SendMessageRequest::from(r))).await)?)
        }
        Call::GetTask(r) => Reply::Task(rpc.answer(client.get_task(rpc.request(pb::GetTaskRequest::from(r))).await)?),
        Call::CancelTask(r) => {
            Reply::Task(rpc.answer(client.cancel_task(rpc.request(pb::CancelTaskRequest::from(r))).await)?)
        }
        Call::CreatePushConfig(c) => {
            let request = rpc.request(pb::CreateTaskPushNotificationConfigRequest::from(c));
            Reply::PushConfig(rpc.answer(client.create_task_push_notification_config(request).await)?)
        }
        Call::GetPushConfig(r) => {
            let request = rpc.request(pb::GetTaskPushNotificationConfigRequest::from(r));
            Reply::PushConfig(rpc.answer(client.get_task_push_notification_config(request).await)?)
        }
        Call::ListPushConfigs(r) => {
            let request = rpc.request(pb::ListTaskPushNotificationConfigRequest::from(r));
            Reply::PushConfigs(rpc.answer(client.list_task_push_notification_config(request).await)?)
        }
        Call::DeletePushConfig(r) => {
            let request = rpc.request(pb::DeleteTaskPushNotificationConfigRequest::from(r));
            let () = rpc.answer(client.delete_task_push_notification_config(request).await)?;
            Reply::Done
        }
        // v0.3's GetAgentCard answers with the card the caller's credentials entitle it to.
        Call::GetExtendedAgentCard(_) => {
            let request = rpc.request(pb::GetAgentCardRequest {});
            Reply::Card(Box::new(rpc.answer(client.get_agent_card(request).await)?))
        }
        Call::ListTasks(_) | Call::SendStreamingMessage(_) | Call::SubscribeToTask(_) => {
            return Err(super::unsupported(rpc, call))
        }
    })
}

pub(super) async fn open(channel: Channel, rpc: Rpc<'_>, call: &Call) -> Result<Events> {
    let mut client = A2aServiceClient::new(channel);
    match call.clone() {
        Call::SendStreamingMessage(r) => {
            rpc.events(client.send_streaming_message(rpc.request(pb::SendMessageRequest::from(r))).await)
        }
        Call::SubscribeToTask(r) => {
            rpc.events(client.task_subscription(rpc.request(pb::TaskSubscriptionRequest::from(r))).await)
        }
        _ => Err(super::unsupported(rpc, call)),
    }
}
