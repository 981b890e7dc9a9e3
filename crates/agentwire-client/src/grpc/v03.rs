//! `a2a.v1.A2AService`, v0.3's: every operation it has (no ListTasks), each request converted
//! from its canonical type.

use agentwire_proto::a2a_v1 as pb;
use pb::a2a_service_client::A2aServiceClient;
use tonic::transport::Channel;

use super::Rpc;
use crate::error::Result;
use crate::stream::Events;
use agentwire_types::{A2aRequest, A2aResponse};

pub(super) async fn unary(channel: Channel, rpc: Rpc<'_>, call: &A2aRequest) -> Result<A2aResponse> {
    let mut client = A2aServiceClient::new(channel);
    Ok(match call.clone() {
        A2aRequest::SendMessage(r) => {
            A2aResponse::Send(rpc.answer(client.send_message(rpc.request(pb::SendMessageRequest::from(r))).await)?)
        }
        A2aRequest::GetTask(r) => {
            A2aResponse::Task(rpc.answer(client.get_task(rpc.request(pb::GetTaskRequest::from(r))).await)?)
        }
        A2aRequest::CancelTask(r) => {
            A2aResponse::Task(rpc.answer(client.cancel_task(rpc.request(pb::CancelTaskRequest::from(r))).await)?)
        }
        A2aRequest::CreatePushConfig(c) => {
            let request = rpc.request(pb::CreateTaskPushNotificationConfigRequest::from(c));
            A2aResponse::PushConfig(rpc.answer(client.create_task_push_notification_config(request).await)?)
        }
        A2aRequest::GetPushConfig(r) => {
            let request = rpc.request(pb::GetTaskPushNotificationConfigRequest::from(r));
            A2aResponse::PushConfig(rpc.answer(client.get_task_push_notification_config(request).await)?)
        }
        A2aRequest::ListPushConfigs(r) => {
            let request = rpc.request(pb::ListTaskPushNotificationConfigRequest::from(r));
            A2aResponse::PushConfigs(rpc.answer(client.list_task_push_notification_config(request).await)?)
        }
        A2aRequest::DeletePushConfig(r) => {
            let request = rpc.request(pb::DeleteTaskPushNotificationConfigRequest::from(r));
            let () = rpc.answer(client.delete_task_push_notification_config(request).await)?;
            A2aResponse::Deleted
        }
        // v0.3's GetAgentCard answers with the card the caller's credentials entitle it to.
        A2aRequest::GetExtendedAgentCard(_) | A2aRequest::GetAgentCard => {
            let request = rpc.request(pb::GetAgentCardRequest {});
            A2aResponse::Card(Box::new(rpc.answer(client.get_agent_card(request).await)?))
        }
        A2aRequest::ListTasks(_) | A2aRequest::SendStreamingMessage(_) | A2aRequest::SubscribeToTask(_) => {
            return Err(super::unsupported(rpc, call))
        }
    })
}

pub(super) async fn open(channel: Channel, rpc: Rpc<'_>, call: &A2aRequest) -> Result<Events> {
    let mut client = A2aServiceClient::new(channel);
    match call.clone() {
        A2aRequest::SendStreamingMessage(r) => {
            rpc.events(client.send_streaming_message(rpc.request(pb::SendMessageRequest::from(r))).await)
        }
        A2aRequest::SubscribeToTask(r) => {
            rpc.events(client.task_subscription(rpc.request(pb::TaskSubscriptionRequest::from(r))).await)
        }
        _ => Err(super::unsupported(rpc, call)),
    }
}
