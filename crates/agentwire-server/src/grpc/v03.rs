//! `a2a.v1.A2AService`: the v0.3 gRPC binding. Its RPCs run in the v0.3 dialect, so the core
//! applies v0.3's rules (a send waits only when `blocking`, subscribing to an ended task gives the
//! task, a push config is found without its id).

use agentwire_proto::a2a_v1 as pb;
use agentwire_proto::a2a_v1::a2a_service_server::A2aService;
use agentwire_types::{self as t, A2aRequest, Dialect};
use tonic::Request;

use super::{accept, streaming, unary, EventStream, Reply};
use crate::service::Operations;

/// The v0.3 service over the operation service.
pub(crate) struct V03 {
    pub(crate) operations: Operations,
}

/// v0.3's requests carry no tenant.
fn no_tenant<P>(_: &P) -> &str {
    ""
}

#[tonic::async_trait]
impl A2aService for V03 {
    async fn send_message(&self, request: Request<pb::SendMessageRequest>) -> Reply<pb::SendMessageResponse> {
        let (ctx, req) = accept::<_, t::SendMessageRequest>(request, no_tenant, Dialect::V03)?;
        unary::<t::SendMessageResponse, _>(&self.operations, ctx, A2aRequest::SendMessage(req)).await
    }

    type SendStreamingMessageStream = EventStream<pb::StreamResponse>;

    async fn send_streaming_message(
        &self,
        request: Request<pb::SendMessageRequest>,
    ) -> Reply<Self::SendStreamingMessageStream> {
        let (ctx, req) = accept::<_, t::SendMessageRequest>(request, no_tenant, Dialect::V03)?;
        streaming(&self.operations, ctx, A2aRequest::SendStreamingMessage(req), pb::StreamResponse::from).await
    }

    async fn get_task(&self, request: Request<pb::GetTaskRequest>) -> Reply<pb::Task> {
        let (ctx, req) = accept::<_, t::GetTaskRequest>(request, no_tenant, Dialect::V03)?;
        unary::<t::Task, _>(&self.operations, ctx, A2aRequest::GetTask(req)).await
    }

    async fn cancel_task(&self, request: Request<pb::CancelTaskRequest>) -> Reply<pb::Task> {
        let (ctx, req) = accept::<_, t::CancelTaskRequest>(request, no_tenant, Dialect::V03)?;
        unary::<t::Task, _>(&self.operations, ctx, A2aRequest::CancelTask(req)).await
    }

    type TaskSubscriptionStream = EventStream<pb::StreamResponse>;

    async fn task_subscription(
        &self,
        request: Request<pb::TaskSubscriptionRequest>,
    ) -> Reply<Self::TaskSubscriptionStream> {
        let (ctx, req) = accept::<_, t::SubscribeToTaskRequest>(request, no_tenant, Dialect::V03)?;
        streaming(&self.operations, ctx, A2aRequest::SubscribeToTask(req), pb::StreamResponse::from).await
    }

    async fn create_task_push_notification_config(
        &self,
        request: Request<pb::CreateTaskPushNotificationConfigRequest>,
    ) -> Reply<pb::TaskPushNotificationConfig> {
        let (ctx, req) = accept::<_, t::TaskPushNotificationConfig>(request, no_tenant, Dialect::V03)?;
        unary::<t::TaskPushNotificationConfig, _>(&self.operations, ctx, A2aRequest::CreatePushConfig(req)).await
    }

    async fn get_task_push_notification_config(
        &self,
        request: Request<pb::GetTaskPushNotificationConfigRequest>,
    ) -> Reply<pb::TaskPushNotificationConfig> {
        let (ctx, req) = accept::<_, t::TaskPushNotificationConfigRef>(request, no_tenant, Dialect::V03)?;
        unary::<t::TaskPushNotificationConfig, _>(&self.operations, ctx, A2aRequest::GetPushConfig(req)).await
    }

    async fn list_task_push_notification_config(
        &self,
        request: Request<pb::ListTaskPushNotificationConfigRequest>,
    ) -> Reply<pb::ListTaskPushNotificationConfigResponse> {
        let (ctx, req) = accept::<_, t::ListTaskPushNotificationConfigsRequest>(request, no_tenant, Dialect::V03)?;
        unary::<t::ListTaskPushNotificationConfigsResponse, _>(&self.operations, ctx, A2aRequest::ListPushConfigs(req))
            .await
    }

    async fn get_agent_card(&self, request: Request<pb::GetAgentCardRequest>) -> Reply<pb::AgentCard> {
        let (metadata, mut extensions, _) = request.into_parts();
        let ctx = super::context(&mut extensions, metadata, "", Dialect::V03)?;
        crate::service::card_call(&self.operations, ctx, t::GetExtendedAgentCardRequest::default())
            .await
            .map(|card| tonic::Response::new(card.into()))
            .map_err(super::status)
    }

    async fn delete_task_push_notification_config(
        &self,
        request: Request<pb::DeleteTaskPushNotificationConfigRequest>,
    ) -> Reply<()> {
        let (ctx, req) = accept::<_, t::TaskPushNotificationConfigRef>(request, no_tenant, Dialect::V03)?;
        unary::<(), _>(&self.operations, ctx, A2aRequest::DeletePushConfig(req)).await
    }
}
